package scheduling

import (
	"reflect"
	"strings"
	"testing"

	"corral/models"
)

// smallRunningWorld has two hosts, a tenant aggregate and an extra-spec
// aggregate on h1, a GPU flavor needing the extra spec, and servers of
// project p1 on both hosts, two of them in an anti-affinity group.
func smallRunningWorld(t *testing.T) *models.World {
	t.Helper()
	w, err := models.DecodeWorldJSON([]byte(`{
	  "providers": [
	    {"uuid": "10000000-0000-4000-8000-000000000001", "name": "h1", "traits": ["HW_CPU_X86_AVX2"],
	     "inventories": {"VCPU": {"total": 16, "allocation_ratio": 1}}},
	    {"uuid": "10000000-0000-4000-8000-000000000002", "name": "h2"}
	  ],
	  "aggregates": [
	    {"uuid": "20000000-0000-4000-8000-000000000001", "name": "gpu", "members": ["10000000-0000-4000-8000-000000000001"], "metadata": {"gpu": "a100"}},
	    {"uuid": "20000000-0000-4000-8000-000000000002", "name": "p1-only", "members": ["10000000-0000-4000-8000-000000000002"], "metadata": {"filter_tenant_id": "p1"}}
	  ],
	  "flavors": [
	    {"id": "f1", "name": "g1.gpu", "vcpus": 1, "extra_specs": {"aggregate_instance_extra_specs:gpu": "a100"}},
	    {"id": "f2", "name": "m1.small", "vcpus": 1, "extra_specs": {}}
	  ],
	  "servers": [
	    {"uuid": "30000000-0000-4000-8000-000000000001", "name": "web-1", "project_id": "p1", "host": "h1"},
	    {"uuid": "30000000-0000-4000-8000-000000000002", "name": "web-2", "project_id": "p1", "host": "h2"},
	    {"uuid": "30000000-0000-4000-8000-000000000003", "name": "db-1", "project_id": "p1", "host": "h2"}
	  ],
	  "server_groups": [
	    {"uuid": "40000000-0000-4000-8000-000000000001", "name": "web", "project_id": "p1", "policy": "anti-affinity",
	     "members": ["30000000-0000-4000-8000-000000000001", "30000000-0000-4000-8000-000000000002"]}
	  ],
	  "settings": {"enabled_filters": ["AggregateInstanceExtraSpecsFilter", "AggregateMultiTenancyIsolation"]}
	}`), "")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A draft carries flavor, server group, trait and inventory changes, and
// ChangesBetween(after, before) undoes any of them exactly: the revert of
// an applied draft.
func TestDraftWholeChangeAndRevert(t *testing.T) {
	live := smallRunningWorld(t)
	before := encodeWorld(t, live)
	changes := []Change{
		{Op: OpSetExtraSpec, Flavor: "m1.small", Key: "aggregate_instance_extra_specs:gpu", Value: "none"},
		{Op: OpUnsetExtraSpec, Flavor: "f1", Key: "aggregate_instance_extra_specs:gpu"},
		{Op: OpAddGroupMember, ServerGroup: "web", Server: "db-1"},
		{Op: OpCreateServerGroup, ServerGroup: "batch", Project: "p1", Policy: models.PolicyAffinity},
		{Op: OpDeleteServerGroup, ServerGroup: "batch"},
		{Op: OpAddTrait, Provider: "h2", Trait: "CUSTOM_FAST"},
		{Op: OpRemoveTrait, Provider: "h1", Trait: "HW_CPU_X86_AVX2"},
		{Op: OpSetInventory, Provider: "h2", ResourceClass: "VCPU", Inventory: &models.Inventory{Total: 8}},
		{Op: OpDeleteInventory, Provider: "h1", ResourceClass: "VCPU"},
		{Op: OpCreateAggregate, Aggregate: "new", Metadata: map[string]string{"ssd": "true"}},
		{Op: OpAddMember, Aggregate: "new", Provider: "h2"},
		{Op: OpSetSettings, Settings: &SettingsOverride{LimitTenantsToPlacementAggregate: ptr(true)}},
	}
	after, err := ApplyChanges(live, changes)
	if err != nil {
		t.Fatal(err)
	}
	if encodeWorld(t, live) != before {
		t.Fatal("ApplyChanges modified its input")
	}
	f, _ := after.Flavors[1], 0
	if f.ExtraSpecs["aggregate_instance_extra_specs:gpu"] != "none" || len(after.Flavors[0].ExtraSpecs) != 0 {
		t.Errorf("flavors %+v", after.Flavors)
	}
	if len(after.ServerGroups) != 1 || len(after.ServerGroups[0].Members) != 3 {
		t.Errorf("groups %+v", after.ServerGroups)
	}
	if !reflect.DeepEqual(after.Providers[1].Traits, []string{"CUSTOM_FAST"}) || len(after.Providers[0].Traits) != 0 ||
		after.Providers[1].Inventories["VCPU"].Total != 8 || after.Providers[1].Inventories["VCPU"].AllocationRatio != 1 ||
		len(after.Providers[0].Inventories) != 0 {
		t.Errorf("providers %+v", after.Providers)
	}

	revert := ChangesBetween(after, live)
	back, err := ApplyChanges(after, revert)
	if err != nil {
		t.Fatalf("revert %+v: %v", revert, err)
	}
	if got := encodeWorld(t, back); got != before {
		t.Errorf("the revert does not restore the world:\n%s\nwant\n%s", got, before)
	}
	if len(ChangesBetween(live, live)) != 0 {
		t.Errorf("ChangesBetween of a world and itself = %+v", ChangesBetween(live, live))
	}
}

func TestDraftChangeErrorsNameTheField(t *testing.T) {
	live := smallRunningWorld(t)
	cases := []struct {
		c     Change
		field string
		msg   string
	}{
		{Change{Op: OpSetExtraSpec, Flavor: "nope", Key: "k"}, "changes[0].flavor", `no flavor named "nope"`},
		{Change{Op: OpUnsetExtraSpec, Flavor: "m1.small", Key: "k"}, "changes[0].key", `flavor m1.small has no extra spec "k"`},
		{Change{Op: OpCreateServerGroup, ServerGroup: "g", Project: "p1", Policy: "sometimes"}, "changes[0].policy", `unknown policy "sometimes"`},
		{Change{Op: OpCreateServerGroup, ServerGroup: "g", Project: "p1", Policy: "affinity", Rules: map[string]int{"max_server_per_host": 2}}, "changes[0].rules", "only the anti-affinity"},
		{Change{Op: OpAddGroupMember, ServerGroup: "web", Server: "ghost"}, "changes[0].server", `no server named "ghost"`},
		{Change{Op: OpAddTrait, Provider: "h1", Trait: "lower"}, "changes[0].trait", "not a trait name"},
		{Change{Op: OpSetInventory, Provider: "h1", ResourceClass: "VCPU", Inventory: &models.Inventory{Total: 1, Reserved: 2}}, "changes[0].inventory", "reserved ≤ total"},
		{Change{Op: OpDeleteInventory, Provider: "h2", ResourceClass: "VCPU"}, "changes[0].resource_class", "no VCPU inventory"},
	}
	for _, c := range cases {
		_, err := ApplyChanges(live, []Change{c.c})
		if err == nil || models.FieldOf(err) != c.field || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: err %v, want field %s containing %q", c.c, err, c.field, c.msg)
		}
	}
}

// A draft that takes h1's GPU key away and makes every flavor need it
// strands every server (no flavor fits either host any more), one that admits only p2 on h2 strands web-2 and db-1, and
// moving db-1 into the anti-affinity group beside web-2 breaks it.
func TestStrandings(t *testing.T) {
	live := smallRunningWorld(t)
	ls := mustSnapshot(t, live)
	cases := []struct {
		name    string
		changes []Change
		servers map[string]string // server → reason fragment
		groups  map[string]string
	}{
		{"gpu key removed", []Change{
			{Op: OpUnsetMetadata, Aggregate: "gpu", Key: "gpu"},
			{Op: OpSetExtraSpec, Flavor: "m1.small", Key: "aggregate_instance_extra_specs:gpu", Value: "a100"},
		}, map[string]string{"web-1": "no flavor may land on host h1", "web-2": "no flavor may land on host h2", "db-1": "live data allowed m1.small"}, nil},
		{"tenant changed", []Change{
			{Op: OpRemoveTenant, Aggregate: "p1-only", Project: "p1"},
			{Op: OpAddTenant, Aggregate: "p1-only", Project: "p2"},
		}, map[string]string{"web-2": "project p1 may no longer use host h2", "db-1": "project p1 may no longer use host h2"}, nil},
		{"group member added", []Change{{Op: OpAddGroupMember, ServerGroup: "web", Server: "db-1"}},
			nil, map[string]string{"web": "host h2 runs 2 members, more than max_server_per_host=1"}},
		{"nothing that matters", []Change{{Op: OpSetMetadata, Aggregate: "gpu", Key: "colour", Value: "blue"}}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dw, err := ApplyChanges(live, c.changes)
			if err != nil {
				t.Fatal(err)
			}
			st, err := Strandings(ls, mustSnapshot(t, dw))
			if err != nil {
				t.Fatal(err)
			}
			if st.Checked != 3 {
				t.Errorf("checked %d servers, want 3", st.Checked)
			}
			got := map[string]string{}
			for _, s := range st.Servers {
				got[s.Name] = s.Reason
			}
			if len(got) != len(c.servers) {
				t.Errorf("stranded %v, want %v", got, c.servers)
			}
			for name, frag := range c.servers {
				if !strings.Contains(got[name], frag) {
					t.Errorf("%s: reason %q, want %q", name, got[name], frag)
				}
			}
			gg := map[string]string{}
			for _, g := range st.Groups {
				gg[g.Name] = g.Reason
			}
			if len(gg) != len(c.groups) {
				t.Errorf("broken groups %v, want %v", gg, c.groups)
			}
			for name, frag := range c.groups {
				if !strings.Contains(gg[name], frag) {
					t.Errorf("%s: reason %q, want %q", name, gg[name], frag)
				}
			}
		})
	}
}
