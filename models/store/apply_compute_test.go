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

// create_flavor, update_flavor and delete_flavor (the console's flavor
// page) go through Apply with the checks of a direct edit, and their
// revert undoes them.
func TestApplyCreatesEditsAndDeletesFlavors(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		actor := store.Actor{Name: "admin", Via: "console"}
		size := &scheduling.FlavorSize{VCPUs: 2, RAMMB: 4096, DiskGB: 20}
		created, err := s.Apply(ctx, actor, []scheduling.Change{{Op: scheduling.OpCreateFlavor, Flavor: "f1", UUID: "f1-id", Size: size,
			Metadata: map[string]string{"hw:cpu_policy": "dedicated"}}})
		if err != nil {
			t.Fatal(err)
		}
		f, err := s.GetFlavor(ctx, "f1-id")
		if err != nil || f.Name != "f1" || f.VCPUs != 2 || f.RAMMB != 4096 || f.DiskGB != 20 || f.ExtraSpecs["hw:cpu_policy"] != "dedicated" {
			t.Fatalf("created %+v %v", f, err)
		}
		_, err = s.Apply(ctx, actor, []scheduling.Change{{Op: scheduling.OpCreateFlavor, Flavor: "f1", Size: size}})
		wantKind(t, err, models.Invalid, "changes[0].flavor")
		if _, err := s.Apply(ctx, actor, []scheduling.Change{{Op: scheduling.OpUpdateFlavor, Flavor: "f1", Value: "f2",
			Size: &scheduling.FlavorSize{VCPUs: 4, RAMMB: 8192, DiskGB: 40}}}); err != nil {
			t.Fatal(err)
		}
		if f, err = s.GetFlavor(ctx, "f1-id"); err != nil || f.Name != "f2" || f.VCPUs != 4 || f.Generation != 1 {
			t.Fatalf("updated %+v %v", f, err)
		}
		deleted, err := s.Apply(ctx, actor, []scheduling.Change{{Op: scheduling.OpDeleteFlavor, Flavor: "f2"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetFlavor(ctx, "f1-id"); models.KindOf(err) != models.NotFound {
			t.Fatalf("after delete: %v", err)
		}
		// The delete's revert brings the flavor back as it was.
		if _, err := s.Apply(ctx, actor, deleted.Revert); err != nil {
			t.Fatal(err)
		}
		if f, err = s.GetFlavor(ctx, "f1-id"); err != nil || f.Name != "f2" || f.VCPUs != 4 || f.ExtraSpecs["hw:cpu_policy"] != "dedicated" {
			t.Fatalf("revert of the delete: %+v %v", f, err)
		}
		if len(created.Revert) != 1 || created.Revert[0].Op != scheduling.OpDeleteFlavor {
			t.Errorf("revert of the create = %+v", created.Revert)
		}
	})
}
