package store_test

import (
	"context"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

// TestFindingAcks: an acknowledgement is stored with who and why, replaced
// by a newer one of the same finding, refused without a reason, removed,
// and leaves the live revision alone.
func TestFindingAcks(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := store.Actor{Name: "alice", Via: "console", Role: models.RoleAdmin}
		_, rev, err := s.LoadWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ack := store.FindingAck{Key: "tenant_comma_list/0011223344556677", Code: "tenant_comma_list", Fingerprint: "aa", Reason: " known, fixed next week "}
		got, err := s.AckFinding(ctx, a, ack)
		if err != nil {
			t.Fatal(err)
		}
		if got.Actor != "alice" || got.Reason != "known, fixed next week" || got.CreatedAt.IsZero() {
			t.Errorf("ack %+v", got)
		}
		ack.Fingerprint, ack.Reason = "bb", "again"
		if _, err := s.AckFinding(ctx, a, ack); err != nil {
			t.Fatal(err)
		}
		all, err := s.FindingAcks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 1 || all[ack.Key].Fingerprint != "bb" || all[ack.Key].Reason != "again" {
			t.Errorf("acks %+v", all)
		}
		ack.Reason = "  "
		if _, err := s.AckFinding(ctx, a, ack); models.KindOf(err) != models.Invalid {
			t.Errorf("an ack without a reason: %v", err)
		}
		if _, rev2, err := s.LoadWorld(ctx); err != nil || rev2 != rev {
			t.Errorf("revision %d → %d (%v): an ack changes no object", rev, rev2, err)
		}
		if err := s.UnackFinding(ctx, a, ack.Key); err != nil {
			t.Fatal(err)
		}
		if err := s.UnackFinding(ctx, a, ack.Key); models.KindOf(err) != models.NotFound {
			t.Errorf("removing a missing ack: %v", err)
		}
		if all, _ := s.FindingAcks(ctx); len(all) != 0 {
			t.Errorf("acks left: %+v", all)
		}
		if cs, err := s.Consumers(ctx); err != nil || len(cs) != 0 {
			t.Errorf("consumers of an empty store: %v %v", cs, err)
		}
	})
}
