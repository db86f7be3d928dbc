package store_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

// mergeBase is a world with every optional field of every kind set, so
// that a merge that drops one shows.
const mergeBase = `{
  "providers": [
    {"uuid": "00000000-0000-4000-8000-0000000000a1", "name": "cn1", "traits": ["CUSTOM_GOLD", "HW_CPU_X86_AVX2"],
     "inventories": {"VCPU": {"total": 16, "allocation_ratio": 4, "min_unit": 1, "max_unit": 16, "step_size": 1}},
     "usages": {"VCPU": 3}},
    {"uuid": "00000000-0000-4000-8000-0000000000a2", "name": "numa0", "parent": "cn1", "traits": ["CUSTOM_NUMA"],
     "inventories": {"MEMORY_MB": {"total": 4096, "allocation_ratio": 1, "min_unit": 1, "max_unit": 4096, "step_size": 1}}},
    {"uuid": "00000000-0000-4000-8000-0000000000a3", "name": "cn2"},
    {"uuid": "00000000-0000-4000-8000-0000000000a4", "name": "ss1", "traits": ["MISC_SHARES_VIA_AGGREGATE"]}
  ],
  "aggregates": [
    {"uuid": "00000000-0000-4000-8000-0000000000b1", "name": "aggA", "availability_zone": "az1",
     "metadata": {"ssd": "true"}, "members": ["cn1"]}
  ],
  "flavors": [{"id": "f1", "name": "m1.small", "vcpus": 2, "ram_mb": 2048, "disk_gb": 20, "extra_specs": {"hw:cpu_policy": "dedicated"}}],
  "servers": [
    {"uuid": "00000000-0000-4000-8000-0000000000c1", "name": "web-1", "project_id": "tA", "user_id": "u1", "host": "cn1"},
    {"uuid": "00000000-0000-4000-8000-0000000000c2", "name": "web-2", "project_id": "tA", "user_id": "u1", "host": "cn2"}
  ],
  "server_groups": [{"uuid": "00000000-0000-4000-8000-0000000000d1", "name": "web", "project_id": "tA", "user_id": "u1",
    "policy": "anti-affinity", "rules": {"max_server_per_host": 2}, "members": ["web-1", "web-2"]}],
  "settings": {"limit_tenants_to_placement_aggregate": true, "enabled_filters": ["AggregateMultiTenancyIsolation"]}
}`

func importDoc(t *testing.T, s *store.Store, doc string, replace bool) error {
	t.Helper()
	w, err := models.DecodeWorld(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return s.ImportWorld(ctx, admin, w, replace)
}

func TestMergeImportKeepsEveryFieldTheFileLeavesOut(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if err := importDoc(t, s, mergeBase, true); err != nil {
			t.Fatal(err)
		}
		before, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Every object named by its identity only (and what a kind needs
		// to be named at all): nothing may change but generations.
		if err = importDoc(t, s, `{
		  "providers": [{"uuid": "00000000-0000-4000-8000-0000000000a1", "name": "cn1"}, {"name": "numa0"}],
		  "aggregates": [{"name": "aggA"}],
		  "flavors": [{"name": "m1.small"}],
		  "servers": [{"uuid": "00000000-0000-4000-8000-0000000000c1"}],
		  "server_groups": [{"uuid": "00000000-0000-4000-8000-0000000000d1"}],
		  "settings": {}
		}`, false); err != nil {
			t.Fatal(err)
		}
		after, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if kinds, settings := store.DiffWorlds(before, after); settings || changedAny(kinds) {
			t.Fatalf("a merge naming objects only changed them: %+v, settings changed %v\nbefore %s\nafter  %s", kinds, settings, worldJSON(t, before), worldJSON(t, after))
		}
	})
}

func changedAny(kinds []store.KindDiff) bool {
	for _, k := range kinds {
		if len(k.Added)+len(k.Changed)+len(k.Removed) > 0 {
			return true
		}
	}
	return false
}

func TestMergeImportSetsAndClearsFieldByField(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if err := importDoc(t, s, mergeBase, true); err != nil {
			t.Fatal(err)
		}
		// One field given per object: that field changes (an empty value
		// clears it), the others stay.
		if err := importDoc(t, s, `{
		  "providers": [{"name": "cn1", "traits": []}, {"name": "numa0", "parent": null}, {"name": "ss1", "parent": "cn1"}],
		  "aggregates": [{"name": "aggA", "availability_zone": null}],
		  "flavors": [{"name": "m1.small", "ram_mb": 4096}],
		  "servers": [{"uuid": "00000000-0000-4000-8000-0000000000c1", "host": ""}],
		  "server_groups": [{"uuid": "00000000-0000-4000-8000-0000000000d1", "rules": {}}],
		  "settings": {"enabled_filters": []}
		}`, false); err != nil {
			t.Fatal(err)
		}
		w, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		provs := map[string]models.Provider{}
		for _, p := range w.Providers {
			provs[p.Name] = p
		}
		cn1, numa0, ss1 := provs["cn1"], provs["numa0"], provs["ss1"]
		if len(cn1.Traits) != 0 || cn1.Inventories["VCPU"].Total != 16 || cn1.Usages["VCPU"] != 3 {
			t.Errorf("cn1 = traits %v, inventories %v, usages %v; want no traits, the rest kept", cn1.Traits, cn1.Inventories, cn1.Usages)
		}
		if numa0.ParentUUID != nil || !slices.Equal(numa0.Traits, []string{"CUSTOM_NUMA"}) || numa0.Inventories["MEMORY_MB"].Total != 4096 {
			t.Errorf("numa0 = parent %v, traits %v, inventories %v; want a root with the rest kept", numa0.ParentUUID, numa0.Traits, numa0.Inventories)
		}
		if ss1.ParentUUID == nil || *ss1.ParentUUID != cn1.UUID || !slices.Equal(ss1.Traits, []string{"MISC_SHARES_VIA_AGGREGATE"}) {
			t.Errorf("ss1 = parent %v, traits %v; want cn1, the traits kept", ss1.ParentUUID, ss1.Traits)
		}
		a := w.Aggregates[0]
		if a.AvailabilityZone != nil || a.Metadata["ssd"] != "true" || a.Metadata["availability_zone"] != "" || !slices.Equal(a.Members, []string{cn1.UUID}) {
			t.Errorf("aggA = zone %v, metadata %v, members %v; want no zone, the rest kept", a.AvailabilityZone, a.Metadata, a.Members)
		}
		f := w.Flavors[0]
		if f.RAMMB != 4096 || f.VCPUs != 2 || f.DiskGB != 20 || f.ExtraSpecs["hw:cpu_policy"] != "dedicated" {
			t.Errorf("flavor = %+v; want ram 4096, the rest kept", f)
		}
		for _, sv := range w.Servers {
			switch sv.Name {
			case "web-1":
				if sv.Host != "" || sv.ProjectID != "tA" || sv.UserID != "u1" {
					t.Errorf("web-1 = %+v; want unplaced, the rest kept", sv)
				}
			case "web-2":
				if sv.Host != "cn2" {
					t.Errorf("web-2 = %+v; want untouched", sv)
				}
			}
		}
		g := w.ServerGroups[0]
		if len(g.Rules) != 0 || g.Policy != "anti-affinity" || g.Name != "web" || g.ProjectID != "tA" || len(g.Members) != 2 {
			t.Errorf("group = %+v; want no rules, the rest kept", g)
		}
		if len(w.Settings.EnabledFilters) != 0 || !w.Settings.LimitTenantsToPlacementAggregate {
			t.Errorf("settings = %+v; want no filters, the rest kept", w.Settings)
		}

		// Metadata given is the whole metadata; the zone field still wins.
		if err = importDoc(t, s, `{"aggregates": [{"name": "aggA", "metadata": {"hdd": "true"}, "availability_zone": "az2"}],
		  "server_groups": [{"uuid": "00000000-0000-4000-8000-0000000000d1", "members": []}]}`, false); err != nil {
			t.Fatal(err)
		}
		ag, _ := s.GetAggregate(ctx, "aggA")
		if !maps.Equal(ag.Metadata, map[string]string{"hdd": "true", "availability_zone": "az2"}) || ag.AvailabilityZone == nil || *ag.AvailabilityZone != "az2" || len(ag.Members) != 1 {
			t.Errorf("aggA = zone %v, metadata %v, members %v", ag.AvailabilityZone, ag.Metadata, ag.Members)
		}
		// A zone given alone goes into the kept metadata.
		if err = importDoc(t, s, `{"aggregates": [{"name": "aggA", "availability_zone": "az3"}]}`, false); err != nil {
			t.Fatal(err)
		}
		ag, _ = s.GetAggregate(ctx, "aggA")
		if !maps.Equal(ag.Metadata, map[string]string{"hdd": "true", "availability_zone": "az3"}) || ag.AvailabilityZone == nil || *ag.AvailabilityZone != "az3" {
			t.Errorf("aggA after a zone alone = zone %v, metadata %v", ag.AvailabilityZone, ag.Metadata)
		}
		if g, _ := s.GetServerGroup(ctx, "00000000-0000-4000-8000-0000000000d1"); len(g.Members) != 0 || g.Policy != "anti-affinity" {
			t.Errorf("group after \"members\": [] = %+v", g)
		}
	})
}

func TestMergeImportRefusesWhatItCannotMerge(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if err := importDoc(t, s, mergeBase, true); err != nil {
			t.Fatal(err)
		}
		before, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ doc, field string }{
			// A new policy with the old policy's rules kept.
			{`{"providers": [{"name": "cn2", "traits": ["CUSTOM_X"]}],
			   "server_groups": [{"uuid": "00000000-0000-4000-8000-0000000000d1", "policy": "affinity"}]}`,
				"server_groups[web].rules"},
			// A new group needs its policy.
			{`{"server_groups": [{"name": "db"}]}`, "server_groups[db].policy"},
		} {
			err := importDoc(t, s, tc.doc, false)
			var me *models.Error
			if !errors.As(err, &me) || me.Kind != models.Invalid || me.Field != tc.field {
				t.Errorf("import %s: err = %v, want Invalid naming %s", tc.doc, err, tc.field)
			}
		}
		after, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if kinds, settings := store.DiffWorlds(before, after); settings || changedAny(kinds) {
			t.Fatalf("a refused merge changed something: %+v", kinds)
		}
		// Allocations for a provider whose entry gives no usages add to
		// what it uses beyond its allocations (3 VCPU here)...
		e1 := `{"consumer": "00000000-0000-4000-8000-0000000000e1", "resources": {"cn1": {"VCPU": 1}}}`
		if err = importDoc(t, s, `{"providers": [{"name": "cn1"}], "allocations": [`+e1+`]}`, false); err != nil {
			t.Fatal(err)
		}
		if p, _ := s.GetProvider(ctx, "cn1"); p.Usages["VCPU"] != 4 || len(p.Traits) != 2 {
			t.Errorf("cn1 = usages %v, traits %v; want VCPU 3+1 and the traits kept", p.Usages, p.Traits)
		}
		// ...the same file again counts them once, another consumer adds,
		// and given usages are what it uses beyond every allocation.
		for _, tc := range []struct {
			doc  string
			want int64
		}{
			{`{"providers": [{"name": "cn1"}], "allocations": [` + e1 + `]}`, 4},
			{`{"providers": [{"name": "cn1"}], "allocations": [{"consumer": "e2", "resources": {"cn1": {"VCPU": 2}}}]}`, 6},
			{`{"providers": [{"name": "cn1", "usages": {}}], "allocations": [` + e1 + `]}`, 3},
		} {
			if err = importDoc(t, s, tc.doc, false); err != nil {
				t.Fatal(err)
			}
			if p, _ := s.GetProvider(ctx, "cn1"); p.Usages["VCPU"] != tc.want {
				t.Errorf("after %s: cn1 usages %v, want VCPU %d", tc.doc, p.Usages, tc.want)
			}
		}
	})
}

func TestMergeImportKeepsParentAndTraits(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if err := importDoc(t, s, mergeBase, true); err != nil {
			t.Fatal(err)
		}
		if err := importDoc(t, s, `{"providers": [{"name": "cn1"}, {"name": "numa0"}]}`, false); err != nil {
			t.Fatal(err)
		}
		cn1, _ := s.GetProvider(ctx, "cn1")
		numa0, _ := s.GetProvider(ctx, "numa0")
		if len(cn1.Traits) != 2 || numa0.ParentUUID == nil || *numa0.ParentUUID != cn1.UUID || len(numa0.Traits) != 1 {
			t.Errorf("after a merge naming cn1 and numa0: cn1 traits %v, numa0 parent %v traits %v", cn1.Traits, numa0.ParentUUID, numa0.Traits)
		}
	})
}
