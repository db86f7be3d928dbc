package store_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
)

// TestLiveFollowsEveryWrite makes every kind of write this process does —
// aggregates, flavors and extra specs, server groups and members, servers,
// providers (created, changed in place, renamed, moved, deleted),
// inventories and traits, allocations, settings, the catalog — and checks
// after each that the live snapshot was updated from the previous one,
// not rebuilt, and that it equals a snapshot built afresh from the
// database: the same world, the same index, the same lookups.
func TestLiveFollowsEveryWrite(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if err := s.ImportWorld(ctx, admin, cloudgen.Generate(cloudgen.Small()), true); err != nil {
			t.Fatal(err)
		}
		live := s.Live()
		if _, _, err := live.Get(ctx); err != nil {
			t.Fatal(err)
		}
		rebuilds := live.Rebuilds.Load()
		step := func(name string, write func() error) {
			t.Helper()
			updates := live.Updates.Load()
			if err := write(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, rev, err := live.Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if live.Rebuilds.Load() != rebuilds {
				t.Fatalf("%s: the snapshot was rebuilt from the database", name)
			}
			if live.Updates.Load() == updates {
				t.Fatalf("%s: the snapshot was not updated", name)
			}
			w, wrev, err := s.LoadWorld(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rev != wrev {
				t.Fatalf("%s: snapshot at revision %d, database at %d", name, rev, wrev)
			}
			want, err := scheduling.NewSnapshot(w)
			if err != nil {
				t.Fatal(err)
			}
			sameSnapshot(t, name, got, want)
		}
		w, _, _ := s.LoadWorld(ctx)
		var host, child *models.Provider
		for i := range w.Providers {
			p := &w.Providers[i]
			if host == nil && p.ParentUUID == nil && !p.IsSharing() {
				host = p
			}
		}
		for i := range w.Providers {
			if p := &w.Providers[i]; child == nil && p.ParentUUID != nil && *p.ParentUUID != host.UUID {
				child = p
			}
		}
		agg := w.Aggregates[2]

		step("aggregate metadata and members", func() error {
			_, err := s.UpdateAggregate(ctx, admin, agg.UUID, store.AnyGeneration, func(a *models.Aggregate) error {
				a.Metadata["filter_tenant_id"] = "project-live"
				a.Metadata["ssd"] = "true"
				a.Members = append(a.Members, host.UUID)
				return nil
			})
			return err
		})
		step("aggregate metadata only", func() error {
			_, err := s.UpdateAggregate(ctx, admin, agg.UUID, store.AnyGeneration, func(a *models.Aggregate) error {
				a.Metadata["ssd"] = "false"
				a.Metadata["unrelated"] = "1"
				return nil
			})
			return err
		})
		step("aggregate gains a reservation key", func() error {
			_, err := s.UpdateAggregate(ctx, admin, agg.UUID, store.AnyGeneration, func(a *models.Aggregate) error {
				a.Metadata["reservation:live"] = "lease-1"
				return nil
			})
			return err
		})
		step("flavor created", func() error {
			return s.CreateFlavor(ctx, admin, &models.Flavor{ID: "live-1", Name: "live.small", VCPUs: 1, RAMMB: 512, DiskGB: 1,
				ExtraSpecs: map[string]string{"aggregate_instance_extra_specs:ssd": "true"}})
		})
		step("flavor extra specs", func() error {
			_, err := s.UpdateFlavor(ctx, admin, "live-1", store.AnyGeneration, func(f *models.Flavor) error {
				f.ExtraSpecs["hw:cpu_policy"] = "dedicated"
				return nil
			})
			return err
		})
		step("flavor deleted", func() error { return s.DeleteFlavor(ctx, admin, "live-1", store.AnyGeneration) })

		srv := &models.Server{Name: "live-server", ProjectID: "project-live", UserID: "u", Host: host.Name}
		step("server created", func() error { return s.CreateServer(ctx, admin, srv) })
		other := w.Providers[len(w.Providers)-1]
		for i := len(w.Providers) - 1; i >= 0; i-- {
			if p := w.Providers[i]; p.ParentUUID == nil && !p.IsSharing() && p.UUID != host.UUID {
				other = p
				break
			}
		}
		step("server moved", func() error {
			_, err := s.UpdateServer(ctx, admin, srv.UUID, func(v *models.Server) error { v.Host = other.Name; return nil })
			return err
		})
		g := &models.ServerGroup{Name: "live-group", ProjectID: "project-live", UserID: "u", Policy: "anti-affinity",
			Rules: map[string]int{"max_server_per_host": 2}}
		step("server group created", func() error { return s.CreateServerGroup(ctx, admin, g) })
		step("server group members", func() error {
			_, err := s.UpdateServerGroup(ctx, admin, g.UUID, store.AnyGeneration, func(x *models.ServerGroup) error {
				x.Members = append(x.Members, srv.UUID)
				return nil
			})
			return err
		})
		step("server deleted (and out of its group)", func() error { return s.DeleteServer(ctx, admin, srv.UUID) })
		step("server group deleted", func() error { return s.DeleteServerGroup(ctx, admin, g.UUID, store.AnyGeneration) })

		newHost := &models.Provider{Name: "aaa-live-host", Inventories: map[string]models.Inventory{"VCPU": {Total: 8, AllocationRatio: 1}}}
		step("provider created", func() error { return s.CreateProvider(ctx, admin, newHost) })
		kid := &models.Provider{Name: "zzz-live-child", ParentUUID: &newHost.UUID}
		step("child provider created", func() error { return s.CreateProvider(ctx, admin, kid) })
		step("provider traits (in place)", func() error {
			_, err := s.UpdateProvider(ctx, admin, newHost.UUID, store.AnyGeneration, func(p *models.Provider) error {
				p.Traits = append(p.Traits, "CUSTOM_LIVE")
				return nil
			})
			return err
		})
		step("provider inventories (in place)", func() error {
			_, err := s.UpdateProvider(ctx, admin, newHost.UUID, store.AnyGeneration, func(p *models.Provider) error {
				p.Inventories["MEMORY_MB"] = models.Inventory{Total: 4096, AllocationRatio: 1.5}
				return nil
			})
			return err
		})
		step("provider made sharing", func() error {
			_, err := s.UpdateProvider(ctx, admin, kid.UUID, store.AnyGeneration, func(p *models.Provider) error {
				p.ParentUUID = nil
				p.Traits = []string{models.TraitSharesViaAggregate}
				return nil
			})
			return err
		})
		step("child moved to another tree", func() error {
			_, err := s.UpdateProvider(ctx, admin, child.UUID, store.AnyGeneration, func(p *models.Provider) error {
				p.ParentUUID = &newHost.UUID
				return nil
			})
			return err
		})
		top := &models.Provider{Name: "tree-top"}
		step("tree top created", func() error { return s.CreateProvider(ctx, admin, top) })
		leaf := &models.Provider{Name: "tree-leaf", ParentUUID: &top.UUID}
		step("tree leaf created", func() error { return s.CreateProvider(ctx, admin, leaf) })
		step("subtree moved (the leaf's root follows)", func() error {
			_, err := s.UpdateProvider(ctx, admin, top.UUID, store.AnyGeneration, func(p *models.Provider) error {
				p.ParentUUID = &newHost.UUID
				return nil
			})
			return err
		})
		hosted := &models.Server{Name: "hosted", ProjectID: "project-live", UserID: "u", Host: newHost.Name}
		step("server on the new host", func() error { return s.CreateServer(ctx, admin, hosted) })
		step("host renamed (its servers follow)", func() error {
			_, err := s.UpdateProvider(ctx, admin, newHost.UUID, store.AnyGeneration, func(p *models.Provider) error {
				p.Name = "mmm-live-host"
				return nil
			})
			return err
		})
		step("provider aggregates", func() error {
			_, err := s.SetProviderAggregates(ctx, admin, newHost.UUID, store.AnyGeneration, []string{agg.UUID})
			return err
		})
		step("allocations", func() error {
			return s.SetAllocations(ctx, admin, []store.ConsumerAllocations{{
				ConsumerUUID: "9e0b7f3c-1111-4222-8333-444455556666", ProjectID: "project-live", UserID: "u",
				Allocations: []models.Allocation{{ProviderUUID: newHost.UUID, ResourceClass: "VCPU", Used: 2}},
			}})
		})
		step("settings", func() error {
			st := models.DefaultSettings()
			st.LimitTenantsToPlacementAggregate = true
			st.EnabledFilters = []string{models.FilterAggregateMultiTenancy}
			return s.UpdateSettings(ctx, admin, store.AnyGeneration, st)
		})
		step("custom trait (the catalog only)", func() error {
			_, err := s.EnsureTrait(ctx, admin, "CUSTOM_CATALOG_ONLY")
			return err
		})
		lone := &models.Provider{Name: "lone-live"}
		step("lone provider created", func() error { return s.CreateProvider(ctx, admin, lone) })
		step("provider in an aggregate", func() error {
			_, err := s.UpdateAggregate(ctx, admin, agg.UUID, store.AnyGeneration, func(a *models.Aggregate) error {
				a.Members = append(a.Members, lone.UUID)
				return nil
			})
			return err
		})
		step("provider deleted (and out of its aggregates)", func() error {
			return s.DeleteProvider(ctx, admin, lone.UUID, store.AnyGeneration)
		})
	})
}

// sameSnapshot fails when got and want differ in their world or in what
// they derive from it.
func sameSnapshot(t *testing.T, step string, got, want *scheduling.Snapshot) {
	t.Helper()
	a, _ := json.Marshal(got.World())
	b, _ := json.Marshal(want.World())
	if string(a) != string(b) {
		t.Fatalf("%s: the updated snapshot's world differs from the database's:\n%.3000s\n%.3000s", step, a, b)
	}
	gi, wi := got.Index(), want.Index()
	if gi.Len() != wi.Len() || gi.NumAggregates() != wi.NumAggregates() {
		t.Fatalf("%s: index sizes %d/%d, want %d/%d", step, gi.Len(), gi.NumAggregates(), wi.Len(), wi.NumAggregates())
	}
	for i := 0; i < wi.Len(); i++ {
		gp, wp := gi.Provider(i), wi.Provider(i)
		if gp.UUID != wp.UUID || gi.Root(i) != wi.Root(i) || gi.Parent(i) != wi.Parent(i) || gi.IsSharing(i) != wi.IsSharing(i) ||
			!slices.Equal(gi.AggregatesOf(i), wi.AggregatesOf(i)) || !slices.Equal(gi.Descendants(i), wi.Descendants(i)) {
			t.Fatalf("%s: provider %d (%s) is indexed differently", step, i, wp.Name)
		}
	}
	for a := 0; a < wi.NumAggregates(); a++ {
		if !slices.Equal(gi.Members(a), wi.Members(a)) {
			t.Fatalf("%s: aggregate %s has other members in the index", step, wi.Aggregate(a).Name)
		}
	}
	hostsOf := func(s *scheduling.Snapshot) string {
		var out []string
		for _, h := range s.Hosts() {
			var aggs []string
			for _, a := range h.Aggregates {
				aggs = append(aggs, a.UUID)
			}
			out = append(out, fmt.Sprint(h.Name(), aggs))
		}
		return fmt.Sprint(out)
	}
	if hostsOf(got) != hostsOf(want) {
		t.Fatalf("%s: the hosts differ", step)
	}
	w := want.World()
	for _, f := range w.Flavors {
		if gf, ok := got.Flavor(f.Name); !ok || gf.ID != f.ID || !sameJSON(gf, &f) {
			t.Fatalf("%s: flavor %s is not found as it is", step, f.Name)
		}
	}
	if len(w.Flavors) > 0 {
		if _, ok := got.Flavor("live.small"); ok && !slices.ContainsFunc(w.Flavors, func(f models.Flavor) bool { return f.Name == "live.small" }) {
			t.Fatalf("%s: a deleted flavor is still found", step)
		}
	}
	for i := range w.ServerGroups {
		g := &w.ServerGroups[i]
		gg, err := got.ServerGroup(g.UUID, g.ProjectID)
		if err != nil || !sameJSON(gg, g) || fmt.Sprint(got.GroupHosts(gg)) != fmt.Sprint(want.GroupHosts(g)) {
			t.Fatalf("%s: server group %s is not found as it is (%v)", step, g.Name, err)
		}
	}
	if _, err := got.ServerGroup("live-group", "project-live"); (err == nil) != slices.ContainsFunc(w.ServerGroups, func(g models.ServerGroup) bool { return g.Name == "live-group" }) {
		t.Fatalf("%s: the snapshot finds live-group where the database does not, or the other way round", step)
	}
	// The same answers, host filters and views included.
	for _, body := range []string{
		`{"project_id": "project-live", "flavor": "live.small"}`,
		`{"project_id": "project-1", "flavor": {"name": "adhoc", "vcpus": 1, "ram_mb": 64, "disk_gb": 1, "extra_specs": {"aggregate_instance_extra_specs:ssd": "true"}}}`,
		`{"project_id": "project-2", "placement": {"member_of": ["!` + wi.Aggregate(0).UUID + `"]}}`,
	} {
		spec, err := scheduling.DecodeRequestJSON([]byte(body), "")
		if err != nil {
			t.Fatal(err)
		}
		gt, gerr := got.Run(spec)
		wt, werr := want.Run(spec)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !sameJSON(gt, wt) {
			t.Fatalf("%s: %s answers differently (%v, %v)", step, body, gerr, werr)
		}
	}
	for _, p := range []string{"project-live", "project-1"} {
		if fmt.Sprint(aggUUIDs(got.TenantAggregates(p))) != fmt.Sprint(aggUUIDs(want.TenantAggregates(p))) {
			t.Fatalf("%s: tenant aggregates of %s differ", step, p)
		}
	}
}

func aggUUIDs(as []*models.Aggregate) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.UUID)
	}
	return out
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
