package store_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

func TestServerGroupsAndQuotas(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		mustProvider(t, s, "cn1", "")
		var servers []string
		for i := 0; i < 4; i++ {
			v := &models.Server{Name: "web", ProjectID: "p1", Host: "cn1"}
			if err := s.CreateServer(ctx, admin, v); err != nil {
				t.Fatal(err)
			}
			servers = append(servers, v.UUID)
		}
		wantKind(t, s.CreateServer(ctx, admin, &models.Server{Name: "x", Host: "nowhere"}), models.NotFound, "host")

		invalid := []struct {
			g     models.ServerGroup
			field string
		}{
			{models.ServerGroup{Name: "", Policy: models.PolicyAffinity}, "name"},
			{models.ServerGroup{Name: "g", Policy: "spread"}, "policy"},
			{models.ServerGroup{Name: "g", Policy: models.PolicySoftAntiAffinity, Rules: map[string]int{"max_server_per_host": 2}}, "rules"},
			{models.ServerGroup{Name: "g", Policy: models.PolicyAntiAffinity, Rules: map[string]int{"max_server_per_host": 0}}, "rules"},
			{models.ServerGroup{Name: "g", Policy: models.PolicyAntiAffinity, Rules: map[string]int{"other": 1}}, "rules"},
		}
		for _, c := range invalid {
			g := c.g
			wantKind(t, s.CreateServerGroup(ctx, admin, &g), models.Invalid, c.field)
		}
		g := &models.ServerGroup{Name: "web", ProjectID: "p1", UserID: "u1", Policy: models.PolicyAntiAffinity,
			Rules: map[string]int{models.RuleMaxServerPerHost: 2}, Members: servers[:1]}
		if err := s.CreateServerGroup(ctx, admin, g); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetServerGroup(ctx, g.UUID)
		if err != nil || got.MaxServerPerHost() != 2 || !slices.Equal(got.Members, servers[:1]) {
			t.Fatalf("GetServerGroup = %+v, %v", got, err)
		}
		_, err = s.GetServerGroup(ctx, "8f0c0f4e-0000-4000-8000-000000000000")
		wantKind(t, err, models.NotFound, "server_group")

		// server_group_members: 3 allowed, the 4th is over quota.
		if err := s.SetQuota(ctx, admin, "p1", models.QuotaServerGroupMembers, 3); err != nil {
			t.Fatal(err)
		}
		g2, err := s.UpdateServerGroup(ctx, admin, g.UUID, 0, func(g *models.ServerGroup) error {
			g.Members = servers[:3]
			return nil
		})
		if err != nil || len(g2.Members) != 3 || g2.Generation != 1 {
			t.Fatalf("grow to 3: %+v, %v", g2, err)
		}
		_, err = s.UpdateServerGroup(ctx, admin, g.UUID, 1, func(g *models.ServerGroup) error {
			g.Members = servers
			return nil
		})
		wantKind(t, err, models.OverQuota, "members")
		_, err = s.UpdateServerGroup(ctx, admin, g.UUID, 0, func(g *models.ServerGroup) error { return nil })
		wantKind(t, err, models.Conflict, "generation")
		_, err = s.UpdateServerGroup(ctx, admin, g.UUID, 1, func(g *models.ServerGroup) error {
			g.Members = append(g.Members, "8f0c0f4e-0000-4000-8000-0000000000ee")
			return nil
		})
		wantKind(t, err, models.NotFound, "members")

		// A server belongs to one group at most.
		other := &models.ServerGroup{Name: "other", ProjectID: "p1", Policy: models.PolicyAffinity, Members: servers[:1]}
		wantKind(t, s.CreateServerGroup(ctx, admin, other), models.Conflict, "members")

		// server_groups: quota 2 → the third group in p1 is refused, p2 is
		// not affected, -1 lifts the limit.
		if err := s.SetQuota(ctx, admin, "p1", models.QuotaServerGroups, 2); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateServerGroup(ctx, admin, &models.ServerGroup{Name: "two", ProjectID: "p1", Policy: models.PolicyAffinity}); err != nil {
			t.Fatal(err)
		}
		err = s.CreateServerGroup(ctx, admin, &models.ServerGroup{Name: "three", ProjectID: "p1", Policy: models.PolicyAffinity})
		wantKind(t, err, models.OverQuota, "")
		if !strings.Contains(err.Error(), "Quota exceeded, too many server groups.") {
			t.Fatalf("message %q", err)
		}
		if err := s.CreateServerGroup(ctx, admin, &models.ServerGroup{Name: "elsewhere", ProjectID: "p2", Policy: models.PolicyAffinity}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetQuota(ctx, admin, "p1", models.QuotaServerGroups, -1); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateServerGroup(ctx, admin, &models.ServerGroup{Name: "three", ProjectID: "p1", Policy: models.PolicyAffinity}); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.GetQuota(ctx, "p2", models.QuotaServerGroups); n != models.DefaultQuota {
			t.Fatalf("default quota = %d", n)
		}
		_, err = s.GetQuota(ctx, "p2", "cores")
		wantKind(t, err, models.Invalid, "resource")
		wantKind(t, s.SetQuota(ctx, admin, "p1", models.QuotaServerGroups, -2), models.Invalid, "limit")
		qs, err := s.ListQuotas(ctx, "p1")
		if err != nil || len(qs) != 2 {
			t.Fatalf("ListQuotas = %v, %v", qs, err)
		}

		list, err := s.ListServerGroups(ctx, store.ServerGroupQuery{ProjectID: "p1"})
		if err != nil || len(list) != 3 || list[0].Name != "web" {
			t.Fatalf("ListServerGroups(p1) = %v, %v", list, err)
		}
		all, _ := s.ListServerGroups(ctx, store.ServerGroupQuery{})
		if len(all) != 4 {
			t.Fatalf("all groups: %d", len(all))
		}
		page, _ := s.ListServerGroups(ctx, store.ServerGroupQuery{Offset: 1, Limit: 2})
		if len(page) != 2 || page[0].UUID != all[1].UUID {
			t.Fatalf("page = %v", page)
		}

		// Deleting a server takes it out of its group.
		if err := s.DeleteServer(ctx, admin, servers[0]); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetServerGroup(ctx, g.UUID)
		if slices.Contains(got.Members, servers[0]) || len(got.Members) != 2 {
			t.Fatalf("members after server delete: %v", got.Members)
		}
	})
}

// Concurrent creators cannot jointly exceed the server_groups quota: the
// count and the insert happen in one serialised write.
func TestServerGroupQuotaUnderConcurrency(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if err := s.SetQuota(ctx, admin, "p1", models.QuotaServerGroups, 3); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.CreateServerGroup(ctx, admin, &models.ServerGroup{Name: "g", ProjectID: "p1", Policy: models.PolicyAffinity})
			}()
		}
		wg.Wait()
		var ok, over int
		for _, err := range errs {
			switch models.KindOf(err) {
			case models.Internal:
				if err != nil {
					t.Fatal(err)
				}
				ok++
			case models.OverQuota:
				over++
			default:
				t.Fatal(err)
			}
		}
		n, _ := s.CountServerGroups(ctx, "p1")
		if ok != 3 || over != 5 || n != 3 {
			t.Fatalf("%d created, %d over quota, %d in the database", ok, over, n)
		}
	})
}

func TestProviders(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		cn1 := mustProvider(t, s, "cn1", "")
		cn2 := mustProvider(t, s, "cn2", "")
		numa := mustProvider(t, s, "numa1_1", "cn1")
		leaf := mustProvider(t, s, "pf1", "numa1_1")
		ss1 := mustProvider(t, s, "ss1", "", models.TraitSharesViaAggregate)
		if leaf.RootUUID != cn1.UUID {
			t.Fatalf("leaf root %s", leaf.RootUUID)
		}
		wantKind(t, s.CreateProvider(ctx, admin, &models.Provider{Name: "cn1"}), models.Conflict, "name")
		wantKind(t, s.CreateProvider(ctx, admin, &models.Provider{Name: ""}), models.Invalid, "name")
		missing := "3e0c0f4e-0000-4000-8000-000000000000"
		wantKind(t, s.CreateProvider(ctx, admin, &models.Provider{Name: "x", ParentUUID: &missing}), models.NotFound, "parent_provider_uuid")

		roots, total, err := s.ListProviders(ctx, store.ProviderQuery{RootsOnly: true})
		if err != nil || total != 3 || len(roots) != 3 {
			t.Fatalf("roots = %v (%d), %v", roots, total, err)
		}
		found, total, _ := s.ListProviders(ctx, store.ProviderQuery{Search: "NUMA"})
		if total != 1 || found[0].UUID != numa.UUID {
			t.Fatalf("search = %v", found)
		}
		pg, total, _ := s.ListProviders(ctx, store.ProviderQuery{Offset: 1, Limit: 2})
		if total != 5 || len(pg) != 2 || pg[0].Name != "cn2" {
			t.Fatalf("page = %v (%d)", pg, total)
		}
		// LIKE wildcards are literal in a search.
		if _, total, _ := s.ListProviders(ctx, store.ProviderQuery{Search: "%"}); total != 0 {
			t.Fatalf("%% matched %d providers", total)
		}
		tree, _, _ := s.ListProviders(ctx, store.ProviderQuery{InTree: cn1.UUID})
		if len(tree) != 3 {
			t.Fatalf("tree of cn1 = %v", tree)
		}

		// Re-parent numa1_1 (with its child) under cn2; a cycle is refused.
		_, err = s.UpdateProvider(ctx, admin, cn1.UUID, store.AnyGeneration, func(p *models.Provider) error {
			p.ParentUUID = &leaf.UUID
			return nil
		})
		wantKind(t, err, models.Invalid, "parent_provider_uuid")
		moved, err := s.UpdateProvider(ctx, admin, numa.UUID, 0, func(p *models.Provider) error {
			p.ParentUUID = &cn2.UUID
			return nil
		})
		if err != nil || moved.RootUUID != cn2.UUID {
			t.Fatalf("re-parent: %+v, %v", moved, err)
		}
		l, _ := s.GetProvider(ctx, leaf.UUID)
		if l.RootUUID != cn2.UUID {
			t.Fatalf("leaf root after move = %s, want cn2", l.RootUUID)
		}
		_, err = s.UpdateProvider(ctx, admin, numa.UUID, 0, func(p *models.Provider) error { return nil })
		wantKind(t, err, models.Conflict, "generation")

		// Placement's PUT aggregates: unknown uuids become bare aggregates.
		a1 := mustAggregate(t, s, "agg1")
		newAgg := "5b0c0f4e-0000-4000-8000-000000000001"
		gen, err := s.SetProviderAggregates(ctx, admin, ss1.UUID, 0, []string{a1.UUID, newAgg})
		if err != nil || gen != 1 {
			t.Fatalf("SetProviderAggregates = %d, %v", gen, err)
		}
		_, err = s.SetProviderAggregates(ctx, admin, ss1.UUID, 0, nil)
		wantKind(t, err, models.Conflict, "generation")
		_, err = s.SetProviderAggregates(ctx, admin, ss1.UUID, 1, []string{"not-a-uuid"})
		wantKind(t, err, models.Invalid, "aggregates")
		aggs, g, err := s.ProviderAggregates(ctx, ss1.UUID)
		want := []string{a1.UUID, newAgg}
		slices.Sort(want)
		if err != nil || g != 1 || !slices.Equal(aggs, want) {
			t.Fatalf("ProviderAggregates = %v gen %d, %v", aggs, g, err)
		}
		bare, err := s.GetAggregate(ctx, newAgg)
		if err != nil || bare.Name != newAgg || !slices.Equal(bare.Members, []string{ss1.UUID}) {
			t.Fatalf("bare aggregate = %+v, %v", bare, err)
		}
		// The aggregate's generation moved with its membership.
		if a, _ := s.GetAggregate(ctx, a1.UUID); a.Generation != 1 {
			t.Fatalf("agg1 generation %d, want 1", a.Generation)
		}

		// A host's servers follow its rename; a host with servers can
		// neither stop being a host nor be deleted.
		srv := &models.Server{Name: "vm", Host: "cn1"}
		if err := s.CreateServer(ctx, admin, srv); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateProvider(ctx, admin, cn1.UUID, store.AnyGeneration, func(p *models.Provider) error {
			p.Name = "cn1-renamed"
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if v, _ := s.GetServer(ctx, srv.UUID); v.Host != "cn1-renamed" {
			t.Fatalf("server host after rename = %q", v.Host)
		}
		_, err = s.UpdateProvider(ctx, admin, cn1.UUID, store.AnyGeneration, func(p *models.Provider) error {
			p.Traits = append(p.Traits, models.TraitSharesViaAggregate)
			return nil
		})
		wantKind(t, err, models.Conflict, "provider")
		mustProvider(t, s, "cn3", "")
		wantKind(t, s.DeleteProvider(ctx, admin, cn1.UUID, store.AnyGeneration), models.Conflict, "provider")
		if _, err := s.UpdateServer(ctx, admin, srv.UUID, func(v *models.Server) error { v.Host = "cn3"; return nil }); err != nil {
			t.Fatal(err)
		}
		_, err = s.UpdateServer(ctx, admin, srv.UUID, func(v *models.Server) error { v.Host = "numa1_1"; return nil })
		wantKind(t, err, models.NotFound, "host")

		// Delete: refused with children; memberships go with the provider.
		wantKind(t, s.DeleteProvider(ctx, admin, cn2.UUID, store.AnyGeneration), models.Conflict, "provider")
		if err := s.DeleteProvider(ctx, admin, ss1.UUID, 0); models.KindOf(err) != models.Conflict {
			t.Fatalf("stale delete: %v", err)
		}
		if err := s.DeleteProvider(ctx, admin, ss1.UUID, 1); err != nil {
			t.Fatal(err)
		}
		if a, _ := s.GetAggregate(ctx, a1.UUID); len(a.Members) != 0 || a.Generation != 2 {
			t.Fatalf("agg1 after member deleted: %+v", a)
		}
	})
}

func TestFlavors(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		f := &models.Flavor{Name: "m1.small", VCPUs: 1, RAMMB: 2048, DiskGB: 20, ExtraSpecs: map[string]string{"hw:cpu_policy": "dedicated"}}
		if err := s.CreateFlavor(ctx, admin, f); err != nil {
			t.Fatal(err)
		}
		wantKind(t, s.CreateFlavor(ctx, admin, &models.Flavor{Name: "m1.small"}), models.Conflict, "name")
		wantKind(t, s.CreateFlavor(ctx, admin, &models.Flavor{ID: f.ID, Name: "other"}), models.Conflict, "id")
		wantKind(t, s.CreateFlavor(ctx, admin, &models.Flavor{Name: "neg", RAMMB: -1}), models.Invalid, "ram_mb")
		for _, ref := range []string{f.ID, "m1.small"} {
			got, err := s.GetFlavor(ctx, ref)
			if err != nil || got.ExtraSpecs["hw:cpu_policy"] != "dedicated" || got.VCPUs != 1 || got.RAMMB != 2048 {
				t.Fatalf("GetFlavor(%s) = %+v, %v", ref, got, err)
			}
		}
		up, err := s.UpdateFlavor(ctx, admin, f.ID, 0, func(f *models.Flavor) error {
			f.VCPUs = 2
			delete(f.ExtraSpecs, "hw:cpu_policy")
			f.ExtraSpecs["aggregate_instance_extra_specs:ssd"] = "true"
			return nil
		})
		if err != nil || up.Generation != 1 {
			t.Fatalf("update: %+v %v", up, err)
		}
		got, _ := s.GetFlavor(ctx, f.ID)
		if got.VCPUs != 2 || len(got.ExtraSpecs) != 1 {
			t.Fatalf("after update: %+v", got)
		}
		list, total, err := s.ListFlavors(ctx, store.FlavorQuery{Search: "ssd"})
		if err != nil || total != 1 || list[0].ID != f.ID {
			t.Fatalf("search by extra spec: %v %d %v", list, total, err)
		}
		wantKind(t, s.DeleteFlavor(ctx, admin, f.ID, 0), models.Conflict, "generation")
		if err := s.DeleteFlavor(ctx, admin, f.ID, 1); err != nil {
			t.Fatal(err)
		}
		_, err = s.GetFlavor(ctx, f.ID)
		wantKind(t, err, models.NotFound, "flavor")
	})
}

func TestSettings(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		st, gen, err := s.GetSettings(ctx)
		if err != nil || gen != 0 || st.RequiredMemberPrefix != "reservation:" || len(st.EnabledFilters) != 4 {
			t.Fatalf("defaults: %+v gen %d %v", st, gen, err)
		}
		st.LimitTenantsToPlacementAggregate = true
		st.EnabledFilters = []string{models.FilterAggregateInstanceType}
		if err := s.UpdateSettings(ctx, admin, 0, st); err != nil {
			t.Fatal(err)
		}
		// A second editor holding generation 0 is refused.
		wantKind(t, s.UpdateSettings(ctx, admin, 0, models.DefaultSettings()), models.Conflict, "generation")
		got, gen, _ := s.GetSettings(ctx)
		if gen != 1 || !got.LimitTenantsToPlacementAggregate || !slices.Equal(got.EnabledFilters, st.EnabledFilters) {
			t.Fatalf("after save: %+v gen %d", got, gen)
		}
		bad := got
		bad.EnabledFilters = []string{"Nope"}
		wantKind(t, s.UpdateSettings(ctx, admin, 1, bad), models.Invalid, "enabled_filters")
		bad = got
		bad.SoftAffinityWeightMultiplier = -1
		wantKind(t, s.UpdateSettings(ctx, admin, 1, bad), models.Invalid, "soft_affinity_weight_multiplier")
		if err := s.UpdateSettings(ctx, admin, store.AnyGeneration, models.DefaultSettings()); err != nil {
			t.Fatal(err)
		}
		if _, gen, _ := s.GetSettings(ctx); gen != 2 {
			t.Fatalf("gen %d, want 2", gen)
		}
	})
}

func TestListAggregatesAndAudit(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if _, err := s.LoadDemo(ctx); err != nil {
			t.Fatal(err)
		}
		all, total, err := s.ListAggregates(ctx, store.AggregateQuery{})
		if err != nil || total != len(all) || total < 10 {
			t.Fatalf("ListAggregates = %d of %d, %v", len(all), total, err)
		}
		byName, _, _ := s.ListAggregates(ctx, store.AggregateQuery{Sort: "name", Desc: true, Limit: 3})
		if len(byName) != 3 || byName[0].Name < byName[1].Name || byName[1].Name < byName[2].Name {
			t.Fatalf("sorted desc: %v", names(byName))
		}
		tenant, total, _ := s.ListAggregates(ctx, store.AggregateQuery{Search: "filter_tenant"})
		if total != 2 || len(tenant[0].Members) == 0 {
			t.Fatalf("search metadata: %v", names(tenant))
		}
		east, total, _ := s.ListAggregates(ctx, store.AggregateQuery{Search: "EAST"})
		if total != 1 || east[0].Name != "az-east" || len(east[0].Members) != 4 {
			t.Fatalf("search zone: %v", names(east))
		}
		_, _, err = s.ListAggregates(ctx, store.AggregateQuery{Sort: "members; DROP TABLE x"})
		wantKind(t, err, models.Invalid, "sort")

		other := store.Actor{Name: "bob", Via: "compute-api"}
		agg, _ := s.GetAggregate(ctx, "aggA")
		if _, err := s.UpdateAggregate(ctx, other, agg.UUID, store.AnyGeneration, func(a *models.Aggregate) error {
			a.Metadata["x"] = "1"
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		evs, n, err := s.ListAudit(ctx, store.AuditQuery{Actor: "bob"})
		if err != nil || n != 1 || evs[0].Via != "compute-api" || evs[0].ObjectID != agg.UUID || evs[0].ObjectName != "aggA" {
			t.Fatalf("audit by actor: %+v %d %v", evs, n, err)
		}
		evs, n, _ = s.ListAudit(ctx, store.AuditQuery{ObjectType: "world"})
		if n != 1 || evs[0].Actor != "corral" || evs[0].Via != "demo" {
			t.Fatalf("demo import event: %+v", evs)
		}
		since := evs[0].At
		if _, n, _ := s.ListAudit(ctx, store.AuditQuery{Since: since.Add(time.Microsecond)}); n != 1 {
			t.Fatalf("events after the demo: %d, want 1", n)
		}
		if _, n, _ := s.ListAudit(ctx, store.AuditQuery{Until: since.Add(time.Microsecond)}); n < 1 {
			t.Fatalf("events until the demo: %d", n)
		}
	})
}

func names(aggs []models.Aggregate) []string {
	var out []string
	for _, a := range aggs {
		out = append(out, a.Name)
	}
	return out
}
