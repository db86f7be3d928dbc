package placement

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"corral/models"
)

// TestLimitKeepsThePrefix: a limit answers the first requests of the same
// query without one, whether the search stops early (no sharing) or not,
// on random worlds with and without trees and sharing providers, one to
// three groups, isolate or not, root_required and microversions on both
// sides of 1.29.
func TestLimitKeepsThePrefix(t *testing.T) {
	classes := []string{"VCPU", "MEMORY_MB", "DISK_GB"}
	checked := 0
	for seed := int64(0); seed < 80; seed++ {
		r := rand.New(rand.NewSource(seed))
		trees, sharing := seed%2 == 0, seed%4 == 0
		var ps []models.Provider
		aggs := []models.Aggregate{{UUID: "a0", Name: "a0"}, {UUID: "a1", Name: "a1"}}
		for i := 0; i < 30; i++ {
			p := models.Provider{UUID: fmt.Sprintf("p%02d", i), Name: fmt.Sprintf("p%02d", i), Inventories: map[string]models.Inventory{}, Usages: map[string]int64{}}
			if trees && i > 0 && r.Intn(3) == 0 {
				parent := ps[r.Intn(len(ps))].UUID
				p.ParentUUID = &parent
			}
			if sharing && p.ParentUUID == nil && r.Intn(5) == 0 {
				p.Traits = []string{models.TraitSharesViaAggregate}
			} else if r.Intn(3) == 0 {
				p.Traits = []string{"CUSTOM_ROOT"}
			}
			for _, rc := range classes {
				if r.Intn(3) > 0 {
					p.Inventories[rc] = models.Inventory{Total: int64(2 + r.Intn(8)), AllocationRatio: 1}
					p.Usages[rc] = int64(r.Intn(3))
				}
			}
			for a := range aggs {
				if r.Intn(3) == 0 {
					aggs[a].Members = append(aggs[a].Members, p.UUID)
				}
			}
			ps = append(ps, p)
		}
		ix, err := NewIndex(ps, aggs)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 30; k++ {
			var q CandidateQuery
			for gi := 0; gi < 1+r.Intn(3); gi++ {
				g := Group{}
				if gi > 0 {
					g.Suffix = fmt.Sprint(gi)
				}
				for _, rc := range classes {
					if r.Intn(2) == 0 {
						g.Resources = append(g.Resources, Amount{Class: rc, Amount: int64(1 + r.Intn(3))})
					}
				}
				if len(g.Resources) == 0 {
					g.Resources = []Amount{{Class: classes[r.Intn(3)], Amount: 1}}
				}
				if r.Intn(4) == 0 {
					g.MemberOf.Forbidden = []string{aggs[r.Intn(2)].UUID}
				}
				q.Groups = append(q.Groups, g)
			}
			if r.Intn(2) == 0 {
				q.GroupPolicy = "isolate"
			} else {
				q.GroupPolicy = "none"
			}
			if r.Intn(4) == 0 {
				q.RootRequired = []string{"CUSTOM_ROOT"}
			}
			q.NestedAware = r.Intn(3) > 0
			all, err := ix.AllocationCandidates(q, allNames{})
			if err != nil {
				t.Fatal(err)
			}
			for _, limit := range []int{1, 2, 5, len(all.Requests) - 1} {
				if limit < 1 || limit >= len(all.Requests) {
					continue
				}
				q.Limit = limit
				got, err := ix.AllocationCandidates(q, allNames{})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Requests, all.Requests[:limit]) {
					t.Fatalf("seed %d query %d limit %d: %+v\nwant the first %d of %+v", seed, k, limit, got.Requests, limit, all.Requests)
				}
				checked++
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d limited answers compared", checked)
	}
}
