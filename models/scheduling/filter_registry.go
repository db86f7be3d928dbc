package scheduling

import "corral/models"

// hostFilters lists every host filter corral knows, in the default order:
// the aggregate-metadata filters first, then the tenant and server-group
// filters (the order DESIGN.md §4 gives). The filters are stateless, so one
// value of each serves every request.
var hostFilters = []HostFilter{
	AggregateInstanceExtraSpecsFilter{},
	AggregateInstanceTypeFilter{},
	AggregateMultiTenancyIsolation{},
	ServerGroupAffinityFilter{},
	ServerGroupAntiAffinityFilter{},
	ComputeCapabilitiesFilter{},
	ComputeFilter{},
	AvailabilityZoneFilter{},
	NumInstancesFilter{},
	AggregateNumInstancesFilter{},
	SameHostFilter{},
	DifferentHostFilter{},
}

// notModelledFilter stands for one of Nova's filters corral does not
// model (models.NotModelledFilters): every host passes, and says why.
type notModelledFilter struct{ name string }

func (f notModelledFilter) Name() string { return f.name }

func (f notModelledFilter) Filter(*HostState, *Request) Verdict {
	return Verdict{Passed: true, Reason: f.name + " is " + models.NotModelledHelp}
}

// LookupHostFilter finds a host filter by its nova.conf name (case-sensitive,
// as nova's enabled_filters is).
func LookupHostFilter(name string) (HostFilter, bool) {
	for _, f := range hostFilters {
		if f.Name() == name {
			return f, true
		}
	}
	return nil, false
}

// DefaultWeighers are the weighers every request is weighed with, in order.
// See weigher_affinity.go for what the pipeline does with their weights.
func DefaultWeighers() []Weigher {
	return []Weigher{ServerGroupSoftAffinityWeigher{}, ServerGroupSoftAntiAffinityWeigher{}}
}
