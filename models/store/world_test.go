package store_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

func worldJSON(t *testing.T, w *models.World) string {
	t.Helper()
	// Timestamps differ in precision between databases and are not part
	// of what an import must preserve here.
	c := *w
	c.Providers = slices.Clone(w.Providers)
	for i := range c.Providers {
		c.Providers[i].CreatedAt, c.Providers[i].UpdatedAt = c.Providers[i].CreatedAt.UTC().Truncate(1e3), c.Providers[i].UpdatedAt.UTC().Truncate(1e3)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestImportWithOneBadRecordChangesNothing(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if ok, err := s.LoadDemo(ctx); err != nil || !ok {
			t.Fatalf("LoadDemo = %v, %v", ok, err)
		}
		before, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rev0, _ := s.Revision(ctx)
		_, audit0, _ := s.ListAudit(ctx, store.AuditQuery{})

		good := func() *models.World {
			return &models.World{
				Providers:  []models.Provider{{Name: "cn9"}, {Name: "cn10"}},
				Aggregates: []models.Aggregate{{Name: "new-agg", Metadata: map[string]string{"k": "v"}}},
				Flavors:    []models.Flavor{{Name: "x1.tiny", VCPUs: 1}},
			}
		}
		cases := []struct {
			name  string
			spoil func(w *models.World)
			kind  models.Kind
			field string
		}{
			{"aggregate member unknown", func(w *models.World) {
				w.Aggregates[0].Members = []string{"0b5a4c1e-0000-4000-8000-00000000dead"}
			}, models.NotFound, "aggregates[new-agg].members"},
			{"provider parent unknown", func(w *models.World) {
				p := "0b5a4c1e-0000-4000-8000-00000000beef"
				w.Providers[1].ParentUUID = &p
			}, models.NotFound, "providers[cn10].parent"},
			{"duplicate provider name", func(w *models.World) { w.Providers[1].Name = "cn9" }, models.Invalid, "providers[1].name"},
			{"provider parents form a cycle", func(w *models.World) {
				a, b := "0b5a4c1e-0000-4000-8000-0000000000a1", "0b5a4c1e-0000-4000-8000-0000000000b2"
				w.Providers[0].UUID, w.Providers[1].UUID = a, b
				w.Providers[0].ParentUUID, w.Providers[1].ParentUUID = &b, &a
			}, models.Invalid, "providers[0].parent"},
			{"negative vcpus", func(w *models.World) { w.Flavors[0].VCPUs = -1 }, models.Invalid, "flavors[0].vcpus"},
			{"server on unknown host", func(w *models.World) {
				w.Servers = []models.Server{{Name: "s", Host: "nowhere"}}
			}, models.NotFound, "servers[s].host"},
			{"rules with affinity", func(w *models.World) {
				w.ServerGroups = []models.ServerGroup{{Name: "g", Policy: models.PolicyAffinity, Rules: map[string]int{"max_server_per_host": 2}}}
			}, models.Invalid, "server_groups[0].rules"},
			{"unknown host filter", func(w *models.World) {
				w.Settings = models.DefaultSettings()
				w.Settings.EnabledFilters = append(w.Settings.EnabledFilters, "NoSuchFilter")
			}, models.Invalid, "settings.enabled_filters"},
		}
		for _, replace := range []bool{false, true} {
			for _, tc := range cases {
				w := good()
				tc.spoil(w)
				err := s.ImportWorld(ctx, admin, w, replace)
				if err == nil {
					t.Fatalf("%s (replace=%v): import succeeded", tc.name, replace)
				}
				if models.KindOf(err) != tc.kind || models.FieldOf(err) != tc.field {
					t.Errorf("%s (replace=%v): got %v %q (%v), want %v %q", tc.name, replace, models.KindOf(err), models.FieldOf(err), err, tc.kind, tc.field)
				}
				after, err := s.ExportWorld(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if worldJSON(t, after) != worldJSON(t, before) {
					t.Fatalf("%s (replace=%v): the world changed", tc.name, replace)
				}
			}
		}
		if rev, _ := s.Revision(ctx); rev != rev0 {
			t.Fatalf("revision moved from %d to %d", rev0, rev)
		}
		if _, n, _ := s.ListAudit(ctx, store.AuditQuery{}); n != audit0 {
			t.Fatalf("audit grew from %d to %d on failed imports", audit0, n)
		}

		// The good world merges in, keeping the demo.
		if err := s.ImportWorld(ctx, admin, good(), false); err != nil {
			t.Fatal(err)
		}
		after, _ := s.ExportWorld(ctx)
		if len(after.Providers) != len(before.Providers)+2 || len(after.Aggregates) != len(before.Aggregates)+1 {
			t.Fatalf("merge: %d providers, %d aggregates", len(after.Providers), len(after.Aggregates))
		}
	})
}

func TestExportImportRoundTrip(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if _, err := s.LoadDemo(ctx); err != nil {
			t.Fatal(err)
		}
		w, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		aggA, _ := s.GetAggregate(ctx, "aggA")
		// A private flavor and its access list travel too.
		w.Flavors = append(w.Flavors, models.Flavor{ID: "f-private", Name: "private-1", VCPUs: 1, ExtraSpecs: map[string]string{},
			Private: true, Projects: []string{"p2", "p1"}})

		// Into a fresh database: the same world comes back.
		other := storetest.Open(t)
		if err := other.ImportWorld(ctx, admin, w, true); err != nil {
			t.Fatal(err)
		}
		w2, _ := other.ExportWorld(ctx)
		if len(w2.Providers) != len(w.Providers) || len(w2.Aggregates) != len(w.Aggregates) ||
			len(w2.Flavors) != len(w.Flavors) || len(w2.Servers) != len(w.Servers) || len(w2.ServerGroups) != len(w.ServerGroups) {
			t.Fatalf("round trip lost objects")
		}
		for i := range w.Aggregates {
			a, b := w.Aggregates[i], w2.Aggregates[i]
			if a.UUID != b.UUID || a.Name != b.Name || !slices.Equal(a.Members, b.Members) {
				t.Fatalf("aggregate %s came back as %+v", a.Name, b)
			}
		}
		pf, err := other.GetFlavor(ctx, "private-1")
		if err != nil || !pf.Private || !slices.Equal(pf.Projects, []string{"p1", "p2"}) {
			t.Fatalf("private flavor came back as %+v (%v)", pf, err)
		}
		if mf, _ := other.GetFlavor(ctx, w.Flavors[0].ID); mf.Private || mf.Projects != nil {
			t.Fatalf("public flavor came back as %+v", mf)
		}

		// Replace into the same database: ids stay, touched generations move.
		w.Aggregates = slices.DeleteFunc(w.Aggregates, func(a models.Aggregate) bool { return a.Name == "gpu" })
		if err := s.ImportWorld(ctx, admin, w, true); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetAggregate(ctx, aggA.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != aggA.ID || got.Generation != aggA.Generation+1 {
			t.Fatalf("aggA after replace: id %d gen %d, want id %d gen %d", got.ID, got.Generation, aggA.ID, aggA.Generation+1)
		}
		if _, err := s.GetAggregate(ctx, "gpu"); models.KindOf(err) != models.NotFound {
			t.Fatalf("gpu should be gone after a replace without it: %v", err)
		}
		// A new aggregate after the import gets a fresh id (PostgreSQL's
		// sequence must not hand out a kept one).
		n := mustAggregate(t, s, "after-import")
		if n.ID <= aggA.ID {
			t.Fatalf("new aggregate id %d collides with kept ids", n.ID)
		}
	})
}

func TestMergeImportMatchesByName(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		cn1 := mustProvider(t, s, "cn1", "")
		agg := mustAggregate(t, s, "aggA")
		// A hand-written world without uuids names cn1 and aggA.
		w := &models.World{
			Providers:  []models.Provider{{UUID: "1d1fb1c8-0000-4000-8000-000000000001", Name: "cn1", Traits: []string{"CUSTOM_X"}}},
			Aggregates: []models.Aggregate{{Name: "aggA", Members: []string{"1d1fb1c8-0000-4000-8000-000000000001"}}},
		}
		if err := s.ImportWorld(ctx, admin, w, false); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetAggregate(ctx, agg.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Members, []string{cn1.UUID}) {
			t.Fatalf("members = %v, want [%s]", got.Members, cn1.UUID)
		}
		p, _ := s.GetProvider(ctx, cn1.UUID)
		if !p.HasTrait("CUSTOM_X") || p.Generation != cn1.Generation+1 {
			t.Fatalf("cn1 after merge: %+v", p)
		}
	})
}

func TestMergeImportKeepsSettingsUnlessGiven(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		custom := models.DefaultSettings()
		custom.LimitTenantsToPlacementAggregate = true
		if err := s.UpdateSettings(ctx, admin, 0, custom); err != nil {
			t.Fatal(err)
		}
		// A partial file decodes with default settings: a merge keeps ours.
		partial := &models.World{Flavors: []models.Flavor{{Name: "m1.small"}}, Settings: models.DefaultSettings()}
		if err := s.ImportWorld(ctx, admin, partial, false); err != nil {
			t.Fatal(err)
		}
		if st, _, _ := s.GetSettings(ctx); !st.LimitTenantsToPlacementAggregate {
			t.Fatal("a merge without settings reset them")
		}
		// Settings that say something are applied.
		other := models.DefaultSettings()
		other.EnableIsolatedAggregateFiltering = true
		if err := s.ImportWorld(ctx, admin, &models.World{Settings: other}, false); err != nil {
			t.Fatal(err)
		}
		st, gen, _ := s.GetSettings(ctx)
		if !st.EnableIsolatedAggregateFiltering || st.LimitTenantsToPlacementAggregate || gen != 2 {
			t.Fatalf("settings after merge with settings: %+v gen %d", st, gen)
		}
		// A replace always applies them.
		if err := s.ImportWorld(ctx, admin, &models.World{Settings: models.DefaultSettings()}, true); err != nil {
			t.Fatal(err)
		}
		if st, _, _ := s.GetSettings(ctx); st.EnableIsolatedAggregateFiltering {
			t.Fatal("replace did not apply the settings")
		}
	})
}

func TestRevisionAndAuditOnEveryWrite(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		var cn1 *models.Provider
		var agg *models.Aggregate
		var flavorID, serverID, groupID string
		var tokenID int64
		steps := []struct {
			name, action, objType string
			do                    func() error
		}{
			{"create provider", "create", "provider", func() error { cn1 = &models.Provider{Name: "cn1"}; return s.CreateProvider(ctx, admin, cn1) }},
			{"update provider", "update", "provider", func() error {
				_, err := s.UpdateProvider(ctx, admin, cn1.UUID, 0, func(p *models.Provider) error { p.Traits = []string{"HW_CPU_X86_AVX2"}; return nil })
				return err
			}},
			{"create aggregate", "create", "aggregate", func() error {
				agg = &models.Aggregate{Name: "aggA", Members: []string{cn1.UUID}}
				return s.CreateAggregate(ctx, admin, agg)
			}},
			{"update aggregate", "update", "aggregate", func() error {
				_, err := s.UpdateAggregate(ctx, admin, agg.UUID, 0, func(a *models.Aggregate) error { a.Metadata["ssd"] = "true"; return nil })
				return err
			}},
			{"set provider aggregates", "set-aggregates", "provider", func() error {
				_, err := s.SetProviderAggregates(ctx, admin, cn1.UUID, store.AnyGeneration, []string{agg.UUID, "2c1d0e8a-0000-4000-8000-000000000001"})
				return err
			}},
			{"create flavor", "create", "flavor", func() error {
				f := &models.Flavor{Name: "m1.small", VCPUs: 1}
				err := s.CreateFlavor(ctx, admin, f)
				flavorID = f.ID
				return err
			}},
			{"update flavor", "update", "flavor", func() error {
				_, err := s.UpdateFlavor(ctx, admin, flavorID, 0, func(f *models.Flavor) error { f.ExtraSpecs["a"] = "b"; return nil })
				return err
			}},
			{"create server", "create", "server", func() error {
				v := &models.Server{Name: "web-1", ProjectID: "p1", Host: "cn1"}
				err := s.CreateServer(ctx, admin, v)
				serverID = v.UUID
				return err
			}},
			{"create group", "create", "server_group", func() error {
				g := &models.ServerGroup{Name: "web", ProjectID: "p1", Policy: models.PolicyAntiAffinity}
				err := s.CreateServerGroup(ctx, admin, g)
				groupID = g.UUID
				return err
			}},
			{"update group", "update", "server_group", func() error {
				_, err := s.UpdateServerGroup(ctx, admin, groupID, 0, func(g *models.ServerGroup) error { g.Members = []string{serverID}; return nil })
				return err
			}},
			{"delete server", "delete", "server", func() error { return s.DeleteServer(ctx, admin, serverID) }},
			{"delete group", "delete", "server_group", func() error { return s.DeleteServerGroup(ctx, admin, groupID, store.AnyGeneration) }},
			{"delete flavor", "delete", "flavor", func() error { return s.DeleteFlavor(ctx, admin, flavorID, store.AnyGeneration) }},
			{"set quota", "set", "quota", func() error { return s.SetQuota(ctx, admin, "p1", models.QuotaServerGroups, 3) }},
			{"update settings", "update", "settings", func() error {
				st := models.DefaultSettings()
				st.LimitTenantsToPlacementAggregate = true
				return s.UpdateSettings(ctx, admin, 0, st)
			}},
			{"create user", "create", "user", func() error {
				_, err := s.CreateUser(ctx, admin, "bob", "correct horse", models.RoleMember, "p1")
				return err
			}},
			{"create token", "create", "token", func() error {
				_, tok, err := s.CreateToken(ctx, admin, "bob", "ci")
				if tok != nil {
					tokenID = tok.ID
				}
				return err
			}},
			{"revoke token", "revoke", "token", func() error { return s.RevokeToken(ctx, admin, tokenID) }},
			{"import", "import", "world", func() error {
				return s.ImportWorld(ctx, admin, &models.World{Flavors: []models.Flavor{{Name: "m1.large", VCPUs: 4}}}, false)
			}},
			{"delete provider", "delete", "provider", func() error {
				if err := s.DeleteAggregate(ctx, store.Actor{Name: "setup"}, "2c1d0e8a-0000-4000-8000-000000000001", store.AnyGeneration); err == nil {
					return errorf("aggregate with host cn1 should not delete")
				}
				return s.DeleteProvider(ctx, admin, cn1.UUID, store.AnyGeneration)
			}},
		}
		for _, st := range steps {
			rev0, _ := s.Revision(ctx)
			_, n0, _ := s.ListAudit(ctx, store.AuditQuery{})
			if err := st.do(); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			rev, _ := s.Revision(ctx)
			if rev != rev0+1 {
				t.Errorf("%s: revision %d -> %d, want +1", st.name, rev0, rev)
			}
			evs, n, err := s.ListAudit(ctx, store.AuditQuery{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if n <= n0 || len(evs) != 1 {
				t.Fatalf("%s: no audit event (%d -> %d)", st.name, n0, n)
			}
			ev := evs[0]
			if ev.Actor != "alice" || ev.Via != "console" || ev.ObjectType != st.objType || !strings.HasPrefix(ev.Action, st.action) {
				t.Errorf("%s: audit event %+v", st.name, ev)
			}
			switch st.action {
			case "create":
				if ev.Before != "" || ev.After == "" {
					t.Errorf("%s: before %q after %q", st.name, ev.Before, ev.After)
				}
			case "delete":
				if ev.Before == "" || ev.After != "" {
					t.Errorf("%s: before %q after %q", st.name, ev.Before, ev.After)
				}
			default:
				if ev.Before == "" || ev.After == "" || ev.Before == ev.After {
					t.Errorf("%s: before %q after %q", st.name, ev.Before, ev.After)
				}
			}
			if strings.Contains(ev.After, "$2a$") || strings.Contains(ev.After, "password") {
				t.Errorf("%s: audit leaks a password hash: %s", st.name, ev.After)
			}
		}
		// The update's before/after show what changed.
		evs, _, _ := s.ListAudit(ctx, store.AuditQuery{ObjectType: "aggregate", ObjectID: agg.UUID})
		var sawSSD bool
		for _, ev := range evs {
			if ev.Action == "update" && !strings.Contains(ev.Before, `"ssd"`) && strings.Contains(ev.After, `"ssd":"true"`) {
				sawSSD = true
			}
		}
		if !sawSSD {
			t.Fatalf("aggregate update event does not show ssd being added: %+v", evs)
		}
	})
}

type errString string

func (e errString) Error() string { return string(e) }
func errorf(s string) error       { return errString(s) }

// TestRevisionMovesOnlyOnWrites: what a cache of the world (the query
// pages' snapshot) relies on: a replica sees another's write on its next
// Revision, and a refused write moves nothing.
func TestRevisionMovesOnlyOnWrites(t *testing.T) {
	storetest.ForEachDSN(t, func(t *testing.T, dsn string) {
		s1, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s1.Close()
		s2, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		rev := func(s *store.Store) int64 {
			t.Helper()
			r, err := s.Revision(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		rev0 := rev(s1)
		for i := 0; i < 5; i++ {
			if r := rev(s1); r != rev0 {
				t.Fatalf("revision moved from %d to %d without a write", rev0, r)
			}
		}
		// A write through the other store (another replica) is seen.
		mustAggregate(t, s2, "aggA")
		rev2 := rev(s2)
		if r := rev(s1); r != rev2 || r == rev0 {
			t.Fatalf("after a write: revision %d here, %d there (was %d)", r, rev2, rev0)
		}
		// A failed write does not move the revision.
		if err := s1.CreateAggregate(ctx, admin, &models.Aggregate{Name: "aggA"}); err == nil {
			t.Fatal("duplicate name accepted")
		}
		if r := rev(s1); r != rev2 {
			t.Fatalf("a failed write moved the revision from %d to %d", rev2, r)
		}
	})
}

func TestImportWorldAtRefusesAMovedRevision(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		mustProvider(t, s, "cn1", "")
		rev, err := s.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		w := &models.World{Aggregates: []models.Aggregate{{Name: "previewed"}}}
		// Someone else writes after the preview was made at rev.
		mustAggregate(t, s, "meanwhile")
		before, _ := s.ExportWorld(ctx)
		err = s.ImportWorldAt(ctx, admin, w, false, rev)
		if models.KindOf(err) != models.Conflict {
			t.Fatalf("ImportWorldAt on a moved revision = %v, want a conflict", err)
		}
		after, _ := s.ExportWorld(ctx)
		if len(after.Aggregates) != len(before.Aggregates) {
			t.Fatalf("a refused import changed the world: %d → %d aggregates", len(before.Aggregates), len(after.Aggregates))
		}
		// At the current revision the same import goes through.
		if rev, err = s.Revision(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.ImportWorldAt(ctx, admin, w, false, rev); err != nil {
			t.Fatalf("ImportWorldAt at the current revision: %v", err)
		}
		if _, err := s.GetAggregate(ctx, "previewed"); err != nil {
			t.Fatalf("the import did not land: %v", err)
		}
	})
}

// TestMergeImportKeepsWhatTheFileOmits: a merge import naming a provider by
// uuid and name only keeps its inventories and usage, and an aggregate
// without a members list keeps its members; an explicit empty object or
// list still empties them.
func TestMergeImportKeepsWhatTheFileOmits(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		p := &models.Provider{Name: "cn1",
			Inventories: map[string]models.Inventory{"VCPU": {Total: 16, AllocationRatio: 4, MinUnit: 1, MaxUnit: 16, StepSize: 1}},
			Usages:      map[string]int64{"VCPU": 3}}
		if err := s.CreateProvider(ctx, admin, p); err != nil {
			t.Fatal(err)
		}
		zone := "az1"
		agg := &models.Aggregate{Name: "aggA", Members: []string{p.UUID}, AvailabilityZone: &zone, Metadata: map[string]string{"ssd": "true"}}
		if err := s.CreateAggregate(ctx, admin, agg); err != nil {
			t.Fatal(err)
		}
		importJSON := func(doc string) {
			t.Helper()
			w, err := models.DecodeWorld(strings.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.ImportWorld(ctx, admin, w, false); err != nil {
				t.Fatal(err)
			}
		}
		importJSON(`{"providers": [{"uuid": "` + p.UUID + `", "name": "cn1"}], "aggregates": [{"uuid": "` + agg.UUID + `", "name": "aggA"}]}`)
		got, err := s.GetProvider(ctx, p.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Inventories["VCPU"].Total != 16 || got.Usages["VCPU"] != 3 {
			t.Errorf("after a merge naming only uuid and name: inventories %v, usages %v", got.Inventories, got.Usages)
		}
		if a, _ := s.GetAggregate(ctx, agg.UUID); len(a.Members) != 1 || a.Metadata["ssd"] != "true" || a.AvailabilityZone == nil || *a.AvailabilityZone != "az1" {
			t.Errorf("after a merge without members or metadata: members %v, metadata %v, zone %v", a.Members, a.Metadata, a.AvailabilityZone)
		}
		importJSON(`{"providers": [{"uuid": "` + p.UUID + `", "name": "cn1", "inventories": {}, "usages": {}}], "aggregates": [{"uuid": "` + agg.UUID + `", "name": "aggA", "members": [], "metadata": {}}]}`)
		if got, _ = s.GetProvider(ctx, p.UUID); len(got.Inventories) != 0 || len(got.Usages) != 0 {
			t.Errorf("explicit empty inventories kept %v / %v", got.Inventories, got.Usages)
		}
		if a, _ := s.GetAggregate(ctx, agg.UUID); len(a.Members) != 0 || len(a.Metadata) != 0 || a.AvailabilityZone != nil {
			t.Errorf("explicit empty members and metadata kept %v, %v, zone %v", a.Members, a.Metadata, a.AvailabilityZone)
		}
	})
}
