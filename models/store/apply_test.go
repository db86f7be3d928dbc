package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
)

// applyFixture is what the applier tests start from: a small generated
// cloud plus objects with known names.
type applyFixture struct {
	host, spare, child *models.Provider
	agg, empty         *models.Aggregate
	server             *models.Server
	consumer           string
}

func seedApply(t *testing.T, s *store.Store) *applyFixture {
	t.Helper()
	if err := s.ImportWorld(ctx, admin, cloudgen.Generate(cloudgen.Small()), true); err != nil {
		t.Fatal(err)
	}
	f := &applyFixture{consumer: "c0000000-0000-4000-8000-000000000001"}
	f.host = &models.Provider{Name: "ap-host", Inventories: map[string]models.Inventory{
		"VCPU": {Total: 8, AllocationRatio: 1}, "MEMORY_MB": {Total: 4096, AllocationRatio: 1}}}
	f.spare = &models.Provider{Name: "ap-spare", Traits: []string{"CUSTOM_SPARE"}}
	for _, p := range []*models.Provider{f.host, f.spare} {
		if err := s.CreateProvider(ctx, admin, p); err != nil {
			t.Fatal(err)
		}
	}
	f.child = &models.Provider{Name: "ap-child", ParentUUID: &f.host.UUID}
	if err := s.CreateProvider(ctx, admin, f.child); err != nil {
		t.Fatal(err)
	}
	f.agg = &models.Aggregate{Name: "ap-agg", Metadata: map[string]string{"ssd": "true", "filter_tenant_id": "p-old"}, Members: []string{f.host.UUID}}
	f.empty = &models.Aggregate{Name: "ap-empty", Members: []string{f.child.UUID}}
	for _, a := range []*models.Aggregate{f.agg, f.empty} {
		if err := s.CreateAggregate(ctx, admin, a); err != nil {
			t.Fatal(err)
		}
	}
	fl := &models.Flavor{ID: "ap-flavor", Name: "ap.small", VCPUs: 1, RAMMB: 512, DiskGB: 1, ExtraSpecs: map[string]string{"hw:cpu_policy": "shared"}}
	if err := s.CreateFlavor(ctx, admin, fl); err != nil {
		t.Fatal(err)
	}
	f.server = &models.Server{UUID: "5e000000-0000-4000-8000-000000000001", Name: "ap-vm", ProjectID: "ap-project", UserID: "u", Host: f.host.Name}
	other := &models.Server{UUID: "5e000000-0000-4000-8000-000000000002", Name: "ap-vm2", ProjectID: "ap-project", UserID: "u", Host: f.host.Name}
	for _, v := range []*models.Server{f.server, other} {
		if err := s.CreateServer(ctx, admin, v); err != nil {
			t.Fatal(err)
		}
	}
	g := &models.ServerGroup{Name: "ap-group", ProjectID: "ap-project", UserID: "u", Policy: models.PolicyAntiAffinity, Members: []string{other.UUID}}
	if err := s.CreateServerGroup(ctx, admin, g); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateResourceClass(ctx, admin, "CUSTOM_AP_OLD"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureTrait(ctx, admin, "CUSTOM_AP_OLD"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetAllocations(ctx, admin, []store.ConsumerAllocations{{ConsumerUUID: f.consumer, ProjectID: "ap-project", UserID: "u",
		Allocations: []models.Allocation{{ProviderUUID: f.host.UUID, ResourceClass: "VCPU", Used: 2}}}}); err != nil {
		t.Fatal(err)
	}
	return f
}

// applyCase is one kind of change: the changes, what must hold after them,
// and whether a stale generation on the first change must be refused.
type applyCase struct {
	op      string
	changes []scheduling.Change
	check   func(w *models.World) error
	// stale is the kind of refusal a wrong generation gets ("" when the
	// change names no object with a generation).
	stale bool
}

func strp(s string) *string { return &s }

func applyCases(f *applyFixture) []applyCase {
	const newUUID = "a0000000-0000-4000-8000-0000000000aa"
	type pf = scheduling.PlacementFields
	aggHas := func(name string, pred func(a *models.Aggregate) bool) func(w *models.World) error {
		return func(w *models.World) error {
			for i := range w.Aggregates {
				if w.Aggregates[i].Name == name {
					if !pred(&w.Aggregates[i]) {
						return fmt.Errorf("aggregate %s is %+v", name, w.Aggregates[i])
					}
					return nil
				}
			}
			if pred(nil) {
				return nil
			}
			return fmt.Errorf("no aggregate %s", name)
		}
	}
	prov := func(w *models.World, name string) *models.Provider {
		for i := range w.Providers {
			if w.Providers[i].Name == name {
				return &w.Providers[i]
			}
		}
		return nil
	}
	provHas := func(name string, pred func(p *models.Provider) bool) func(w *models.World) error {
		return func(w *models.World) error {
			if p := prov(w, name); !pred(p) {
				return fmt.Errorf("provider %s is %+v", name, p)
			}
			return nil
		}
	}
	group := func(w *models.World) *models.ServerGroup {
		for i := range w.ServerGroups {
			if w.ServerGroups[i].Name == "ap-group" {
				return &w.ServerGroups[i]
			}
		}
		return nil
	}
	flavorHas := func(id string, pred func(fl *models.Flavor) bool) func(w *models.World) error {
		return func(w *models.World) error {
			var found *models.Flavor
			for i := range w.Flavors {
				if w.Flavors[i].ID == id {
					found = &w.Flavors[i]
				}
			}
			if !pred(found) {
				return fmt.Errorf("flavor %s is %+v", id, found)
			}
			return nil
		}
	}
	on := true
	return []applyCase{
		{op: scheduling.OpSetMetadata, stale: true, changes: []scheduling.Change{{Op: scheduling.OpSetMetadata, Aggregate: "ap-agg", Key: "gpu", Value: "1"}},
			check: aggHas("ap-agg", func(a *models.Aggregate) bool { return a != nil && a.Metadata["gpu"] == "1" })},
		{op: scheduling.OpUnsetMetadata, stale: true, changes: []scheduling.Change{{Op: scheduling.OpUnsetMetadata, Aggregate: f.agg.UUID, Key: "ssd"}},
			check: aggHas("ap-agg", func(a *models.Aggregate) bool { _, ok := a.Metadata["ssd"]; return a != nil && !ok })},
		{op: scheduling.OpAddTenant, stale: true, changes: []scheduling.Change{{Op: scheduling.OpAddTenant, Aggregate: "ap-agg", Project: "p-new"}},
			check: aggHas("ap-agg", func(a *models.Aggregate) bool {
				return a != nil && slices.Contains(scheduling.TenantTags(a.Metadata), "p-new")
			})},
		{op: scheduling.OpRemoveTenant, stale: true, changes: []scheduling.Change{{Op: scheduling.OpRemoveTenant, Aggregate: "ap-agg", Project: "p-old"}},
			check: aggHas("ap-agg", func(a *models.Aggregate) bool { return a != nil && len(scheduling.TenantTags(a.Metadata)) == 0 })},
		{op: scheduling.OpAddReservation + "+" + scheduling.OpRemoveReservation, stale: true, changes: []scheduling.Change{
			{Op: scheduling.OpAddReservation, Aggregate: "ap-agg", Reservation: "r1"},
			{Op: scheduling.OpAddReservation, Aggregate: "ap-agg", Reservation: "r2"},
			{Op: scheduling.OpRemoveReservation, Aggregate: "ap-agg", Reservation: "r1"}},
			check: aggHas("ap-agg", func(a *models.Aggregate) bool {
				return a != nil && len(a.Metadata) == 3 && slices.ContainsFunc(slices.Collect(maps.Keys(a.Metadata)), func(k string) bool { return strings.HasSuffix(k, "r2") })
			})},
		{op: scheduling.OpAddMember, stale: true, changes: []scheduling.Change{{Op: scheduling.OpAddMember, Aggregate: "ap-agg", Provider: "ap-spare"}},
			check: aggHas("ap-agg", func(a *models.Aggregate) bool { return a != nil && slices.Contains(a.Members, f.spare.UUID) })},
		{op: scheduling.OpRemoveMember, stale: true, changes: []scheduling.Change{{Op: scheduling.OpRemoveMember, Aggregate: "ap-agg", Provider: f.host.UUID}},
			check: aggHas("ap-agg", func(a *models.Aggregate) bool { return a != nil && len(a.Members) == 0 })},
		{op: scheduling.OpCreateAggregate, changes: []scheduling.Change{{Op: scheduling.OpCreateAggregate, Aggregate: "ap-new", AvailabilityZone: strp("ap-zone"), Metadata: map[string]string{"a": "b"}},
			{Op: scheduling.OpAddMember, Aggregate: "ap-new", Provider: "ap-spare"}},
			check: aggHas("ap-new", func(a *models.Aggregate) bool {
				return a != nil && a.Metadata["a"] == "b" && len(a.Members) == 1 && a.AvailabilityZone != nil && *a.AvailabilityZone == "ap-zone"
			})},
		{op: scheduling.OpDeleteAggregate, stale: true, changes: []scheduling.Change{{Op: scheduling.OpDeleteAggregate, Aggregate: "ap-empty"}},
			check: aggHas("ap-empty", func(a *models.Aggregate) bool { return a == nil })},
		{op: scheduling.OpSetZone, stale: true, changes: []scheduling.Change{{Op: scheduling.OpSetZone, Aggregate: "ap-agg", AvailabilityZone: strp("ap-zone")}},
			check: aggHas("ap-agg", func(a *models.Aggregate) bool {
				return a != nil && a.AvailabilityZone != nil && *a.AvailabilityZone == "ap-zone"
			})},
		{op: scheduling.OpSetSettings, stale: true, changes: []scheduling.Change{{Op: scheduling.OpSetSettings, Settings: &scheduling.SettingsOverride{EnableIsolatedAggregateFiltering: &on}}},
			check: func(w *models.World) error {
				if !w.Settings.EnableIsolatedAggregateFiltering {
					return fmt.Errorf("settings are %+v", w.Settings)
				}
				return nil
			}},
		{op: scheduling.OpSetExtraSpec + "+" + scheduling.OpUnsetExtraSpec, stale: true, changes: []scheduling.Change{
			{Op: scheduling.OpSetExtraSpec, Flavor: "ap.small", Key: "trait:CUSTOM_X", Value: "required"},
			{Op: scheduling.OpUnsetExtraSpec, Flavor: "ap-flavor", Key: "hw:cpu_policy"}},
			check: func(w *models.World) error {
				for _, fl := range w.Flavors {
					if fl.ID == "ap-flavor" && (len(fl.ExtraSpecs) != 1 || fl.ExtraSpecs["trait:CUSTOM_X"] != "required") {
						return fmt.Errorf("flavor is %+v", fl)
					}
				}
				return nil
			}},
		{op: scheduling.OpRenameAggregate, stale: true, changes: []scheduling.Change{{Op: scheduling.OpRenameAggregate, Aggregate: "ap-agg", Value: "ap-renamed"}},
			check: aggHas("ap-renamed", func(a *models.Aggregate) bool { return a != nil && a.UUID == f.agg.UUID })},
		{op: scheduling.OpCreateFlavor, changes: []scheduling.Change{{Op: scheduling.OpCreateFlavor, Flavor: "ap.new", UUID: "ap-new-flavor",
			Size: &scheduling.FlavorSize{VCPUs: 2, RAMMB: 1024, DiskGB: 10}, Metadata: map[string]string{"ssd": "true"}}},
			check: flavorHas("ap-new-flavor", func(fl *models.Flavor) bool {
				return fl != nil && fl.Name == "ap.new" && fl.VCPUs == 2 && fl.RAMMB == 1024 && fl.DiskGB == 10 && fl.ExtraSpecs["ssd"] == "true"
			})},
		{op: scheduling.OpUpdateFlavor, stale: true, changes: []scheduling.Change{{Op: scheduling.OpUpdateFlavor, Flavor: "ap.small", Value: "ap.bigger",
			Size: &scheduling.FlavorSize{VCPUs: 4, RAMMB: 2048, DiskGB: 20}}},
			check: flavorHas("ap-flavor", func(fl *models.Flavor) bool {
				return fl != nil && fl.Name == "ap.bigger" && fl.VCPUs == 4 && fl.RAMMB == 2048 && fl.DiskGB == 20
			})},
		{op: scheduling.OpDeleteFlavor, stale: true, changes: []scheduling.Change{{Op: scheduling.OpDeleteFlavor, Flavor: "ap-flavor"}},
			check: flavorHas("ap-flavor", func(fl *models.Flavor) bool { return fl == nil })},
		{op: scheduling.OpCreateServerGroup, changes: []scheduling.Change{{Op: scheduling.OpCreateServerGroup, ServerGroup: "ap-g2", Project: "ap-project", Policy: models.PolicyAffinity, Members: []string{"ap-vm"}}},
			check: func(w *models.World) error {
				for _, g := range w.ServerGroups {
					if g.Name == "ap-g2" && slices.Equal(g.Members, []string{f.server.UUID}) {
						return nil
					}
				}
				return fmt.Errorf("no group ap-g2 holding ap-vm")
			}},
		{op: scheduling.OpDeleteServerGroup, stale: true, changes: []scheduling.Change{{Op: scheduling.OpDeleteServerGroup, ServerGroup: "ap-group"}},
			check: func(w *models.World) error {
				if group(w) != nil {
					return fmt.Errorf("ap-group is still there")
				}
				return nil
			}},
		{op: scheduling.OpAddGroupMember + "+" + scheduling.OpRemoveGroupMember, stale: true, changes: []scheduling.Change{
			{Op: scheduling.OpAddGroupMember, ServerGroup: "ap-group", Server: "ap-vm"},
			{Op: scheduling.OpRemoveGroupMember, ServerGroup: "ap-group", Server: "ap-vm2"}},
			check: func(w *models.World) error {
				if g := group(w); g == nil || !slices.Equal(g.Members, []string{f.server.UUID}) {
					return fmt.Errorf("ap-group is %+v", g)
				}
				return nil
			}},
		{op: scheduling.OpAddTrait + "+" + scheduling.OpRemoveTrait, stale: true, changes: []scheduling.Change{
			{Op: scheduling.OpAddTrait, Provider: "ap-spare", Trait: "CUSTOM_NEW"},
			{Op: scheduling.OpRemoveTrait, Provider: "ap-spare", Trait: "CUSTOM_SPARE"}},
			check: provHas("ap-spare", func(p *models.Provider) bool { return p != nil && slices.Equal(p.Traits, []string{"CUSTOM_NEW"}) })},
		{op: scheduling.OpSetInventory + "+" + scheduling.OpDeleteInventory, stale: true, changes: []scheduling.Change{
			{Op: scheduling.OpSetInventory, Provider: "ap-host", ResourceClass: "DISK_GB", Inventory: &models.Inventory{Total: 100, AllocationRatio: 1}},
			{Op: scheduling.OpDeleteInventory, Provider: "ap-host", ResourceClass: "MEMORY_MB"}},
			check: provHas("ap-host", func(p *models.Provider) bool {
				_, mem := p.Inventories["MEMORY_MB"]
				return p != nil && p.Inventories["DISK_GB"].Total == 100 && !mem
			})},
		{op: scheduling.OpCreateProvider, changes: []scheduling.Change{
			{Op: scheduling.OpCreateProvider, Provider: "ap-new", UUID: newUUID, PlacementFields: pf{Parent: &f.spare.UUID}}},
			check: provHas("ap-new", func(p *models.Provider) bool {
				return p != nil && p.RootUUID == f.spare.UUID && *p.ParentUUID == f.spare.UUID
			})},
		{op: scheduling.OpDeleteProvider, stale: true, changes: []scheduling.Change{{Op: scheduling.OpDeleteProvider, Provider: f.spare.UUID}},
			check: provHas("ap-spare", func(p *models.Provider) bool { return p == nil })},
		{op: scheduling.OpRenameProvider, stale: true, changes: []scheduling.Change{{Op: scheduling.OpRenameProvider, Provider: f.spare.UUID, PlacementFields: pf{NewName: "ap-renamed"}}},
			check: provHas("ap-renamed", func(p *models.Provider) bool { return p != nil && p.UUID == f.spare.UUID })},
		{op: scheduling.OpSetProviderParent, stale: true, changes: []scheduling.Change{{Op: scheduling.OpSetProviderParent, Provider: f.child.UUID, PlacementFields: pf{Parent: strp(f.spare.UUID)}}},
			check: provHas("ap-child", func(p *models.Provider) bool { return p != nil && p.RootUUID == f.spare.UUID })},
		{op: scheduling.OpSetInventories, stale: true, changes: []scheduling.Change{{Op: scheduling.OpSetInventories, Provider: f.host.UUID,
			PlacementFields: pf{Inventories: map[string]models.Inventory{"VCPU": {Total: 16, AllocationRatio: 2}}}}},
			check: provHas("ap-host", func(p *models.Provider) bool {
				return p != nil && len(p.Inventories) == 1 && p.Inventories["VCPU"].Total == 16
			})},
		{op: scheduling.OpSetTraits, stale: true, changes: []scheduling.Change{{Op: scheduling.OpSetTraits, Provider: f.host.UUID, PlacementFields: pf{Traits: []string{"HW_CPU_X86_AVX2", "CUSTOM_AP_OLD"}}}},
			check: provHas("ap-host", func(p *models.Provider) bool {
				return p != nil && slices.Equal(p.Traits, []string{"CUSTOM_AP_OLD", "HW_CPU_X86_AVX2"})
			})},
		{op: scheduling.OpSetProviderAggregates, stale: true, changes: []scheduling.Change{{Op: scheduling.OpSetProviderAggregates, Provider: f.spare.UUID,
			Generation: nil, PlacementFields: pf{Aggregates: []string{f.agg.UUID, newUUID}}}},
			check: aggHas("ap-agg", func(a *models.Aggregate) bool { return a != nil && slices.Contains(a.Members, f.spare.UUID) })},
		{op: scheduling.OpCreateResourceClass, changes: []scheduling.Change{{Op: scheduling.OpCreateResourceClass, ResourceClass: "CUSTOM_AP_NEW"}}},
		{op: scheduling.OpDeleteResourceClass, changes: []scheduling.Change{{Op: scheduling.OpDeleteResourceClass, ResourceClass: "CUSTOM_AP_OLD"}}},
		{op: scheduling.OpCreateTrait, changes: []scheduling.Change{{Op: scheduling.OpCreateTrait, Trait: "CUSTOM_AP_NEW"}}},
		{op: scheduling.OpDeleteTrait, changes: []scheduling.Change{{Op: scheduling.OpDeleteTrait, Trait: "CUSTOM_AP_OLD"}}},
		{op: scheduling.OpSetAllocations, stale: true, changes: []scheduling.Change{
			{Op: scheduling.OpSetAllocations, Project: "ap-project", User: "u", PlacementFields: pf{Consumer: f.consumer,
				Allocations: []scheduling.ChangeAllocation{{Provider: f.host.UUID, ResourceClass: "VCPU", Used: 3}, {Provider: f.host.UUID, ResourceClass: "MEMORY_MB", Used: 256}}}},
			{Op: scheduling.OpSetAllocations, Project: "ap-project", User: "u", PlacementFields: pf{Consumer: "c0000000-0000-4000-8000-000000000002",
				Allocations: []scheduling.ChangeAllocation{{Provider: f.host.UUID, ResourceClass: "VCPU", Used: 5}}}}},
			check: provHas("ap-host", func(p *models.Provider) bool {
				return p != nil && p.Usages["VCPU"] == 8 && p.Usages["MEMORY_MB"] == 256
			})},
	}
}

// worldState is what the applier may change, without generations and
// times: two states are equal when a revert brought everything back.
func worldState(t *testing.T, s *store.Store) string {
	t.Helper()
	w, err := s.ExportWorld(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range w.Providers {
		fmt.Fprintf(&b, "provider %s %s parent=%v root=%s traits=%v inv=%v usages=%v\n", p.UUID, p.Name, ptrVal(p.ParentUUID), p.RootUUID, p.Traits, p.Inventories, p.Usages)
	}
	for _, a := range w.Aggregates {
		m := slices.Clone(a.Members)
		slices.Sort(m)
		fmt.Fprintf(&b, "aggregate %s %s zone=%v md=%v members=%v\n", a.UUID, a.Name, ptrVal(a.AvailabilityZone), a.Metadata, m)
	}
	for _, f := range w.Flavors {
		fmt.Fprintf(&b, "flavor %s %s %d/%d/%d %v\n", f.ID, f.Name, f.VCPUs, f.RAMMB, f.DiskGB, f.ExtraSpecs)
	}
	for _, g := range w.ServerGroups {
		fmt.Fprintf(&b, "group %s %s %s %s %v %v\n", g.UUID, g.Name, g.ProjectID, g.Policy, g.Rules, g.Members)
	}
	for _, c := range w.Consumers {
		fmt.Fprintf(&b, "consumer %s %s %s %v\n", c.UUID, c.ProjectID, c.UserID, c.Allocations)
	}
	st, _ := json.Marshal(w.Settings)
	b.Write(st)
	classes, err := s.CustomResourceClasses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	traits, err := s.CustomTraits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "\nclasses %v traits %v\n", classes, traits)
	return b.String()
}

func ptrVal(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// TestApplyEveryChangeKind applies every kind of change on both databases
// and checks, for each: its effect; that the live snapshot follows it
// (updated, not rebuilt, equal to one built afresh); that its revert
// brings back every object as it was; that a stale generation is refused
// with nothing written; and that a failing change after it leaves nothing
// written either.
func TestApplyEveryChangeKind(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		f := seedApply(t, s)
		live := s.Live()
		if _, _, err := live.Get(ctx); err != nil {
			t.Fatal(err)
		}
		covered := map[string]bool{}
		for _, tc := range applyCases(f) {
			for _, c := range tc.changes {
				covered[c.Op] = true
			}
			before := worldState(t, s)
			rev0, err := s.Revision(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// A failing change at the end: nothing is written.
			failing := append(slices.Clone(tc.changes), scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "no-such-aggregate", Key: "k"})
			_, err = s.Apply(ctx, admin, failing)
			if want := fmt.Sprintf("changes[%d].aggregate", len(tc.changes)); models.KindOf(err) != models.Invalid || models.FieldOf(err) != want {
				t.Fatalf("%s then a failing change: %v (field %q), want Invalid on %s", tc.op, err, models.FieldOf(err), want)
			}
			if rev, _ := s.Revision(ctx); rev != rev0 || worldState(t, s) != before {
				t.Fatalf("%s then a failing change wrote something", tc.op)
			}
			// A stale generation: refused, nothing written.
			if tc.stale {
				stale := slices.Clone(tc.changes)
				stale[0].Generation = new(int64)
				*stale[0].Generation = 987654
				_, err = s.Apply(ctx, admin, stale)
				if models.KindOf(err) != models.Conflict {
					t.Fatalf("%s with a stale generation: %v, want a Conflict", tc.op, err)
				}
				if rev, _ := s.Revision(ctx); rev != rev0 || worldState(t, s) != before {
					t.Fatalf("%s with a stale generation wrote something", tc.op)
				}
			}
			rebuilds, updates := live.Rebuilds.Load(), live.Updates.Load()
			applied, err := s.Apply(ctx, admin, tc.changes)
			if err != nil {
				t.Fatalf("%s: %v", tc.op, err)
			}
			if applied.Revision <= rev0 {
				t.Fatalf("%s: revision %d, want more than %d", tc.op, applied.Revision, rev0)
			}
			w, _, err := s.LoadWorld(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				if err := tc.check(w); err != nil {
					t.Fatalf("%s: %v", tc.op, err)
				}
			}
			if worldState(t, s) == before {
				t.Fatalf("%s changed nothing", tc.op)
			}
			got, rev, err := live.Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if live.Rebuilds.Load() != rebuilds || live.Updates.Load() == updates || rev != applied.Revision {
				t.Fatalf("%s: the live snapshot was rebuilt or not updated (revision %d, want %d)", tc.op, rev, applied.Revision)
			}
			want, err := scheduling.NewSnapshot(w)
			if err != nil {
				t.Fatal(err)
			}
			sameSnapshot(t, tc.op, got, want)
			// The revert brings everything back.
			if _, err := s.Apply(ctx, admin, applied.Revert); err != nil {
				t.Fatalf("%s: revert %+v: %v", tc.op, applied.Revert, err)
			}
			if after := worldState(t, s); after != before {
				t.Fatalf("%s: the revert %+v did not bring everything back:\n%s\nwant\n%s", tc.op, applied.Revert, after, before)
			}
		}
		for _, op := range scheduling.Ops {
			if !covered[op] {
				t.Errorf("no applier test for %s", op)
			}
		}
	})
}

// TestApplyPlacementGenerations checks that the Placement changes move a
// provider's generation as Placement does — once per write whatever it
// holds, not at all for a rename, a move or a set_provider_aggregates that
// names no generation — and that generations are checked.
func TestApplyPlacementGenerations(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		const id, parent = "b0000000-0000-4000-8000-000000000001", "b0000000-0000-4000-8000-000000000002"
		const agg1, agg2 = "b0000000-0000-4000-8000-0000000000a1", "b0000000-0000-4000-8000-0000000000a2"
		type pf = scheduling.PlacementFields
		gen := func(n int64) *int64 { return &n }
		apply := func(cs ...scheduling.Change) error {
			_, err := s.Apply(ctx, admin, cs)
			return err
		}
		wantGen := func(step string, want int64) {
			t.Helper()
			p, err := s.GetProvider(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if p.Generation != want {
				t.Fatalf("%s: generation %d, want %d", step, p.Generation, want)
			}
		}
		if err := apply(scheduling.Change{Op: scheduling.OpCreateProvider, Provider: "g-host", UUID: id},
			scheduling.Change{Op: scheduling.OpCreateProvider, Provider: "g-parent", UUID: parent}); err != nil {
			t.Fatal(err)
		}
		wantGen("created", 0)
		inv := map[string]models.Inventory{"VCPU": {Total: 4, AllocationRatio: 1}, "MEMORY_MB": {Total: 1024, AllocationRatio: 1}, "DISK_GB": {Total: 10, AllocationRatio: 1}}
		if err := apply(scheduling.Change{Op: scheduling.OpSetInventories, Provider: id, Generation: gen(0), PlacementFields: pf{Inventories: inv}}); err != nil {
			t.Fatal(err)
		}
		wantGen("three inventories", 1)
		err := apply(scheduling.Change{Op: scheduling.OpSetTraits, Provider: id, Generation: gen(0), PlacementFields: pf{Traits: []string{"CUSTOM_A"}}})
		if models.KindOf(err) != models.Conflict || models.FieldOf(err) != "changes[0].generation" || !strings.Contains(err.Error(), "was changed by someone else") {
			t.Fatalf("set_traits at a stale generation: %v, want a Conflict on changes[0].generation", err)
		}
		if err := apply(scheduling.Change{Op: scheduling.OpSetTraits, Provider: id, Generation: gen(1), PlacementFields: pf{Traits: []string{"CUSTOM_A"}}}); err != nil {
			t.Fatal(err)
		}
		wantGen("traits", 2)
		// The same traits again still count as a write, as in Placement.
		if err := apply(scheduling.Change{Op: scheduling.OpSetTraits, Provider: id, Generation: gen(2), PlacementFields: pf{Traits: []string{"CUSTOM_A"}}}); err != nil {
			t.Fatal(err)
		}
		wantGen("the same traits", 3)
		if err := apply(scheduling.Change{Op: scheduling.OpRenameProvider, Provider: id, PlacementFields: pf{NewName: "g-host-2"}},
			scheduling.Change{Op: scheduling.OpSetProviderParent, Provider: id, PlacementFields: pf{Parent: strp(parent)}}); err != nil {
			t.Fatal(err)
		}
		wantGen("renamed and moved", 3)
		if err := apply(scheduling.Change{Op: scheduling.OpSetProviderAggregates, Provider: id, PlacementFields: pf{Aggregates: []string{agg1}}}); err != nil {
			t.Fatal(err)
		}
		wantGen("aggregates without a generation", 3)
		if err := apply(scheduling.Change{Op: scheduling.OpSetProviderAggregates, Provider: id, Generation: gen(3), PlacementFields: pf{Aggregates: []string{agg1, agg2}}}); err != nil {
			t.Fatal(err)
		}
		wantGen("aggregates with a generation", 4)
		if aggs, _, err := s.ProviderAggregates(ctx, id); err != nil || !slices.Equal(aggs, []string{agg1, agg2}) {
			t.Fatalf("aggregates = %v, %v", aggs, err)
		}
		c1, c2 := "c1000000-0000-4000-8000-000000000001", "c1000000-0000-4000-8000-000000000002"
		alloc := func(consumer string, g *int64, used int64) scheduling.Change {
			return scheduling.Change{Op: scheduling.OpSetAllocations, Project: "p", User: "u", Generation: g, PlacementFields: pf{Consumer: consumer,
				Allocations: []scheduling.ChangeAllocation{{Provider: id, ResourceClass: "VCPU", Used: used}}}}
		}
		if err := apply(alloc(c1, gen(scheduling.NoGeneration), 2), alloc(c2, nil, 2)); err != nil {
			t.Fatal(err)
		}
		wantGen("two consumers in one write", 5)
		var ge *store.ConsumerGenerationError
		if err := apply(alloc(c1, gen(scheduling.NoGeneration), 1)); !errors.As(err, &ge) || ge.Current == nil || *ge.Current != 1 {
			t.Fatalf("a new consumer that exists: %v, want a consumer generation conflict", err)
		}
		var ae *store.AllocationError
		if err := apply(alloc(c1, gen(1), 3)); !errors.As(err, &ae) || ae.Kind != "capacity" {
			t.Fatalf("over capacity: %v, want a capacity refusal", err)
		}
		if err := apply(alloc(c1, gen(1), 1)); err != nil {
			t.Fatal(err)
		}
		wantGen("one consumer", 6)
		err = apply(scheduling.Change{Op: scheduling.OpSetInventories, Provider: id, Generation: gen(6), PlacementFields: pf{Inventories: map[string]models.Inventory{}}})
		if models.KindOf(err) != models.Conflict || !strings.Contains(err.Error(), store.InventoryInUse) {
			t.Fatalf("removing an inventory in use: %v", err)
		}
		// -1 asks that the object not exist.
		err = apply(scheduling.Change{Op: scheduling.OpRenameProvider, Provider: id, Generation: gen(scheduling.NoGeneration), PlacementFields: pf{NewName: "x"}})
		if models.KindOf(err) != models.Conflict || !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("generation -1 of an existing provider: %v", err)
		}
	})
}

// A draft may hold Placement changes: it records the generation of each
// provider it touches (not of one it creates), goes stale when the
// provider changes, and applies through the same applier.
func TestDraftOfPlacementChanges(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		host := &models.Provider{Name: "d-host"}
		if err := s.CreateProvider(ctx, admin, host); err != nil {
			t.Fatal(err)
		}
		const created = "d0000000-0000-4000-8000-000000000001"
		type pf = scheduling.PlacementFields
		changes := []scheduling.Change{
			{Op: scheduling.OpSetTraits, Provider: "d-host", PlacementFields: pf{Traits: []string{"CUSTOM_D"}}},
			{Op: scheduling.OpCreateProvider, Provider: "d-new", UUID: created},
			{Op: scheduling.OpSetTraits, Provider: created, PlacementFields: pf{Traits: []string{"CUSTOM_E"}}},
		}
		d, err := s.CreateDraft(ctx, draftActor, "placement")
		if err != nil {
			t.Fatal(err)
		}
		if d, err = s.SetDraftChanges(ctx, draftActor, d.ID, d.Version, changes); err != nil {
			t.Fatalf("SetDraftChanges: %v", err)
		}
		if g, ok := d.Generations["provider:"+host.UUID]; !ok || g != 0 || len(d.Generations) != 1 {
			t.Fatalf("recorded generations %v, want d-host's alone", d.Generations)
		}
		if _, err := s.UpdateProvider(ctx, admin, host.UUID, store.AnyGeneration, nil); err != nil {
			t.Fatal(err)
		}
		if conflicts, err := s.DraftConflicts(ctx, d); err != nil || len(conflicts) != 1 {
			t.Fatalf("conflicts after d-host changed: %v, %v", conflicts, err)
		}
		if d, err = s.RebaseDraft(ctx, draftActor, d.ID, d.Version, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.ApplyDraft(ctx, draftActor, d.ID, d.Version); err != nil {
			t.Fatalf("ApplyDraft: %v", err)
		}
		p, err := s.GetProvider(ctx, created)
		if err != nil || !slices.Equal(p.Traits, []string{"CUSTOM_E"}) {
			t.Fatalf("created provider %+v, %v", p, err)
		}
	})
}

// Changes that change nothing write nothing and are no error.
func TestApplyNothingChanged(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		seedAggregate(t, s, "n-host", "n-agg")
		rev0, err := s.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		applied, err := s.Apply(ctx, admin, []scheduling.Change{{Op: scheduling.OpSetMetadata, Aggregate: "n-agg", Key: "ssd", Value: "true"}})
		if err != nil || applied.Revision != 0 || len(applied.Revert) != 0 {
			t.Fatalf("a change to the same value = %+v, %v; want nothing applied and no error", applied, err)
		}
		if rev, _ := s.Revision(ctx); rev != rev0 {
			t.Fatalf("revision moved from %d to %d", rev0, rev)
		}
	})
}
