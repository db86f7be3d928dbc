package models

import "slices"

// Settings is the request-filter and host-filter configuration: corral's
// equivalent of nova.conf's [scheduler] and [filter_scheduler] sections.
type Settings struct {
	// NovaRelease is the code name of the Nova release previewed (see
	// NovaReleases); empty reads as the latest.
	NovaRelease                          string   `json:"nova_release"`
	LimitTenantsToPlacementAggregate     bool     `json:"limit_tenants_to_placement_aggregate"`
	PlacementAggregateRequiredForTenants bool     `json:"placement_aggregate_required_for_tenants"`
	EnableIsolatedAggregateFiltering     bool     `json:"enable_isolated_aggregate_filtering"`
	QueryPlacementForAvailabilityZone    bool     `json:"query_placement_for_availability_zone"`
	RequiredMemberPrefix                 string   `json:"required_member_prefix"`
	DefaultForbiddenMemberPrefix         string   `json:"default_forbidden_member_prefix"`
	EnabledFilters                       []string `json:"enabled_filters"`
	SoftAffinityWeightMultiplier         float64  `json:"soft_affinity_weight_multiplier"`
	SoftAntiAffinityWeightMultiplier     float64  `json:"soft_anti_affinity_weight_multiplier"`
	MaxPlacementResults                  float64  `json:"max_placement_results"`
	WeightClasses                        string   `json:"weight_classes"`
	RAMWeightMultiplier                  float64  `json:"ram_weight_multiplier"`
	CPUWeightMultiplier                  float64  `json:"cpu_weight_multiplier"`
	DiskWeightMultiplier                 float64  `json:"disk_weight_multiplier"`
	IoOpsWeightMultiplier                float64  `json:"io_ops_weight_multiplier"`
	NumInstancesWeightMultiplier         float64  `json:"num_instances_weight_multiplier"`
	BuildFailureWeightMultiplier         float64  `json:"build_failure_weight_multiplier"`
	HostSubsetSize                       float64  `json:"host_subset_size"`
	ShuffleBestSameWeighedHosts          bool     `json:"shuffle_best_same_weighed_hosts"`
	MaxInstancesPerHost                  float64  `json:"max_instances_per_host"`
	DefaultAvailabilityZone              string   `json:"default_availability_zone"`
}

// Host filter names, as nova.conf spells them.
const (
	FilterAggregateInstanceExtraSpecs = "AggregateInstanceExtraSpecsFilter"
	FilterAggregateInstanceType       = "AggregateInstanceTypeFilter"
	FilterAggregateMultiTenancy       = "AggregateMultiTenancyIsolation"
	FilterServerGroupAffinity         = "ServerGroupAffinityFilter"
	FilterServerGroupAntiAffinity     = "ServerGroupAntiAffinityFilter"
	FilterComputeCapabilities         = "ComputeCapabilitiesFilter"
	FilterCompute                     = "ComputeFilter"
	FilterAvailabilityZone            = "AvailabilityZoneFilter"
	FilterNumInstances                = "NumInstancesFilter"
	FilterAggregateNumInstances       = "AggregateNumInstancesFilter"
	FilterSameHost                    = "SameHostFilter"
	FilterDifferentHost               = "DifferentHostFilter"
)

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
	// Given, when set, records which fields each object's entry in the
	// source document named, so that a merge import can keep the fields a
	// file leaves out. Nil means the world was not decoded from a document.
	Given *Given
	// Consumers are Placement's consumers with their allocations, ordered
	// by UUID. The core reads only the usages they add up to (Provider.
	// Usages); the world format carries them so that an export imports
	// back to the same allocations. The store's LoadWorld leaves them out.
	Consumers []Consumer
}

// Fields is a set of the world format's optional fields (see Given).
type Fields uint32

// The optional fields of the world format's objects. Identity fields (uuid,
// id, and the name of providers, aggregates and flavors) are always given.
const (
	FieldParent      Fields = 1 << iota // providers
	FieldTraits                         // providers
	FieldInventories                    // providers
	FieldUsages                         // providers
	FieldAllocated                      // providers: the top-level allocations name it
	FieldZone                           // aggregates: availability_zone
	FieldMetadata                       // aggregates
	FieldMembers                        // aggregates, server groups
	FieldVCPUs                          // flavors
	FieldRAMMB                          // flavors
	FieldDiskGB                         // flavors
	FieldExtraSpecs                     // flavors
	FieldPrivate                        // flavors
	FieldProjects                       // flavors: the access list
	FieldName                           // servers, server groups
	FieldProjectID                      // servers, server groups
	FieldUserID                         // servers, server groups
	FieldHost                           // servers
	FieldPolicy                         // server groups
	FieldRules                          // server groups
	FieldEphemeralGB                    // flavors
	FieldSwapMB                         // flavors
	FieldCompute                        // providers: compute

	// AllFields is every field: what an object not from a document has.
	AllFields Fields = 1<<iota - 1
)

// Has reports whether every field of f is in s.
func (s Fields) Has(f Fields) bool { return s&f == f }

// Given is the record of which fields a world document named: one Fields
// per object, index-aligned with the world's lists, and the JSON names of
// the settings fields given.
type Given struct {
	Providers, Aggregates, Flavors, Servers, ServerGroups []Fields
	Settings                                              []string
}

// Clone returns a deep copy (nil stays nil).
func (g *Given) Clone() *Given {
	if g == nil {
		return nil
	}
	return &Given{
		Providers: slices.Clone(g.Providers), Aggregates: slices.Clone(g.Aggregates),
		Flavors: slices.Clone(g.Flavors), Servers: slices.Clone(g.Servers),
		ServerGroups: slices.Clone(g.ServerGroups), Settings: slices.Clone(g.Settings),
	}
}
