package cloud_test

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
)

func cli(t *testing.T, c *cloudtest.Cloud, service string, out any, args ...string) {
	t.Helper()
	endpoint, token, mv := c.ComputeURL, cloudtest.Token, []string{"--os-compute-api-version", "2.64"}
	if service == "placement" {
		endpoint, token, mv = c.PlacementURL, "admin", []string{"--os-placement-api-version", "1.39"}
	}
	raw := openstackCLI(t, endpoint, token, append(append(mv, args...), "-f", "json")...)
	reflect.ValueOf(out).Elem().SetZero() // a map decoded into keeps its keys
	if err := json.Unmarshal([]byte(raw), out); err != nil {
		t.Fatalf("openstack %s: %v\n%s", strings.Join(args, " "), err, raw)
	}
}

// A draft holding one change of every kind a draft can hold is rolled out
// whole: each reaches Nova or Placement (read back with the openstack
// client), and a sync afterwards finds nothing that differs.
func TestRolloutEveryChangeKind(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "ek-")
	ctx := context.Background()
	// What the draft deletes, renames and moves.
	oldFlavor := f.flavor(t, "ek-old", true, map[string]string{"hw:cpu_policy": "shared"})
	_, aggC := f.aggregate(t, "ek-aggC", "", nil, map[string]string{"x": "1"})
	loose := f.provider(t, "ek-loose", "")
	gone := f.provider(t, "ek-gone", "")
	f.inventories(t, gone, map[string]any{"DISK_GB": map[string]any{"total": 50}})
	f.traits(t, gone, "CUSTOM_EK_GONE")
	must(t, c.Call("placement", "PUT", "traits/CUSTOM_EK_OLD", nil, nil, 201))
	must(t, c.Call("placement", "PUT", "resource_classes/CUSTOM_EK_OLDRC", nil, nil, 201))
	st := storetest.Open(t)
	cl := connect(t, c, cloudtest.Token)
	_, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)

	zone, zone2 := "ek-az", "ek-az" // a host is in one zone: cn2 joins ek-new in aggB's
	placementOnly := newUUID()
	p3 := newUUID()
	inv := func(total int64) *models.Inventory { return &models.Inventory{Total: total, AllocationRatio: 1} }
	changes := []scheduling.Change{
		{Op: scheduling.OpCreateTrait, Trait: "CUSTOM_EK_T"},
		{Op: scheduling.OpCreateResourceClass, ResourceClass: "CUSTOM_EK_RC"},
		{Op: scheduling.OpCreateAggregate, Aggregate: "ek-new", AvailabilityZone: &zone, Metadata: map[string]string{"k": "v"}},
		{Op: scheduling.OpRenameAggregate, Aggregate: "ek-aggB", Value: "ek-aggB2"},
		{Op: scheduling.OpSetZone, Aggregate: f.aggB, AvailabilityZone: &zone2},
		{Op: scheduling.OpSetMetadata, Aggregate: "ek-aggA", Key: "gpu", Value: "none"},
		{Op: scheduling.OpUnsetMetadata, Aggregate: "ek-aggA", Key: "ssd"},
		{Op: scheduling.OpAddTenant, Aggregate: "ek-aggA", Project: "p9"},
		{Op: scheduling.OpRemoveTenant, Aggregate: f.aggB, Project: "p2"},
		{Op: scheduling.OpAddReservation, Aggregate: "ek-new", Reservation: "r7"},
		{Op: scheduling.OpRemoveReservation, Aggregate: "ek-aggA", Reservation: "r1"},
		{Op: scheduling.OpAddMember, Aggregate: "ek-new", Provider: "ek-cn2"},
		{Op: scheduling.OpAddMember, Aggregate: "ek-new", Provider: "ek-ss1"},
		{Op: scheduling.OpRemoveMember, Aggregate: "ek-aggA", Provider: "ek-cn1"},
		{Op: scheduling.OpDeleteAggregate, Aggregate: "ek-aggC"},
		{Op: scheduling.OpSetExtraSpec, Flavor: "ek-small", Key: "hw:mem_page_size", Value: "large"},
		{Op: scheduling.OpUnsetExtraSpec, Flavor: "ek-small", Key: "hw:cpu_policy"},
		{Op: scheduling.OpCreateFlavor, Flavor: "ek-f2", Size: &scheduling.FlavorSize{VCPUs: 1, RAMMB: 512, DiskGB: 1}, Metadata: map[string]string{"hw:cpu_policy": "dedicated"}},
		{Op: scheduling.OpDeleteFlavor, Flavor: "ek-old"},
		{Op: scheduling.OpCreateServerGroup, ServerGroup: "ek-g2", Project: "p7", Policy: models.PolicyAntiAffinity, Rules: map[string]int{models.RuleMaxServerPerHost: 3}},
		{Op: scheduling.OpDeleteServerGroup, ServerGroup: f.group},
		{Op: scheduling.OpAddTrait, Provider: "ek-cn1", Trait: "CUSTOM_EK_T"},
		{Op: scheduling.OpRemoveTrait, Provider: "ek-cn2", Trait: "HW_CPU_X86_AVX2"},
		{Op: scheduling.OpSetInventory, Provider: "ek-cn2", ResourceClass: "VCPU", Inventory: inv(12)},
		{Op: scheduling.OpSetInventory, Provider: "ek-ss1", ResourceClass: "CUSTOM_EK_RC", Inventory: inv(5)},
		{Op: scheduling.OpDeleteInventory, Provider: "ek-ss1", ResourceClass: "DISK_GB"},
		{Op: scheduling.OpCreateProvider, Provider: "ek-p3", UUID: p3},
		{Op: scheduling.OpSetInventories, Provider: p3, PlacementFields: scheduling.PlacementFields{Inventories: map[string]models.Inventory{"MEMORY_MB": *inv(1024)}}},
		{Op: scheduling.OpSetTraits, Provider: p3, PlacementFields: scheduling.PlacementFields{Traits: []string{"CUSTOM_EK_T"}}},
		{Op: scheduling.OpRenameProvider, Provider: "ek-cn1-numa0", PlacementFields: scheduling.PlacementFields{NewName: "ek-cn1-numa-a"}},
		{Op: scheduling.OpSetProviderParent, Provider: "ek-loose", PlacementFields: scheduling.PlacementFields{Parent: &p3}},
		{Op: scheduling.OpSetProviderAggregates, Provider: "ek-loose", PlacementFields: scheduling.PlacementFields{Aggregates: []string{placementOnly}}},
		{Op: scheduling.OpDeleteProvider, Provider: "ek-gone"},
		{Op: scheduling.OpDeleteTrait, Trait: "CUSTOM_EK_OLD"},
		{Op: scheduling.OpDeleteResourceClass, ResourceClass: "CUSTOM_EK_OLDRC"},
		{Op: scheduling.OpSetQuotas, Project: "p7", QuotaFields: scheduling.QuotaFields{Quotas: map[string]int{"server_groups": 7}, Reset: []string{"server_group_members"}}},
		{Op: scheduling.OpSetSettings, Settings: &scheduling.SettingsOverride{SoftAffinityWeightMultiplier: ptr(3.0)}},
	}
	d := draft(t, st, "every kind", changes...)
	p, err := cloud.PlanDraft(ctx, st, d.ID)
	must(t, err)
	if len(p.NotRolledOut) != 1 || !strings.HasPrefix(p.NotRolledOut[0], "settings:") {
		t.Errorf("not rolled out: %q", p.NotRolledOut)
	}
	var kinds []string
	for _, s := range p.Steps {
		kinds = append(kinds, s.Kind+" "+s.Aggregate)
	}
	// Creates before what they carry, memberships after; removals last,
	// children's providers before their parents'.
	order := func(a, b string) {
		i, j := slices.Index(kinds, a), slices.Index(kinds, b)
		if i < 0 || j < 0 || i > j {
			t.Errorf("want %q (at %d) before %q (at %d) in\n%s", a, i, b, j, strings.Join(kinds, "\n"))
		}
	}
	order("trait_create CUSTOM_EK_T", "provider_traits ek-cn1")
	order("resource_class_create CUSTOM_EK_RC", "provider_inventories ek-ss1")
	order("provider_create ek-p3", "provider_update ek-loose")
	order("create ek-new", "set_metadata ek-new")
	order("set_metadata ek-new", "add_host ek-new")
	order("flavor_create ek-f2", "flavor_extra_specs ek-f2")
	order("add_host ek-new", "remove_host ek-aggA")
	order("remove_host ek-aggA", "delete ek-aggC")
	order("provider_delete ek-gone", "trait_delete CUSTOM_EK_OLD")
	rep, err := cl.RolloutDraft(ctx, st, actor, p, "test")
	must(t, err)
	if len(rep.Drift) > 0 || rep.Failed != nil || len(rep.Done) != len(p.Steps) || len(rep.Mirrored) > 0 {
		t.Fatalf("rollout: drift %q failed %v (%s) done %d of %d mirrored %q", rep.Drift, rep.Failed, rep.Error, len(rep.Done), len(p.Steps), rep.Mirrored)
	}

	// Read back with the openstack client.
	var agg struct {
		Name       string            `json:"name"`
		Hosts      []string          `json:"hosts"`
		Properties map[string]string `json:"properties"`
		Zone       string            `json:"availability_zone"`
		UUID       string            `json:"uuid"`
	}
	cli(t, c, "compute", &agg, "aggregate", "show", "ek-new")
	newUUID := agg.UUID
	if agg.Zone != zone || agg.Properties["k"] != "v" || agg.Properties["reservation:r7"] == "" || !slices.Equal(agg.Hosts, []string{"ek-cn2"}) {
		t.Errorf("aggregate show ek-new: %+v", agg)
	}
	cli(t, c, "compute", &agg, "aggregate", "show", "ek-aggB2")
	if agg.Zone != zone2 || agg.Properties["filter_tenant_id2"] != "" {
		t.Errorf("aggregate show ek-aggB2: %+v", agg)
	}
	cli(t, c, "compute", &agg, "aggregate", "show", "ek-aggA")
	if agg.Properties["gpu"] != "none" || agg.Properties["ssd"] != "" || agg.Properties["reservation:r1"] != "" || len(agg.Hosts) != 0 ||
		!slices.Contains(slices.Collect(maps.Values(agg.Properties)), "p9") {
		t.Errorf("aggregate show ek-aggA: %+v", agg)
	}
	var aggs []struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	}
	cli(t, c, "compute", &aggs, "aggregate", "list")
	if slices.ContainsFunc(aggs, func(a struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	}) bool {
		return a.Name == "ek-aggC"
	}) {
		t.Errorf("ek-aggC (%s) still exists", aggC)
	}
	var invs []struct {
		Class string `json:"resource_class"`
		Total int64  `json:"total"`
	}
	cli(t, c, "placement", &invs, "resource", "provider", "inventory", "list", f.cn2)
	if len(invs) != 1 || invs[0].Class != "VCPU" || invs[0].Total != 12 {
		t.Errorf("ek-cn2 inventory: %+v", invs)
	}
	cli(t, c, "placement", &invs, "resource", "provider", "inventory", "list", f.ss1)
	if len(invs) != 1 || invs[0].Class != "CUSTOM_EK_RC" || invs[0].Total != 5 {
		t.Errorf("ek-ss1 inventory: %+v", invs)
	}
	cli(t, c, "placement", &invs, "resource", "provider", "inventory", "list", p3)
	if len(invs) != 1 || invs[0].Class != "MEMORY_MB" || invs[0].Total != 1024 {
		t.Errorf("ek-p3 inventory: %+v", invs)
	}
	var traits []struct {
		Name string `json:"name"`
	}
	names := func() []string {
		var out []string
		for _, x := range traits {
			out = append(out, x.Name)
		}
		slices.Sort(out)
		return out
	}
	cli(t, c, "placement", &traits, "resource", "provider", "trait", "list", f.cn1)
	if !slices.Equal(names(), []string{"CUSTOM_EK_T"}) {
		t.Errorf("ek-cn1 traits %v", names())
	}
	cli(t, c, "placement", &traits, "resource", "provider", "trait", "list", f.cn2)
	if !slices.Equal(names(), []string{"CUSTOM_FAST"}) {
		t.Errorf("ek-cn2 traits %v", names())
	}
	cli(t, c, "placement", &traits, "resource", "provider", "trait", "list", p3)
	if !slices.Equal(names(), []string{"CUSTOM_EK_T"}) {
		t.Errorf("ek-p3 traits %v", names())
	}
	if err := c.Call("placement", "GET", "traits/CUSTOM_EK_OLD", nil, nil, 404); err != nil {
		t.Errorf("CUSTOM_EK_OLD: %v", err)
	}
	if err := c.Call("placement", "GET", "resource_classes/CUSTOM_EK_OLDRC", nil, nil, 404); err != nil {
		t.Errorf("CUSTOM_EK_OLDRC: %v", err)
	}
	var memberOf []struct {
		UUID string `json:"uuid"`
	}
	uuids := func() []string {
		var out []string
		for _, x := range memberOf {
			out = append(out, x.UUID)
		}
		slices.Sort(out)
		return out
	}
	cli(t, c, "placement", &memberOf, "resource", "provider", "aggregate", "list", f.ss1)
	if !slices.Equal(uuids(), sortedCopy(f.aggB, newUUID)) {
		t.Errorf("ek-ss1 aggregates %v, want ek-aggB and ek-new %s", uuids(), newUUID)
	}
	cli(t, c, "placement", &memberOf, "resource", "provider", "aggregate", "list", loose)
	if !slices.Equal(uuids(), []string{placementOnly}) {
		t.Errorf("ek-loose aggregates %v", uuids())
	}
	var rp struct {
		Name   string `json:"name"`
		Parent string `json:"parent_provider_uuid"`
	}
	cli(t, c, "placement", &rp, "resource", "provider", "show", loose)
	if rp.Parent != p3 {
		t.Errorf("ek-loose: %+v", rp)
	}
	cli(t, c, "placement", &rp, "resource", "provider", "show", f.numa)
	if rp.Name != "ek-cn1-numa-a" {
		t.Errorf("numa: %+v", rp)
	}
	if err := c.Call("placement", "GET", "resource_providers/"+gone, nil, nil, 404); err != nil {
		t.Errorf("ek-gone: %v", err)
	}
	var sg struct {
		ID        string         `json:"id"`
		Policy    string         `json:"policy"`
		Rules     map[string]int `json:"rules"`
		ProjectID string         `json:"project_id"`
	}
	w, err := st.ExportWorld(ctx)
	must(t, err)
	g2 := find(t, w.ServerGroups, func(g models.ServerGroup) bool { return g.Name == "ek-g2" }, "ek-g2")
	cli(t, c, "compute", &sg, "server", "group", "show", g2.UUID)
	if sg.Policy != models.PolicyAntiAffinity || sg.Rules[models.RuleMaxServerPerHost] != 3 || sg.ProjectID != "p7" {
		t.Errorf("server group show ek-g2: %+v", sg)
	}
	if err := c.Call("compute", "GET", "os-server-groups/"+f.group, nil, nil, 404); err != nil {
		t.Errorf("ek-g1: %v", err)
	}
	var fl struct {
		Properties map[string]string `json:"properties"`
		VCPUs      int               `json:"vcpus"`
		RAM        int               `json:"ram"`
	}
	cli(t, c, "compute", &fl, "flavor", "show", "ek-f2")
	if fl.VCPUs != 1 || fl.RAM != 512 || fl.Properties["hw:cpu_policy"] != "dedicated" {
		t.Errorf("flavor show ek-f2: %+v", fl)
	}
	cli(t, c, "compute", &fl, "flavor", "show", "ek-small")
	if fl.Properties["hw:mem_page_size"] != "large" || fl.Properties["hw:cpu_policy"] != "" {
		t.Errorf("flavor show ek-small: %+v", fl)
	}
	if err := c.Call("compute", "GET", "flavors/"+oldFlavor, nil, nil, 404); err != nil {
		t.Errorf("ek-old: %v", err)
	}
	var quota struct {
		QuotaSet map[string]any `json:"quota_set"`
	}
	must(t, c.Call("compute", "GET", "os-quota-sets/p7", nil, &quota, 200))
	if quota.QuotaSet["server_groups"] != 7.0 || quota.QuotaSet["server_group_members"] != 10.0 {
		t.Errorf("quotas of p7: %v", quota.QuotaSet)
	}
	// corral holds what the cloud holds: the draft is done, the settings
	// applied to corral, and a sync finds nothing new.
	if _, err := st.GetDraft(ctx, d.ID); err == nil {
		t.Error("the draft rolled out is still pending")
	}
	if w.Settings.SoftAffinityWeightMultiplier != 3 {
		t.Errorf("settings not applied to corral: soft_affinity_weight_multiplier %g", w.Settings.SoftAffinityWeightMultiplier)
	}
	res, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{DryRun: true, Connection: "test"})
	must(t, err)
	if len(res.Changes) != 0 {
		t.Errorf("sync after the rollout finds %d change(s): %v", len(res.Changes), res.Changes)
	}

	// Flavor access, which no draft change names, rolls out from a world
	// (as an import's); its undo is no draft's, so a failure lists it.
	access := func(mutate func(w *models.World)) *cloud.Plan {
		t.Helper()
		kept, err := cloud.LoadKept(ctx, st)
		must(t, err)
		live, err := st.ExportWorld(ctx)
		must(t, err)
		next, err := st.ExportWorld(ctx)
		must(t, err)
		mutate(next)
		p, err := cloud.PlanWorlds(kept, live, next)
		must(t, err)
		return p
	}
	p = access(func(w *models.World) {
		for i := range w.Flavors {
			if w.Flavors[i].ID == f.flavorPv {
				w.Flavors[i].Projects = append(w.Flavors[i].Projects, "p5")
			}
		}
		for i := range w.Providers {
			if w.Providers[i].UUID == f.cn1 {
				w.Providers[i].Traits = append(w.Providers[i].Traits, "HW_NO_SUCH_TRAIT_EK")
			}
		}
	})
	rep, err = cl.Rollout(ctx, st, actor, p, "test")
	must(t, err)
	if rep.Failed == nil || rep.Failed.Kind != "provider_traits" || len(rep.Done) != 1 || rep.UndoID != "" ||
		len(rep.NoUndo) != 1 || rep.NoUndo[0] != "flavor ek-private: project p5 was given access; a draft cannot take it away: openstack flavor unset --project p5 ek-private" {
		t.Fatalf("access then a refused trait: failed %v (%s) done %d undo %q no undo %q", rep.Failed, rep.Error, len(rep.Done), rep.UndoID, rep.NoUndo)
	}
	p = access(func(w *models.World) {
		for i := range w.Flavors {
			if w.Flavors[i].ID == f.flavorPv {
				w.Flavors[i].Projects = []string{"p5"}
			}
		}
	})
	rep, err = cl.Rollout(ctx, st, actor, p, "test")
	must(t, err)
	if rep.Failed != nil || len(rep.Done) != 1 || rep.Done[0].Kind != "flavor_access_remove" {
		t.Fatalf("access removed: failed %v (%s) done %v", rep.Failed, rep.Error, rep.Done)
	}
	var pv struct {
		Access []string `json:"access_project_ids"`
	}
	cli(t, c, "compute", &pv, "flavor", "show", "ek-private")
	if !slices.Equal(pv.Access, []string{"p5"}) {
		t.Errorf("flavor show ek-private: access %v, want [p5]", pv.Access)
	}

	// The audit names each call's object.
	ev, _, err := st.ListAudit(ctx, store.AuditQuery{ObjectType: "server_group", Limit: 10})
	must(t, err)
	if !slices.ContainsFunc(ev, func(e models.AuditEvent) bool { return e.Action == "rollout-call" && e.ObjectID == g2.UUID }) {
		t.Errorf("no rollout-call audited for server group %s", g2.UUID)
	}
}

func ptr[T any](v T) *T { return &v }
