package web

// RouteBodyLimit is routeBodyLimit, for the route-table test.
var RouteBodyLimit = routeBodyLimit

// RouteBodyLimitRows lists routeBodyLimits' keys.
func RouteBodyLimitRows() []string {
	out := make([]string, 0, len(routeBodyLimits))
	for k := range routeBodyLimits {
		out = append(out, k)
	}
	return out
}
