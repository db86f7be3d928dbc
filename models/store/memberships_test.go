package store_test

import (
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
)

// An aggregate's two memberships survive the store as the cloud had them
// (a world import here, as a sync writes them), and corral's own edit of a
// member makes the two sides equal, as Nova's add_host does.
func TestAggregateMembershipsRoundTrip(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		doc := `{"providers": [{"name": "cn1"}, {"name": "cn2"}, {"name": "cn3"}],
			"aggregates": [{"name": "agg", "members": ["cn1", "cn2", "cn3"],
				"not_in_placement": ["cn1"], "not_in_nova": ["cn2"]}]}`
		w, err := models.DecodeWorld(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ImportWorld(ctx, admin, w, true); err != nil {
			t.Fatal(err)
		}
		uuid := func(name string) string {
			p, err := s.GetProvider(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			return p.UUID
		}
		got, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a := got.Aggregates[0]
		if !slices.Equal(a.NotInPlacement, []string{uuid("cn1")}) || !slices.Equal(a.NotInNova, []string{uuid("cn2")}) || len(a.Members) != 3 {
			t.Fatalf("stored: members %v, not in placement %v, not in nova %v", a.Members, a.NotInPlacement, a.NotInNova)
		}
		// Placement's own answer leaves out the aggregate only Nova has cn1 in.
		if aggs, _, err := s.ProviderAggregates(ctx, uuid("cn1")); err != nil || len(aggs) != 0 {
			t.Errorf("placement aggregates of cn1: %v, %v; want none", aggs, err)
		}
		if aggs, _, err := s.ProviderAggregates(ctx, uuid("cn2")); err != nil || !slices.Equal(aggs, []string{a.UUID}) {
			t.Errorf("placement aggregates of cn2: %v, %v; want agg", aggs, err)
		}
		// Placement's PUT naming the aggregate for cn2 keeps it; leaving it
		// out for cn3 (in both) removes cn3 from both sides.
		if _, err := s.Apply(ctx, admin, []scheduling.Change{{Op: scheduling.OpSetProviderAggregates, Provider: uuid("cn3"),
			PlacementFields: scheduling.PlacementFields{Aggregates: []string{}}}}); err != nil {
			t.Fatal(err)
		}
		if mid, _ := s.GetAggregate(ctx, "agg"); slices.Contains(mid.Members, uuid("cn3")) || len(mid.NotInPlacement) != 1 {
			t.Errorf("after cn3's aggregates emptied: members %v, not in placement %v", mid.Members, mid.NotInPlacement)
		}
		if _, err := s.Apply(ctx, admin, []scheduling.Change{{Op: scheduling.OpAddMember, Aggregate: "agg", Provider: "cn1"}}); err != nil {
			t.Fatal(err)
		}
		after, err := s.GetAggregate(ctx, "agg")
		if err != nil {
			t.Fatal(err)
		}
		if len(after.NotInPlacement) != 0 || !slices.Equal(after.NotInNova, []string{uuid("cn2")}) {
			t.Errorf("after add_host cn1: not in placement %v (want none), not in nova %v (want cn2)", after.NotInPlacement, after.NotInNova)
		}
		// A list naming a provider that is not a member is refused.
		bad := `{"providers": [{"name": "cn1"}], "aggregates": [{"name": "b", "members": [], "not_in_nova": ["cn1"]}]}`
		if w, err := models.DecodeWorld(strings.NewReader(bad)); err == nil {
			err = w.Validate()
			if err == nil || models.FieldOf(err) == "" {
				t.Errorf("a drift list naming a non-member: %v", err)
			}
		}
	})
}
