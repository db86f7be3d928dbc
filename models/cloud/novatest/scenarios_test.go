package novatest_test

import (
	"strconv"

	"corral/models/cloud/novatest"
)

// The parts of Nova's scheduling a scenario exercises: a host filter or
// weigher by its class name, or a part of the request.
const (
	pResources      = "request:resources"          // VCPU, MEMORY_MB, DISK_GB (root) from the flavor
	pDisk           = "request:disk"               // DISK_GB = root + ephemeral + swap
	pOverride       = "request:resources-override" // resources:CLASS=N
	pNested         = "request:provider-tree"      // a resource of a child provider
	pGranular       = "request:granular"           // resourcesN:, group_policy
	pTraits         = "request:traits"             // trait:T=required|forbidden
	pPCPU           = "request:pcpu"               // hw:cpu_policy=dedicated
	pImage          = "request:image"              // image properties (traits, ImagePropertiesFilter)
	pMultiCreate    = "request:multi-create"       // min_count > 1
	pTenant         = "request-filter:tenant"      // limit_tenants_to_placement_aggregate
	pZone           = "request-filter:az"          // query_placement_for_availability_zone
	pIsolate        = "request-filter:isolate"     // enable_isolated_aggregate_filtering
	pComputeStatus  = "request-filter:compute-status"
	pMemberships    = "memberships"         // Placement's aggregate members ≠ Nova's hosts
	pZedTenantKeys  = "release:tenant-keys" // Zed reads only filter_tenant_id exactly
	pReservationPfx = "corral:reservation-prefix"

	fExtraSpecs    = "AggregateInstanceExtraSpecsFilter"
	fTenant        = "AggregateMultiTenancyIsolation"
	fAffinity      = "ServerGroupAffinityFilter"
	fAntiAffinity  = "ServerGroupAntiAffinityFilter"
	fCompute       = "ComputeFilter"
	fZoneFilter    = "AvailabilityZoneFilter"
	fAggInstances  = "AggregateNumInstancesFilter"
	fSameHost      = "SameHostFilter"
	fDifferentHost = "DifferentHostFilter"
	fCapabilities  = "ComputeCapabilitiesFilter"
	fImageProps    = "ImagePropertiesFilter"
	wSoftAffinity  = "ServerGroupSoftAffinityWeigher"
	wSoftAnti      = "ServerGroupSoftAntiAffinityWeigher"
	wRAM           = "RAMWeigher"
	wCPU           = "CPUWeigher"
	wDisk          = "DiskWeigher"
	wIoOps         = "IoOpsWeigher"
	wPCI           = "PCIWeigher"
	wBuildFailure  = "BuildFailureWeigher"
	wCrossCell     = "CrossCellWeigher"
	wMetrics       = "MetricsWeigher"
	groupSoftAffin = "soft-affinity"
)

// mustAgree says, per part, whether corral must agree with the real
// scheduler on every request that exercises it (true) or the agreement is
// only reported (false, or not listed). A request must agree when every
// part it exercises — its scenario's, and the configuration's filters (and,
// for the chosen host, weighers) — must. When corral models a part, move
// it to true here.
var mustAgree = map[string]bool{
	pResources:    true,
	pOverride:     true,
	pNested:       true,
	pGranular:     true,
	pTraits:       true,
	pMultiCreate:  true,
	pTenant:       true,
	pZone:         true,
	pIsolate:      true,
	fExtraSpecs:   true,
	fTenant:       true,
	fAffinity:     true,
	fAntiAffinity: true,
	wSoftAffinity: true,
	wSoftAnti:     true,

	pDisk:           true,
	pPCPU:           true,
	pImage:          true,
	pComputeStatus:  true,
	pMemberships:    true,
	pZedTenantKeys:  true,
	pReservationPfx: true,
	fCompute:        true,
	fZoneFilter:     true,
	fAggInstances:   true,
	fSameHost:       true,
	fDifferentHost:  true,
	fCapabilities:   true,
	fImageProps:     false,
	wRAM:            true,
	wCPU:            true,
	wDisk:           true,
	wIoOps:          false,
	wPCI:            false,
	wBuildFailure:   false,
	wCrossCell:      false,
	wMetrics:        false,
}

// The cloud: hosts of every size Zed's fake drivers offer.
var hosts = []novatest.Host{
	{Name: "h1", Driver: novatest.DriverHuge},
	{Name: "h2", Driver: novatest.DriverMedium},
	{Name: "h3", Driver: novatest.DriverMedium},
	{Name: "h4", Driver: novatest.DriverSmall},
	{Name: "h5", Driver: novatest.DriverSmall},
	{Name: "h6", Driver: novatest.DriverNested},
}

const (
	imagePlain = "0a000000-0000-4000-8000-000000000001"
	imageQemu  = "0a000000-0000-4000-8000-000000000002"
	imageFast  = "0a000000-0000-4000-8000-000000000003"
)

var images = []novatest.Image{
	{ID: imagePlain, Name: "plain"},
	// No fake host runs qemu: ImagePropertiesFilter refuses every host.
	{ID: imageQemu, Name: "qemu-only", Properties: map[string]string{"img_hv_type": "qemu", "hw_architecture": "x86_64"}},
	// Nova adds the image's required traits to the Placement request.
	{ID: imageFast, Name: "fast-only", Properties: map[string]string{"trait:CUSTOM_FAST": "required"}},
}

// flavor is one flavor the test creates (its id is its name).
type flavor struct {
	name               string
	vcpus, ram, disk   int
	ephemeral, swapMiB int
	specs              map[string]string
}

var flavors = []flavor{
	{name: "tiny", vcpus: 1, ram: 256, disk: 1},
	{name: "big-ram", vcpus: 1, ram: 16000, disk: 1},
	{name: "big-disk", vcpus: 1, ram: 256, disk: 1, ephemeral: 1000, swapMiB: 30 * 1024},
	{name: "ram-override", vcpus: 1, ram: 256, disk: 1, specs: map[string]string{"resources:MEMORY_MB": "16000"}},
	{name: "magic", vcpus: 1, ram: 256, disk: 1, specs: map[string]string{"resources:CUSTOM_MAGIC": "1"}},
	{name: "magic-granular", vcpus: 1, ram: 256, disk: 1, specs: map[string]string{"resources1:CUSTOM_MAGIC": "1", "group_policy": "none"}},
	{name: "not-fast", vcpus: 1, ram: 256, disk: 1, specs: map[string]string{"trait:CUSTOM_FAST": "forbidden"}},
	{name: "ssd-scoped", vcpus: 1, ram: 256, disk: 1, specs: map[string]string{"aggregate_instance_extra_specs:ssd": "true"}},
	{name: "ssd-unscoped", vcpus: 1, ram: 256, disk: 1, specs: map[string]string{"ssd": "true"}},
	// Unscoped, and an attribute of Nova's host state: ComputeCapabilitiesFilter
	// judges it (the fake hosts' hypervisor is "fake"); an unscoped key that
	// is not one (ssd) it ignores.
	{name: "qemu-unscoped", vcpus: 1, ram: 256, disk: 1, specs: map[string]string{"hypervisor_type": "QEMU"}},
	{name: "speed", vcpus: 1, ram: 256, disk: 1, specs: map[string]string{"aggregate_instance_extra_specs:cpu_speed": ">= 2500"}},
	{name: "pinned", vcpus: 1, ram: 256, disk: 1, specs: map[string]string{"hw:cpu_policy": "dedicated"}},
	{name: "iso", vcpus: 1, ram: 256, disk: 1, specs: map[string]string{"trait:CUSTOM_ISO": "required"}},
}

// boot is one request of a scenario; group names a group the scenario's
// setup made.
type boot struct {
	flavor, image, zone, project, group string
	count                               int
	// sameHostAs and differentHostFrom name an earlier boot of the
	// scenario (from 1) whose first server the hint names.
	sameHostAs, differentHostFrom int
}

// scenario is a state of the cloud (setup, undone by the cleanups it
// registers) and the requests booted on it, one after the other.
type scenario struct {
	name  string
	parts []string
	setup func(e *env)
	boots []boot
	// restrictedOnly scenarios are not booted again under Zed's defaults:
	// those turn off what they exercise, or add nothing but weigher figures
	// the other scenarios report already (the cloud's time is the test's).
	restrictedOnly bool
}

var scenarios = []scenario{
	{name: "plain", parts: []string{pResources, wRAM}, boots: []boot{{flavor: "tiny"}}},
	{name: "big-ram", restrictedOnly: true, parts: []string{pResources}, boots: []boot{{flavor: "big-ram"}}},
	{name: "cpu-or-ram", parts: []string{pZone, wCPU, wRAM, wDisk},
		setup: func(e *env) { e.aggregate("cpu-or-ram", "az-cpu", []string{"h3", "h5"}, nil) },
		boots: []boot{{flavor: "tiny", zone: "az-cpu"}}},
	{name: "ephemeral-and-swap", parts: []string{pDisk}, boots: []boot{{flavor: "big-disk"}}},
	{name: "resources-override", restrictedOnly: true, parts: []string{pOverride}, boots: []boot{{flavor: "ram-override"}}},
	{name: "child-provider-resource", restrictedOnly: true, parts: []string{pOverride, pNested}, boots: []boot{{flavor: "magic"}}},
	{name: "numbered-group", restrictedOnly: true, parts: []string{pGranular, pNested}, boots: []boot{{flavor: "magic-granular"}}},
	{name: "traits", parts: []string{pTraits},
		setup: func(e *env) { e.trait("CUSTOM_FAST", "h2", "h3") },
		boots: []boot{{flavor: "not-fast"}}},
	{name: "aggregate-extra-specs", restrictedOnly: true, parts: []string{fExtraSpecs},
		setup: func(e *env) { e.aggregate("ssd", "", []string{"h2", "h4"}, map[string]string{"ssd": "true"}) },
		boots: []boot{{flavor: "ssd-scoped"}}},
	{name: "unscoped-extra-spec", parts: []string{fExtraSpecs, fCapabilities},
		setup: func(e *env) { e.aggregate("ssd", "", []string{"h2", "h4"}, map[string]string{"ssd": "true"}) },
		boots: []boot{{flavor: "ssd-unscoped"}, {flavor: "qemu-unscoped"}}},
	{name: "extra-spec-operator", restrictedOnly: true, parts: []string{fExtraSpecs},
		setup: func(e *env) {
			e.aggregate("fast-cpus", "", []string{"h3"}, map[string]string{"cpu_speed": "3000"})
			e.aggregate("slow-cpus", "", []string{"h5"}, map[string]string{"cpu_speed": "2000"})
		},
		boots: []boot{{flavor: "speed"}}},
	{name: "tenant-isolation", restrictedOnly: true, parts: []string{fTenant, pTenant},
		setup: func(e *env) {
			e.aggregate("tenant-a", "", []string{"h3", "h5"}, map[string]string{"filter_tenant_id": "project-a"})
		},
		boots: []boot{{flavor: "tiny", project: "project-b"}, {flavor: "tiny", project: "project-a"}}},
	{name: "tenant-key-with-suffix", parts: []string{fTenant, pTenant, pZedTenantKeys},
		setup: func(e *env) {
			e.aggregate("tenant-c", "", []string{"h2"}, map[string]string{"filter_tenant_id_2": "project-c"})
		},
		boots: []boot{{flavor: "tiny", project: "project-d"}}},
	{name: "availability-zone", parts: []string{pZone},
		setup: func(e *env) { e.aggregate("zone-a", "az-a", []string{"h4", "h5"}, nil) },
		boots: []boot{{flavor: "tiny", zone: "az-a"}}},
	{name: "affinity", parts: []string{fAffinity},
		setup: func(e *env) { e.group("aff", "affinity", nil) },
		boots: []boot{{flavor: "tiny", group: "aff"}, {flavor: "tiny", group: "aff"}}},
	{name: "anti-affinity", restrictedOnly: true, parts: []string{fAntiAffinity, pZone},
		setup: func(e *env) {
			e.aggregate("zone-b", "az-b", []string{"h2", "h3"}, nil)
			e.group("anti", "anti-affinity", nil)
		},
		boots: []boot{{flavor: "tiny", group: "anti", zone: "az-b"}, {flavor: "tiny", group: "anti", zone: "az-b"}}},
	{name: "anti-affinity-two-per-host", restrictedOnly: true, parts: []string{fAntiAffinity, pZone},
		setup: func(e *env) {
			e.aggregate("zone-c", "az-c", []string{"h4"}, nil)
			e.group("anti2", "anti-affinity", map[string]int{"max_server_per_host": 2})
		},
		boots: []boot{{flavor: "tiny", group: "anti2", zone: "az-c"}, {flavor: "tiny", group: "anti2", zone: "az-c"},
			{flavor: "tiny", group: "anti2", zone: "az-c"}}},
	{name: "soft-affinity", parts: []string{wSoftAffinity},
		setup: func(e *env) { e.group("soft", groupSoftAffin, nil) },
		boots: []boot{{flavor: "tiny", group: "soft"}, {flavor: "tiny", group: "soft"}}},
	{name: "soft-anti-affinity", parts: []string{wSoftAnti},
		setup: func(e *env) { e.group("soft-anti", "soft-anti-affinity", nil) },
		boots: []boot{{flavor: "tiny", group: "soft-anti"}, {flavor: "tiny", group: "soft-anti"}}},
	{name: "multi-create-anti-affinity", restrictedOnly: true, parts: []string{pMultiCreate, fAntiAffinity},
		setup: func(e *env) { e.group("multi", "anti-affinity", nil) },
		boots: []boot{{flavor: "tiny", group: "multi", count: 3}}},
	{name: "disabled-compute", parts: []string{pComputeStatus, fCompute, pZone},
		setup: func(e *env) {
			// Nova refuses a zone whose every compute is disabled.
			e.aggregate("zone-d", "az-d", []string{"h4", "h5"}, nil)
			e.service("h5", map[string]any{"status": "disabled", "disabled_reason": "test"}, map[string]any{"status": "enabled"})
		},
		boots: []boot{{flavor: "tiny", zone: "az-d"}}},
	{name: "forced-down-compute", parts: []string{fCompute, pZone},
		setup: func(e *env) {
			e.aggregate("zone-e", "az-e", []string{"h4"}, nil)
			e.service("h4", map[string]any{"forced_down": true}, map[string]any{"forced_down": false})
		},
		boots: []boot{{flavor: "tiny", zone: "az-e"}}},
	{name: "image-properties", parts: []string{fImageProps, pImage}, boots: []boot{{flavor: "tiny", image: imageQemu}}},
	{name: "image-traits", parts: []string{pImage, pTraits},
		setup: func(e *env) { e.trait("CUSTOM_FAST", "h2", "h3") },
		boots: []boot{{flavor: "tiny", image: imageFast}}},
	{name: "isolated-aggregate", restrictedOnly: true, parts: []string{pIsolate, pTraits},
		setup: func(e *env) {
			e.trait("CUSTOM_ISO", "h5")
			e.aggregate("iso", "", []string{"h5"}, map[string]string{"trait:CUSTOM_ISO": "required"})
		},
		boots: []boot{{flavor: "tiny"}, {flavor: "iso"}}},
	{name: "placement-membership-differs", restrictedOnly: true, parts: []string{pMemberships, pTenant, fTenant},
		setup: func(e *env) {
			e.aggregate("tenant-e", "", []string{"h4", "h5"}, map[string]string{"filter_tenant_id": "project-e"})
			e.leavePlacementAggregate("tenant-e", "h5")
		},
		boots: []boot{{flavor: "tiny", project: "project-e"}}},
	{name: "reservation-key", parts: []string{pReservationPfx},
		setup: func(e *env) {
			e.aggregate("reserved", "", []string{"h2"}, map[string]string{"reservation:lease": "l1"})
		},
		boots: []boot{{flavor: "tiny"}}},
	{name: "dedicated-cpus", parts: []string{pPCPU}, boots: []boot{{flavor: "pinned"}}},
	{name: "same-and-different-host", restrictedOnly: true, parts: []string{fSameHost, fDifferentHost},
		boots: []boot{{flavor: "tiny"}, {flavor: "tiny", sameHostAs: 1}, {flavor: "tiny", differentHostFrom: 1}}},
	// h3 is full at its aggregate's limit (its instances now); h5 has room
	// for one more, so a multi-create of two takes one there at most.
	{name: "aggregate-instance-limit", restrictedOnly: true, parts: []string{fAggInstances, pMultiCreate},
		setup: func(e *env) {
			e.aggregate("full", "", []string{"h3"}, map[string]string{"max_instances_per_host": strconv.Itoa(e.instancesOn("h3"))})
			e.aggregate("one-left", "", []string{"h5"}, map[string]string{"max_instances_per_host": strconv.Itoa(e.instancesOn("h5") + 1)})
		},
		boots: []boot{{flavor: "tiny"}, {flavor: "tiny", count: 2}}},
}
