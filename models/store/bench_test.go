package store_test

import (
	"fmt"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

// bigWorld has hosts×(1+numa) providers and aggs aggregates of 20 hosts.
func bigWorld(hosts, numa, aggs int) *models.World {
	w := &models.World{Settings: models.DefaultSettings()}
	id := func(kind string, i int) string { return store.DemoUUID(kind, fmt.Sprint(i)) }
	for h := 0; h < hosts; h++ {
		w.Providers = append(w.Providers, models.Provider{UUID: id("host", h), Name: fmt.Sprintf("cn%d", h)})
		for n := 0; n < numa; n++ {
			parent := id("host", h)
			w.Providers = append(w.Providers, models.Provider{UUID: id("numa", h*numa+n), Name: fmt.Sprintf("numa%d_%d", h, n), ParentUUID: &parent})
		}
	}
	for a := 0; a < aggs; a++ {
		ag := models.Aggregate{UUID: id("agg", a), Name: fmt.Sprintf("agg%d", a), Metadata: map[string]string{"k": fmt.Sprint(a)}}
		for m := 0; m < 20; m++ {
			ag.Members = append(ag.Members, id("host", (a*20+m)%hosts))
		}
		w.Aggregates = append(w.Aggregates, ag)
	}
	return w
}

func benchStore(b *testing.B, hosts int) *store.Store {
	b.Helper()
	return fill(b, storetest.Open(b), hosts)
}

func fill(b *testing.B, s *store.Store, hosts int) *store.Store {
	b.Helper()
	if err := s.ImportWorld(ctx, admin, bigWorld(hosts, 2, hosts/10), true); err != nil {
		b.Fatal(err)
	}
	return s
}

// forEachDB runs a benchmark on SQLite and, when configured, PostgreSQL.
func forEachDB(b *testing.B, fn func(b *testing.B, s *store.Store)) {
	b.Run("sqlite", func(b *testing.B) { fn(b, storetest.Open(b)) })
	b.Run("postgres", func(b *testing.B) { fn(b, storetest.OpenPostgres(b)) })
}

// LoadWorld is what a snapshot rebuild costs after a write.
func BenchmarkLoadWorld10kProviders(b *testing.B) {
	forEachDB(b, func(b *testing.B, s *store.Store) {
		fill(b, s, 3334)
		b.ResetTimer()
		for b.Loop() {
			if _, _, err := s.LoadWorld(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A replace import of a 10,000-provider world, as `corral import` does.
func BenchmarkImportWorld10kProviders(b *testing.B) {
	w := bigWorld(3334, 2, 333)
	forEachDB(b, func(b *testing.B, s *store.Store) {
		for b.Loop() {
			if err := s.ImportWorld(ctx, admin, w, true); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Revision is what every request pays to see whether the world changed.
func BenchmarkRevision(b *testing.B) {
	s := storetest.Open(b)
	for b.Loop() {
		if _, err := s.Revision(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpdateAggregate(b *testing.B) {
	s := benchStore(b, 200)
	agg, err := s.GetAggregate(ctx, "agg1")
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		if _, err := s.UpdateAggregate(ctx, admin, agg.UUID, store.AnyGeneration, func(a *models.Aggregate) error {
			a.Metadata["k"] = fmt.Sprint(i)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// UserByToken runs on every API request.
func BenchmarkUserByToken(b *testing.B) {
	s := storetest.Open(b)
	if _, err := s.CreateUser(ctx, admin, "bob", "correct horse", models.RoleAdmin, ""); err != nil {
		b.Fatal(err)
	}
	plain, _, err := s.CreateToken(ctx, admin, "bob", "bench")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := s.UserByToken(ctx, plain); err != nil {
			b.Fatal(err)
		}
	}
}
