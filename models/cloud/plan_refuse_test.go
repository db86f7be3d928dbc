package cloud_test

import (
	"errors"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/scheduling"
)

// What no API of the cloud carries is refused when the rollout is
// planned, naming the object and what to do instead — never dropped.
func TestPlanRefusesWhatNoAPICarries(t *testing.T) {
	live := &models.World{
		Providers: []models.Provider{{UUID: "11111111-1111-4111-8111-111111111111", Name: "h1", Traits: []string{}},
			{UUID: "22222222-2222-4222-8222-222222222222", Name: "h2", Traits: []string{}}},
		Flavors:      []models.Flavor{{ID: "f1", Name: "m1", VCPUs: 1, RAMMB: 512, DiskGB: 1, ExtraSpecs: map[string]string{}}},
		Servers:      []models.Server{{UUID: "33333333-3333-4333-8333-333333333333", Name: "vm1", ProjectID: "p1", Host: "h1"}},
		ServerGroups: []models.ServerGroup{{UUID: "44444444-4444-4444-8444-444444444444", Name: "g1", ProjectID: "p1", Policy: "anti-affinity", Rules: map[string]int{}, Members: []string{}}},
		Settings:     models.DefaultSettings(),
	}
	kept := &cloud.Kept{ComputeHosts: []string{"h1", "h2"}}
	vcpus := &scheduling.FlavorSize{VCPUs: 2, RAMMB: 512, DiskGB: 1}
	for _, tc := range []struct {
		change scheduling.Change
		want   string
	}{
		{scheduling.Change{Op: scheduling.OpUpdateFlavor, Flavor: "m1", Size: vcpus}, "flavor m1: size 1 vcpus 512 MB 1 GB → 2 vcpus 512 MB 1 GB: Nova's flavors are immutable — create a new flavor"},
		{scheduling.Change{Op: scheduling.OpUpdateFlavor, Flavor: "m1", Value: "m2"}, "flavor m1: name m1 → m2: Nova's flavors are immutable"},
		{scheduling.Change{Op: scheduling.OpAddGroupMember, ServerGroup: "g1", Server: "vm1"}, "server group g1: nova has no call that adds a server to a group"},
		{scheduling.Change{Op: scheduling.OpCreateServerGroup, ServerGroup: "g2", Project: "p1", Policy: "affinity", Members: []string{"vm1"}}, "server group g2: nova adds a server to a group only when the server boots"},
		{scheduling.Change{Op: scheduling.OpDeleteProvider, Provider: "h2"}, "provider h2 is compute host h2's: nova-compute keeps it"},
		{scheduling.Change{Op: scheduling.OpRenameProvider, Provider: "h1", PlacementFields: scheduling.PlacementFields{NewName: "h9"}}, "provider h1 is compute host h1's: nova-compute names and places it"},
		{scheduling.Change{Op: scheduling.OpSetAllocations, Project: "p1", User: "u1", PlacementFields: scheduling.PlacementFields{Consumer: "33333333-3333-4333-8333-333333333333"}}, "corral does not write them"},
	} {
		_, err := cloud.PlanRollout(kept, live, []scheduling.Change{tc.change})
		var me *models.Error
		if !errors.As(err, &me) || me.Kind != models.Invalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want Invalid with %q", tc.change.Op, err, tc.want)
		}
	}
	// The settings alone are kept in corral, and said so.
	hs := 2.0
	p, err := cloud.PlanRollout(kept, live, []scheduling.Change{{Op: scheduling.OpSetSettings, Settings: &scheduling.SettingsOverride{SoftAffinityWeightMultiplier: &hs}}})
	if err != nil || len(p.Steps) != 0 || len(p.NotRolledOut) != 1 {
		t.Errorf("settings: %v %+v", err, p)
	}
}

// Nova refuses a zone change on an aggregate whose hosts run servers, and
// taking an aggregate out of its zone at all: the plan refuses both
// before anything is sent. A zone change on idle hosts is planned.
func TestPlanRefusesZoneChangesNovaRefuses(t *testing.T) {
	const agg, idle = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	east := "east"
	live := &models.World{
		Providers: []models.Provider{{UUID: "11111111-1111-4111-8111-111111111111", Name: "h1", Traits: []string{}},
			{UUID: "22222222-2222-4222-8222-222222222222", Name: "h2", Traits: []string{}}},
		Aggregates: []models.Aggregate{
			{ID: 7, UUID: agg, Name: "busy", AvailabilityZone: &east, Metadata: map[string]string{"availability_zone": east}, Members: []string{"11111111-1111-4111-8111-111111111111"}},
			{ID: 8, UUID: idle, Name: "idle", AvailabilityZone: &east, Metadata: map[string]string{"availability_zone": east}, Members: []string{"22222222-2222-4222-8222-222222222222"}}},
		Servers:  []models.Server{{UUID: "33333333-3333-4333-8333-333333333333", Name: "vm1", ProjectID: "p1", Host: "h1"}},
		Settings: models.DefaultSettings(),
	}
	kept := &cloud.Kept{ComputeHosts: []string{"h1", "h2"}, Aggregates: []cloud.NovaAggregate{
		{ID: 7, UUID: agg, Name: "busy", AvailabilityZone: &east, Metadata: map[string]string{"availability_zone": east}, Hosts: []string{"h1"}},
		{ID: 8, UUID: idle, Name: "idle", AvailabilityZone: &east, Metadata: map[string]string{"availability_zone": east}, Hosts: []string{"h2"}}}}
	west, none := "west", ""
	for _, tc := range []struct {
		change scheduling.Change
		want   string
	}{
		{scheduling.Change{Op: scheduling.OpSetZone, Aggregate: "busy", AvailabilityZone: &west}, "aggregate busy: nova refuses to change the zone of an aggregate whose hosts run servers (h1 runs 1)"},
		{scheduling.Change{Op: scheduling.OpSetZone, Aggregate: "idle", AvailabilityZone: &none}, "aggregate idle: nova refuses to take an aggregate out of its zone"},
	} {
		_, err := cloud.PlanRollout(kept, live, []scheduling.Change{tc.change})
		var me *models.Error
		if !errors.As(err, &me) || me.Kind != models.Invalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want Invalid with %q", tc.change.Op, tc.change.Aggregate, err, tc.want)
		}
	}
	p, err := cloud.PlanRollout(kept, live, []scheduling.Change{{Op: scheduling.OpSetZone, Aggregate: "idle", AvailabilityZone: &west}})
	if err != nil || len(p.Steps) != 1 || p.Steps[0].Kind != "zone" {
		t.Errorf("a zone change on idle hosts: %v %+v", err, p)
	}
}
