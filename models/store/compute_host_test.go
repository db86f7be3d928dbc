package store_test

import (
	"context"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

// A host's compute service is stored with the provider on both databases,
// read back by every loader (SQLite's joined scan and the column scan), kept
// by a merge import that does not mention it, and a change of it alone
// makes a sync store a new revision.
func TestComputeHostStored(t *testing.T) {
	ctx := context.Background()
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if _, err := s.LoadDemo(ctx); err != nil {
			t.Fatal(err)
		}
		doc := `{"providers": [{"name": "cn1", "compute": {"host": "cn1", "status": "disabled", "disabled_reason": "maintenance", "state": "up"}}]}`
		in, err := models.DecodeWorldJSON([]byte(doc), "")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ImportWorld(ctx, admin, in, false); err != nil {
			t.Fatal(err)
		}
		serviceOf := func(w *models.World, name string) *models.ComputeHost {
			for _, p := range w.Providers {
				if p.Name == name {
					return p.Compute
				}
			}
			t.Fatalf("no provider %s", name)
			return nil
		}
		load := func() *models.World {
			w, _, err := s.LoadWorld(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return w
		}
		w := load()
		if got := serviceOf(w, "cn1"); got == nil || got.Status != models.ServiceDisabled || got.DisabledReason != "maintenance" || got.Host != "cn1" {
			t.Fatalf("cn1's service after import: %+v", got)
		}
		if got := serviceOf(w, "cn2"); got != nil {
			t.Fatalf("cn2 has a service it was never given: %+v", got)
		}
		exported, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := serviceOf(exported, "cn1"); got == nil || got.Status != models.ServiceDisabled {
			t.Fatalf("cn1's service in the export: %+v", got)
		}
		// A merge import naming cn1 without its service keeps it.
		again, err := models.DecodeWorldJSON([]byte(`{"providers": [{"name": "cn1", "traits": ["CUSTOM_X"]}]}`), "")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ImportWorld(ctx, admin, again, false); err != nil {
			t.Fatal(err)
		}
		if got := serviceOf(load(), "cn1"); got == nil || got.DisabledReason != "maintenance" {
			t.Fatalf("a merge import that did not mention the service dropped it: %+v", got)
		}
		// A sync whose only news is the service stores a new revision.
		live := load()
		rev, _ := s.Revision(ctx)
		for i := range live.Providers {
			if live.Providers[i].Name == "cn1" {
				live.Providers[i].Compute = &models.ComputeHost{Host: "cn1", State: models.ServiceDown, ForcedDown: true}
			}
		}
		if err := s.ReplaceLiveState(ctx, admin, &models.LiveState{World: live}); err != nil {
			t.Fatal(err)
		}
		if got := serviceOf(load(), "cn1"); !got.Down() || got.Disabled() {
			t.Fatalf("cn1's service after the sync: %+v", got)
		}
		if after, _ := s.Revision(ctx); after == rev {
			t.Fatalf("the sync that changed a service stored no revision (still %d)", rev)
		}
	})
}
