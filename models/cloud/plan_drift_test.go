package cloud_test

import (
	"slices"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/scheduling"
)

// The Doctor's fix for a membership drift is rolled out on the side that
// lacked the member: Placement's provider aggregates for a host only
// Nova's aggregate had, and Placement again (not Nova's remove_host) to
// take out a host only Placement had.
func TestPlanMendsMembershipDrift(t *testing.T) {
	const (
		h1, h2 = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
		agg    = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	)
	live := &models.World{
		Providers: []models.Provider{{UUID: h1, Name: "h1", Traits: []string{}}, {UUID: h2, Name: "h2", Traits: []string{}}},
		Aggregates: []models.Aggregate{{ID: 7, UUID: agg, Name: "agg", Metadata: map[string]string{},
			Members: []string{h1, h2}, NotInPlacement: []string{h1}, NotInNova: []string{h2}}},
		Settings: models.DefaultSettings(),
	}
	kept := &cloud.Kept{ComputeHosts: []string{"h1", "h2"},
		Aggregates: []cloud.NovaAggregate{{ID: 7, UUID: agg, Name: "agg", Metadata: map[string]string{}, Hosts: []string{"h1"}}},
		Placement: cloud.PlacementState{Providers: map[string]*cloud.PlacementProvider{
			h1: {UUID: h1, Name: "h1", Generation: 3, RootUUID: h1},
			h2: {UUID: h2, Name: "h2", Generation: 5, RootUUID: h2, Aggregates: []string{agg}}}}}
	gen3, gen5 := int64(3), int64(5)
	for _, tc := range []struct {
		name   string
		change scheduling.Change
		path   string
		aggs   []string
	}{
		{"h1 into Placement's agg", scheduling.Change{Op: scheduling.OpSetProviderAggregates, Provider: h1, Generation: &gen3,
			PlacementFields: scheduling.PlacementFields{Aggregates: []string{agg}}}, "/resource_providers/" + h1 + "/aggregates", []string{agg}},
		{"h2 out of Placement's agg", scheduling.Change{Op: scheduling.OpSetProviderAggregates, Provider: h2, Generation: &gen5,
			PlacementFields: scheduling.PlacementFields{Aggregates: []string{}}}, "/resource_providers/" + h2 + "/aggregates", []string{}},
	} {
		p, err := cloud.PlanRollout(kept, live, []scheduling.Change{tc.change})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(p.Steps) != 1 || p.Steps[0].Service != "placement" || p.Steps[0].Path != tc.path {
			t.Fatalf("%s: steps %v, want one Placement PUT of %s", tc.name, p.Steps, tc.path)
		}
		body, _ := p.Steps[0].Body.(map[string]any)
		if got, _ := body["aggregates"].([]string); !slices.Equal(got, tc.aggs) {
			t.Errorf("%s: body %v, want aggregates %v", tc.name, p.Steps[0].Body, tc.aggs)
		}
	}
}
