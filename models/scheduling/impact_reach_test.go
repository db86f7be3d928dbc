package scheduling

import (
	"testing"

	"corral/models"
	"corral/models/cloudgen"
)

// reachWorld is the small generated cloud plus a host only project acme
// may use, with metadata special=yes, and two flavors: "special" (fits
// only acme, on that host) and "nowhere" (fits nobody).
func reachWorld(t *testing.T) *models.World {
	t.Helper()
	w := cloudgen.Generate(cloudgen.Small())
	// A new host with room, in no other aggregate.
	host := "99999999-0000-4000-8000-000000000002"
	inv := func(total int64) models.Inventory { return models.Inventory{Total: total, AllocationRatio: 1} }
	w.Providers = append(w.Providers, models.Provider{UUID: host, Name: "zz-special", RootUUID: host,
		Inventories: map[string]models.Inventory{"VCPU": inv(16), "MEMORY_MB": inv(65536), "DISK_GB": inv(1000)}})
	w.Aggregates = append(w.Aggregates, models.Aggregate{ID: 9999, UUID: "99999999-0000-4000-8000-000000000001", Name: "only-acme",
		Metadata: map[string]string{"filter_tenant_id": "acme", "special": "yes"}, Members: []string{host}})
	w.Flavors = append(w.Flavors,
		models.Flavor{ID: "special", Name: "special", VCPUs: 1, RAMMB: 256, ExtraSpecs: map[string]string{"aggregate_instance_extra_specs:special": "yes"}},
		models.Flavor{ID: "nowhere", Name: "nowhere", VCPUs: 1, RAMMB: 256, ExtraSpecs: map[string]string{"aggregate_instance_extra_specs:special": "no"}},
		models.Flavor{ID: "private", Name: "private", VCPUs: 1, RAMMB: 256, ExtraSpecs: map[string]string{"aggregate_instance_extra_specs:special": "yes"},
			Private: true, Projects: []string{"acme"}})
	return w
}

// TestFlavorsReachAgreesWithWholeRuns holds the factored answer to every
// project × flavor pair run through the whole pipeline, under settings
// that change what tenants may reach.
func TestFlavorsReachAgreesWithWholeRuns(t *testing.T) {
	variants := map[string]func(*models.Settings){
		"default":              func(*models.Settings) {},
		"tenants in placement": func(s *models.Settings) { s.LimitTenantsToPlacementAggregate = true },
		"tenant aggregate req.": func(s *models.Settings) {
			s.LimitTenantsToPlacementAggregate, s.PlacementAggregateRequiredForTenants = true, true
		},
		"isolated aggregates": func(s *models.Settings) { s.EnableIsolatedAggregateFiltering = true },
	}
	for name, set := range variants {
		t.Run(name, func(t *testing.T) {
			w := reachWorld(t)
			set(&w.Settings)
			s, err := NewSnapshot(w)
			if err != nil {
				t.Fatal(err)
			}
			var flavors []string
			for _, f := range w.Flavors {
				flavors = append(flavors, f.Name)
			}
			got, err := s.FlavorsReach(flavors)
			if err != nil {
				t.Fatal(err)
			}
			projects := []string{AnyOtherProject}
			seen := map[string]bool{}
			for _, a := range w.Aggregates {
				for _, p := range TenantTags(a.Metadata) {
					if !seen[p] {
						seen[p] = true
						projects = append(projects, p)
					}
				}
			}
			m, err := ComputeImpactWith(s, s, ImpactOptions{Projects: projects, Flavors: flavors, WholeRuns: true})
			if err != nil {
				t.Fatal(err)
			}
			fits := map[string]bool{}
			for j, f := range flavors {
				want := false
				for i := range m.Cells {
					want = want || m.Cells[i][j].Live > 0
				}
				fits[f] = want
				if got[j].Flavor != f || got[j].Fits != want {
					t.Errorf("%s: FlavorsReach %+v, whole runs say fits=%v", f, got[j], want)
				}
			}
			if !fits["special"] || !fits["private"] || fits["nowhere"] {
				t.Errorf("the test's flavors: %v", fits)
			}
		})
	}
}
