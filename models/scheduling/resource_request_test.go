package scheduling

import (
	"fmt"
	"strings"
	"testing"

	"corral/models"
	"corral/models/placement"
)

// groupsText writes groups as "suffix:resources|required|!forbidden".
func groupsText(gs []placement.Group) string {
	var parts []string
	for _, g := range gs {
		var req []string
		for _, any := range g.Required {
			req = append(req, any...)
		}
		for _, t := range g.Forbidden {
			req = append(req, "!"+t)
		}
		parts = append(parts, fmt.Sprintf("%s:%s|%s", g.Suffix, resourcesText(g), strings.Join(req, ",")))
	}
	return strings.Join(parts, " ")
}

// Nova's resource request, case by case, from nova's
// nova/tests/unit/scheduler/test_utils.py (26.0.0).
func TestNovaResourceRequest(t *testing.T) {
	flavor := func(specs map[string]string) *models.Flavor {
		return &models.Flavor{VCPUs: 1, RAMMB: 1024, DiskGB: 10, EphemeralGB: 5, ExtraSpecs: specs}
	}
	for _, tc := range []struct {
		name   string
		f      *models.Flavor
		image  map[string]string
		bfv    bool
		want   string
		policy string
	}{
		// test_resources_from_request_spec_flavor_only
		{"flavor only", flavor(nil), nil, false, ":DISK_GB:15,MEMORY_MB:1024,VCPU:1|", ""},
		// test_resources_from_request_spec_with_no_disk
		{"no disk", &models.Flavor{VCPUs: 1, RAMMB: 1024}, nil, false, ":MEMORY_MB:1024,VCPU:1|", ""},
		// test_get_resources_from_request_spec_override_flavor_amounts
		{"override", flavor(map[string]string{"resources:VCPU": "99", "resources:MEMORY_MB": "99", "resources:DISK_GB": "99"}), nil, false,
			":DISK_GB:99,MEMORY_MB:99,VCPU:99|", ""},
		// test_get_resources_from_request_spec_remove_flavor_amounts
		{"remove", flavor(map[string]string{"resources:VCPU": "0", "resources:DISK_GB": "0"}), nil, false, ":MEMORY_MB:1024|", ""},
		// test_get_resources_from_request_spec_bad_std_resource_class
		{"bad class", flavor(map[string]string{"resources:DOESNT_EXIST": "0"}), nil, false, ":DISK_GB:15,MEMORY_MB:1024,VCPU:1|", ""},
		// test_resource_request_from_request_spec_with_image_props
		{"image traits", flavor(nil), map[string]string{"trait:CUSTOM_TRUSTED": "required", "trait:CUSTOM_X": "forbidden"}, false,
			":DISK_GB:15,MEMORY_MB:1024,VCPU:1|CUSTOM_TRUSTED", ""},
		// test_resource_request_from_request_spec_with_legacy_extra_specs
		{"dedicated", flavor(map[string]string{"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "isolate", "hw:emulator_threads_policy": "isolate"}), nil, false,
			":DISK_GB:15,MEMORY_MB:1024,PCPU:2|!HW_CPU_HYPERTHREADING", ""},
		// test_resource_request_from_request_spec_with_legacy_image_props
		{"dedicated image", flavor(nil), map[string]string{"hw_cpu_policy": "dedicated", "hw_cpu_thread_policy": "require"}, false,
			":DISK_GB:15,MEMORY_MB:1024,PCPU:1|HW_CPU_HYPERTHREADING", ""},
		// test_resource_request_from_request_spec_is_bfv: swap 1555 MiB is 2 GiB
		{"bfv", &models.Flavor{VCPUs: 1, RAMMB: 1024, DiskGB: 10, EphemeralGB: 5, SwapMB: 1555}, nil, true, ":DISK_GB:7,MEMORY_MB:1024,VCPU:1|", ""},
		{"not bfv with swap", &models.Flavor{VCPUs: 1, RAMMB: 1024, DiskGB: 10, EphemeralGB: 5, SwapMB: 1024}, nil, false, ":DISK_GB:16,MEMORY_MB:1024,VCPU:1|", ""},
		// the case: 20 GB root and 450 GB ephemeral ask 470
		{"ephemeral", &models.Flavor{VCPUs: 2, RAMMB: 2048, DiskGB: 20, EphemeralGB: 450}, nil, false, ":DISK_GB:470,MEMORY_MB:2048,VCPU:2|", ""},
		// a numbered VCPU keeps the flavor's out of the unnumbered group
		{"numbered vcpu", flavor(map[string]string{"resources1:VCPU": "2"}), nil, false, ":DISK_GB:15,MEMORY_MB:1024| 1:VCPU:2|", ""},
		{"bad policy", flavor(map[string]string{"group_policy": "strict", "resources1:VGPU": "1", "resources2:VGPU": "1"}), nil, false,
			":DISK_GB:15,MEMORY_MB:1024,VCPU:1| 1:VGPU:1| 2:VGPU:1|", ""},
	} {
		rr := NovaResourceRequest(tc.f, tc.image, tc.bfv)
		if got := groupsText(rr.Groups); got != tc.want || rr.GroupPolicy != tc.policy {
			t.Errorf("%s: %s (policy %q), want %s (%q)", tc.name, got, rr.GroupPolicy, tc.want, tc.policy)
		}
	}
}

// The query string is to_querystring's, byte for byte: nova's
// test_resource_request_from_request_spec_with_extra_specs (26.0.0); and
// Nova always adds root_required=!COMPUTE_STATUS_DISABLED
// (compute_status_filter).
func TestNovaResourceRequestQueryString(t *testing.T) {
	f := &models.Flavor{VCPUs: 1, RAMMB: 1024, DiskGB: 10, EphemeralGB: 5, ExtraSpecs: map[string]string{
		"resources:VCPU": "2", "resources:MEMORY_MB": "2048", "trait:HW_CPU_X86_AVX": "required", "nocolons": "42",
		"trait:CUSTOM_MAGIC": "required", "trait:CUSTOM_BRONZE": "forbidden", "resources86:CUTSOM_MISSPELLED": "86",
		"resources1:SRIOV_NET_VF": "1", "resources86:CUSTOM_FOO": "seven", "resources86:CUSTOM_NEGATIVE": "-7",
		"resources1:IPV4_ADDRESS": "1", "trait86:CUSTOM_GOLD": "preferred", "trait1:CUSTOM_PHYSNET_NET1": "required",
		"trait1:CUSTOM_PHYSNET_NET2": "forbidden", "resources2:SRIOV_NET_VF": "1", "resources2:IPV4_ADDRESS": "2",
		"trait2:CUSTOM_PHYSNET_NET2": "required", "trait2:HW_NIC_ACCEL_SSL": "required", "resources_*5:SRIOV_NET_VF": "7",
		"traitFoo$:HW_NIC_ACCEL_SSL": "required", "resources3:DISK_GB": "5", "group_policy": "isolate",
	}}
	rr := NovaResourceRequest(f, nil, false)
	rr.RootForbidden = nil // nova's unit test runs no request filter
	want := "group_policy=isolate&" +
		"limit=1000&" +
		"required=CUSTOM_MAGIC%2CHW_CPU_X86_AVX%2C%21CUSTOM_BRONZE&" +
		"required1=CUSTOM_PHYSNET_NET1%2C%21CUSTOM_PHYSNET_NET2&" +
		"required2=CUSTOM_PHYSNET_NET2%2CHW_NIC_ACCEL_SSL&" +
		"resources=MEMORY_MB%3A2048%2CVCPU%3A2&" +
		"resources1=IPV4_ADDRESS%3A1%2CSRIOV_NET_VF%3A1&" +
		"resources2=IPV4_ADDRESS%3A2%2CSRIOV_NET_VF%3A1&" +
		"resources3=DISK_GB%3A5"
	if got := rr.QueryString(1000, nil, nil); got != want {
		t.Errorf("query\n got %s\nwant %s", got, want)
	}
	plain := NovaResourceRequest(&models.Flavor{VCPUs: 1, RAMMB: 512}, nil, false)
	if got, want := plain.QueryString(1000, []string{"in:b,a"}, nil), "limit=1000&member_of=in%3Ab%2Ca&resources=MEMORY_MB%3A512%2CVCPU%3A1&root_required=%21COMPUTE_STATUS_DISABLED"; got != want {
		t.Errorf("query\n got %s\nwant %s", got, want)
	}
}

// A disabled compute service's host fails the placement stage with the
// compute_status_filter's reason, with and without inventories.
func TestComputeStatusDisabledHostExcluded(t *testing.T) {
	inv := map[string]models.Inventory{"VCPU": {Total: 8, AllocationRatio: 1}, "MEMORY_MB": {Total: 8192, AllocationRatio: 1}}
	for _, withInv := range []bool{false, true} {
		w := &models.World{Settings: models.DefaultSettings(), Providers: []models.Provider{
			{UUID: "11111111-1111-1111-1111-111111111111", Name: "cn1", Traits: []string{TraitComputeStatusDisabled}},
			{UUID: "22222222-2222-2222-2222-222222222222", Name: "cn2"},
		}}
		if withInv {
			w.Providers[0].Inventories, w.Providers[1].Inventories = inv, inv
		}
		s, err := NewSnapshot(w)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := s.Run(&RequestSpec{Flavor: FlavorRef{Inline: &models.Flavor{VCPUs: 1, RAMMB: 512}}})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Summary.HostsPassed != 1 {
			t.Fatalf("inventories %v: %d hosts passed, want 1", withInv, tr.Summary.HostsPassed)
		}
		for _, h := range tr.Hosts {
			if h.Name == "cn1" && (h.Passed || h.Stage != StagePlacement || !strings.Contains(h.Reason, "COMPUTE_STATUS_DISABLED")) {
				t.Errorf("inventories %v: cn1 %+v", withInv, h)
			}
		}
		if tr.Groups[0].HostsExcluded != 1 {
			t.Errorf("unnumbered group excluded %d hosts, want 1", tr.Groups[0].HostsExcluded)
		}
	}
}

// A request names an image's properties and a boot from volume; the run
// asks Placement for the image's traits and no root disk.
func TestRequestImageAndBootFromVolume(t *testing.T) {
	spec, err := DecodeRequestJSON([]byte(`{"flavor": {"vcpus": 1, "ram_mb": 512, "disk_gb": 500},
		"image": {"properties": {"trait:CUSTOM_TRUSTED": "required"}}, "is_bfv": true}`), "request")
	if err != nil {
		t.Fatal(err)
	}
	inv := map[string]models.Inventory{"VCPU": {Total: 8, AllocationRatio: 1}, "MEMORY_MB": {Total: 8192, AllocationRatio: 1}, "DISK_GB": {Total: 100, AllocationRatio: 1}}
	w := &models.World{Settings: models.DefaultSettings(), Providers: []models.Provider{
		{UUID: "11111111-1111-1111-1111-111111111111", Name: "cn1", Traits: []string{"CUSTOM_TRUSTED"}, Inventories: inv},
		{UUID: "22222222-2222-2222-2222-222222222222", Name: "cn2", Inventories: inv},
	}}
	s, err := NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Run(spec)
	if err != nil {
		t.Fatal(err)
	}
	// 500 GB of root disk would fit nowhere; a boot from volume asks none.
	if tr.Summary.HostsPassed != 1 || !tr.Hosts[0].Passed || tr.Hosts[0].Name != "cn1" {
		t.Errorf("hosts %+v", tr.Hosts)
	}
	if q := tr.Nova.AllocationCandidatesQuery; strings.Contains(q, "DISK_GB") || !strings.Contains(q, "required=CUSTOM_TRUSTED") {
		t.Errorf("query %s", q)
	}
	if _, err := DecodeRequestJSON([]byte(`{"image": {"name": "x"}}`), "request"); err == nil {
		t.Error("an image field other than properties was accepted")
	}
}
