package store_test

import (
	"context"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

func liveWorld(meta string) *models.World {
	return &models.World{
		Providers:  []models.Provider{{UUID: "11111111-0000-4000-8000-000000000001", Name: "cn1"}, {UUID: "11111111-0000-4000-8000-000000000002", Name: "cn2"}},
		Aggregates: []models.Aggregate{{UUID: "22222222-0000-4000-8000-000000000001", Name: "agg", Metadata: map[string]string{"k": meta}, Members: []string{"11111111-0000-4000-8000-000000000001"}}},
		Flavors:    []models.Flavor{{ID: "f1", Name: "small", VCPUs: 1, ExtraSpecs: map[string]string{}}},
	}
}

// TestReplaceLiveState: one transaction replaces the domain objects, keeps
// corral's settings, moves generations only where the cloud changed
// something, replaces the reported quotas, and is audited as a sync.
func TestReplaceLiveState(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a := store.Actor{Name: "sync", Via: "cli"}
		settings := models.DefaultSettings()
		settings.LimitTenantsToPlacementAggregate = true
		if err := st.ImportWorld(ctx, a, &models.World{Settings: settings}, true); err != nil {
			t.Fatal(err)
		}
		ls := &store.LiveState{World: liveWorld("1"), Quotas: []models.Quota{{ProjectID: "p1", Resource: models.QuotaServerGroups, Limit: 3}},
			Placement: `{"x":1}`, Record: store.SyncRecord{Connection: "c", ChangeCount: 4}}
		if err := st.ReplaceLiveState(ctx, a, ls); err != nil {
			t.Fatal(err)
		}
		w, err := st.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !w.Settings.LimitTenantsToPlacementAggregate || len(w.Providers) != 2 || len(w.Aggregates) != 1 {
			t.Fatalf("after the first sync: %+v", w)
		}
		gens := map[string]int64{}
		for _, p := range w.Providers {
			gens[p.Name] = p.Generation
		}
		aggGen := w.Aggregates[0].Generation
		// Second sync: only the aggregate's metadata changed.
		ls = &store.LiveState{World: liveWorld("2"), Record: store.SyncRecord{Connection: "c", ChangeCount: 1}}
		if err := st.ReplaceLiveState(ctx, a, ls); err != nil {
			t.Fatal(err)
		}
		w, _ = st.ExportWorld(ctx)
		for _, p := range w.Providers {
			if p.Generation != gens[p.Name] {
				t.Errorf("provider %s generation moved %d → %d though the cloud did not change it", p.Name, gens[p.Name], p.Generation)
			}
		}
		if w.Aggregates[0].Generation != aggGen+1 || w.Aggregates[0].Metadata["k"] != "2" {
			t.Errorf("aggregate after the second sync: %+v (generation was %d)", w.Aggregates[0], aggGen)
		}
		if q, err := st.GetQuota(ctx, "p1", models.QuotaServerGroups); err != nil || q != 3 {
			t.Errorf("quotas %v %v", q, err)
		}
		if raw, _ := st.CloudPlacementState(ctx); raw != "" {
			t.Errorf("the second sync kept no placement state, the first's must not linger: %q", raw)
		}
		ev, _, _ := st.ListAudit(ctx, store.AuditQuery{ObjectType: "world", Limit: 1})
		if len(ev) != 1 || ev[0].Action != "sync" || !strings.Contains(ev[0].After, `"changed":1`) {
			t.Errorf("audit %+v", ev)
		}
		last, err := st.LastSuccessfulSync(ctx)
		if err != nil || last == nil || last.Revision == 0 || last.ChangeCount != 1 {
			t.Errorf("last sync %+v %v", last, err)
		}
		// A world the store refuses changes nothing.
		rev, _ := st.Revision(ctx)
		bad := liveWorld("3")
		bad.Aggregates[0].Members = []string{"11111111-0000-4000-8000-00000000dead"}
		if err := st.ReplaceLiveState(ctx, a, &store.LiveState{World: bad}); err == nil {
			t.Fatal("a membership of an unknown provider was stored")
		}
		if rev2, _ := st.Revision(ctx); rev2 != rev {
			t.Errorf("refused sync moved the revision")
		}
	})
}

// TestSyncLock: one holder at a time; on PostgreSQL across two stores (two
// replicas) on one database.
func TestSyncLock(t *testing.T) {
	storetest.ForEachDSN(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s1, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s1.Close()
		s2 := s1
		if s1.IsPostgres() {
			if s2, err = store.Open(ctx, dsn); err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
		}
		release, ok, err := s1.TrySyncLock(ctx)
		if err != nil || !ok {
			t.Fatalf("first lock: %v %v", ok, err)
		}
		if _, ok, err := s2.TrySyncLock(ctx); err != nil || ok {
			t.Fatalf("second holder got the lock: %v %v", ok, err)
		}
		release()
		release2, ok, err := s2.TrySyncLock(ctx)
		if err != nil || !ok {
			t.Fatalf("after release: %v %v", ok, err)
		}
		release2()
	})
}
