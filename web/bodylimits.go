package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/world"
)

// Body limits, per route. Every route whose method carries a body (POST,
// PUT, PATCH, and any method on the Placement API's paths, which dispatch
// by method themselves) has its row in routeBodyLimits; a route without
// one fails TestEveryRouteDeclaresABodyLimit. The methods that carry no
// body (GET, HEAD, DELETE, OPTIONS) take none: their default is 0, so a
// body sent with them is a 413 before anything reads it.
//
// Whatever the route, a request without a session or a token gets at most
// anonymousBodyLimit: it can only sign in. limitBody applies the limit
// before any middleware or handler parses the body (the CSRF check reads
// forms, checkInput reads JSON).
const (
	noBody             int64 = 0
	anonymousBodyLimit int64 = 64 << 10
	// signInForm: a name, a password, a CSRF token.
	signInForm int64 = 16 << 10
	// smallForm: a console form of a few fields (a name, a flavor's
	// sizes, one metadata pair, a token name).
	smallForm int64 = 64 << 10
	// listForm: a console form that carries a list chosen in a picker
	// (thousands of providers for an aggregate, a draft's changes).
	listForm int64 = 4 << 20
	// consoleJSON: the console API's JSON (a preview request, draft
	// changes).
	consoleJSON int64 = 2 << 20
	// novaJSON: Nova's own limit (oslo.middleware's sizelimit default).
	novaJSON int64 = 112 << 10
	// placementJSON: Placement bodies; bulk allocations are the largest.
	placementJSON int64 = 1 << 20
	// worldUpload: the world file and its multipart envelope.
	worldUpload = world.MaxWorldUpload + 1<<20
)

// routeBodyLimits keys are "METHOD /path" as the router lists routes, or
// "* /path" for a path registered for every method.
var routeBodyLimits = map[string]int64{
	// Account pages.
	"POST /login":                          signInForm,
	"POST /logout":                         signInForm,
	"POST /password":                       signInForm,
	"POST /tokens":                         smallForm,
	"POST /tokens/:id/revoke":              smallForm,
	"POST /sessions/:id/revoke":            smallForm,
	"POST /sessions/revoke-others":         smallForm,
	"POST /users":                          smallForm,
	"POST /users/:id":                      smallForm,
	"POST /users/:id/delete":               smallForm,
	"POST /users/:id/password":             smallForm,
	"POST /users/:id/sessions/revoke":      smallForm,
	"POST /users/:id/tokens/:token/revoke": smallForm,

	// Console objects.
	"POST /aggregates":                         smallForm,
	"POST /aggregates/:id":                     smallForm,
	"POST /aggregates/:id/delete":              smallForm,
	"POST /aggregates/:id/members":             listForm,
	"POST /aggregates/:id/members/remove":      listForm,
	"POST /aggregates/:id/metadata":            smallForm,
	"POST /aggregates/:id/metadata/validate":   smallForm,
	"POST /aggregates/:id/reservations":        smallForm,
	"POST /aggregates/:id/reservations/remove": smallForm,
	"POST /aggregates/:id/tenants":             smallForm,
	"POST /aggregates/:id/tenants/remove":      smallForm,
	"POST /flavors":                            smallForm,
	"POST /flavors/:id":                        smallForm,
	"POST /flavors/:id/delete":                 smallForm,
	"POST /flavors/validate":                   smallForm,
	"POST /providers/:id/inventory":            smallForm,
	"POST /providers/:id/traits":               smallForm,
	"POST /quotas/:project":                    smallForm,
	"POST /quotas/:project/reset":              smallForm,
	"POST /server-groups":                      smallForm,
	"POST /server-groups/:id/delete":           smallForm,
	"POST /server-groups/:id/members":          listForm,
	"POST /server-groups/:id/members/remove":   listForm,
	"POST /settings":                           smallForm,
	"POST /impact/inline":                      listForm,

	// Drafts, the world file, the cloud.
	"POST /drafts":                       smallForm,
	"POST /drafts/:id/apply":             smallForm,
	"POST /drafts/:id/changes":           listForm,
	"POST /drafts/:id/changes/:n/delete": smallForm,
	"POST /drafts/:id/discard":           smallForm,
	"POST /drafts/:id/rebase":            listForm,
	"POST /drafts/revert":                listForm,
	"POST /drafts/stage":                 listForm,
	"POST /world/preview":                worldUpload,
	"POST /world/apply":                  smallForm,
	"POST /cloud/drafts/:id/rollout":     smallForm,
	"POST /cloud/sync":                   smallForm,

	// The console's JSON API.
	"POST /api/drafts":             consoleJSON,
	"POST /api/drafts/:id/apply":   consoleJSON,
	"POST /api/drafts/:id/changes": consoleJSON,
	"POST /api/drafts/:id/preview": consoleJSON,
	"POST /api/preview":            consoleJSON,

	// The Nova-compatible API, with and without the project in the path.
	"POST /compute/v2.1/os-aggregates":                        novaJSON,
	"PUT /compute/v2.1/os-aggregates/:id":                     novaJSON,
	"POST /compute/v2.1/os-aggregates/:id/action":             novaJSON,
	"PUT /compute/v2.1/os-quota-sets/:id":                     novaJSON,
	"POST /compute/v2.1/os-server-groups":                     novaJSON,
	"POST /compute/v2.1/:project_id/os-aggregates":            novaJSON,
	"PUT /compute/v2.1/:project_id/os-aggregates/:id":         novaJSON,
	"POST /compute/v2.1/:project_id/os-aggregates/:id/action": novaJSON,
	"PUT /compute/v2.1/:project_id/os-quota-sets/:id":         novaJSON,
	"POST /compute/v2.1/:project_id/os-server-groups":         novaJSON,

	// The Placement-compatible API.
	"* /placement/resource_providers":                       placementJSON,
	"* /placement/resource_providers/:uuid":                 placementJSON,
	"* /placement/resource_providers/:uuid/aggregates":      placementJSON,
	"* /placement/resource_providers/:uuid/traits":          placementJSON,
	"* /placement/resource_providers/:uuid/inventories":     placementJSON,
	"* /placement/resource_providers/:uuid/inventories/:rc": placementJSON,
	"* /placement/resource_providers/:uuid/allocations":     placementJSON,
	"* /placement/resource_providers/:uuid/usages":          placementJSON,
	"* /placement/allocation_candidates":                    placementJSON,
	"* /placement/allocations":                              placementJSON,
	"* /placement/allocations/:consumer":                    placementJSON,
	"* /placement/resource_classes":                         placementJSON,
	"* /placement/resource_classes/:name":                   placementJSON,
	"* /placement/traits":                                   placementJSON,
	"* /placement/traits/:name":                             placementJSON,
	"* /placement/usages":                                   placementJSON,
}

// bodyless are the methods that carry no body.
var bodyless = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodDelete: true, http.MethodOptions: true,
}

// routeBodyLimit is the limit declared for a route (method and path as the
// router has them): its row, else none for a method without a body, else
// the row for the path under any method. ok is false for a route with a
// body and no row.
func routeBodyLimit(method, path string) (int64, bool) {
	if l, ok := routeBodyLimits[method+" "+path]; ok {
		return l, true
	}
	if bodyless[method] {
		return noBody, true
	}
	l, ok := routeBodyLimits["* "+path]
	return l, ok
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
