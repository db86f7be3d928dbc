package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"corral/handlers"
)

// Body limits are declared where each route is registered
// (handlers.Body; see handlers/bodylimits.go for the sizes), and the
// routes registerRoutes still declares for their packages. Every route
// whose method carries a body has one; a route without one fails
// TestEveryRouteDeclaresABodyLimit. The methods that carry no body (GET,
// HEAD, DELETE, OPTIONS) take none: their default is 0, so a body sent
// with them is a 413 before anything reads it.
//
// Whatever the route, a request without a session or a token gets at most
// anonymousBodyLimit: it can only sign in. limitBody applies the limit
// before any middleware or handler parses the body (the CSRF check reads
// forms, checkInput reads JSON).
const (
	noBody             int64 = 0
	anonymousBodyLimit int64 = 64 << 10
)

// bodyless are the methods that carry no body.
var bodyless = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodDelete: true, http.MethodOptions: true,
}

// routeBodyLimit is the limit declared for a route (method and path as the
// router has them): its own, else none for a method without a body, else
// the one for the path under any method. ok is false for a route with a
// body and no limit.
func routeBodyLimit(method, path string) (int64, bool) {
	if l, ok := handlers.DeclaredBodyLimit(method + " " + path); ok {
		return l, true
	}
	if bodyless[method] {
		return noBody, true
	}
	return handlers.DeclaredBodyLimit("* " + path)
}

// bodyLimitFor is the most this request may send: its route's limit, and
// never more than anonymousBodyLimit without a session or token. A path
// no route matches (a 404 to come) gets the anonymous limit.
func bodyLimitFor(c echo.Context) int64 {
	limit, ok := routeBodyLimit(c.Request().Method, c.Path())
	switch {
	case !ok:
		return anonymousBodyLimit
	case handlers.CurrentUser(c) == nil:
		return min(limit, anonymousBodyLimit)
	}
	return limit
}
