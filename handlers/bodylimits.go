package handlers

import (
	"maps"
	"slices"
	"sync"

	"github.com/labstack/echo/v4"
)

// Body limits are declared where routes are registered:
//
//	handlers.Body(handlers.SmallForm, g.POST("/tokens", h.CreateToken))
//
// Every route whose method carries a body (POST, PUT, PATCH, and any
// method on a path registered for every method) declares one; the web
// layer refuses a longer body before any middleware reads it, and a test
// fails for a route with a body and no limit. The methods that carry no
// body (GET, HEAD, DELETE, OPTIONS) take none.
const (
	// SignInForm: a name, a password, a CSRF token.
	SignInForm int64 = 16 << 10
	// SmallForm: a console form of a few fields (a name, a flavor's
	// sizes, one metadata pair, a token name).
	SmallForm int64 = 64 << 10
	// ListForm: a console form that carries a list chosen in a picker
	// (thousands of providers for an aggregate, a draft's changes).
	ListForm int64 = 4 << 20
	// ConsoleJSON: the console API's JSON (a preview request, draft
	// changes).
	ConsoleJSON int64 = 2 << 20
	// NovaJSON: Nova's own limit (oslo.middleware's sizelimit default).
	NovaJSON int64 = 112 << 10
	// PlacementJSON: Placement bodies; bulk allocations are the largest.
	PlacementJSON int64 = 1 << 20
)

// bodyLimits holds every declared limit by "METHOD /path" as the router
// lists routes, or "* /path" for a path registered for every method.
// Routes are the code's, the same for every server built, so one table
// serves them all.
var bodyLimits = struct {
	sync.RWMutex
	m map[string]int64
}{m: map[string]int64{}}

// Body declares limit as the most the routes' request bodies may hold.
func Body(limit int64, routes ...*echo.Route) {
	for _, r := range routes {
		declareBody(limit, r.Method+" "+r.Path)
	}
}

// BodyAnyMethod declares limit for the bodies of every method of path (a
// path whose handler dispatches by method itself); the methods that carry
// no body still take none.
func BodyAnyMethod(limit int64, paths ...string) {
	for _, p := range paths {
		declareBody(limit, "* "+p)
	}
}

// declareBody declares limit for routes named as "METHOD /path" (the full
// path, group prefix included).
func declareBody(limit int64, routes ...string) {
	bodyLimits.Lock()
	defer bodyLimits.Unlock()
	for _, r := range routes {
		bodyLimits.m[r] = limit
	}
}

// DeclaredBodyLimit is the limit declared for key ("METHOD /path" or
// "* /path").
func DeclaredBodyLimit(key string) (int64, bool) {
	bodyLimits.RLock()
	defer bodyLimits.RUnlock()
	l, ok := bodyLimits.m[key]
	return l, ok
}

// DeclaredBodyLimits lists the keys of every declared limit, sorted.
func DeclaredBodyLimits() []string {
	bodyLimits.RLock()
	defer bodyLimits.RUnlock()
	return slices.Sorted(maps.Keys(bodyLimits.m))
}
