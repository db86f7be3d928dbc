// Package handlers holds the HTTP side of corral: the Env every handler
// package shares, authentication (console sessions and API tokens), the
// role checks, the one table from error kinds to HTTP statuses, and the
// console pages for signing in, the dashboard, API tokens, users and the
// audit log. Subpackages (compute, placement, …) build on the same Env.
package handlers

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/cloud"
	"corral/models/store"
	"corral/views"
)

// Env is what every handler needs: the store, a logger, a clock and the
// console's session manager. web.New fills in what is left empty.
type Env struct {
	Store *store.Store
	Log   *slog.Logger
	// Now is the clock; tests move it to expire sessions.
	Now func() time.Time
	// Sessions signs console users in and out; web.New sets it up from the
	// store's session keys when it is nil.
	Sessions *Sessions
	// Cloud syncs the live state from a real cloud (connected mode); nil
	// when corral runs standalone.
	Cloud *cloud.Syncer

	mu        sync.RWMutex
	renderers []prefixRenderer
	counts    countCache
}

// ErrorRenderer writes the response for a failed request under a URL prefix
// whose clients expect their own error format (Nova's and Placement's fault
// bodies). status comes from StatusOf(err), or from an echo.HTTPError.
type ErrorRenderer func(c echo.Context, status int, err error) error

type prefixRenderer struct {
	prefix string
	render ErrorRenderer
}

// RenderErrorsUnder makes r render every error of a request whose path is
// prefix or starts with prefix + "/". The longest matching prefix wins.
func (env *Env) RenderErrorsUnder(prefix string, r ErrorRenderer) {
	env.mu.Lock()
	defer env.mu.Unlock()
	prefix = strings.TrimSuffix(prefix, "/")
	for i := range env.renderers {
		if env.renderers[i].prefix == prefix {
			env.renderers[i].render = r
			return
		}
	}
	env.renderers = append(env.renderers, prefixRenderer{prefix, r})
}

// ErrorRendererFor returns the renderer registered for path, or nil.
func (env *Env) ErrorRendererFor(path string) ErrorRenderer {
	env.mu.RLock()
	defer env.mu.RUnlock()
	var best prefixRenderer
	for _, pr := range env.renderers {
		if underPrefix(path, pr.prefix) && len(pr.prefix) >= len(best.prefix) {
			best = pr
		}
	}
	return best.render
}

func underPrefix(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// now is Env.Now, or the wall clock when unset.
func (env *Env) now() time.Time {
	if env.Now != nil {
		return env.Now()
	}
	return time.Now()
}

// Logger is Env.Log, or the default logger when unset.
func (env *Env) Logger() *slog.Logger {
	if env.Log != nil {
		return env.Log
	}
	return slog.Default()
}

// KindStatus is the one table from error kinds to HTTP statuses.
var KindStatus = map[models.Kind]int{
	models.Internal:      http.StatusInternalServerError,
	models.Invalid:       http.StatusBadRequest,
	models.NotFound:      http.StatusNotFound,
	models.Conflict:      http.StatusConflict,
	models.Forbidden:     http.StatusForbidden,
	models.Unauthorized:  http.StatusUnauthorized,
	models.NotAcceptable: http.StatusNotAcceptable,
	models.OverQuota:     http.StatusForbidden,
}

// StatusOf maps err to its HTTP status: an echo.HTTPError keeps its code, a
// corral error goes through KindStatus, anything else is a 500.
func StatusOf(err error) int {
	if he, ok := err.(*echo.HTTPError); ok {
		return he.Code
	}
	if s, ok := KindStatus[models.KindOf(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Context keys under which the middleware leaves what it learned.
const (
	ctxUser      = "corral.user"
	ctxToken     = "corral.token"
	ctxVia       = "corral.via"
	ctxSession   = "corral.session"
	ctxCSRF      = "csrf" // echo's CSRF middleware default ContextKey
	headerToken  = "X-Auth-Token"
	viaConsole   = "console"
	viaAPI       = "api"
	viaCompute   = "compute-api"
	viaPlacement = "placement-api"
)

// CSRFContextKey is where web's CSRF middleware leaves the token for forms.
const CSRFContextKey = ctxCSRF

// CurrentUser is the signed-in user (by session or API token), or nil.
func CurrentUser(c echo.Context) *models.User {
	u, _ := c.Get(ctxUser).(*models.User)
	return u
}

// CurrentToken is the API token the request authenticated with, or nil.
func CurrentToken(c echo.Context) *models.APIToken {
	t, _ := c.Get(ctxToken).(*models.APIToken)
	return t
}

// TokenAuthenticated reports whether the request carried a valid API token.
// Such requests carry no ambient credentials, so CSRF checks skip them.
func TokenAuthenticated(c echo.Context) bool { return CurrentToken(c) != nil }

// Actor is who the store records in the audit log for this request.
func Actor(c echo.Context) store.Actor {
	u := CurrentUser(c)
	if u == nil {
		return store.Actor{Name: "anonymous", Via: via(c)}
	}
	return store.Actor{Name: u.Name, Via: via(c), ProjectID: u.ProjectID, Role: u.Role}
}

func via(c echo.Context) string {
	if v, ok := c.Get(ctxVia).(string); ok && v != "" {
		return v
	}
	return viaConsole
}

// viaForPath names the interface an API token was used on.
func viaForPath(path string) string {
	switch {
	case underPrefix(path, "/compute"):
		return viaCompute
	case underPrefix(path, "/placement"):
		return viaPlacement
	}
	return viaAPI
}

// HasRole reports whether the current user holds at least role
// (admin > member > reader).
func HasRole(c echo.Context, role string) bool {
	u := CurrentUser(c)
	return u != nil && views.RoleAtLeast(u.Role, role)
}

// IsAPI reports whether a request is for a machine client (the JSON API,
// the Nova- and Placement-compatible APIs, or anything sent with a token)
// rather than for a person in a browser.
func IsAPI(c echo.Context) bool {
	p := c.Request().URL.Path
	return TokenAuthenticated(c) || underPrefix(p, "/api") || underPrefix(p, "/compute") || underPrefix(p, "/placement")
}

// IsHTMX reports whether htmx sent the request (and expects a fragment).
func IsHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// RequireLogin lets signed-in users through. A browser without a session is
// sent to the sign-in page and back; an API client gets a 401.
func RequireLogin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if CurrentUser(c) != nil {
			return next(c)
		}
		if IsAPI(c) {
			return models.E(models.Unauthorized, "", "authentication required: send an API token as %s", headerToken)
		}
		return redirectToLogin(c)
	}
}

// RequireRole lets through users holding at least role; others get a 403
// (and anonymous requests are treated as by RequireLogin).
func RequireRole(role string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return RequireLogin(func(c echo.Context) error {
			if !HasRole(c, role) {
				return models.E(models.Forbidden, "", "this needs the %s role; you are %s", role, CurrentUser(c).Role)
			}
			return next(c)
		})
	}
}

// TokenAuth authenticates requests that carry X-Auth-Token. A valid token
// sets the same user as a console session would; an unknown or revoked
// token is refused with a 401, even where anonymous access is allowed, so
// that a client never silently acts as nobody.
func (env *Env) TokenAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		plain := c.Request().Header.Get(headerToken)
		if plain == "" {
			return next(c)
		}
		u, tok, err := env.Store.UserByToken(c.Request().Context(), plain)
		if err != nil {
			if k := models.KindOf(err); k == models.NotFound || k == models.Unauthorized || k == models.Invalid {
				return models.E(models.Unauthorized, "", "the API token is unknown, revoked or malformed")
			}
			return err
		}
		c.Set(ctxUser, u)
		c.Set(ctxToken, tok)
		c.Set(ctxVia, viaForPath(c.Request().URL.Path))
		return next(c)
	}
}
