package scheduling

import (
	"strings"
	"testing"

	"corral/models"
)

// tenantWorld tags the seed topology for seed 001: aggA belongs to tA,
// aggB to tB (under a suffixed key) and, as a comma list, to tC and tD —
// which only the post-filter can read.
func tenantWorld(w *models.World) {
	aggByName(w, "aggA").Metadata["filter_tenant_id"] = "tA"
	aggByName(w, "aggB").Metadata["filter_tenant_id2"] = "tB"
	aggByName(w, "aggC").Metadata["filter_tenant_id"] = "tB"
	aggByName(w, "aggB").Metadata["filter_tenant_id"] = "tC,tD"
}

// TestSeed001TenantIsolation covers the three steps of the request filter
// (look up the tenant's aggregates, require one of them, fail if none when
// required) with both settings.
func TestSeed001TenantIsolation(t *testing.T) {
	s := seedSnapshot(t, tenantWorld)
	on, off := ptr(true), ptr(false)
	cases := []struct {
		name             string
		project          string
		limit, required  *bool
		query            string // member_of part of the placement query
		hosts            string
		providerExcluded int
		err              string
	}{
		{"off: no restriction", "tA", off, off, "", "cn1 cn2", 0, ""},
		{"off: required alone has no effect", "tZ", off, on, "", "cn1 cn2", 0, ""},
		{"tA limited to aggA", "tA", on, off, "member_of=in:" + uuidAggA, "cn1", 5, ""},
		// aggC holds only cn1's child numa1_1, which does not make cn1 (the
		// provider of the host's own resources) a candidate.
		{"tB: one any-of group of both aggregates", "tB", on, off, "member_of=in:" + uuidAggB + "," + uuidAggC, "cn2", 2, ""},
		{"unknown tenant, not required: unrestricted", "tZ", on, off, "", "cn1 cn2", 0, ""},
		{"unknown tenant, required: fail", "tZ", on, on, "", "", 8, "no hosts available for tenant tZ"},
		{"comma list is invisible to the pre-filter", "tC", on, on, "", "", 8, "no hosts available for tenant tC"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := mustRun(t, s, &RequestSpec{ProjectID: c.project, Settings: &SettingsOverride{
				LimitTenantsToPlacementAggregate: c.limit, PlacementAggregateRequiredForTenants: c.required}})
			if tr.PlacementQuery != c.query {
				t.Errorf("query %q, want %q", tr.PlacementQuery, c.query)
			}
			if got := passingHosts(tr); got != c.hosts {
				t.Errorf("hosts %q, want %q", got, c.hosts)
			}
			if tr.Summary.ProvidersExcluded != c.providerExcluded {
				t.Errorf("providers excluded %d, want %d", tr.Summary.ProvidersExcluded, c.providerExcluded)
			}
			step := tr.RequestFilters[0]
			if step.Name != "require_tenant_aggregate" || step.Effect != c.query {
				t.Errorf("step %+v, want effect %q", step, c.query)
			}
			if c.err == "" {
				if tr.Error != nil {
					t.Errorf("unexpected error %q", *tr.Error)
				}
				return
			}
			if tr.Error == nil || !strings.HasPrefix(*tr.Error, c.err) {
				t.Fatalf("error %v, want %q", tr.Error, c.err)
			}
			// Every host fails at the request filter with the same reason.
			for _, h := range tr.Hosts {
				if h.Passed || h.Stage != "require_tenant_aggregate" || !strings.HasPrefix(h.Reason, c.err) {
					t.Errorf("host %+v", h)
				}
			}
			if st := tr.Summary.Stages[0]; st.Stage != "require_tenant_aggregate" || st.HostsExcluded != 2 {
				t.Errorf("stage %+v", st)
			}
		})
	}
}

// TestSeed001PostFilter contrasts the pre-filter with nova's
// AggregateMultiTenancyIsolation, which does read comma lists and keeps
// other tenants out rather than keeping the tenant in.
func TestSeed001PostFilter(t *testing.T) {
	s := seedSnapshot(t, tenantWorld)
	filters := &[]string{models.FilterAggregateMultiTenancy}
	cases := []struct {
		project string
		hosts   string
	}{
		{"tC", "cn2"}, // the comma list admits tC to cn2 (aggB)
		{"tA", "cn1"}, // cn2 belongs to other tenants
		{"tZ", ""},    // every host is tagged for someone else
		{"tB", "cn2"}, // cn1's aggregates (aggA) name tA only
	}
	for _, c := range cases {
		tr := mustRun(t, s, &RequestSpec{ProjectID: c.project, Settings: &SettingsOverride{EnabledFilters: filters}})
		if got := passingHosts(tr); got != c.hosts {
			t.Errorf("%s: hosts %q, want %q", c.project, got, c.hosts)
		}
		for _, h := range tr.Hosts {
			if !h.Passed && h.Stage != models.FilterAggregateMultiTenancy {
				t.Errorf("%s: host %s failed at %q", c.project, h.Name, h.Stage)
			}
		}
	}
}

// TestRequestFiltersAZAndIsolation covers the AZ mapping (no match adds
// nothing) and isolated aggregates (trait:<T>=required).
func TestRequestFiltersAZAndIsolation(t *testing.T) {
	s := seedSnapshot(t, func(w *models.World) {
		az := "az1"
		aggByName(w, "aggB").AvailabilityZone = &az
		aggByName(w, "aggA").Metadata["trait:CUSTOM_WINDOWS"] = "required"
		w.Flavors = append(w.Flavors, models.Flavor{ID: "win", Name: "win", ExtraSpecs: map[string]string{"trait:CUSTOM_WINDOWS": "required"}})
	})
	cases := []struct {
		name  string
		spec  RequestSpec
		query string
		hosts string
	}{
		{"az1 maps to aggB", RequestSpec{AvailabilityZone: "az1"}, "member_of=in:" + uuidAggB, "cn2"},
		{"unknown az adds nothing", RequestSpec{AvailabilityZone: "nowhere"}, "", "cn1 cn2"},
		{"az mapping off", RequestSpec{AvailabilityZone: "az1", Settings: &SettingsOverride{QueryPlacementForAvailabilityZone: ptr(false)}}, "", "cn1 cn2"},
		{"isolation off", RequestSpec{}, "", "cn1 cn2"},
		{"isolated aggregate forbidden", RequestSpec{Settings: &SettingsOverride{EnableIsolatedAggregateFiltering: ptr(true)}}, "member_of=!in:" + uuidAggA, "cn2"},
		{"flavor with the trait may use it", RequestSpec{Flavor: FlavorRef{Name: "win"}, Settings: &SettingsOverride{EnableIsolatedAggregateFiltering: ptr(true)}}, "required=CUSTOM_WINDOWS", "cn1 cn2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := mustRun(t, s, &c.spec)
			if tr.PlacementQuery != c.query {
				t.Errorf("query %q, want %q", tr.PlacementQuery, c.query)
			}
			if got := passingHosts(tr); got != c.hosts {
				t.Errorf("hosts %q, want %q", got, c.hosts)
			}
		})
	}
}
