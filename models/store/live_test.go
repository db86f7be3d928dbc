package store_test

import (
	"encoding/json"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
	"corral/models/store"
	"corral/models/store/storetest"
)

// TestLiveAppliesAggregateWrites checks that the shared snapshot follows
// this process's aggregate writes by updating the previous snapshot, keeps
// it for writes that change nothing of the world, rebuilds for writes by
// another process — and that what it holds is always exactly the world in
// the database.
func TestLiveAppliesAggregateWrites(t *testing.T) {
	storetest.ForEachDSN(t, func(t *testing.T, dsn string) {
		s, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.ImportWorld(ctx, admin, cloudgen.Generate(cloudgen.Small()), true); err != nil {
			t.Fatal(err)
		}
		live := s.Live()
		if live != s.Live() {
			t.Fatal("two live snapshots for one store")
		}
		check := func(step string, rebuilds, updates int64) {
			t.Helper()
			snap, rev, err := live.Get(ctx)
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			w, wrev, err := s.LoadWorld(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rev != wrev {
				t.Errorf("%s: snapshot at revision %d, database at %d", step, rev, wrev)
			}
			got, _ := json.Marshal(snap.World().Aggregates)
			want, _ := json.Marshal(w.Aggregates)
			if string(got) != string(want) {
				t.Errorf("%s: the snapshot's aggregates differ from the database's:\n%s\n%s", step, got, want)
			}
			gotP, _ := json.Marshal(snap.World().Providers)
			wantP, _ := json.Marshal(w.Providers)
			if string(gotP) != string(wantP) {
				t.Errorf("%s: the snapshot's providers differ from the database's", step)
			}
			if snap.Index().NumAggregates() != len(w.Aggregates) {
				t.Errorf("%s: index has %d aggregates, world %d", step, snap.Index().NumAggregates(), len(w.Aggregates))
			}
			if live.Rebuilds.Load() != rebuilds || live.Updates.Load() != updates {
				t.Errorf("%s: %d rebuilds and %d updates, want %d and %d", step,
					live.Rebuilds.Load(), live.Updates.Load(), rebuilds, updates)
			}
		}
		check("first", 1, 0)
		w, _, _ := s.LoadWorld(ctx)
		host := w.Providers[0]
		agg := w.Aggregates[3]

		if _, err := s.UpdateAggregate(ctx, admin, agg.UUID, store.AnyGeneration, func(a *models.Aggregate) error {
			a.Metadata["filter_tenant_id"] = "project-9"
			a.Members = append(a.Members, host.UUID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		check("metadata and members", 1, 1)
		before, _, _ := live.Get(ctx)
		found := false
		for _, a := range before.TenantAggregates("project-9") {
			found = found || a.UUID == agg.UUID
		}
		if !found {
			t.Error("the tenant index does not have the updated aggregate")
		}

		created := mustAggregate(t, s, "added-live", &host)
		check("create", 1, 2)
		want := int64(3)
		if err := s.DeleteAggregate(ctx, admin, created.UUID, store.AnyGeneration); err != nil {
			// Nova refuses to delete an aggregate with hosts: empty it first.
			if _, err := s.UpdateAggregate(ctx, admin, created.UUID, store.AnyGeneration, func(a *models.Aggregate) error {
				a.Members = nil
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			check("emptied", 1, 3)
			if err := s.DeleteAggregate(ctx, admin, created.UUID, store.AnyGeneration); err != nil {
				t.Fatal(err)
			}
			want = 4
		}
		check("delete", 1, want)

		// A provider's aggregates replaced (Placement's PUT): the
		// aggregates and the provider's generation change in place.
		gen, err := s.SetProviderAggregates(ctx, admin, host.UUID, store.AnyGeneration, []string{agg.UUID, w.Aggregates[5].UUID})
		if err != nil {
			t.Fatal(err)
		}
		check("provider aggregates", 1, want+1)
		if p, ok := func() (*models.Provider, bool) { snap, _, _ := live.Get(ctx); return snap.Provider(host.UUID) }(); !ok || p.Generation != gen {
			t.Errorf("provider generation in the snapshot: %+v, want %d", p, gen)
		}

		// A write that changes nothing of the world keeps the snapshot.
		snap1, _, _ := live.Get(ctx)
		updates := live.Updates.Load()
		if _, err := s.CreateUser(ctx, admin, "live-user", "a-long-enough-password", models.RoleReader, ""); err != nil {
			t.Fatal(err)
		}
		check("user", 1, updates+1)
		if snap2, _, _ := live.Get(ctx); snap2 != snap1 {
			t.Error("a new user replaced the snapshot")
		}

		// A new provider is applied too (TestLiveFollowsEveryWrite has
		// every kind of write).
		mustProvider(t, s, "live-provider", "")
		check("provider", 1, updates+2)

		// A write by another process (here another store) rebuilds.
		other, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		mustAggregate(t, other, "from-elsewhere")
		check("other process", 2, updates+2)
	})
}

// TestRevisionMemo: within a memo context the revision is read once, a
// write through that context forgets it, and a memo older than the live
// snapshot does not make the snapshot rebuild.
func TestRevisionMemo(t *testing.T) {
	storetest.ForEachDSN(t, func(t *testing.T, dsn string) {
		s, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		other, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		mctx := store.WithRevisionMemo(ctx)
		r1, _ := s.Revision(mctx)
		mustAggregate(t, other, "memo-a")
		if r2, _ := s.Revision(mctx); r2 != r1 {
			t.Errorf("memo read the revision again: %d, then %d", r1, r2)
		}
		fresh, _ := s.Revision(ctx)
		if fresh == r1 {
			t.Fatal("the write did not move the revision")
		}
		// The live snapshot is at the newer revision; the stale memo
		// answers from it without a rebuild.
		live := s.Live()
		if _, rev, err := live.Get(ctx); err != nil || rev != fresh {
			t.Fatalf("live at %d (%v), want %d", rev, err, fresh)
		}
		if _, rev, err := live.Get(mctx); err != nil || rev != fresh || live.Rebuilds.Load() != 1 {
			t.Errorf("with a stale memo: revision %d (%v), %d rebuilds; want %d and 1", rev, err, live.Rebuilds.Load(), fresh)
		}
		// A write through the memo's context forgets it.
		a := &models.Aggregate{Name: "memo-b"}
		if err := s.CreateAggregate(mctx, admin, a); err != nil {
			t.Fatal(err)
		}
		now, _ := s.Revision(ctx)
		if r3, _ := s.Revision(mctx); r3 != now {
			t.Errorf("after a write through the context: %d, want %d", r3, now)
		}
	})
}
