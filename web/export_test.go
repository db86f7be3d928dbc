package web

import "corral/handlers"

// RouteBodyLimit is routeBodyLimit, for the route-table test.
var RouteBodyLimit = routeBodyLimit

// RouteBodyLimitRows lists the declared body limits' keys.
func RouteBodyLimitRows() []string { return handlers.DeclaredBodyLimits() }
