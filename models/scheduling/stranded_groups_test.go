package scheduling

import (
	"strings"
	"testing"

	"corral/models"
)

// groupsAtRiskWorld has three hosts with room, h3 only for project p1, and
// project p1's servers in two groups: "together" (affinity) with both
// members on h1, "apart" (anti-affinity, one per host) on h1 and h2, so
// that h3 is the only host left for a new member of "apart".
func groupsAtRiskWorld(t *testing.T) *models.World {
	t.Helper()
	w, err := models.DecodeWorldJSON([]byte(`{
	  "providers": [
	    {"uuid": "10000000-0000-4000-8000-000000000001", "name": "h1", "inventories": {"VCPU": {"total": 16, "allocation_ratio": 1}}},
	    {"uuid": "10000000-0000-4000-8000-000000000002", "name": "h2", "inventories": {"VCPU": {"total": 16, "allocation_ratio": 1}}},
	    {"uuid": "10000000-0000-4000-8000-000000000003", "name": "h3", "inventories": {"VCPU": {"total": 16, "allocation_ratio": 1}}}
	  ],
	  "aggregates": [
	    {"uuid": "20000000-0000-4000-8000-000000000001", "name": "rack1", "members": ["10000000-0000-4000-8000-000000000001"], "metadata": {"gpu": "a100"}},
	    {"uuid": "20000000-0000-4000-8000-000000000002", "name": "p1-only", "members": ["10000000-0000-4000-8000-000000000003"], "metadata": {"filter_tenant_id": "p1"}}
	  ],
	  "flavors": [
	    {"id": "f1", "name": "g1.gpu", "vcpus": 1, "extra_specs": {"aggregate_instance_extra_specs:gpu": "a100"}},
	    {"id": "f2", "name": "m1.small", "vcpus": 1, "extra_specs": {}}
	  ],
	  "servers": [
	    {"uuid": "30000000-0000-4000-8000-000000000001", "name": "a-1", "project_id": "p1", "host": "h1"},
	    {"uuid": "30000000-0000-4000-8000-000000000002", "name": "a-2", "project_id": "p1", "host": "h1"},
	    {"uuid": "30000000-0000-4000-8000-000000000003", "name": "b-1", "project_id": "p1", "host": "h1"},
	    {"uuid": "30000000-0000-4000-8000-000000000004", "name": "b-2", "project_id": "p1", "host": "h2"}
	  ],
	  "server_groups": [
	    {"uuid": "40000000-0000-4000-8000-000000000001", "name": "together", "project_id": "p1", "policy": "affinity",
	     "members": ["30000000-0000-4000-8000-000000000001", "30000000-0000-4000-8000-000000000002"]},
	    {"uuid": "40000000-0000-4000-8000-000000000002", "name": "apart", "project_id": "p1", "policy": "anti-affinity",
	     "members": ["30000000-0000-4000-8000-000000000003", "30000000-0000-4000-8000-000000000004"]}
	  ],
	  "settings": {"required_member_prefix": "reservation:", "default_forbidden_member_prefix": "reservation:",
	    "enabled_filters": ["AggregateInstanceExtraSpecsFilter", "AggregateMultiTenancyIsolation"]}
	}`), "")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A draft moves no server, yet every kind of change can break a group's
// policy by changing where its project may land: an aggregate, a flavor's
// extra specs, the settings or a provider's inventory. Each case names the
// groups it breaks and the servers it strands.
func TestGroupsBrokenByEveryChangeKind(t *testing.T) {
	live := groupsAtRiskWorld(t)
	ls := mustSnapshot(t, live)
	cases := []struct {
		name    string
		changes []Change
		groups  map[string]string // group → reason fragment
		servers []string
	}{
		{"aggregate: h1 reserved", []Change{{Op: OpAddReservation, Aggregate: "rack1", Reservation: "r1"}},
			map[string]string{"together": "its members run on host h1, which the draft makes ineligible for project p1"},
			[]string{"a-1", "a-2", "b-1"}},
		{"flavor: every flavor needs the GPU", []Change{{Op: OpSetExtraSpec, Flavor: "m1.small", Key: "aggregate_instance_extra_specs:gpu", Value: "a100"}},
			map[string]string{"apart": "no eligible host with room for another member (max_server_per_host=1)"},
			[]string{"b-2"}},
		{"settings: tenants only on their aggregates", []Change{{Op: OpSetSettings, Settings: &SettingsOverride{
			LimitTenantsToPlacementAggregate: boolp(true), PlacementAggregateRequiredForTenants: boolp(true)}}},
			map[string]string{"together": "host h1, which the draft makes ineligible"},
			[]string{"a-1", "a-2", "b-1", "b-2"}},
		{"provider: h3 loses its VCPU", []Change{{Op: OpDeleteInventory, Provider: "h3", ResourceClass: "VCPU"}},
			map[string]string{"apart": "no eligible host with room"}, nil},
		{"group: member moved into the other group", []Change{{Op: OpRemoveGroupMember, ServerGroup: "together", Server: "a-1"}, {Op: OpAddGroupMember, ServerGroup: "apart", Server: "a-1"}},
			map[string]string{"apart": "host h1 runs 2 members, more than max_server_per_host=1"}, nil},
		{"nothing that matters", []Change{{Op: OpSetMetadata, Aggregate: "rack1", Key: "colour", Value: "blue"}}, nil, nil},
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
			var names []string
			for _, s := range st.Servers {
				names = append(names, s.Name)
			}
			if strings.Join(names, ",") != strings.Join(c.servers, ",") {
				t.Errorf("stranded %v, want %v", names, c.servers)
			}
		})
	}
}
