package query

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
	"corral/models/scheduling"
	"corral/models/store"
)

// editAggregate returns a copy of w with fn applied to the aggregate named
// name (the test fails if there is none). The copy shares nothing mutable
// with w's aggregates.
func editAggregate(t testing.TB, w *models.World, name string, fn func(a *models.Aggregate)) *models.World {
	t.Helper()
	c := *w
	c.Aggregates = make([]models.Aggregate, len(w.Aggregates))
	found := false
	for i, a := range w.Aggregates {
		a.Metadata = maps.Clone(a.Metadata)
		a.Members = slices.Clone(a.Members)
		if a.Name == name {
			fn(&a)
			found = true
		}
		c.Aggregates[i] = a
	}
	if !found {
		t.Fatalf("no aggregate %s", name)
	}
	return &c
}

func mustState(t testing.TB, w *models.World) *state {
	t.Helper()
	st, err := newState(w)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return st
}

// cellMap indexes a matrix by "project/flavor".
func cellMap(m *scheduling.Impact) map[string]scheduling.ImpactCell {
	out := map[string]scheduling.ImpactCell{}
	for i := range m.Cells {
		for _, c := range m.Cells[i] {
			out[c.Project+"/"+c.Flavor] = c
		}
	}
	return out
}

// The demo's free pool before the operator forbids it: live data without
// the pool's reservation key, the draft with it. Every tenant loses cn7
// (the pool's host) for exactly the flavors that could land there, and
// nothing else changes.
func TestImpactOfForbiddingTheFreePool(t *testing.T) {
	tagged := store.DemoWorld()
	live := editAggregate(t, tagged, "blazar-freepool", func(a *models.Aggregate) { delete(a.Metadata, "reservation:freepool") })
	ls, ds := mustState(t, live), mustState(t, tagged)
	projects := ls.options().Projects
	if !slices.Equal(projects, []string{"acme", "acme-dev", "globex"}) {
		t.Fatalf("demo projects = %v", projects)
	}
	m, err := scheduling.ComputeImpact(ls.snap, ds.snap, projects, ls.options().Flavors)
	if err != nil {
		t.Fatal(err)
	}
	// cn7 has no tenant tag and no extra-spec metadata: only the flavors
	// without aggregate_instance_extra_specs keys (and without a
	// reservation) could use it.
	canUseCn7 := map[string]bool{"m1.small": true, "m1.large": true}
	for key, c := range cellMap(m) {
		if c.Error != "" {
			t.Errorf("%s: %s", key, c.Error)
			continue
		}
		var want []string
		if canUseCn7[c.Flavor] {
			want = []string{"cn7"}
		}
		if !slices.Equal(c.Lost, want) && !(len(c.Lost) == 0 && len(want) == 0) {
			t.Errorf("%s loses %v, want %v", key, c.Lost, want)
		}
		if len(c.Gained) != 0 {
			t.Errorf("%s gains %v, want nothing", key, c.Gained)
		}
		if c.Live-c.Draft != len(want) {
			t.Errorf("%s: %d → %d eligible hosts, want a drop of %d", key, c.Live, c.Draft, len(want))
		}
	}
	// acme may use cn1–cn4 and cn6 (cn5 is globex's, cn8 reserved) plus cn7.
	if c := cellMap(m)["acme/m1.small"]; c.Live != 6 || c.Draft != 5 {
		t.Errorf("acme/m1.small: %d → %d, want 6 → 5", c.Live, c.Draft)
	}
	if m.Dropped != len(projects)*len(canUseCn7) || m.Stranded != 0 {
		t.Errorf("dropped %d, stranded %d; want %d, 0", m.Dropped, m.Stranded, len(projects)*len(canUseCn7))
	}
}

// Dropping the reservation's key strands every tenant's reservation flavor
// (no aggregate carries the key any more) and frees cn8 for the others.
func TestImpactStrandsAPair(t *testing.T) {
	live := store.DemoWorld()
	draft := editAggregate(t, live, "reservation-r42", func(a *models.Aggregate) { delete(a.Metadata, "reservation:r42") })
	ls, ds := mustState(t, live), mustState(t, draft)
	m, err := scheduling.ComputeImpact(ls.snap, ds.snap, ls.options().Projects, ls.options().Flavors)
	if err != nil {
		t.Fatal(err)
	}
	cells := cellMap(m)
	for _, p := range ls.options().Projects {
		c := cells[p+"/r1.reserved"]
		if !c.Stranded() || !slices.Equal(c.Lost, []string{"cn8"}) {
			t.Errorf("%s/r1.reserved = %+v, want stranded, losing cn8", p, c)
		}
		if c := cells[p+"/m1.small"]; !slices.Equal(c.Gained, []string{"cn8"}) {
			t.Errorf("%s/m1.small gains %v, want [cn8]", p, c.Gained)
		}
	}
	if m.Stranded != len(ls.options().Projects) {
		t.Errorf("stranded = %d, want one per project", m.Stranded)
	}
}

// The factored matrix must agree with running every pair through the whole
// pipeline, on the demo and on the small generated cloud, for drafts that
// touch tenants, reservations and settings.
func TestFactoredMatrixMatchesWholeRuns(t *testing.T) {
	demo := store.DemoWorld()
	small := cloudgen.Generate(cloudgen.Small())
	isolated := *demo
	isolated.Settings.LimitTenantsToPlacementAggregate = true
	isolated.Settings.EnableIsolatedAggregateFiltering = true
	required := isolated
	required.Settings.PlacementAggregateRequiredForTenants = true
	required.Settings.EnabledFilters = append(slices.Clone(required.Settings.EnabledFilters), models.FilterAggregateInstanceType)
	cases := []struct {
		name        string
		live, draft *models.World
	}{
		{"demo: forbid the free pool", editAggregate(t, demo, "blazar-freepool", func(a *models.Aggregate) { delete(a.Metadata, "reservation:freepool") }), demo},
		{"demo: tag cn1's aggregate for globex", demo, editAggregate(t, demo, "aggA", func(a *models.Aggregate) { a.Metadata["filter_tenant_id"] = "globex" })},
		{"demo: tenant isolation on", demo, &isolated},
		{"demo: tenants must have aggregates", &isolated, editAggregate(t, &required, "tenant-globex", func(a *models.Aggregate) { a.Metadata["filter_tenant_id"] = "initech" })},
		{"small: free pool opened", small, editAggregate(t, small, cloudgen.FreePool, func(a *models.Aggregate) { clear(a.Metadata) })},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ls, ds := mustState(t, tc.live), mustState(t, tc.draft)
			projects := append(slices.Clone(ls.options().Projects), "nobody", scheduling.AnyOtherProject)
			flavors := ls.options().Flavors
			got, err := scheduling.ComputeImpact(ls.snap, ds.snap, projects, flavors)
			if err != nil {
				t.Fatal(err)
			}
			if got.WholeRuns {
				t.Fatalf("the default filters should be factored")
			}
			want, err := scheduling.ComputeImpactWith(ls.snap, ds.snap, scheduling.ImpactOptions{Projects: projects, Flavors: flavors, WholeRuns: true})
			if err != nil {
				t.Fatal(err)
			}
			changed := 0
			for i := range want.Cells {
				for j := range want.Cells[i] {
					g, w := got.Cells[i][j], want.Cells[i][j]
					slices.Sort(g.Lost)
					slices.Sort(g.Gained)
					if fmt.Sprint(g) != fmt.Sprint(w) {
						t.Errorf("%s/%s: factored %+v, whole runs %+v", w.Project, w.Flavor, g, w)
					}
					if len(w.Lost)+len(w.Gained) > 0 {
						changed++
					}
				}
			}
			if changed == 0 {
				t.Errorf("the draft changes no pair; the case tests nothing")
			}
		})
	}
}
