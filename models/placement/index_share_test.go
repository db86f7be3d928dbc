package placement

import (
	"slices"
	"testing"

	"corral/models"
)

// TestWithWorldSharesTheCatalog: an index updated for its aggregates only
// keeps the inventory and trait index it built (a snapshot after an
// aggregate write finds it warm); one whose providers changed builds its
// own, with the new inventories.
func TestWithWorldSharesTheCatalog(t *testing.T) {
	ps := []models.Provider{
		{UUID: "00000000-0000-4000-8000-000000000001", Name: "cn1", Inventories: map[string]models.Inventory{"VCPU": {Total: 4}}},
		{UUID: "00000000-0000-4000-8000-000000000002", Name: "cn2", Inventories: map[string]models.Inventory{"VCPU": {Total: 8}}},
	}
	aggs := []models.Aggregate{{UUID: "00000000-0000-4000-8000-0000000000a1", Name: "a", Members: []string{ps[0].UUID}}}
	ix, err := NewIndex(ps, aggs)
	if err != nil {
		t.Fatal(err)
	}
	if got := ix.ProvidersWithClass("VCPU"); !slices.Equal(got, []int32{0, 1}) {
		t.Fatalf("VCPU providers %v", got)
	}
	moved := slices.Clone(aggs)
	moved[0].Members = []string{ps[1].UUID}
	ix2, err := ix.WithAggregates(moved, map[string]bool{moved[0].UUID: true})
	if err != nil {
		t.Fatal(err)
	}
	if ix2.res != ix.res {
		t.Error("an aggregate update dropped the catalog index")
	}
	changed := slices.Clone(ps)
	changed[1].Inventories = nil
	ix3, err := ix.WithWorld(changed, aggs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ix3.res == ix.res {
		t.Fatal("changed providers kept the old catalog index")
	}
	if got := ix3.ProvidersWithClass("VCPU"); !slices.Equal(got, []int32{0}) {
		t.Errorf("after the inventory change, VCPU providers %v, want [0]", got)
	}
}
