package cloud_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
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

// openstackCLI runs Debian's openstack client against one service.
func openstackCLI(t *testing.T, endpoint, token string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("/usr/bin/openstack"); err != nil {
		t.Skip("the openstack client is not installed")
	}
	full := append([]string{"--os-auth-type", "admin_token", "--os-endpoint", endpoint, "--os-token", token}, args...)
	out, err := exec.Command("/usr/bin/openstack", full...).CombinedOutput()
	if err != nil {
		t.Fatalf("openstack %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func draft(t *testing.T, st *store.Store, name string, changes ...scheduling.Change) *store.Draft {
	t.Helper()
	ctx := context.Background()
	d, err := st.CreateDraft(ctx, actor, name)
	must(t, err)
	d, err = st.SetDraftChanges(ctx, actor, d.ID, d.Version, changes)
	must(t, err)
	return d
}

func plan(t *testing.T, st *store.Store, d *store.Draft) *cloud.Plan {
	t.Helper()
	ctx := context.Background()
	kept, err := cloud.LoadKept(ctx, st)
	must(t, err)
	live, err := st.ExportWorld(ctx)
	must(t, err)
	changes, err := d.DraftChanges()
	must(t, err)
	p, err := cloud.PlanRollout(kept, live, changes)
	must(t, err)
	return p
}

func TestRolloutRealCloud(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "ro-")
	st := storetest.Open(t)
	ctx := context.Background()
	cl := connect(t, c, cloudtest.Token)
	_, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)

	zone := "ro-az9"
	d := draft(t, st, "widen",
		scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "ro-aggA", Key: "gpu", Value: "none"},
		scheduling.Change{Op: scheduling.OpAddTenant, Aggregate: "ro-aggB", Project: "p5"},
		scheduling.Change{Op: scheduling.OpRemoveMember, Aggregate: "ro-aggB", Provider: "ro-ss1"},
		scheduling.Change{Op: scheduling.OpCreateAggregate, Aggregate: "ro-new", AvailabilityZone: &zone, Metadata: map[string]string{"reservation:r9": "r9"}},
		scheduling.Change{Op: scheduling.OpAddMember, Aggregate: "ro-new", Provider: "ro-cn2"},
		scheduling.Change{Op: scheduling.OpUnsetMetadata, Aggregate: "ro-aggA", Key: "ssd"},
	)
	p := plan(t, st, d)
	var kinds, cmds []string
	for _, s := range p.Steps {
		kinds = append(kinds, s.Kind+" "+s.Aggregate)
		cmds = append(cmds, s.Openstack)
	}
	// create → metadata set → hosts added → members removed → metadata removed.
	want := []string{"create ro-new", "set_metadata ro-aggA", "set_metadata ro-aggB", "set_metadata ro-new", "add_host ro-new",
		"placement_aggregates ro-aggB", "set_metadata ro-aggA"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("plan order\n got %v\nwant %v", kinds, want)
	}
	for _, w := range []string{"openstack aggregate create --zone ro-az9 ro-new", "openstack aggregate set --property gpu=none ro-aggA",
		"openstack aggregate add host ro-new ro-cn2", "openstack aggregate unset --property ssd ro-aggA",
		fmt.Sprintf("resource provider aggregate set --generation %d %s", generationOf(t, c, f.ss1), f.ss1)} {
		if !strings.Contains(strings.Join(cmds, "\n"), w) {
			t.Errorf("plan lacks %q:\n%s", w, strings.Join(cmds, "\n"))
		}
	}

	rep, err := cl.Rollout(ctx, st, actor, p, "test")
	must(t, err)
	if len(rep.Drift) > 0 || rep.Failed != nil || len(rep.Done) != len(p.Steps) || len(rep.Mirrored) > 0 {
		t.Fatalf("rollout: drift %v failed %v (%s) done %d mirrored %v", rep.Drift, rep.Failed, rep.Error, len(rep.Done), rep.Mirrored)
	}

	// Read the result back with the real openstack client.
	var show struct {
		Hosts      []string          `json:"hosts"`
		Properties map[string]string `json:"properties"`
		Zone       string            `json:"availability_zone"`
		ID         int               `json:"id"`
		UUID       string            `json:"uuid"`
	}
	must(t, json.Unmarshal([]byte(openstackCLI(t, c.ComputeURL, cloudtest.Token, "--os-compute-api-version", "2.41", "aggregate", "show", "ro-aggA", "-f", "json")), &show))
	if show.Properties["gpu"] != "none" || show.Properties["ssd"] != "" || show.Properties["filter_tenant_id"] != "p1" {
		t.Errorf("aggregate show ro-aggA: %+v", show)
	}
	must(t, json.Unmarshal([]byte(openstackCLI(t, c.ComputeURL, cloudtest.Token, "--os-compute-api-version", "2.41", "aggregate", "show", "ro-new", "-f", "json")), &show))
	if show.Zone != zone || show.Properties["reservation:r9"] != "r9" || !slices.Equal(show.Hosts, []string{"ro-cn2"}) {
		t.Errorf("aggregate show ro-new: %+v", show)
	}
	newUUID := show.UUID
	var aggs []struct {
		UUID string `json:"uuid"`
	}
	must(t, json.Unmarshal([]byte(openstackCLI(t, c.PlacementURL, "admin", "--os-placement-api-version", "1.19", "resource", "provider", "aggregate", "list", f.ss1, "-f", "json")), &aggs))
	if len(aggs) != 0 {
		t.Errorf("ss1 still in placement aggregates %v", aggs)
	}
	must(t, json.Unmarshal([]byte(openstackCLI(t, c.PlacementURL, "admin", "--os-placement-api-version", "1.19", "resource", "provider", "aggregate", "list", f.cn2, "-f", "json")), &aggs))
	if !slices.ContainsFunc(aggs, func(a struct {
		UUID string `json:"uuid"`
	}) bool {
		return a.UUID == newUUID
	}) {
		t.Errorf("nova did not mirror cn2 into placement aggregate %s: %v", newUUID, aggs)
	}
	// The re-sync brought it in.
	w, err := st.ExportWorld(ctx)
	must(t, err)
	agg := find(t, w.Aggregates, func(a models.Aggregate) bool { return a.Name == "ro-new" }, "ro-new")
	if agg.UUID != newUUID || !slices.Equal(agg.Members, []string{f.cn2}) {
		t.Errorf("after the re-sync: %+v", agg)
	}
	ev, _, err := st.ListAudit(ctx, store.AuditQuery{ObjectType: "aggregate", Limit: 50})
	must(t, err)
	calls := 0
	for _, e := range ev {
		if e.Action == "rollout-call" {
			calls++
		}
	}
	if calls != len(p.Steps) {
		t.Errorf("%d calls audited, want %d", calls, len(p.Steps))
	}

	// Drift: the cloud changes between the draft and its rollout.
	d2 := draft(t, st, "drifted", scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "ro-aggB", Key: "k", Value: "v"})
	p2 := plan(t, st, d2)
	must(t, c.Call("compute", "POST", fmt.Sprintf("os-aggregates/%d/action", f.aggBID), map[string]any{"set_metadata": map[string]any{"metadata": map[string]any{"owner": "ops"}}}, nil, 200))
	rep, err = cl.Rollout(ctx, st, actor, p2, "test")
	must(t, err)
	if len(rep.Drift) != 1 || rep.Drift[0] != `aggregate ro-aggB: metadata owner was added ("ops")` || len(rep.Done) != 0 {
		t.Errorf("drift: %q done %d", rep.Drift, len(rep.Done))
	}

	// A call that fails mid-way: nova refuses a metadata key corral allows.
	_, err = cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)
	d3 := draft(t, st, "half",
		scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "ro-aggA", Key: "rack", Value: "r1"},
		scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "ro-aggB", Key: "bad/key", Value: "x"},
		scheduling.Change{Op: scheduling.OpAddMember, Aggregate: "ro-aggB", Provider: "ro-cn1"},
	)
	p3 := plan(t, st, d3)
	rep, err = cl.Rollout(ctx, st, actor, p3, "test")
	must(t, err)
	if rep.Failed == nil || len(rep.Done) != 1 || len(rep.NotDone) != 1 || !strings.Contains(rep.Error, "nova answered 400 Bad Request to POST /os-aggregates/") {
		t.Fatalf("failing rollout: failed %v done %d not done %d error %q", rep.Failed, len(rep.Done), len(rep.NotDone), rep.Error)
	}
	undo, err := st.GetDraft(ctx, rep.UndoID)
	must(t, err)
	uc, err := undo.DraftChanges()
	must(t, err)
	if len(uc) != 1 || uc[0].Op != scheduling.OpUnsetMetadata || uc[0].Aggregate != "ro-aggA" || uc[0].Key != "rack" {
		t.Errorf("undo draft %+v", uc)
	}
	// The undo draft rolls out and puts the cloud back.
	rep, err = cl.Rollout(ctx, st, actor, plan(t, st, undo), "test")
	must(t, err)
	if rep.Failed != nil || len(rep.Drift) > 0 {
		t.Fatalf("undo rollout: %v %v", rep.Error, rep.Drift)
	}
	must(t, json.Unmarshal([]byte(openstackCLI(t, c.ComputeURL, cloudtest.Token, "--os-compute-api-version", "2.41", "aggregate", "show", "ro-aggA", "-f", "json")), &show))
	if _, ok := show.Properties["rack"]; ok {
		t.Errorf("undo left rack: %+v", show.Properties)
	}

	// Flavors' extra specs and providers' traits: planned from the changed
	// world, set with generations, drift caught field by field.
	kept, err := cloud.LoadKept(ctx, st)
	must(t, err)
	live, err := st.ExportWorld(ctx)
	must(t, err)
	next, err := st.ExportWorld(ctx)
	must(t, err)
	for i := range next.Flavors {
		if next.Flavors[i].ID == f.flavorPublic {
			next.Flavors[i].ExtraSpecs["hw:cpu_policy"] = "dedicated"
			delete(next.Flavors[i].ExtraSpecs, "aggregate_instance_extra_specs:ssd")
		}
	}
	for i := range next.Providers {
		switch next.Providers[i].UUID {
		case f.cn1:
			next.Providers[i].Traits = append(next.Providers[i].Traits, "CUSTOM_RACK1")
		case f.cn2:
			next.Providers[i].Traits = slices.DeleteFunc(next.Providers[i].Traits, func(s string) bool { return s == "HW_CPU_X86_AVX2" })
		}
	}
	must(t, c.Call("placement", "PUT", "traits/CUSTOM_RACK1", nil, nil, 201))
	p4, err := cloud.PlanWorlds(kept, live, next)
	must(t, err)
	var cmds4 []string
	for _, s := range p4.Steps {
		cmds4 = append(cmds4, s.Openstack)
	}
	for _, w := range []string{"openstack flavor set --property hw:cpu_policy=dedicated ro-small", "openstack flavor unset --property aggregate_instance_extra_specs:ssd ro-small",
		"resource provider trait set --trait CUSTOM_RACK1 " + f.cn1, "resource provider trait set --trait CUSTOM_FAST " + f.cn2} {
		if !strings.Contains(strings.Join(cmds4, "\n"), w) {
			t.Errorf("plan lacks %q:\n%s", w, strings.Join(cmds4, "\n"))
		}
	}
	rep, err = cl.Rollout(ctx, st, actor, p4, "test")
	must(t, err)
	if rep.Failed != nil || len(rep.Drift) > 0 || len(rep.Done) != 4 {
		t.Fatalf("flavor and trait rollout: %v %s %v done %d", rep.Failed, rep.Error, rep.Drift, len(rep.Done))
	}
	var specs struct {
		ExtraSpecs map[string]string `json:"extra_specs"`
	}
	must(t, c.Call("compute", "GET", "flavors/"+f.flavorPublic+"/os-extra_specs", nil, &specs, 200))
	if specs.ExtraSpecs["hw:cpu_policy"] != "dedicated" || specs.ExtraSpecs["aggregate_instance_extra_specs:ssd"] != "" {
		t.Errorf("flavor extra specs after the rollout: %v", specs.ExtraSpecs)
	}
	var tr struct {
		Traits []string `json:"traits"`
	}
	must(t, c.Call("placement", "GET", "resource_providers/"+f.cn2+"/traits", nil, &tr, 200))
	if !slices.Equal(sortedCopy(tr.Traits...), []string{"CUSTOM_FAST"}) {
		t.Errorf("cn2 traits after the rollout: %v", tr.Traits)
	}
	// Drift on a trait: someone tags cn1 after the sync.
	kept, _ = cloud.LoadKept(ctx, st)
	live, _ = st.ExportWorld(ctx)
	next, _ = st.ExportWorld(ctx)
	for i := range next.Providers {
		if next.Providers[i].UUID == f.cn1 {
			next.Providers[i].Traits = nil
		}
	}
	p5, err := cloud.PlanWorlds(kept, live, next)
	must(t, err)
	f.traits(t, f.cn1, "CUSTOM_RACK1", "CUSTOM_FAST")
	rep, err = cl.Rollout(ctx, st, actor, p5, "test")
	must(t, err)
	if len(rep.Drift) != 1 || !strings.Contains(rep.Drift[0], "provider ro-cn1: traits [CUSTOM_RACK1] → [CUSTOM_FAST CUSTOM_RACK1]") {
		t.Errorf("trait drift: %q", rep.Drift)
	}
}

func generationOf(t *testing.T, c *cloudtest.Cloud, rp string) int64 {
	t.Helper()
	var out struct {
		Generation int64 `json:"generation"`
	}
	must(t, c.Call("placement", "GET", "resource_providers/"+rp, nil, &out, 200))
	return out.Generation
}
