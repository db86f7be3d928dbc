package store_test

import (
	"testing"
	"time"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

// The database's own constraints back up the store's checks, and their
// errors come out as corral kinds.
func TestDatabaseConstraintsMapToKinds(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		cn1 := mustProvider(t, s, "cn1", "")
		now := time.Now().UTC()
		err := s.ExecRaw("INSERT INTO providers (uuid, name, root_uuid, generation, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?)",
			"7c0c0f4e-0000-4000-8000-000000000001", "cn1", "7c0c0f4e-0000-4000-8000-000000000001", now, now)
		wantKind(t, err, models.Conflict, "name")

		// A membership must point at a real aggregate and provider.
		err = s.ExecRaw("INSERT INTO aggregate_members (aggregate_uuid, provider_uuid) VALUES (?, ?)",
			"7c0c0f4e-0000-4000-8000-0000000000aa", cn1.UUID)
		wantKind(t, err, models.Conflict, "")

		// Deleting a provider at the SQL level cascades to its memberships.
		agg := mustAggregate(t, s, "aggA", cn1)
		if err := s.ExecRaw("DELETE FROM providers WHERE uuid = ?", cn1.UUID); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetAggregate(ctx, agg.UUID)
		if err != nil || len(got.Members) != 0 {
			t.Fatalf("members after provider row deleted: %v, %v", got.Members, err)
		}
	})
}

func TestOpenRefusesBadDSN(t *testing.T) {
	for _, c := range []struct {
		dsn  string
		kind models.Kind
	}{
		{"", models.Invalid},
		{":memory:", models.Invalid},
		{"file:x?mode=memory&cache=shared", models.Invalid},
		{t.TempDir() + "/no/such/dir/corral.db", models.Internal},
		{"postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", models.Internal},
	} {
		s, err := store.Open(ctx, c.dsn)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", c.dsn)
			continue
		}
		if models.KindOf(err) != c.kind {
			t.Errorf("Open(%q): kind %v (%v), want %v", c.dsn, models.KindOf(err), err, c.kind)
		}
	}
}
