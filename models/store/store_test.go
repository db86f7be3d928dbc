package store_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

var (
	ctx   = context.Background()
	admin = store.Actor{Name: "alice", Via: "console", Role: models.RoleAdmin}
)

// mustProvider creates a provider named name under parent ("" = root).
func mustProvider(t *testing.T, s *store.Store, name, parent string, traits ...string) *models.Provider {
	t.Helper()
	p := &models.Provider{Name: name, Traits: traits}
	if parent != "" {
		par, err := s.GetProvider(ctx, parent)
		if err != nil {
			t.Fatalf("parent %s: %v", parent, err)
		}
		p.ParentUUID = &par.UUID
	}
	if err := s.CreateProvider(ctx, admin, p); err != nil {
		t.Fatalf("create provider %s: %v", name, err)
	}
	return p
}

func mustAggregate(t *testing.T, s *store.Store, name string, members ...*models.Provider) *models.Aggregate {
	t.Helper()
	a := &models.Aggregate{Name: name}
	for _, m := range members {
		a.Members = append(a.Members, m.UUID)
	}
	if err := s.CreateAggregate(ctx, admin, a); err != nil {
		t.Fatalf("create aggregate %s: %v", name, err)
	}
	return a
}

func wantKind(t *testing.T, err error, kind models.Kind, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", kind)
	}
	if got := models.KindOf(err); got != kind {
		t.Fatalf("got kind %v (%v), want %v", got, err, kind)
	}
	if field != "" && models.FieldOf(err) != field {
		t.Fatalf("got field %q (%v), want %q", models.FieldOf(err), err, field)
	}
}

func TestAggregateLifecycle(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		cn1 := mustProvider(t, s, "cn1", "")
		numa := mustProvider(t, s, "numa1_1", "cn1")
		if numa.RootUUID != cn1.UUID {
			t.Fatalf("numa root = %s, want %s", numa.RootUUID, cn1.UUID)
		}
		agg := mustAggregate(t, s, "aggA", cn1)
		if agg.ID == 0 || agg.UUID == "" || agg.Generation != 0 {
			t.Fatalf("created aggregate = %+v", agg)
		}

		// Lookup by id, uuid and name all reach the same aggregate.
		for _, ref := range []string{itoa(agg.ID), agg.UUID, "aggA"} {
			got, err := s.GetAggregate(ctx, ref)
			if err != nil {
				t.Fatalf("GetAggregate(%s): %v", ref, err)
			}
			if got.UUID != agg.UUID || !slices.Equal(got.Members, []string{cn1.UUID}) {
				t.Fatalf("GetAggregate(%s) = %+v", ref, got)
			}
		}
		_, err := s.GetAggregate(ctx, "nope")
		wantKind(t, err, models.NotFound, "")

		wantKind(t, s.CreateAggregate(ctx, admin, &models.Aggregate{Name: "aggA"}), models.Conflict, "name")
		wantKind(t, s.CreateAggregate(ctx, admin, &models.Aggregate{Name: "  "}), models.Invalid, "name")
		wantKind(t, s.CreateAggregate(ctx, admin, &models.Aggregate{Name: "x", Members: []string{"6a4a0a8e-0000-4000-8000-000000000001"}}),
			models.NotFound, "members")

		az := "east"
		up, err := s.UpdateAggregate(ctx, admin, agg.UUID, 0, func(a *models.Aggregate) error {
			a.Name = "aggA2"
			a.AvailabilityZone = &az
			a.Metadata["ssd"] = "true"
			a.Members = append(a.Members, numa.UUID)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if up.Generation != 1 || up.Name != "aggA2" || up.Metadata["availability_zone"] != "east" || len(up.Members) != 2 {
			t.Fatalf("updated = %+v", up)
		}
		got, _ := s.GetAggregate(ctx, agg.UUID)
		if got.Generation != 1 || got.Metadata["ssd"] != "true" || got.AvailabilityZone == nil || *got.AvailabilityZone != "east" {
			t.Fatalf("reloaded = %+v", got)
		}
		// Membership changes move the providers' generations (Placement).
		p, _ := s.GetProvider(ctx, numa.UUID)
		if p.Generation != 1 {
			t.Fatalf("numa generation = %d, want 1", p.Generation)
		}

		// Setting the zone through metadata, as Nova's set_metadata does.
		up, err = s.UpdateAggregate(ctx, admin, agg.UUID, store.AnyGeneration, func(a *models.Aggregate) error {
			a.Metadata["availability_zone"] = "west"
			return nil
		})
		if err != nil || up.AvailabilityZone == nil || *up.AvailabilityZone != "west" {
			t.Fatalf("zone via metadata: %+v, %v", up, err)
		}

		// Unknown member: NotFound naming it, nothing changed.
		_, err = s.UpdateAggregate(ctx, admin, agg.UUID, store.AnyGeneration, func(a *models.Aggregate) error {
			a.Members = append(a.Members, "6a4a0a8e-0000-4000-8000-0000000000ff")
			return nil
		})
		wantKind(t, err, models.NotFound, "members")
		if !strings.Contains(err.Error(), "6a4a0a8e-0000-4000-8000-0000000000ff") {
			t.Fatalf("error does not name the provider: %v", err)
		}

		// Stale generation.
		_, err = s.UpdateAggregate(ctx, admin, agg.UUID, 0, func(a *models.Aggregate) error { return nil })
		wantKind(t, err, models.Conflict, "generation")

		// Delete is refused while a host is a member, allowed once it left.
		wantKind(t, s.DeleteAggregate(ctx, admin, agg.UUID, store.AnyGeneration), models.Conflict, "members")
		up, err = s.UpdateAggregate(ctx, admin, agg.UUID, store.AnyGeneration, func(a *models.Aggregate) error {
			a.Members = []string{numa.UUID} // a child is not a host
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		wantKind(t, s.DeleteAggregate(ctx, admin, agg.UUID, up.Generation-1), models.Conflict, "generation")
		if err := s.DeleteAggregate(ctx, admin, agg.UUID, up.Generation); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetAggregate(ctx, agg.UUID); models.KindOf(err) != models.NotFound {
			t.Fatalf("after delete: %v", err)
		}
		aggs, _, err := s.ProviderAggregates(ctx, numa.UUID)
		if err != nil || len(aggs) != 0 {
			t.Fatalf("memberships after delete: %v %v", aggs, err)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestSQLiteFilesArePrivate: a new database file and its WAL are readable
// by their owner only (they hold cookie keys and password hashes).
func TestSQLiteFilesArePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "private.db")
	s, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateUser(context.Background(), store.Actor{Name: "test"}, "u", "a long enough password", models.RoleAdmin, ""); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-revision"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s has mode %v, want -rw-------", filepath.Base(p), perm)
		}
	}
}
