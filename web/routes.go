package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/account"
	"corral/handlers/cloudpage"
	"corral/handlers/compute"
	"corral/handlers/console"
	"corral/handlers/doctor"
	"corral/handlers/placementapi"
	"corral/handlers/query"
	"corral/handlers/world"
	"corral/static"
)

// Groups are the route groups handler packages register into.
type Groups struct {
	// Console holds the pages people use: signed-in users only (others are
	// sent to the sign-in page), CSRF-checked forms, HTML error pages.
	// Gate writes with handlers.RequireRole(models.RoleMember) and admin
	// pages with handlers.RequireRole(models.RoleAdmin).
	Console *echo.Group
	// API is the console's JSON API under /api: a session or an
	// X-Auth-Token, JSON error bodies.
	API *echo.Group
	// Compute is the Nova-compatible API under /compute and Placement the
	// Placement-compatible one under /placement. Both authenticate by
	// X-Auth-Token only (handlers.CurrentUser is set when the token is
	// valid; add handlers.RequireLogin where upstream needs auth) and may
	// render their own fault bodies with env.RenderErrorsUnder.
	Compute   *echo.Group
	Placement *echo.Group
}

// registerRoutes is the one place where URLs meet handlers. A handler
// package exposes Register(g, env) and gets one line below.
func registerRoutes(e *echo.Echo, env *handlers.Env, loginLimit echo.MiddlewareFunc) Groups {
	// Not ready while the world's snapshot is first built at start: a load
	// balancer then waits instead of queueing requests behind the build.
	e.GET("/healthz", func(c echo.Context) error {
		if !env.Store.Live().Ready() {
			c.Response().Header().Set("Retry-After", "1")
			return c.String(http.StatusServiceUnavailable, "starting\n")
		}
		return c.String(http.StatusOK, "ok\n")
	})
	e.Group("/static", cacheStatic).StaticFS("/", static.FS)
	// Browsers ask for /favicon.ico on every page whatever the page links.
	e.GET("/favicon.ico", func(c echo.Context) error {
		icon, err := static.FS.ReadFile("img/favicon.svg")
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "public, max-age=86400")
		return c.Blob(http.StatusOK, "image/svg+xml", icon)
	})

	g := Groups{
		Console:   e.Group("", handlers.RequireLogin),
		API:       e.Group("/api", handlers.RequireLogin),
		Compute:   e.Group("/compute"),
		Placement: e.Group("/placement"),
	}

	// Handler packages, one line each. A package declares the body limit
	// of each route it registers (handlers.Body).
	account.Register(e.Group(""), g.Console, g.API, env, loginLimit)
	compute.Register(g.Compute, env)
	console.Register(g.Console, env)
	query.Register(g.Console, g.API, env)
	placementapi.Register(g.Placement, env)
	world.Register(g.Console, g.API, env)
	cloudpage.Register(g.Console, env)
	doctor.Register(g.Console, g.API, env)
	return g
}

// cacheStatic lets browsers keep assets for an hour; their names carry a
// version where it matters (htmx).
func cacheStatic(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=3600")
		return next(c)
	}
}
