package cloud_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/store"
	"corral/models/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(cloudtest.Main(m)) }

var actor = store.Actor{Name: "tester", Via: "cli", Role: models.RoleAdmin}

// fixture is a small cloud built through the services' own APIs.
type fixture struct {
	c                      *cloudtest.Cloud
	prefix                 string
	cn1, cn2, numa, ss1    string // provider uuids
	aggA, aggB             string // aggregate uuids
	aggAID, aggBID         int
	group                  string
	server1                string
	flavorPublic, flavorPv string
	consumer               string // Placement-only, type INSTANCE
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newUUID() string { return models.NewUUID() }

// provider creates a provider and returns its uuid.
func (f *fixture) provider(t *testing.T, name, parent string) string {
	t.Helper()
	body := map[string]any{"name": name, "uuid": newUUID()}
	if parent != "" {
		body["parent_provider_uuid"] = parent
	}
	var out struct{ UUID string }
	must(t, f.c.Call("placement", "POST", "resource_providers", body, &out, 200))
	return out.UUID
}

func (f *fixture) generation(t *testing.T, rp string) int64 {
	t.Helper()
	var out struct {
		Generation int64 `json:"generation"`
	}
	must(t, f.c.Call("placement", "GET", "resource_providers/"+rp, nil, &out, 200))
	return out.Generation
}

func (f *fixture) inventories(t *testing.T, rp string, inv map[string]any) {
	t.Helper()
	must(t, f.c.Call("placement", "PUT", "resource_providers/"+rp+"/inventories",
		map[string]any{"resource_provider_generation": f.generation(t, rp), "inventories": inv}, nil, 200))
}

func (f *fixture) traits(t *testing.T, rp string, traits ...string) {
	t.Helper()
	for _, tr := range traits {
		if strings.HasPrefix(tr, "CUSTOM_") {
			_ = f.c.Call("placement", "PUT", "traits/"+tr, nil, nil, 201)
		}
	}
	must(t, f.c.Call("placement", "PUT", "resource_providers/"+rp+"/traits",
		map[string]any{"resource_provider_generation": f.generation(t, rp), "traits": traits}, nil, 200))
}

func (f *fixture) placementAggregates(t *testing.T, rp string, aggs ...string) {
	t.Helper()
	must(t, f.c.Call("placement", "PUT", "resource_providers/"+rp+"/aggregates",
		map[string]any{"resource_provider_generation": f.generation(t, rp), "aggregates": aggs}, nil, 200))
}

func (f *fixture) aggregate(t *testing.T, name, zone string, hosts []string, meta map[string]string) (int, string) {
	t.Helper()
	body := map[string]any{"name": name}
	if zone != "" {
		body["availability_zone"] = zone
	}
	var out struct {
		Aggregate struct {
			ID   int    `json:"id"`
			UUID string `json:"uuid"`
		} `json:"aggregate"`
	}
	must(t, f.c.Call("compute", "POST", "os-aggregates", map[string]any{"aggregate": body}, &out, 200))
	id := out.Aggregate.ID
	if len(meta) > 0 {
		must(t, f.c.Call("compute", "POST", fmt.Sprintf("os-aggregates/%d/action", id), map[string]any{"set_metadata": map[string]any{"metadata": meta}}, nil, 200))
	}
	for _, h := range hosts {
		must(t, f.c.Call("compute", "POST", fmt.Sprintf("os-aggregates/%d/action", id), map[string]any{"add_host": map[string]any{"host": h}}, nil, 200))
	}
	return id, out.Aggregate.UUID
}

func (f *fixture) flavor(t *testing.T, name string, public bool, specs map[string]string, access ...string) string {
	t.Helper()
	id := newUUID()
	must(t, f.c.Call("compute", "POST", "flavors", map[string]any{"flavor": map[string]any{
		"name": name, "id": id, "vcpus": 2, "ram": 2048, "disk": 20, "os-flavor-access:is_public": public}}, nil, 200))
	if len(specs) > 0 {
		must(t, f.c.Call("compute", "POST", "flavors/"+id+"/os-extra_specs", map[string]any{"extra_specs": specs}, nil, 200))
	}
	for _, p := range access {
		must(t, f.c.Call("compute", "POST", "flavors/"+id+"/action", map[string]any{"addTenantAccess": map[string]any{"tenant": p}}, nil, 200))
	}
	return id
}

// build populates the cloud: two compute hosts (cn1 with a NUMA child),
// a sharing provider, inventories, traits, an allocation; two Nova
// aggregates with zone, metadata, tenant and reservation keys and hosts
// (Nova mirrors them into Placement); a Placement-only membership that
// disagrees with Nova; flavors with extra specs and access; a server
// group with a rule and a member.
func build(t *testing.T, c *cloudtest.Cloud, prefix string) *fixture {
	f := &fixture{c: c, prefix: prefix}
	f.cn1 = f.provider(t, prefix+"cn1", "")
	f.cn2 = f.provider(t, prefix+"cn2", "")
	f.numa = f.provider(t, prefix+"cn1-numa0", f.cn1)
	f.ss1 = f.provider(t, prefix+"ss1", "")
	f.inventories(t, f.cn1, map[string]any{"VCPU": map[string]any{"total": 16, "allocation_ratio": 4.0}, "MEMORY_MB": map[string]any{"total": 65536, "reserved": 512}})
	f.inventories(t, f.cn2, map[string]any{"VCPU": map[string]any{"total": 8}})
	f.inventories(t, f.numa, map[string]any{"PCPU": map[string]any{"total": 4}})
	f.inventories(t, f.ss1, map[string]any{"DISK_GB": map[string]any{"total": 1000}})
	f.traits(t, f.ss1, models.TraitSharesViaAggregate)
	f.traits(t, f.cn2, "CUSTOM_FAST", "HW_CPU_X86_AVX2")
	consumer := newUUID()
	f.consumer = consumer
	must(t, c.Call("placement", "PUT", "allocations/"+consumer, map[string]any{
		"allocations": map[string]any{f.cn1: map[string]any{"resources": map[string]any{"VCPU": 2, "MEMORY_MB": 1024}}},
		"project_id":  "p1", "user_id": "u1", "consumer_generation": nil, "consumer_type": "INSTANCE"}, nil, 204))
	must(t, c.AddComputeHost(prefix+"cn1", f.cn1))
	must(t, c.AddComputeHost(prefix+"cn2", f.cn2))
	f.aggAID, f.aggA = f.aggregate(t, prefix+"aggA", prefix+"az1", []string{prefix + "cn1"},
		map[string]string{"filter_tenant_id": "p1", "reservation:r1": "true", "ssd": "true"})
	f.aggBID, f.aggB = f.aggregate(t, prefix+"aggB", "", []string{prefix + "cn2"}, map[string]string{"filter_tenant_id2": "p2"})
	// The sharing provider serves aggB's hosts: a Placement-only member.
	f.placementAggregates(t, f.ss1, f.aggB)
	// cn2 in aggA's Placement copy only: Nova does not know.
	f.placementAggregates(t, f.cn2, f.aggA, f.aggB)
	f.flavorPublic = f.flavor(t, prefix+"small", true, map[string]string{"aggregate_instance_extra_specs:ssd": "true", "hw:cpu_policy": "shared"})
	f.flavorPv = f.flavor(t, prefix+"private", false, map[string]string{"reservation:r1": "true"}, "p1")
	var g struct {
		ServerGroup struct {
			ID string `json:"id"`
		} `json:"server_group"`
	}
	must(t, c.Call("compute", "POST", "os-server-groups", map[string]any{"server_group": map[string]any{
		"name": prefix + "g1", "policy": "anti-affinity", "rules": map[string]any{"max_server_per_host": 2}}}, &g, 200))
	f.group = g.ServerGroup.ID
	f.server1 = newUUID()
	must(t, c.AddServer(f.server1, prefix+"vm1", "p1", "u1", prefix+"cn1", f.flavorPublic, f.group))
	return f
}

func connect(t *testing.T, c *cloudtest.Cloud, token string) *cloud.Client {
	t.Helper()
	cl, err := cloud.Connect(context.Background(), cloud.Options{ComputeURL: c.ComputeURL, PlacementURL: c.PlacementURL, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func find[T any](t *testing.T, list []T, pred func(T) bool, what string) T {
	t.Helper()
	for _, x := range list {
		if pred(x) {
			return x
		}
	}
	t.Fatalf("%s not found", what)
	var zero T
	return zero
}

func TestSyncRealCloud(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "sync-")
	st := storetest.Open(t)
	// Traits trait by trait here (other tests read them per provider).
	defer cloud.ReadTraitsInBulkFrom(1)()
	ctx := context.Background()
	cl := connect(t, c, cloudtest.Token)
	if cl.Compute.Microversion != "2.93" || cl.Placement.Microversion != "1.39" {
		t.Errorf("negotiated compute %s placement %s, want 2.93 and 1.39 (Zed's maxima)", cl.Compute.Microversion, cl.Placement.Microversion)
	}

	// A dry run stores nothing.
	res, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{DryRun: true, Connection: "test"})
	must(t, err)
	if w, _ := st.ExportWorld(ctx); len(w.Providers) != 0 || res.Stored {
		t.Fatalf("dry run stored %d providers", len(w.Providers))
	}
	if len(res.Changes) == 0 {
		t.Fatal("dry run reported no changes against an empty database")
	}

	res, err = cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)
	first := res.Stats
	// Debian's nova-api is Zed (2.93): the sync says so in the settings.
	if got, _, _ := st.GetSettings(ctx); res.NovaRelease != "zed" || got.NovaRelease != "zed" || cl.ComputeMaxVersion != "2.93" {
		t.Errorf("release detected %q, stored %q, from max microversion %q; want zed", res.NovaRelease, got.NovaRelease, cl.ComputeMaxVersion)
	}
	w, err := st.ExportWorld(ctx)
	must(t, err)

	// Providers: tree, traits, inventories, usages.
	byName := map[string]models.Provider{}
	for _, p := range w.Providers {
		byName[p.Name] = p
	}
	cn1, numa, cn2, ss1 := byName["sync-cn1"], byName["sync-cn1-numa0"], byName["sync-cn2"], byName["sync-ss1"]
	if cn1.UUID != f.cn1 || numa.ParentUUID == nil || *numa.ParentUUID != f.cn1 || numa.RootUUID != f.cn1 {
		t.Errorf("tree: cn1 %+v numa %+v", cn1, numa)
	}
	if inv := cn1.Inventories["VCPU"]; inv.Total != 16 || inv.AllocationRatio != 4.0 {
		t.Errorf("cn1 VCPU inventory %+v", inv)
	}
	if inv := cn1.Inventories["MEMORY_MB"]; inv.Total != 65536 || inv.Reserved != 512 {
		t.Errorf("cn1 MEMORY_MB inventory %+v", inv)
	}
	if cn1.Usages["VCPU"] != 2 || cn1.Usages["MEMORY_MB"] != 1024 {
		t.Errorf("cn1 usages %v, want VCPU 2 MEMORY_MB 1024", cn1.Usages)
	}
	if numa.Inventories["PCPU"].Total != 4 {
		t.Errorf("numa inventories %v", numa.Inventories)
	}
	if !slices.Equal(cn2.Traits, []string{"CUSTOM_FAST", "HW_CPU_X86_AVX2"}) || !ss1.IsSharing() {
		t.Errorf("traits: cn2 %v ss1 %v", cn2.Traits, ss1.Traits)
	}

	// Aggregates: zone, metadata, members = Nova's hosts plus Placement's.
	aggA := find(t, w.Aggregates, func(a models.Aggregate) bool { return a.UUID == f.aggA }, "aggA")
	aggB := find(t, w.Aggregates, func(a models.Aggregate) bool { return a.UUID == f.aggB }, "aggB")
	if aggA.Name != "sync-aggA" || aggA.AvailabilityZone == nil || *aggA.AvailabilityZone != "sync-az1" {
		t.Errorf("aggA name/zone: %+v", aggA)
	}
	for k, v := range map[string]string{"filter_tenant_id": "p1", "reservation:r1": "true", "ssd": "true", "availability_zone": "sync-az1"} {
		if aggA.Metadata[k] != v {
			t.Errorf("aggA metadata %s = %q, want %q", k, aggA.Metadata[k], v)
		}
	}
	if want := sortedCopy(f.cn1, f.cn2); !slices.Equal(aggA.Members, want) {
		t.Errorf("aggA members %v, want %v (cn1 from nova, cn2 from placement)", aggA.Members, want)
	}
	// The two memberships: cn2 is Placement's only, so Nova's filters and
	// zones do not see it in aggA while member_of does.
	if !slices.Equal(aggA.NotInNova, []string{f.cn2}) || len(aggA.NotInPlacement) != 0 {
		t.Errorf("aggA not in nova %v (want cn2), not in placement %v (want none)", aggA.NotInNova, aggA.NotInPlacement)
	}
	if want := sortedCopy(f.cn2, f.ss1); !slices.Equal(aggB.Members, want) {
		t.Errorf("aggB members %v, want %v", aggB.Members, want)
	}
	if aggB.Metadata["filter_tenant_id2"] != "p2" {
		t.Errorf("aggB metadata %v", aggB.Metadata)
	}
	// cn2 is in aggA in Placement only: one disagreement, named. (Other
	// tests' objects share the cloud: only this test's count.)
	var mine []cloud.Disagreement
	for _, d := range res.Disagreements {
		if strings.HasPrefix(d.Aggregate, "sync-") {
			mine = append(mine, d)
		}
	}
	if len(mine) != 1 || mine[0].Provider != f.cn2 || mine[0].InNova {
		t.Errorf("disagreements %+v, want cn2 in placement's aggA only", mine)
	}

	// Flavors with extra specs.
	small := find(t, w.Flavors, func(x models.Flavor) bool { return x.ID == f.flavorPublic }, "flavor small")
	if small.Name != "sync-small" || small.VCPUs != 2 || small.RAMMB != 2048 || small.DiskGB != 20 ||
		small.ExtraSpecs["aggregate_instance_extra_specs:ssd"] != "true" || small.ExtraSpecs["hw:cpu_policy"] != "shared" {
		t.Errorf("flavor small %+v", small)
	}
	pv := find(t, w.Flavors, func(x models.Flavor) bool { return x.ID == f.flavorPv }, "private flavor")
	if pv.ExtraSpecs["reservation:r1"] != "true" || !pv.Private || !slices.Equal(pv.Projects, []string{"p1"}) {
		t.Errorf("private flavor %+v", pv)
	}
	if small.Private || small.Projects != nil {
		t.Errorf("public flavor with access %+v", small)
	}

	// Consumers with Placement's owner, generation and type.
	cons, err := st.ConsumerAllocationsOf(ctx, f.consumer)
	must(t, err)
	if cons.ProjectID != "p1" || cons.UserID != "u1" || cons.Generation != 1 || cons.ConsumerType != "INSTANCE" || len(cons.Allocations) != 2 {
		t.Errorf("consumer %+v, want p1/u1 generation 1 INSTANCE with 2 allocations", cons)
	}

	// Servers and groups.
	sv := find(t, w.Servers, func(s models.Server) bool { return s.UUID == f.server1 }, "server vm1")
	if sv.Name != "sync-vm1" || sv.ProjectID != "p1" || sv.UserID != "u1" || sv.Host != "sync-cn1" {
		t.Errorf("server %+v", sv)
	}
	g := find(t, w.ServerGroups, func(g models.ServerGroup) bool { return g.UUID == f.group }, "group")
	if g.Name != "sync-g1" || g.Policy != models.PolicyAntiAffinity || g.Rules[models.RuleMaxServerPerHost] != 2 ||
		!slices.Equal(g.Members, []string{f.server1}) || g.ProjectID != "admin" {
		t.Errorf("group %+v", g)
	}

	// The sync is audited with counts, and recorded.
	ev, _, err := st.ListAudit(ctx, store.AuditQuery{ObjectType: "world", Limit: 1})
	must(t, err)
	if len(ev) != 1 || ev[0].Action != "sync" || !strings.Contains(ev[0].After, `"providers":`) || !strings.Contains(ev[0].After, `"consumers":`) || strings.Contains(ev[0].After, cloudtest.Token) {
		t.Errorf("audit %+v", ev)
	}

	// An unchanged cloud: only the provider list is read from Placement.
	res, err = cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)
	if res.Stats.ProvidersRead != 0 || len(res.Changes) != 0 {
		t.Errorf("unchanged sync read %d providers, changes %v", res.Stats.ProvidersRead, res.Changes)
	}
	t.Logf("first sync %d requests (%d providers read), unchanged %d requests", first.Requests, first.ProvidersRead, res.Stats.Requests)

	// Change the cloud: metadata, a host moved out, an inventory, a trait.
	must(t, c.Call("compute", "POST", fmt.Sprintf("os-aggregates/%d/action", f.aggBID), map[string]any{"set_metadata": map[string]any{"metadata": map[string]any{"filter_tenant_id2": nil, "gpu": "a100"}}}, nil, 200))
	f.inventories(t, f.cn2, map[string]any{"VCPU": map[string]any{"total": 32}})
	f.traits(t, f.ss1, models.TraitSharesViaAggregate, "STORAGE_DISK_SSD")
	must(t, c.Call("compute", "POST", "flavors/"+f.flavorPv+"/action", map[string]any{"addTenantAccess": map[string]any{"tenant": "p3"}}, nil, 200))
	res, err = cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)
	if res.Stats.ProvidersRead != 2 {
		t.Errorf("second sync read %d providers, want the 2 whose generation moved (cn2, ss1)", res.Stats.ProvidersRead)
	}
	var lines []string
	for _, ch := range res.Changes {
		lines = append(lines, ch.String())
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"~ provider sync-cn2: inventories.VCPU: total=8 reserved=0 ratio=1 → total=32 reserved=0 ratio=1",
		"~ provider sync-ss1: traits: (1) → +STORAGE_DISK_SSD",
		"~ aggregate sync-aggB: metadata.filter_tenant_id2: - p2; metadata.gpu: + a100",
		"~ flavor sync-private: access: private: p1 → private: p1,p3",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("changes lack %q:\n%s", want, got)
		}
	}
	if len(res.Changes) != 4 {
		t.Errorf("want 4 changes, got:\n%s", got)
	}
	if res.Stats.ConsumersRead != 0 {
		t.Errorf("second sync re-read %d consumers; no allocation moved", res.Stats.ConsumersRead)
	}

	// Refused credentials: nova answers 403 and corral's state stays.
	rev, _ := st.Revision(ctx)
	_, err = cloud.Sync(ctx, st, connect(t, c, "reader:p9"), actor, cloud.SyncOptions{Connection: "test"})
	if err == nil || !strings.Contains(err.Error(), "answered 403 Forbidden to GET /") {
		t.Fatalf("sync with a non-admin token: %v", err)
	}
	if rev2, _ := st.Revision(ctx); rev2 != rev {
		t.Errorf("a failed sync moved the revision %d → %d", rev, rev2)
	}
	recs, err := st.RecentSyncs(ctx, 1)
	must(t, err)
	if len(recs) != 1 || !strings.Contains(recs[0].Error, "403") {
		t.Errorf("failed sync not recorded: %+v", recs)
	}
}

func sortedCopy(s ...string) []string {
	slices.Sort(s)
	return s
}
