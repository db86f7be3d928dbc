package scheduling

import (
	"reflect"
	"testing"
)

// The one rule for names only a draft has: the request is judged on the
// draft, and live data reads the draft's aggregate as one holding no host.
func TestRunPreviewDraftOnlyAggregate(t *testing.T) {
	live := seedWorld(t, nil)
	draft, err := ApplyChanges(live, []Change{
		{Op: OpCreateAggregate, Aggregate: "newagg"},
		{Op: OpAddMember, Aggregate: "newagg", Provider: "cn2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := NewSnapshot(live)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := NewSnapshot(draft)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name               string
		spec               RequestSpec
		excluded, eligible []string
	}{
		{"required", RequestSpec{Placement: PlacementSpec{MemberOf: []string{"newagg"}}}, nil, []string{"cn2"}},
		{"in a list", RequestSpec{Placement: PlacementSpec{MemberOf: []string{"in:aggA,newagg"}}}, nil, []string{"cn2"}},
		{"forbidden", RequestSpec{Placement: PlacementSpec{MemberOf: []string{"!newagg"}}}, []string{"cn2"}, nil},
		{"numbered group", RequestSpec{Placement: PlacementSpec{Groups: map[string]GroupSpec{"1": {MemberOf: []string{"newagg"}}}}}, nil, []string{"cn2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := RunPreview(ls, ds, &c.spec)
			if err != nil {
				t.Fatalf("RunPreview: %v", err)
			}
			if p.Live == nil || p.Diff == nil || !reflect.DeepEqual(p.DraftOnly, []string{"newagg"}) {
				t.Fatalf("preview = live %v, diff %v, draft only %v; want both traces and [newagg]", p.Live != nil, p.Diff, p.DraftOnly)
			}
			if got := changeNames(p.Diff.NewlyExcluded); !reflect.DeepEqual(got, c.excluded) {
				t.Errorf("newly excluded %v, want %v", got, c.excluded)
			}
			if got := changeNames(p.Diff.NewlyEligible); !reflect.DeepEqual(got, c.eligible) {
				t.Errorf("newly eligible %v, want %v", got, c.eligible)
			}
		})
	}
	// Without a draft the name is unknown, and said so by name.
	if _, err := RunPreview(ls, nil, &RequestSpec{Placement: PlacementSpec{MemberOf: []string{"newagg"}}}); err == nil ||
		err.Error() != `placement.member_of: no aggregate named "newagg" (give an aggregate name or UUID)` {
		t.Errorf("live only: err = %v", err)
	}
	// A name both have is not pinned.
	p, err := RunPreview(ls, ds, &RequestSpec{Placement: PlacementSpec{MemberOf: []string{"aggA"}}})
	if err != nil || p.DraftOnly != nil {
		t.Errorf("aggA: %v, draft only %v", err, p.DraftOnly)
	}
}
