package store_test

import (
	"context"
	"testing"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
)

// TestApplyCreatingAFlavorUpdatesTheLiveSnapshot: a write that creates a
// flavor declares the flavors changed, so the live snapshot has it at once
// (the objects loaded before the write do not hold the new flavor).
func TestApplyCreatingAFlavorUpdatesTheLiveSnapshot(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t)
	a := store.Actor{Name: "alice", Via: "console", Role: models.RoleAdmin}
	if _, err := s.Apply(ctx, a, []scheduling.Change{{Op: scheduling.OpCreateFlavor, Flavor: "before", Size: &scheduling.FlavorSize{VCPUs: 1, RAMMB: 512}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Live().Get(ctx); err != nil { // a live snapshot to update
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, a, []scheduling.Change{{Op: scheduling.OpCreateFlavor, Flavor: "f-new", Size: &scheduling.FlavorSize{VCPUs: 2, RAMMB: 1024}}}); err != nil {
		t.Fatal(err)
	}
	snap, _, err := s.Live().Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.Flavor("f-new"); !ok {
		t.Errorf("the live snapshot lacks the flavor just created: %d flavors", len(snap.World().Flavors))
	}
}
