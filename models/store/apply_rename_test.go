package store_test

import (
	"context"
	"testing"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
)

// rename_aggregate (the console's name field and Nova's PUT) goes through
// Apply: the name changes, a taken name is refused and nothing is
// written, and the revert renames it back.
func TestApplyRenamesAnAggregate(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		actor := store.Actor{Name: "admin", Via: "console"}
		mustAggregate(t, s, "aggA")
		mustAggregate(t, s, "aggB")
		a, err := s.GetAggregate(ctx, "aggA")
		if err != nil {
			t.Fatal(err)
		}
		applied, err := s.Apply(ctx, actor, []scheduling.Change{{Op: scheduling.OpRenameAggregate, Aggregate: a.UUID, Value: "aggC"}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.GetAggregate(ctx, a.UUID)
		if err != nil || got.Name != "aggC" || got.Generation != a.Generation+1 {
			t.Fatalf("after the rename: %+v %v", got, err)
		}
		want := []scheduling.Change{{Op: scheduling.OpRenameAggregate, Aggregate: a.UUID, Value: "aggA"}}
		if len(applied.Revert) != 1 || applied.Revert[0].Op != want[0].Op || applied.Revert[0].Value != "aggA" {
			t.Errorf("revert = %+v, want %+v", applied.Revert, want)
		}
		_, err = s.Apply(ctx, actor, []scheduling.Change{{Op: scheduling.OpRenameAggregate, Aggregate: a.UUID, Value: "aggB"}})
		wantKind(t, err, models.Invalid, "changes[0].value")
		if got, _ := s.GetAggregate(ctx, a.UUID); got.Name != "aggC" {
			t.Errorf("a refused rename wrote %q", got.Name)
		}
		if _, err := s.Apply(ctx, actor, applied.Revert); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetAggregate(ctx, a.UUID); got.Name != "aggA" {
			t.Errorf("after the revert: %q", got.Name)
		}
	})
}
