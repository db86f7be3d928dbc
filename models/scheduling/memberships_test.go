package scheduling

import (
	"testing"

	"corral/models"
)

const (
	cn1UUID = "00000000-0000-4000-8000-000000000001"
	cn2UUID = "00000000-0000-4000-8000-000000000004"
)

// member_of reads Placement's aggregates, the host filters Nova's: where a
// synced aggregate's two memberships differ, each stage sees its own.
func TestTwoMemberships(t *testing.T) {
	isolate := func(drift bool) func(w *models.World) {
		return func(w *models.World) {
			w.Settings.EnabledFilters = []string{models.FilterAggregateMultiTenancy}
			w.Settings.LimitTenantsToPlacementAggregate = false
			b := aggByName(w, "aggB")
			b.Metadata = map[string]string{"filter_tenant_id": "tA"}
			if drift {
				// cn1 in Nova's aggA only; cn2 in Placement's aggB only.
				aggByName(w, "aggA").NotInPlacement = []string{cn1UUID}
				b.NotInNova = []string{cn2UUID}
			}
		}
	}
	cases := []struct {
		name   string
		drift  bool
		spec   RequestSpec
		passed string
	}{
		{"member_of aggA, in both", false, RequestSpec{ProjectID: "tA", Placement: PlacementSpec{MemberOf: []string{"aggA"}}}, "cn1"},
		{"member_of aggA, cn1 only in Nova's", true, RequestSpec{ProjectID: "tA", Placement: PlacementSpec{MemberOf: []string{"aggA"}}}, ""},
		{"!aggA, cn1 only in Nova's", true, RequestSpec{ProjectID: "tA", Placement: PlacementSpec{MemberOf: []string{"!aggA"}}}, "cn1 cn2"},
		{"isolated aggB refuses tB on cn2", false, RequestSpec{ProjectID: "tB"}, "cn1"},
		{"Nova's aggB lacks cn2: isolation does not apply", true, RequestSpec{ProjectID: "tB"}, "cn1 cn2"},
		{"member_of aggB, cn2 in Placement's", true, RequestSpec{ProjectID: "tA", Placement: PlacementSpec{MemberOf: []string{"aggB"}}}, "cn2"},
	}
	for _, c := range cases {
		s := seedSnapshot(t, isolate(c.drift))
		tr := mustRun(t, s, &c.spec)
		if got := passingHosts(tr); got != c.passed {
			t.Errorf("%s: passing hosts %q, want %q", c.name, got, c.passed)
		}
	}
}

// corral's own membership edits make the two sides equal again, as Nova's
// add_host and remove_host do.
func TestMembershipEditsMirror(t *testing.T) {
	w := seedWorld(t, func(w *models.World) {
		aggByName(w, "aggA").NotInPlacement = []string{cn1UUID}
		aggByName(w, "aggB").NotInNova = []string{cn2UUID}
	})
	next, err := ApplyChanges(w, []Change{
		{Op: OpAddMember, Aggregate: "aggA", Provider: "cn1"},
		{Op: OpRemoveMember, Aggregate: "aggB", Provider: "cn2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if a := aggByName(next, "aggA"); a.Diverges() || !a.InPlacement(cn1UUID) {
		t.Errorf("aggA after add_host: not in placement %v, not in nova %v", a.NotInPlacement, a.NotInNova)
	}
	if b := aggByName(next, "aggB"); b.Diverges() || b.InNova(cn2UUID) || b.InPlacement(cn2UUID) {
		t.Errorf("aggB after remove_host: members %v, not in nova %v", b.Members, b.NotInNova)
	}
	// The world the changes were applied to is untouched.
	if a := aggByName(w, "aggA"); len(a.NotInPlacement) != 1 {
		t.Errorf("the live world's aggA changed: %v", a.NotInPlacement)
	}
}
