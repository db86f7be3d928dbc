package scheduling

import (
	"strings"
	"testing"

	"corral/models"
)

// ComputeCapabilitiesFilter, with cases from nova's
// test_compute_capabilities_filters.py (26.0.0): a scoped capability the
// host lacks fails it; an unscoped key HostState lacks, or another scope,
// is ignored; HostState's attributes are matched with extra_specs_ops.
func TestComputeCapabilitiesFilter(t *testing.T) {
	h := &HostState{Provider: &models.Provider{UUID: "u1", Name: "host1", Inventories: map[string]models.Inventory{
		"MEMORY_MB": {Total: 2048, Reserved: 512, AllocationRatio: 1.5}, "VCPU": {Total: 8, AllocationRatio: 16},
	}, Usages: map[string]int64{"MEMORY_MB": 512, "VCPU": 2}}, numInstances: 3}
	for _, tc := range []struct {
		specs  map[string]string
		pass   bool
		reason string
	}{
		// test_compute_filter_fails_without_capabilites
		{map[string]string{"capabilities:opts": "1"}, false, `no capability "opts"`},
		// the unscoped trap: ignored here (AggregateInstanceExtraSpecsFilter reads it)
		{map[string]string{"ssd": "true"}, true, "match"},
		// test_compute_filter_pass_extra_specs_simple_with_wrong_scope
		{map[string]string{"wrong_scope:opt1": "1", "aggregate_instance_extra_specs:ssd": "true", "hw:cpu_policy": "dedicated"}, true, "match"},
		{map[string]string{"free_ram_mb": ">= 1024"}, true, "match"},
		{map[string]string{"capabilities:free_ram_mb": ">= 1025"}, false, "free_ram_mb=1024"},
		{map[string]string{"vcpus_used": "2", "vcpus_total": "<in> 8", "num_instances": "s== 3"}, true, "match"},
		{map[string]string{"cpu_allocation_ratio": "16.0", "ram_allocation_ratio": "1.5"}, true, "match"},
		{map[string]string{"host": "<or> host2 <or> host3"}, false, "host=host1"},
		{map[string]string{"free_ram_mb": ">= lots"}, false, "lots"},
		// attributes corral does not hold pass, saying so
		{map[string]string{"hypervisor_type": "QEMU", "capabilities:cpu_info:arch": "x86_64"}, true, "cannot know"},
	} {
		r := hfRequest(tc.specs)
		v := ComputeCapabilitiesFilter{}.Filter(h, r)
		if v.Passed != tc.pass || !strings.Contains(v.Reason, tc.reason) {
			t.Errorf("%v: passed %v %q, want %v %q", tc.specs, v.Passed, v.Reason, tc.pass, tc.reason)
		}
	}
	// hw:maxphysaddr_bits is read as a cpu_info capability from nova 29
	// on: corral cannot know it; before, it is ignored.
	r := hfRequest(map[string]string{"hw:maxphysaddr_bits": "42"})
	if v := (ComputeCapabilitiesFilter{}).Filter(h, r); !v.Passed || !strings.Contains(v.Reason, "maxphysaddr") {
		t.Errorf("caracal+: %+v", v)
	}
	r.Settings.NovaRelease = "zed"
	if v := (ComputeCapabilitiesFilter{}).Filter(h, r); !v.Passed || strings.Contains(v.Reason, "maxphysaddr") {
		t.Errorf("zed: %+v", v)
	}
}

// A synced compute node's hypervisor_type, hypervisor_version and host_ip
// are judged as Nova's HostState holds them (the classic unscoped
// hypervisor_type=QEMU on hosts of another hypervisor fails them all);
// without a synced node they pass, saying corral cannot know.
func TestComputeCapabilitiesFromTheComputeNode(t *testing.T) {
	h := &HostState{Provider: &models.Provider{UUID: "u1", Name: "host1",
		Compute: &models.ComputeHost{HypervisorType: "fake", HypervisorVersion: 1000, HostIP: "192.0.2.7"}}}
	for _, tc := range []struct {
		specs  map[string]string
		pass   bool
		reason string
	}{
		{map[string]string{"hypervisor_type": "QEMU"}, false, "does not match the host's hypervisor_type=fake"},
		{map[string]string{"hypervisor_type": "s== fake"}, true, "match"},
		{map[string]string{"capabilities:hypervisor_version": ">= 2000"}, false, "hypervisor_version=1000"},
		{map[string]string{"hypervisor_version": ">= 1000", "host_ip": "192.0.2.7"}, true, "match"},
	} {
		v := ComputeCapabilitiesFilter{}.Filter(h, hfRequest(tc.specs))
		if v.Passed != tc.pass || !strings.Contains(v.Reason, tc.reason) {
			t.Errorf("%v: passed %v %q, want %v %q", tc.specs, v.Passed, v.Reason, tc.pass, tc.reason)
		}
	}
	h.Provider.Compute = nil
	if v := (ComputeCapabilitiesFilter{}).Filter(h, hfRequest(map[string]string{"hypervisor_type": "QEMU"})); !v.Passed || !strings.Contains(v.Reason, "cannot know") {
		t.Errorf("without a synced node: %+v", v)
	}
}
