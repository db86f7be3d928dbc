package cloud_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/scheduling"
	"corral/models/store/storetest"
)

// cloudState is what the five-call plan below touches, as the services
// answer it.
type cloudState struct {
	Inventories map[string]map[string]any
	Metadata    map[string]string
	ExtraSpecs  map[string]string
	Traits      []string
	CustomUp    bool // trait CUSTOM_UN_UP exists
}

func readState(t *testing.T, c *cloudtest.Cloud, f *fixture) cloudState {
	t.Helper()
	var s cloudState
	var inv struct {
		Inventories map[string]map[string]any `json:"inventories"`
	}
	must(t, c.Call("placement", "GET", "resource_providers/"+f.cn2+"/inventories", nil, &inv, 200))
	s.Inventories = inv.Inventories
	var agg struct {
		Aggregate struct {
			Metadata map[string]string `json:"metadata"`
		} `json:"aggregate"`
	}
	must(t, c.Call("compute", "GET", fmt.Sprintf("os-aggregates/%d", f.aggAID), nil, &agg, 200))
	s.Metadata = agg.Aggregate.Metadata
	var specs struct {
		ExtraSpecs map[string]string `json:"extra_specs"`
	}
	must(t, c.Call("compute", "GET", "flavors/"+f.flavorPublic+"/os-extra_specs", nil, &specs, 200))
	s.ExtraSpecs = specs.ExtraSpecs
	var tr struct {
		Traits []string `json:"traits"`
	}
	must(t, c.Call("placement", "GET", "resource_providers/"+f.cn1+"/traits", nil, &tr, 200))
	s.Traits = sortedCopy(tr.Traits...)
	s.CustomUp = c.Call("placement", "GET", "traits/CUSTOM_UN_UP", nil, nil, 204) == nil
	return s
}

// A plan of five calls of five kinds, made to fail at each position in
// turn by input the service refuses: the undo draft of what was done,
// rolled out, puts the cloud back exactly as it was.
func TestRolloutUndoAtEachPosition(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "un-")
	ctx := context.Background()
	st := storetest.Open(t)
	cl := connect(t, c, cloudtest.Token)
	_, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)
	before := readState(t, c, f)
	if before.CustomUp {
		t.Fatal("CUSTOM_UN_UP exists before the test")
	}
	good := []scheduling.Change{
		{Op: scheduling.OpSetInventory, Provider: "un-cn2", ResourceClass: "VCPU", Inventory: &models.Inventory{Total: 12, AllocationRatio: 2}},
		{Op: scheduling.OpSetMetadata, Aggregate: "un-aggA", Key: "gpu", Value: "none"},
		{Op: scheduling.OpSetExtraSpec, Flavor: "un-small", Key: "hw:mem_page_size", Value: "large"},
		{Op: scheduling.OpAddTrait, Provider: "un-cn1", Trait: "CUSTOM_UN_UP"},
		{Op: scheduling.OpDeleteTrait, Trait: "CUSTOM_UN_UNUSED"},
	}
	// Each refused by the service, not by corral: a total past Placement's
	// bound, a key Nova refuses, a value Nova's extra spec validation
	// refuses, a trait Placement does not know, a standard trait.
	bad := []scheduling.Change{
		{Op: scheduling.OpSetInventory, Provider: "un-cn2", ResourceClass: "VCPU", Inventory: &models.Inventory{Total: 3000000000, AllocationRatio: 1}},
		{Op: scheduling.OpSetMetadata, Aggregate: "un-aggA", Key: "bad/key", Value: "x"},
		{Op: scheduling.OpSetExtraSpec, Flavor: "un-small", Key: "hw:mem_page_size", Value: "enormous"},
		{Op: scheduling.OpAddTrait, Provider: "un-cn1", Trait: "HW_NO_SUCH_TRAIT_UN"},
		{Op: scheduling.OpDeleteTrait, Trait: "HW_CPU_X86_AVX2"},
	}
	wantKinds := []string{"provider_inventories", "set_metadata", "flavor_extra_specs", "provider_traits", "trait_delete"}
	for k := range 5 {
		changes := slices.Clone(good)
		changes[k] = bad[k]
		d := draft(t, st, fmt.Sprintf("fail at %d", k+1), changes...)
		p, err := cloud.PlanDraft(ctx, st, d.ID)
		must(t, err)
		var kinds []string
		for _, s := range p.Steps {
			kinds = append(kinds, s.Kind)
		}
		if !slices.Equal(kinds, wantKinds) {
			t.Fatalf("position %d: plan %v, want %v", k+1, kinds, wantKinds)
		}
		rep, err := cl.RolloutDraft(ctx, st, actor, p, "test")
		must(t, err)
		if rep.Failed == nil || rep.Failed.Kind != wantKinds[k] || len(rep.Done) != k {
			t.Fatalf("position %d: failed %v (%s), done %d", k+1, rep.Failed, rep.Error, len(rep.Done))
		}
		if k == 0 {
			if rep.UndoID != "" {
				t.Errorf("position 1: nothing was done, yet undo draft %s", rep.UndoID)
			}
		} else {
			if rep.UndoID == "" {
				t.Fatalf("position %d: no undo draft", k+1)
			}
			up, err := cloud.PlanDraft(ctx, st, rep.UndoID)
			must(t, err)
			urep, err := cl.RolloutDraft(ctx, st, actor, up, "test")
			must(t, err)
			if urep.Failed != nil || len(urep.Drift) > 0 {
				t.Fatalf("position %d: undo rollout: %v %s %q", k+1, urep.Failed, urep.Error, urep.Drift)
			}
		}
		if after := readState(t, c, f); !reflect.DeepEqual(after, before) {
			t.Errorf("position %d: the cloud after the undo\n%+v\nwant\n%+v", k+1, after, before)
		}
	}
}

// callAs makes a compute call in another project (noauth: "user:project").
func callAs(t *testing.T, c *cloudtest.Cloud, project, method, path string, body any, want int) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(method, c.ComputeURL+"/"+path, bytes.NewReader(b))
	must(t, err)
	req.Header.Set("X-Auth-Token", "admin:"+project)
	req.Header.Set("OpenStack-API-Version", "compute 2.64")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("%s %s as %s: %d", method, path, project, resp.StatusCode)
	}
}

// The cloud changes, after the last sync, each kind of object a plan
// touches: the rollout sends nothing and names each object and field,
// with the cloud's new value.
func TestRolloutDriftEveryKind(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "dr-")
	ctx := context.Background()
	st := storetest.Open(t)
	cl := connect(t, c, cloudtest.Token)
	_, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)
	d := draft(t, st, "drifted",
		scheduling.Change{Op: scheduling.OpSetExtraSpec, Flavor: "dr-private", Key: "hw:mem_page_size", Value: "large"},
		scheduling.Change{Op: scheduling.OpCreateFlavor, Flavor: "dr-f2", Size: &scheduling.FlavorSize{VCPUs: 1, RAMMB: 512, DiskGB: 1}},
		scheduling.Change{Op: scheduling.OpDeleteServerGroup, ServerGroup: f.group},
		scheduling.Change{Op: scheduling.OpCreateServerGroup, ServerGroup: "dr-g2", Project: "p7", Policy: models.PolicyAffinity},
		scheduling.Change{Op: scheduling.OpSetInventory, Provider: "dr-cn2", ResourceClass: "VCPU", Inventory: &models.Inventory{Total: 12, AllocationRatio: 1}},
		scheduling.Change{Op: scheduling.OpRenameProvider, Provider: "dr-cn1-numa0", PlacementFields: scheduling.PlacementFields{NewName: "dr-numa-a"}},
		scheduling.Change{Op: scheduling.OpCreateProvider, Provider: "dr-p3"},
		scheduling.Change{Op: scheduling.OpSetQuotas, Project: "p8", QuotaFields: scheduling.QuotaFields{Quotas: map[string]int{"server_groups": 4}, Expect: map[string]int{"server_groups": 10}}},
	)
	p, err := cloud.PlanDraft(ctx, st, d.ID)
	must(t, err)
	// Someone else, in the cloud, meanwhile:
	must(t, c.Call("compute", "POST", "flavors/"+f.flavorPv+"/action", map[string]any{"removeTenantAccess": map[string]any{"tenant": "p1"}}, nil, 200))
	must(t, c.Call("compute", "POST", "flavors", map[string]any{"flavor": map[string]any{"name": "dr-f2", "vcpus": 1, "ram": 256, "disk": 1}}, nil, 200))
	must(t, c.Call("compute", "DELETE", "os-server-groups/"+f.group, nil, nil, 204))
	callAs(t, c, "p7", "POST", "os-server-groups", map[string]any{"server_group": map[string]any{"name": "dr-g2", "policy": "affinity"}}, 200)
	f.inventories(t, f.cn2, map[string]any{"VCPU": map[string]any{"total": 9}})
	must(t, c.Call("placement", "PUT", "resource_providers/"+f.numa, map[string]any{"name": "dr-numa-b", "parent_provider_uuid": f.cn1}, nil, 200))
	f.provider(t, "dr-p3", "")
	must(t, c.Call("compute", "PUT", "os-quota-sets/p8", map[string]any{"quota_set": map[string]any{"server_groups": 12}}, nil, 200))

	rep, err := cl.Rollout(ctx, st, actor, p, "test")
	must(t, err)
	got := strings.Join(rep.Drift, "\n")
	for _, want := range []string{
		"flavor dr-private: access [p1] → []",
		"flavor dr-f2: a flavor of that name (",
		"server group dr-g1: deleted in nova since the last sync",
		"server group dr-g2: project p7 created a group of that name (",
		"provider dr-cn2: inventory VCPU total 8 → 9",
		`provider dr-cn1-numa0: name is now "dr-numa-b"`,
		"provider dr-p3: a provider of that name (",
		"quota p8: server_groups 10 → 12",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("drift lacks %q:\n%s", want, got)
		}
	}
	if len(rep.Done) != 0 || rep.Failed != nil {
		t.Errorf("a drifted rollout made calls: done %d failed %v", len(rep.Done), rep.Failed)
	}
	var specs struct {
		ExtraSpecs map[string]string `json:"extra_specs"`
	}
	must(t, c.Call("compute", "GET", "flavors/"+f.flavorPv+"/os-extra_specs", nil, &specs, 200))
	if _, sent := specs.ExtraSpecs["hw:mem_page_size"]; sent {
		t.Error("the extra spec was sent despite the drift")
	}
}
