package models

// Settings is the request-filter and host-filter configuration: corral's
// equivalent of nova.conf's [scheduler] and [filter_scheduler] sections.
type Settings struct {
	LimitTenantsToPlacementAggregate     bool     `json:"limit_tenants_to_placement_aggregate"`
	PlacementAggregateRequiredForTenants bool     `json:"placement_aggregate_required_for_tenants"`
	EnableIsolatedAggregateFiltering     bool     `json:"enable_isolated_aggregate_filtering"`
	QueryPlacementForAvailabilityZone    bool     `json:"query_placement_for_availability_zone"`
	RequiredMemberPrefix                 string   `json:"required_member_prefix"`
	DefaultForbiddenMemberPrefix         string   `json:"default_forbidden_member_prefix"`
	EnabledFilters                       []string `json:"enabled_filters"`
	SoftAffinityWeightMultiplier         float64  `json:"soft_affinity_weight_multiplier"`
	SoftAntiAffinityWeightMultiplier     float64  `json:"soft_anti_affinity_weight_multiplier"`
}

// Host filter names, as nova.conf spells them.
const (
	FilterAggregateInstanceExtraSpecs = "AggregateInstanceExtraSpecsFilter"
	FilterAggregateInstanceType       = "AggregateInstanceTypeFilter"
	FilterAggregateMultiTenancy       = "AggregateMultiTenancyIsolation"
	FilterServerGroupAffinity         = "ServerGroupAffinityFilter"
	FilterServerGroupAntiAffinity     = "ServerGroupAntiAffinityFilter"
)

// DefaultSettings is what a new console starts with (FORMATS.md's example).
func DefaultSettings() Settings {
	return Settings{
		QueryPlacementForAvailabilityZone: true,
		RequiredMemberPrefix:              "reservation:",
		DefaultForbiddenMemberPrefix:      "reservation:",
		EnabledFilters: []string{
			FilterAggregateInstanceExtraSpecs,
			FilterAggregateMultiTenancy,
			FilterServerGroupAffinity,
			FilterServerGroupAntiAffinity,
		},
		SoftAffinityWeightMultiplier:     1.0,
		SoftAntiAffinityWeightMultiplier: 1.0,
	}
}

// World is everything the filtering core needs to decide, normalised: every
// reference is a UUID (a provider's parent, an aggregate's members, a
// group's members) except a server's Host, which is the host's name.
// The JSON world format (FORMATS.md), which allows names, is decoded into it.
type World struct {
	Providers    []Provider
	Aggregates   []Aggregate
	Flavors      []Flavor
	Servers      []Server
	ServerGroups []ServerGroup
	Settings     Settings
	// Consumers are Placement's consumers with their allocations, ordered
	// by UUID. The core reads only the usages they add up to (Provider.
	// Usages); the world format carries them so that an export imports
	// back to the same allocations. The store's LoadWorld leaves them out.
	Consumers []Consumer
}
