package store_test

import (
	"testing"
	"time"

	"corral/models"
	"corral/models/cloudgen"
	"corral/models/store"
	"corral/models/store/storetest"
)

// counts is added/changed/removed per kind, kinds with none left out.
func counts(kinds []store.KindDiff) map[string][3]int {
	out := map[string][3]int{}
	for _, k := range kinds {
		if n := [3]int{len(k.Added), len(k.Changed), len(k.Removed)}; n != [3]int{} {
			out[k.Kind] = n
		}
	}
	return out
}

// unchanged fails t unless the store still holds before at rev with n
// audit events.
func unchanged(t *testing.T, s *store.Store, before string, rev int64, n int) {
	t.Helper()
	after, err := s.ExportWorld(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if worldJSON(t, after) != before {
		t.Error("planning an import changed the world")
	}
	if r, _ := s.Revision(ctx); r != rev {
		t.Errorf("revision %d after planning, want %d", r, rev)
	}
	if _, total, _ := s.ListAudit(ctx, store.AuditQuery{}); total != n {
		t.Errorf("%d audit events after planning, want %d", total, n)
	}
}

func TestPlanImportSaysWhatImportDoesAndChangesNothing(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if ok, err := s.LoadDemo(ctx); err != nil || !ok {
			t.Fatalf("LoadDemo = %v, %v", ok, err)
		}
		cur, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		before := worldJSON(t, cur)
		rev, _ := s.Revision(ctx)
		_, events, _ := s.ListAudit(ctx, store.AuditQuery{})

		file, _ := s.ExportWorld(ctx)
		file.Aggregates[0].Metadata["colour"] = "blue"
		file.Providers = append(file.Providers, models.Provider{Name: "cn-new"})
		plan, err := s.PlanImport(ctx, file, false, false)
		if err != nil {
			t.Fatal(err)
		}
		unchanged(t, s, before, rev, events)
		if plan.Revision != rev || plan.Replace || plan.SettingsChanged || len(plan.BlazarLines) != 0 {
			t.Errorf("plan revision %d replace %v settings %v lines %v; want %d false false none",
				plan.Revision, plan.Replace, plan.SettingsChanged, plan.BlazarLines, rev)
		}
		want := map[string][3]int{"providers": {1, 0, 0}, "aggregates": {0, 1, 0}}
		if got := counts(plan.Kinds); !equalCounts(got, want) {
			t.Errorf("plan %v, want %v", got, want)
		}
		if got := plan.Kinds[1].Changed; len(got) != 1 || got[0] != cur.Aggregates[0].Name {
			t.Errorf("aggregates changed %v, want [%s]", got, cur.Aggregates[0].Name)
		}

		// Applying the plan does what it said.
		if err := s.ImportWorldAt(ctx, admin, plan.World, plan.Replace, plan.Revision); err != nil {
			t.Fatal(err)
		}
		after, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		kinds, settings := store.DiffWorlds(cur, after)
		if got := counts(kinds); !equalCounts(got, want) || settings {
			t.Errorf("import did %v (settings %v), plan said %v", got, settings, want)
		}
	})
}

func TestPlanImportReplaceAndSettings(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if ok, err := s.LoadDemo(ctx); err != nil || !ok {
			t.Fatalf("LoadDemo = %v, %v", ok, err)
		}
		cur, _ := s.ExportWorld(ctx)
		before := worldJSON(t, cur)
		rev, _ := s.Revision(ctx)
		_, events, _ := s.ListAudit(ctx, store.AuditQuery{})
		file := &models.World{Providers: []models.Provider{{Name: "only"}}, Settings: models.DefaultSettings()}
		file.Settings.LimitTenantsToPlacementAggregate = !cur.Settings.LimitTenantsToPlacementAggregate
		plan, err := s.PlanImport(ctx, file, true, false)
		if err != nil {
			t.Fatal(err)
		}
		unchanged(t, s, before, rev, events)
		want := map[string][3]int{
			"providers":     {1, 0, len(cur.Providers)},
			"aggregates":    {0, 0, len(cur.Aggregates)},
			"flavors":       {0, 0, len(cur.Flavors)},
			"servers":       {0, 0, len(cur.Servers)},
			"server_groups": {0, 0, len(cur.ServerGroups)},
		}
		if got := counts(plan.Kinds); !equalCounts(got, want) || !plan.SettingsChanged {
			t.Errorf("plan %v settings %v, want %v true", got, plan.SettingsChanged, want)
		}
	})
}

func TestPlanImportRefusesWhatImportRefuses(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if ok, err := s.LoadDemo(ctx); err != nil || !ok {
			t.Fatalf("LoadDemo = %v, %v", ok, err)
		}
		cur, _ := s.ExportWorld(ctx)
		before := worldJSON(t, cur)
		rev, _ := s.Revision(ctx)
		_, events, _ := s.ListAudit(ctx, store.AuditQuery{})
		for _, tc := range []struct {
			name  string
			w     *models.World
			kind  models.Kind
			field string
		}{
			{"unknown member", &models.World{Aggregates: []models.Aggregate{{Name: "new-agg",
				Members: []string{"0b5a4c1e-0000-4000-8000-00000000dead"}}}}, models.NotFound, "aggregates[new-agg].members"},
			{"duplicate provider", &models.World{Providers: []models.Provider{{Name: "x"}, {Name: "x"}}}, models.Invalid, ""},
			{"no world", nil, models.Invalid, "world"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, planErr := s.PlanImport(ctx, tc.w, false, false)
				if models.KindOf(planErr) != tc.kind || tc.field != "" && models.FieldOf(planErr) != tc.field {
					t.Errorf("PlanImport: %v (kind %s field %q), want kind %s field %q",
						planErr, models.KindOf(planErr), models.FieldOf(planErr), tc.kind, tc.field)
				}
				if tc.w == nil {
					return
				}
				// The real import refuses it with the same words.
				importErr := s.ImportWorld(ctx, admin, tc.w, false)
				if importErr == nil || planErr == nil || importErr.Error() != planErr.Error() {
					t.Errorf("ImportWorld says %v, PlanImport %v", importErr, planErr)
				}
			})
		}
		unchanged(t, s, before, rev, events)
	})
}

func TestPlanImportTranslatesBlazar(t *testing.T) {
	const cn1 = "4f0c5a52-6c3a-4a43-9d4e-0a1b2c3d4e5f"
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		file := &models.World{
			Providers:  []models.Provider{{UUID: cn1, Name: "cn1"}},
			Aggregates: []models.Aggregate{{Name: "freepool", Metadata: map[string]string{}, Members: []string{cn1}}},
			Settings:   models.DefaultSettings(),
		}
		plan, err := s.PlanImport(ctx, file, false, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.BlazarLines) != 1 || plan.World == file {
			t.Fatalf("lines %q; translated world is the input: %v", plan.BlazarLines, plan.World == file)
		}
		if len(file.Aggregates[0].Metadata) != 0 {
			t.Errorf("the input world was modified: %v", file.Aggregates[0].Metadata)
		}
		prepared, lines, err := s.PrepareImport(ctx, file, false, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != 1 || lines[0] != plan.BlazarLines[0] || worldJSON(t, prepared) != worldJSON(t, plan.World) {
			t.Errorf("PrepareImport gives %q, PlanImport %q", lines, plan.BlazarLines)
		}
		plain, err := s.PlanImport(ctx, file, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(plain.BlazarLines) != 0 || plain.World != file {
			t.Errorf("without blazar: lines %q, world translated: %v", plain.BlazarLines, plain.World != file)
		}
	})
}

func equalCounts(a, b map[string][3]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestDiffWorlds(t *testing.T) {
	base := func() *models.World {
		return &models.World{
			Providers: []models.Provider{
				{UUID: "p1", Name: "cn1", Traits: []string{}},
				{UUID: "p2", Name: "numa1", ParentUUID: new("p1"), Traits: []string{}},
			},
			Aggregates: []models.Aggregate{{ID: 1, UUID: "a1", Name: "aggA", Metadata: map[string]string{"k": "v"}, Members: []string{"p1"}}},
			Flavors:    []models.Flavor{{ID: "f1", Name: "m1", VCPUs: 1, ExtraSpecs: map[string]string{}}},
			Servers:    []models.Server{{UUID: "s1", Name: "web-1", ProjectID: "acme", Host: "cn1"}},
			ServerGroups: []models.ServerGroup{{UUID: "g1", Name: "web", Policy: models.PolicyAntiAffinity,
				Rules: map[string]int{}, Members: []string{"s1"}}},
			Consumers: []models.Consumer{{UUID: "c1", ProjectID: "acme", UserID: "u", Generation: 1,
				Allocations: []models.Allocation{{ConsumerUUID: "c1", ProviderUUID: "p1", ResourceClass: "VCPU", Used: 1}}}},
			Settings: models.DefaultSettings(),
		}
	}
	cases := []struct {
		name     string
		edit     func(w *models.World)
		want     map[string][3]int
		settings bool
	}{
		{"bookkeeping only", func(w *models.World) {
			w.Providers[0].Generation, w.Aggregates[0].ID, w.Aggregates[0].Generation = 7, 9, 3
			w.Flavors[0].UpdatedAt = time.Now()
		}, nil, false},
		{"rename is a change", func(w *models.World) { w.Providers[0].Name = "cn1-new" }, map[string][3]int{"providers": {0, 1, 0}}, false},
		{"new parent is a change", func(w *models.World) { w.Providers[1].ParentUUID = nil }, map[string][3]int{"providers": {0, 1, 0}}, false},
		{"membership changes the aggregate only", func(w *models.World) { w.Aggregates[0].Members = []string{"p1", "p2"} }, map[string][3]int{"aggregates": {0, 1, 0}}, false},
		{"same name, new uuid: one added, one removed", func(w *models.World) { w.Aggregates[0].UUID = "a2" }, map[string][3]int{"aggregates": {1, 0, 1}}, false},
		{"extra spec", func(w *models.World) { w.Flavors[0].ExtraSpecs["hw:cpu_policy"] = "dedicated" }, map[string][3]int{"flavors": {0, 1, 0}}, false},
		{"server moved, group emptied", func(w *models.World) {
			w.Servers[0].Host = "cn2"
			w.ServerGroups[0].Members = nil
		}, map[string][3]int{"servers": {0, 1, 0}, "server_groups": {0, 1, 0}}, false},
		{"added and removed", func(w *models.World) {
			w.Servers = append(w.Servers, models.Server{UUID: "s2", Name: "web-2"})
			w.ServerGroups = nil
		}, map[string][3]int{"servers": {1, 0, 0}, "server_groups": {0, 0, 1}}, false},
		{"settings", func(w *models.World) { w.Settings.LimitTenantsToPlacementAggregate = true }, nil, true},
		{"consumer's generation is bookkeeping", func(w *models.World) { w.Consumers[0].Generation = 5 }, nil, false},
		{"allocation amount changes the consumer", func(w *models.World) { w.Consumers[0].Allocations[0].Used = 2 },
			map[string][3]int{"consumers": {0, 1, 0}}, false},
		{"consumer added and removed", func(w *models.World) {
			w.Consumers = []models.Consumer{{UUID: "c2", ProjectID: "acme", UserID: "u",
				Allocations: []models.Allocation{{ConsumerUUID: "c2", ProviderUUID: "p2", ResourceClass: "VCPU", Used: 1}}}}
		}, map[string][3]int{"consumers": {1, 0, 1}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			next := base()
			tc.edit(next)
			kinds, settings := store.DiffWorlds(base(), next)
			if len(kinds) != 6 {
				t.Fatalf("kinds: %d, want 6", len(kinds))
			}
			for _, k := range kinds {
				if n := [3]int{len(k.Added), len(k.Changed), len(k.Removed)}; n != tc.want[k.Kind] {
					t.Errorf("%s: added/changed/removed = %v, want %v", k.Kind, n, tc.want[k.Kind])
				}
			}
			if settings != tc.settings {
				t.Errorf("settings changed = %v, want %v", settings, tc.settings)
			}
		})
	}
}

// BenchmarkPlanImport measures the preview of a merge on a tenth of the
// benchmark cloud (10,000 providers in trees, 500 aggregates): the check is
// the import itself, rolled back, plus reading the world before and after.
func BenchmarkPlanImport(b *testing.B) {
	cfg := cloudgen.Default()
	cfg.Hosts, cfg.SharingProviders, cfg.Aggregates = cfg.Hosts/10, cfg.SharingProviders/10, cfg.Aggregates/10
	cfg.TenantAggregates, cfg.ReservationAggregates = cfg.TenantAggregates/10, cfg.ReservationAggregates/10
	cfg.Servers, cfg.ServerGroups, cfg.Projects = cfg.Servers/10, cfg.ServerGroups/10, cfg.Projects/10
	w := cloudgen.Generate(cfg)
	st := storetest.Open(b)
	if err := st.ImportWorld(ctx, store.Actor{Name: "bench", Via: "cli"}, w, true); err != nil {
		b.Fatal(err)
	}
	file, err := st.ExportWorld(ctx)
	if err != nil {
		b.Fatal(err)
	}
	file.Aggregates[0].Metadata["colour"] = "blue"
	b.ResetTimer()
	for b.Loop() {
		plan, err := st.PlanImport(ctx, file, false, true)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(plan.Kinds[1].Changed); n != 1 {
			b.Fatalf("aggregates changed: %d, want 1", n)
		}
	}
}
