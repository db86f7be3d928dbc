package store_test

import (
	"bytes"
	"maps"
	"slices"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

func TestDemo(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		loaded, err := s.LoadDemo(ctx)
		if err != nil || !loaded {
			t.Fatalf("LoadDemo = %v, %v", loaded, err)
		}
		rev, _ := s.Revision(ctx)
		loaded, err = s.LoadDemo(ctx)
		if err != nil || loaded {
			t.Fatalf("second LoadDemo = %v, %v; want false on a non-empty database", loaded, err)
		}
		if r, _ := s.Revision(ctx); r != rev {
			t.Fatalf("a skipped LoadDemo moved the revision")
		}

		uuidOf := func(name string) string {
			t.Helper()
			p, err := s.GetProvider(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			return p.UUID
		}
		// Seed 000's "nested resource providers" picture.
		for _, c := range []struct {
			agg     string
			members []string
		}{
			{"aggA", []string{"cn1"}},
			{"aggB", []string{"cn2", "ss1"}},
			{"aggC", []string{"numa1_1", "ss2"}},
		} {
			a, err := s.GetAggregate(ctx, c.agg)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, m := range c.members {
				want = append(want, uuidOf(m))
			}
			slices.Sort(want)
			if !slices.Equal(a.Members, want) {
				t.Errorf("%s members = %v, want %v", c.agg, a.Members, c.members)
			}
		}
		for _, c := range []struct{ child, parent string }{
			{"numa1_1", "cn1"}, {"numa1_2", "cn1"}, {"numa2_1", "cn2"}, {"numa2_2", "cn2"},
		} {
			p, _ := s.GetProvider(ctx, c.child)
			if p.ParentUUID == nil || *p.ParentUUID != uuidOf(c.parent) || p.RootUUID != uuidOf(c.parent) {
				t.Errorf("%s is not a child of %s", c.child, c.parent)
			}
		}
		for _, ss := range []string{"ss1", "ss2"} {
			p, _ := s.GetProvider(ctx, ss)
			if !p.IsSharing() || p.IsHost() {
				t.Errorf("%s is not a sharing provider", ss)
			}
		}

		w, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Providers come back as they went in (LoadWorld scans them by hand).
		src := map[string]models.Provider{}
		for _, p := range store.DemoWorld().Providers {
			slices.Sort(p.Traits) // the store keeps traits sorted
			src[p.Name] = p
		}
		if len(w.Providers) != len(src) {
			t.Fatalf("%d providers exported, %d in the demo", len(w.Providers), len(src))
		}
		for _, p := range w.Providers {
			d := src[p.Name]
			if p.UUID != d.UUID || !slices.Equal(p.Traits, d.Traits) || !maps.Equal(p.Inventories, d.Inventories) ||
				!maps.Equal(p.Usages, d.Usages) || (p.ParentUUID == nil) != (d.ParentUUID == nil) ||
				p.ParentUUID != nil && *p.ParentUUID != *d.ParentUUID || p.CreatedAt.IsZero() {
				t.Fatalf("provider %s exported as %+v, demo has %+v", p.Name, p, d)
			}
		}

		// The other parts of the story: tenant tags, reservations, a zone,
		// flavors that use them, and groups with members.
		var tenant, reservation, zone bool
		for _, a := range w.Aggregates {
			for k := range a.Metadata {
				tenant = tenant || k == "filter_tenant_id"
				reservation = reservation || len(k) > len("reservation:") && k[:len("reservation:")] == "reservation:"
			}
			zone = zone || a.AvailabilityZone != nil
		}
		var resvFlavor, scopedFlavor bool
		for _, f := range w.Flavors {
			for k := range f.ExtraSpecs {
				resvFlavor = resvFlavor || k == "reservation:r42"
				scopedFlavor = scopedFlavor || len(k) > 31 && k[:31] == "aggregate_instance_extra_specs:"
			}
		}
		policies := map[string]int{}
		for _, g := range w.ServerGroups {
			policies[g.Policy] += len(g.Members)
			if g.Policy == models.PolicyAntiAffinity && len(g.Members) > 0 && g.MaxServerPerHost() != 2 {
				t.Errorf("anti-affinity group %s: max_server_per_host %d", g.Name, g.MaxServerPerHost())
			}
		}
		if !tenant || !reservation || !zone || !resvFlavor || !scopedFlavor ||
			policies[models.PolicyAffinity] == 0 || policies[models.PolicyAntiAffinity] == 0 {
			t.Fatalf("demo lacks part of its story: tenant=%v reservation=%v zone=%v resvFlavor=%v scopedFlavor=%v groups=%v",
				tenant, reservation, zone, resvFlavor, scopedFlavor, policies)
		}

		// `corral export` then `corral import` into another database gives
		// the same world back.
		var buf bytes.Buffer
		if err := models.EncodeWorld(&buf, w); err != nil {
			t.Fatal(err)
		}
		w2, err := models.DecodeWorld(&buf)
		if err != nil {
			t.Fatalf("decode exported world: %v", err)
		}
		other := storetest.Open(t)
		if err := other.ImportWorld(ctx, admin, w2, true); err != nil {
			t.Fatal(err)
		}
		w3, _ := other.ExportWorld(ctx)
		if len(w3.Providers) != len(w.Providers) || len(w3.Aggregates) != len(w.Aggregates) ||
			len(w3.Servers) != len(w.Servers) || len(w3.ServerGroups) != len(w.ServerGroups) || len(w3.Flavors) != len(w.Flavors) {
			t.Fatal("export/import through the JSON format lost objects")
		}
		for i := range w.Aggregates {
			if w.Aggregates[i].UUID != w3.Aggregates[i].UUID || !slices.Equal(w.Aggregates[i].Members, w3.Aggregates[i].Members) {
				t.Fatalf("aggregate %s differs after the round trip", w.Aggregates[i].Name)
			}
		}
	})
}

// Reopening runs the migrations again; they must leave data alone (on
// SQLite a migration that rebuilt a table would cascade-delete memberships).
func TestReopenKeepsData(t *testing.T) {
	storetest.ForEachDSN(t, func(t *testing.T, dsn string) {
		s, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.LoadDemo(ctx); err != nil {
			t.Fatal(err)
		}
		before, _ := s.ExportWorld(ctx)
		rev, _ := s.Revision(ctx)
		s.Close()
		s, err = store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		after, _ := s.ExportWorld(ctx)
		if r, _ := s.Revision(ctx); r != rev {
			t.Fatalf("revision %d after reopen, want %d", r, rev)
		}
		if len(after.Aggregates) != len(before.Aggregates) {
			t.Fatalf("aggregates: %d, want %d", len(after.Aggregates), len(before.Aggregates))
		}
		for i := range before.Aggregates {
			if !slices.Equal(before.Aggregates[i].Members, after.Aggregates[i].Members) {
				t.Fatalf("aggregate %s lost members on reopen", before.Aggregates[i].Name)
			}
		}
	})
}
