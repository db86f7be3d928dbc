package scheduling

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"corral/models"
)

// canonicalWorld encodes w with its providers and aggregates in UUID order,
// zero usages and empty maps left out: two worlds that hold the same
// objects encode the same whatever order changes appended them in.
func canonicalWorld(t *testing.T, w *models.World) string {
	t.Helper()
	c := *w
	c.Providers = slices.Clone(w.Providers)
	for i := range c.Providers {
		p := &c.Providers[i]
		p.Usages = maps.Clone(p.Usages)
		maps.DeleteFunc(p.Usages, func(_ string, n int64) bool { return n == 0 })
		if len(p.Usages) == 0 {
			p.Usages = nil
		}
		if len(p.Inventories) == 0 {
			p.Inventories = nil
		}
		if len(p.Traits) == 0 {
			p.Traits = nil
		}
		p.RootUUID = ""
	}
	slices.SortFunc(c.Providers, func(a, b models.Provider) int { return strings.Compare(a.UUID, b.UUID) })
	c.Aggregates = slices.Clone(w.Aggregates)
	for i := range c.Aggregates {
		c.Aggregates[i].ID = 0
		c.Aggregates[i].Members = slices.Sorted(slices.Values(c.Aggregates[i].Members))
	}
	slices.SortFunc(c.Aggregates, func(a, b models.Aggregate) int { return strings.Compare(a.UUID, b.UUID) })
	return encodeWorld(t, &c)
}

const (
	h1UUID  = "10000000-0000-4000-8000-000000000001"
	h2UUID  = "10000000-0000-4000-8000-000000000002"
	gpuUUID = "20000000-0000-4000-8000-000000000001"
)

// Every change of Placement's resources applies to the world as Placement
// would leave it, and ChangesBetween(after, before) undoes them all.
func TestPlacementChangesApplyAndRevert(t *testing.T) {
	live := smallRunningWorld(t)
	before := canonicalWorld(t, live)
	const h3, numa, newAgg, consumer = "10000000-0000-4000-8000-000000000003", "10000000-0000-4000-8000-000000000004",
		"20000000-0000-4000-8000-0000000000ff", "50000000-0000-4000-8000-000000000001"
	root, under := "", h2UUID
	changes := []Change{
		{Op: OpCreateProvider, Provider: "h3", UUID: h3},
		{Op: OpCreateProvider, Provider: "h3-numa", UUID: numa, PlacementFields: PlacementFields{Parent: ptr(h3)}},
		{Op: OpSetInventories, Provider: "h3", PlacementFields: PlacementFields{Inventories: map[string]models.Inventory{"VCPU": {Total: 4, AllocationRatio: 1}}}},
		{Op: OpSetTraits, Provider: "h2", PlacementFields: PlacementFields{Traits: []string{"CUSTOM_B", "CUSTOM_A", "CUSTOM_A"}}},
		{Op: OpRenameProvider, Provider: "h2", PlacementFields: PlacementFields{NewName: "h2b"}},
		{Op: OpSetProviderParent, Provider: numa, PlacementFields: PlacementFields{Parent: &root}},
		{Op: OpSetProviderParent, Provider: "h3", PlacementFields: PlacementFields{Parent: &under}},
		{Op: OpSetProviderAggregates, Provider: "h2b", PlacementFields: PlacementFields{Aggregates: []string{gpuUUID, newAgg}}},
		{Op: OpSetAllocations, Project: "p1", User: "u1", PlacementFields: PlacementFields{Consumer: consumer,
			Allocations: []ChangeAllocation{{Provider: h1UUID, ResourceClass: "VCPU", Used: 2}}}},
		{Op: OpCreateResourceClass, ResourceClass: "CUSTOM_GOLD"},
		{Op: OpDeleteResourceClass, ResourceClass: "CUSTOM_GOLD"},
		{Op: OpCreateTrait, Trait: "CUSTOM_T"},
		{Op: OpDeleteTrait, Trait: "CUSTOM_T"},
		{Op: OpDeleteProvider, Provider: numa},
	}
	after, err := ApplyChanges(live, changes)
	if err != nil {
		t.Fatal(err)
	}
	if canonicalWorld(t, live) != before {
		t.Fatal("ApplyChanges modified its input")
	}
	find := func(name string) *models.Provider {
		for i := range after.Providers {
			if after.Providers[i].Name == name {
				return &after.Providers[i]
			}
		}
		return nil
	}
	h2b, p3, h1 := find("h2b"), find("h3"), find("h1")
	switch {
	case h2b == nil || !slices.Equal(h2b.Traits, []string{"CUSTOM_A", "CUSTOM_B"}):
		t.Errorf("h2 renamed with traits: %+v", h2b)
	case p3 == nil || p3.ParentUUID == nil || *p3.ParentUUID != h2UUID || p3.RootUUID != h2UUID || p3.Inventories["VCPU"].Total != 4:
		t.Errorf("h3 under h2 with its inventory: %+v", p3)
	case find("h3-numa") != nil:
		t.Errorf("h3-numa was not deleted")
	case h1.Usages["VCPU"] != 2 || len(after.Consumers) != 1:
		t.Errorf("allocations: h1 usages %v, consumers %+v", h1.Usages, after.Consumers)
	}
	var in []string
	for _, a := range after.Aggregates {
		if slices.Contains(a.Members, h2UUID) {
			in = append(in, a.Name)
		}
	}
	if slices.Sort(in); !slices.Equal(in, []string{newAgg, "gpu"}) {
		t.Errorf("h2's aggregates = %v, want gpu and a new one named after its UUID", in)
	}
	revert := ChangesBetween(after, live)
	back, err := ApplyChanges(after, revert)
	if err != nil {
		t.Fatalf("revert %+v: %v", revert, err)
	}
	if got := canonicalWorld(t, back); got != before {
		t.Errorf("the revert %+v does not restore the world:\n%s\nwant\n%s", revert, got, before)
	}
}

func TestPlacementChangeErrorsNameTheField(t *testing.T) {
	live := smallRunningWorld(t)
	using := Change{Op: OpSetAllocations, Project: "p1", PlacementFields: PlacementFields{Consumer: "50000000-0000-4000-8000-000000000001",
		Allocations: []ChangeAllocation{{Provider: h1UUID, ResourceClass: "VCPU", Used: 1}}}}
	cases := []struct {
		changes []Change
		field   string
	}{
		{[]Change{{Op: OpSetTraits, Provider: "h1", PlacementFields: PlacementFields{Traits: []string{"lower"}}}}, "changes[0].traits"},
		{[]Change{{Op: OpRenameProvider, Provider: "h1", PlacementFields: PlacementFields{NewName: "h2"}}}, "changes[0].new_name"},
		{[]Change{{Op: OpCreateProvider, Provider: "h1"}}, "changes[0].provider"},
		{[]Change{{Op: OpCreateProvider, Provider: "h9", UUID: h2UUID}}, "changes[0].uuid"},
		{[]Change{{Op: OpCreateProvider, Provider: "h9", PlacementFields: PlacementFields{Parent: ptr("nope")}}}, "changes[0].parent_provider"},
		{[]Change{{Op: OpCreateProvider, Provider: "c", PlacementFields: PlacementFields{Parent: ptr("h2")}},
			{Op: OpSetProviderParent, Provider: "h2", PlacementFields: PlacementFields{Parent: ptr("c")}}}, "changes[1].parent_provider"},
		{[]Change{{Op: OpCreateProvider, Provider: "c", PlacementFields: PlacementFields{Parent: ptr("h2")}},
			{Op: OpDeleteProvider, Provider: "h2"}}, "changes[1].provider"},
		{[]Change{{Op: OpDeleteProvider, Provider: "h1"}}, "changes[0].provider"}, // web-1 runs there
		{[]Change{{Op: OpSetTraits, Provider: "nope"}}, "changes[0].provider"},
		{[]Change{using, {Op: OpSetInventories, Provider: "h1"}}, "changes[1].inventories"},
		{[]Change{{Op: OpSetProviderAggregates, Provider: "h1", PlacementFields: PlacementFields{Aggregates: []string{"x"}}}}, "changes[0].aggregates"},
		{[]Change{{Op: OpSetAllocations, PlacementFields: PlacementFields{Consumer: "x"}}}, "changes[0].consumer"},
		{[]Change{{Op: OpSetAllocations, PlacementFields: PlacementFields{Consumer: "50000000-0000-4000-8000-000000000001",
			Allocations: []ChangeAllocation{{Provider: "nope", ResourceClass: "VCPU", Used: 1}}}}}, "changes[0].allocations[0].provider"},
		{[]Change{{Op: OpCreateResourceClass, ResourceClass: "bad class"}}, "changes[0].resource_class"},
		{[]Change{{Op: OpDeleteTrait, Trait: ""}}, "changes[0].trait"},
	}
	for _, tc := range cases {
		_, err := ApplyChanges(live, tc.changes)
		if models.KindOf(err) != models.Invalid || models.FieldOf(err) != tc.field {
			t.Errorf("%+v: %v (field %q), want Invalid on %s", tc.changes, err, models.FieldOf(err), tc.field)
		}
	}
}

func TestPlacementOpsAreOps(t *testing.T) {
	for _, op := range PlacementOps {
		if !slices.Contains(Ops, op) {
			t.Errorf("%s is not in Ops", op)
		}
		if ok, _ := OnlyAggregates([]Change{{Op: op}}); ok {
			t.Errorf("OnlyAggregates counts %s as an aggregate change", op)
		}
		if d := DescribeChange(Change{Op: op}); strings.Contains(d, "_") {
			t.Errorf("DescribeChange(%s) = %q", op, d)
		}
	}
}
