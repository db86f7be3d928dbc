package placement

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"corral/models"
)

type allNames struct{}

func (allNames) HasClass(string) bool { return true }
func (allNames) HasTrait(string) bool { return true }

// TestCandidateRootsMatchesCandidates: the counting shortcut finds exactly
// the anchors of the candidates, on random nested worlds with sharing.
func TestCandidateRootsMatchesCandidates(t *testing.T) {
	classes := []string{"VCPU", "MEMORY_MB", "DISK_GB"}
	for seed := int64(0); seed < 60; seed++ {
		r := rand.New(rand.NewSource(seed))
		var ps []models.Provider
		aggs := []models.Aggregate{{UUID: "a0", Name: "a0"}, {UUID: "a1", Name: "a1"}, {UUID: "a2", Name: "a2"}}
		for i := 0; i < 25; i++ {
			p := models.Provider{UUID: fmt.Sprintf("p%02d", i), Name: fmt.Sprintf("p%02d", i), Inventories: map[string]models.Inventory{}, Usages: map[string]int64{}}
			if i > 0 && r.Intn(3) == 0 {
				parent := ps[r.Intn(len(ps))].UUID
				p.ParentUUID = &parent
			}
			if p.ParentUUID == nil && r.Intn(5) == 0 {
				p.Traits = []string{models.TraitSharesViaAggregate}
			}
			for _, rc := range classes {
				if r.Intn(2) == 0 {
					p.Inventories[rc] = models.Inventory{Total: int64(1 + r.Intn(8)), AllocationRatio: 1, MaxUnit: int64(r.Intn(6))}
					p.Usages[rc] = int64(r.Intn(4))
				}
			}
			for a := range aggs {
				if r.Intn(4) == 0 {
					aggs[a].Members = append(aggs[a].Members, p.UUID)
				}
			}
			ps = append(ps, p)
		}
		ix, err := NewIndex(ps, aggs)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 20; k++ {
			g := Group{}
			for _, rc := range classes {
				if r.Intn(2) == 0 {
					g.Resources = append(g.Resources, Amount{Class: rc, Amount: int64(1 + r.Intn(4))})
				}
			}
			switch r.Intn(5) {
			case 0:
				g.MemberOf.Required = [][]string{{aggs[r.Intn(3)].UUID}}
			case 1:
				g.MemberOf.Forbidden = []string{aggs[r.Intn(3)].UUID}
			case 2:
				g.MemberOf.Required = [][]string{{aggs[r.Intn(3)].UUID, aggs[r.Intn(3)].UUID}, {aggs[r.Intn(3)].UUID}}
				g.MemberOf.Forbidden = []string{aggs[r.Intn(3)].UUID}
			}
			if r.Intn(6) == 0 {
				g.InTree = ps[r.Intn(len(ps))].UUID
			}
			q := CandidateQuery{Groups: []Group{g}, NestedAware: true}
			if r.Intn(3) == 0 {
				// What earlier instances of a preview took.
				q.Consumed = map[int]map[string]int64{}
				for range 4 {
					p := r.Intn(len(ps))
					if q.Consumed[p] == nil {
						q.Consumed[p] = map[string]int64{}
					}
					q.Consumed[p][classes[r.Intn(len(classes))]] += int64(1 + r.Intn(3))
				}
			}
			got, err := ix.CandidateRoots(q, allNames{})
			if err != nil {
				t.Fatal(err)
			}
			q.PerAnchor = true
			res, err := ix.AllocationCandidates(q, allNames{})
			if err != nil {
				t.Fatal(err)
			}
			want := NewBitset(ix.Len())
			for _, c := range res.Requests {
				want.Set(c.Anchor)
			}
			if fmt.Sprint(got.Members()) != fmt.Sprint(want.Members()) {
				t.Fatalf("seed %d query %+v: roots %v, candidates' anchors %v", seed, g, got.Members(), want.Members())
			}
		}
	}
}

// TestCatalogAfterAggregateChange: an index derived for changed
// aggregates reuses the inventory tables (they depend on the providers
// alone) but not the anchors; one derived with changed providers sees
// their new inventories.
func TestCatalogAfterAggregateChange(t *testing.T) {
	ps := []models.Provider{
		{UUID: "h1", Name: "h1", Inventories: map[string]models.Inventory{"VCPU": {Total: 4, AllocationRatio: 1}}},
		{UUID: "h2", Name: "h2", Inventories: map[string]models.Inventory{"VCPU": {Total: 1, AllocationRatio: 1}}},
		{UUID: "s1", Name: "s1", Traits: []string{models.TraitSharesViaAggregate}, Inventories: map[string]models.Inventory{"DISK_GB": {Total: 10, AllocationRatio: 1}}},
	}
	aggs := []models.Aggregate{{UUID: "a", Name: "a", Members: []string{"h1", "s1"}}}
	ix, err := NewIndex(ps, aggs)
	if err != nil {
		t.Fatal(err)
	}
	if got := ix.Fitting("VCPU", 2).Members(); fmt.Sprint(got) != "[0]" {
		t.Fatalf("VCPU:2 fits %v", got)
	}
	if got := ix.Anchors(2); fmt.Sprint(got) != "[0 2]" {
		t.Fatalf("anchors %v", got)
	}
	moved := []models.Aggregate{{UUID: "a", Name: "a", Members: []string{"h2", "s1"}}}
	ix2, err := ix.WithAggregates(moved, map[string]bool{"a": true})
	if err != nil {
		t.Fatal(err)
	}
	if &ix2.Fitting("VCPU", 2)[0] != &ix.Fitting("VCPU", 2)[0] {
		t.Error("the inventory tables were built again for an aggregate change")
	}
	if got := ix2.Anchors(2); fmt.Sprint(got) != "[1 2]" {
		t.Errorf("anchors after the move %v, want [1 2]", got)
	}
	grown := slices.Clone(ps)
	grown[1].Inventories = map[string]models.Inventory{"VCPU": {Total: 8, AllocationRatio: 1}}
	ix3, err := ix.WithWorld(grown, aggs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ix3.Fitting("VCPU", 2).Members(); fmt.Sprint(got) != "[0 1]" {
		t.Errorf("VCPU:2 fits %v after h2 grew, want [0 1]", got)
	}
}
