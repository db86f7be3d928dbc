package scheduling

import (
	"reflect"
	"strings"
	"testing"

	"corral/models"
)

func TestRegistry(t *testing.T) {
	want := []string{
		models.FilterAggregateInstanceExtraSpecs,
		models.FilterAggregateInstanceType,
		models.FilterAggregateMultiTenancy,
		models.FilterServerGroupAffinity,
		models.FilterServerGroupAntiAffinity,
		models.FilterComputeCapabilities,
		models.FilterCompute,
		models.FilterAvailabilityZone,
		models.FilterNumInstances,
		models.FilterAggregateNumInstances,
		models.FilterSameHost,
		models.FilterDifferentHost,
	}
	if got := HostFilterNames(); !reflect.DeepEqual(got, want) {
		t.Fatalf("HostFilterNames() = %v, want %v", got, want)
	}
	for _, name := range want {
		f, ok := LookupHostFilter(name)
		if !ok || f.Name() != name {
			t.Errorf("LookupHostFilter(%q) = %v, %v", name, f, ok)
		}
	}
	for _, name := range models.DefaultSettings().EnabledFilters {
		if _, ok := LookupHostFilter(name); !ok {
			t.Errorf("default enabled filter %q is unknown", name)
		}
	}
	for _, bad := range []string{"", "aggregateinstanceextraspecsfilter", "ImagePropertiesFilter"} {
		if _, ok := LookupHostFilter(bad); ok {
			t.Errorf("LookupHostFilter(%q) found a filter", bad)
		}
	}
	ws := DefaultWeighers()
	if len(ws) != 2 || ws[0].Name() != WeigherSoftAffinity || ws[1].Name() != WeigherSoftAntiAffinity {
		t.Errorf("DefaultWeighers() = %v", ws)
	}
}

// TestFiltersTolerateEmptyInput: no filter panics on a host without
// aggregates, a nil aggregate or a request without flavor or group.
func TestFiltersTolerateEmptyInput(t *testing.T) {
	hosts := []*HostState{
		hfHost("bare"),
		{Provider: &models.Provider{Name: "nil-agg"}, Aggregates: []*models.Aggregate{nil, {Metadata: nil}}},
	}
	// Nova's own defaults (max_instances_per_host 50, …) in force.
	def := models.DefaultSettings()
	reqs := []*Request{{Settings: def}, hfRequest(nil), {Group: &models.ServerGroup{Policy: models.PolicyAntiAffinity}, Settings: def}}
	for _, name := range HostFilterNames() {
		f, _ := LookupHostFilter(name)
		for _, h := range hosts {
			for _, r := range reqs {
				if v := f.Filter(h, r); !v.Passed {
					t.Errorf("%s on %s with %+v failed: %s", name, h.Name(), r, v.Reason)
				}
			}
		}
	}
}

func TestAggregateMultiTenancyIsolation(t *testing.T) {
	// A passing reason is followed by "|" and the host's tenants.
	const among = "the project is among the host's tenants|"
	cases := []struct {
		name    string
		aggs    []map[string]string
		project string
		pass    bool
		reason  string
	}{
		{"unrestricted", []map[string]string{{"ssd": "true"}}, "tA", true, "no aggregate of the host restricts tenants"},
		{"own", []map[string]string{{"filter_tenant_id": "tA"}}, "tA", true, among + "{tA}"},
		{"other", []map[string]string{{"filter_tenant_id": "tA"}}, "tB", false,
			`project "tB" is not among the host's tenants {tA} (filter_tenant_id keys)`},
		{"comma list", []map[string]string{{"filter_tenant_id": "tA, tB"}}, "tB", true, among + "{tA, tB}"},
		{"suffixed keys", []map[string]string{{"filter_tenant_id": "tA", "filter_tenant_id2": "tC"}}, "tC", true, among + "{tA, tC}"},
		{"any prefix", []map[string]string{{"filter_tenant_ids": "tD", "filter_tenant_id:x": "tE"}}, "tE", true, among + "{tD, tE}"},
		{"union over aggregates", []map[string]string{{"filter_tenant_id": "tA"}, {"filter_tenant_id": "tB"}}, "tB", true, among + "{tA, tB}"},
		{"restricted plus unrestricted", []map[string]string{{"filter_tenant_id": "tA"}, {}}, "tB", false,
			`project "tB" is not among the host's tenants {tA} (filter_tenant_id keys)`},
		{"empty value", []map[string]string{{"filter_tenant_id": ""}}, "tA", false,
			`project "tA" is not among the host's tenants {""} (filter_tenant_id keys)`},
		{"case-sensitive", []map[string]string{{"filter_tenant_id": "TA"}}, "tA", false,
			`project "tA" is not among the host's tenants {TA} (filter_tenant_id keys)`},
		{"key case-sensitive", []map[string]string{{"Filter_Tenant_Id": "tA"}}, "tB", true, "no aggregate of the host restricts tenants"},
	}
	for _, c := range cases {
		r := hfRequest(nil)
		r.ProjectID = c.project
		h := hfHost("h", c.aggs...)
		v := AggregateMultiTenancyIsolation{}.Filter(h, r)
		reason, tenants, _ := strings.Cut(c.reason, "|")
		if v.Passed != c.pass || v.Reason != reason {
			t.Errorf("%s: got %v %q, want %v %q", c.name, v.Passed, v.Reason, c.pass, reason)
		}
		if tenants != "" {
			if got := hfFormatValues(TenantsOf(h)); got != tenants {
				t.Errorf("%s: TenantsOf = %s, want %s", c.name, got, tenants)
			}
		}
	}
}

func TestExtraSpecAggregateKey(t *testing.T) {
	cases := []struct {
		in, out string
		ok      bool
	}{
		{"ssd", "ssd", true},
		{"aggregate_instance_extra_specs:ssd", "ssd", true},
		{"aggregate_instance_extra_specs:a:b", "a:b", true},
		{"aggregate_instance_extra_specs", "aggregate_instance_extra_specs", true},
		{"hw:cpu_policy", "", false},
		{"Aggregate_Instance_Extra_Specs:ssd", "", false},
		{":ssd", "", false},
	}
	for _, c := range cases {
		out, ok := ExtraSpecAggregateKey(c.in)
		if out != c.out || ok != c.ok {
			t.Errorf("ExtraSpecAggregateKey(%q) = %q, %v; want %q, %v", c.in, out, ok, c.out, c.ok)
		}
	}
}

// TestFiltersTolerateMissingProvider: a host without a provider (a bug
// elsewhere) must not crash a filter or weigher.
func TestFiltersTolerateMissingProvider(t *testing.T) {
	r := hfGroupRequest(models.PolicyAntiAffinity, nil, 1)
	r.GroupHosts["cn1"] = 1
	for _, h := range []*HostState{nil, {}} {
		for _, name := range HostFilterNames() {
			f, _ := LookupHostFilter(name)
			f.Filter(h, r)
		}
		for _, w := range DefaultWeighers() {
			w.Weigh(h, r)
		}
		if got := AntiAffinityRoom(h, r); got != 1 {
			t.Errorf("room on an unnamed host = %d, want 1", got)
		}
	}
}
