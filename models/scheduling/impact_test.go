package scheduling

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
)

// withAggregate returns a copy of w with fn applied to the aggregate named
// name, sharing nothing mutable with w's aggregates.
func withAggregate(t testing.TB, w *models.World, name string, fn func(a *models.Aggregate)) *models.World {
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

func mustSnapshot(t testing.TB, w *models.World) *Snapshot {
	t.Helper()
	s, err := NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// drainedZone is the small generated cloud without reservations and
// tenant tags (which cover all of its 40 hosts) and a draft of it that gives its first
// zone's aggregate a reservation key.
func drainedZone(t testing.TB) (live, draft *models.World, zone string) {
	live = cloudgen.Generate(cloudgen.Small())
	for i := range live.Aggregates {
		a := &live.Aggregates[i]
		for k := range a.Metadata {
			if strings.HasPrefix(k, cloudgen.ReservationPrefix) || IsTenantKey(k) {
				a.Metadata = nil
				break
			}
		}
	}
	for _, a := range live.Aggregates {
		if a.AvailabilityZone != nil {
			return live, withAggregate(t, live, a.Name, func(a *models.Aggregate) { a.Metadata["reservation:drain"] = "true" }), *a.AvailabilityZone
		}
	}
	t.Fatal("the small cloud has no zone")
	return
}

// A cell names only the first hosts (by name) when many change; counts
// stay complete, and both ways of computing agree on which are named.
func TestImpactCellsNameTheFirstHosts(t *testing.T) {
	defer func(n int) { impactNames = n }(impactNames)
	impactNames = 3
	live, draft, _ := drainedZone(t)
	ls, ds := mustSnapshot(t, live), mustSnapshot(t, draft)
	projects, flavors := []string{cloudgen.ProjectPrefix + "1", cloudgen.ProjectPrefix + "2", AnyOtherProject}, []string{cloudgen.FlavorSmall}
	got, err := ComputeImpact(ls, ds, projects, flavors)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ComputeImpactWith(ls, ds, ImpactOptions{Projects: projects, Flavors: flavors, WholeRuns: true})
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for i := range got.Cells {
		g, w := got.Cells[i][0], want.Cells[i][0]
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s: factored %+v, whole runs %+v", g.Project, g, w)
		}
		if g.LostCount != g.Live-g.Draft || len(g.Lost) > impactNames || !slices.IsSorted(g.Lost) {
			t.Errorf("%s: lost %d named %v of %d → %d", g.Project, g.LostCount, g.Lost, g.Live, g.Draft)
		}
		if g.LostCount > len(g.Lost) {
			named++
		}
	}
	if named == 0 {
		t.Errorf("no cell lost more hosts than it names; the case tests nothing")
	}
}

// The zone view splits each flavor's cell by availability zone: the
// drained zone loses every host, the others nothing, and the parts add up
// to the flavor's cell.
func TestImpactByZone(t *testing.T) {
	live, draft, zone := drainedZone(t)
	ls, ds := mustSnapshot(t, live), mustSnapshot(t, draft)
	projects, flavors := []string{AnyOtherProject}, []string{cloudgen.FlavorSmall}
	whole, err := ComputeImpact(ls, ds, projects, flavors)
	if err != nil {
		t.Fatal(err)
	}
	byZone, err := ComputeImpactWith(ls, ds, ImpactOptions{Projects: projects, Flavors: flavors, ByZone: true})
	if err != nil {
		t.Fatal(err)
	}
	exact, err := ComputeImpactWith(ls, ds, ImpactOptions{Projects: projects, Flavors: flavors, ByZone: true, WholeRuns: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(byZone.Flavors) < 2 {
		t.Fatalf("zone view has columns %v; want one per zone", byZone.Flavors)
	}
	live0, draft0 := 0, 0
	for j, c := range byZone.Cells[0] {
		live0 += c.Live
		draft0 += c.Draft
		if c.Zone == zone && (c.Draft != 0 || c.Live == 0) {
			t.Errorf("%s: %d → %d, want the drained zone to lose all its hosts", byZone.Flavors[j], c.Live, c.Draft)
		}
		if c.Zone != zone && c.LostCount != 0 {
			t.Errorf("%s loses %d hosts, want none", byZone.Flavors[j], c.LostCount)
		}
		if e := exact.Cells[0][j]; e.Live != c.Live || e.Draft != c.Draft {
			t.Errorf("%s: factored %d → %d, whole runs %d → %d", byZone.Flavors[j], c.Live, c.Draft, e.Live, e.Draft)
		}
	}
	if w := whole.Cells[0][0]; w.Live != live0 || w.Draft != draft0 {
		t.Errorf("zones add up to %d → %d, the flavor's cell is %d → %d", live0, draft0, w.Live, w.Draft)
	}
}
