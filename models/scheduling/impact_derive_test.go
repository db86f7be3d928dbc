package scheduling

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
)

// A draft's impact index derives from the live one (host order, capacity,
// and every part of a host no changed aggregate holds carry over). Each
// kind of change must give the same matrix and the same strandings as
// indexes built whole, and the matrix must agree with running every pair.
func TestDerivedImpactIndexAgreesWithWholeBuilds(t *testing.T) {
	live := cloudgen.Generate(cloudgen.Small())
	ls := mustSnapshot(t, live)
	var zoneAgg, plainAgg, tenantAgg string
	for _, a := range live.Aggregates {
		switch {
		case zoneAgg == "" && a.AvailabilityZone != nil:
			zoneAgg = a.Name
		case tenantAgg == "" && len(TenantTags(a.Metadata)) > 0:
			tenantAgg = a.Name
		case plainAgg == "" && strings.HasPrefix(a.Name, "storage-"):
			plainAgg = a.Name
		}
	}
	if zoneAgg == "" || plainAgg == "" || tenantAgg == "" {
		t.Fatalf("the small cloud lacks a zone (%q), plain (%q) or tenant (%q) aggregate", zoneAgg, plainAgg, tenantAgg)
	}
	host := ls.hosts[len(ls.hosts)/2].Provider.Name
	var projects []string
	for i := range 6 {
		projects = append(projects, cloudgen.ProjectPrefix+fmt.Sprint(i))
	}
	projects = append(projects, AnyOtherProject)
	var flavors []string
	for _, f := range live.Flavors {
		flavors = append(flavors, f.Name)
	}
	cases := map[string][]Change{
		"reservation on a zone":    {{Op: OpAddReservation, Aggregate: zoneAgg, Reservation: "drain"}},
		"extra-spec metadata gone": {{Op: OpUnsetMetadata, Aggregate: "spec-17", Key: "gpu"}},
		"tenant added":             {{Op: OpAddTenant, Aggregate: tenantAgg, Project: projects[4]}},
		"member added":             {{Op: OpAddMember, Aggregate: "reservation-resv-0", Provider: host}},
		"member removed":           {{Op: OpRemoveMember, Aggregate: "reservation-resv-0", Provider: memberOf(t, live, "reservation-resv-0")}},
		"zone renamed":             {{Op: OpSetZone, Aggregate: zoneAgg, AvailabilityZone: strp("elsewhere")}},
		"aggregate deleted":        {{Op: OpDeleteAggregate, Aggregate: "reservation-resv-0"}},
		"aggregate created":        {{Op: OpCreateAggregate, Aggregate: "new", Metadata: map[string]string{"filter_tenant_id": projects[1]}}, {Op: OpAddMember, Aggregate: "new", Provider: host}},
		"flavor extra spec":        {{Op: OpSetExtraSpec, Flavor: cloudgen.FlavorSmall, Key: "aggregate_instance_extra_specs:network", Value: "fabric-2"}},
		"flavor resources":         {{Op: OpSetExtraSpec, Flavor: cloudgen.FlavorSmall, Key: "resources:VCPU", Value: "200"}},
		"flavor and aggregate": {{Op: OpSetExtraSpec, Flavor: cloudgen.FlavorSSD, Key: "aggregate_instance_extra_specs:ssd", Value: "maybe"},
			{Op: OpSetMetadata, Aggregate: plainAgg, Key: "ssd", Value: "maybe"}},
		"nothing that matters":   {{Op: OpSetMetadata, Aggregate: plainAgg, Key: "colour", Value: "blue"}},
		"settings (built whole)": {{Op: OpSetSettings, Settings: &SettingsOverride{PlacementAggregateRequiredForTenants: boolp(true), LimitTenantsToPlacementAggregate: boolp(true)}}},
	}
	for name, changes := range cases {
		t.Run(name, func(t *testing.T) {
			dw, err := ApplyChanges(live, changes)
			if err != nil {
				t.Fatal(err)
			}
			ds := mustSnapshot(t, dw)
			got, err := ComputeImpact(ls, ds, projects, flavors)
			if err != nil {
				t.Fatal(err)
			}
			dx, _ := ds.impact.x, ds.impact.err
			if derived := dx != nil && dx.base != nil; derived == strings.Contains(name, "built whole") {
				t.Errorf("index derived: %t", derived)
			}
			// The same worlds with copies of the providers: nothing derives.
			lw2, dw2 := *live, *dw
			lw2.Providers, dw2.Providers = slices.Clone(live.Providers), slices.Clone(dw.Providers)
			ls2, ds2 := mustSnapshot(t, &lw2), mustSnapshot(t, &dw2)
			whole, err := ComputeImpact(ls2, ds2, projects, flavors)
			if err != nil {
				t.Fatal(err)
			}
			if ds2.impact.x.base != nil {
				t.Fatal("an index of copied providers derived")
			}
			runs, err := ComputeImpactWith(ls2, ds2, ImpactOptions{Projects: projects, Flavors: flavors, WholeRuns: true})
			if err != nil {
				t.Fatal(err)
			}
			changedCells := 0
			for i := range got.Cells {
				for j, c := range got.Cells[i] {
					if w, r := whole.Cells[i][j], runs.Cells[i][j]; !reflect.DeepEqual(c, w) || !reflect.DeepEqual(c, r) {
						t.Errorf("%s × %s: derived %+v, built whole %+v, whole runs %+v", c.Project, c.Flavor, c, w, r)
					}
					if c.LostCount+c.GainedCount > 0 {
						changedCells++
					}
				}
			}
			st, err := Strandings(ls, ds)
			if err != nil {
				t.Fatal(err)
			}
			st2, err := Strandings(ls2, ds2)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(st, st2) {
				t.Errorf("strandings differ:\nderived %+v\nwhole   %+v", st, st2)
			}
			if changedCells+len(st.Servers) == 0 && name != "nothing that matters" {
				t.Errorf("no cell changed and no server stranded; the case tests nothing")
			}
		})
	}
}

func memberOf(t *testing.T, w *models.World, agg string) string {
	t.Helper()
	for _, a := range w.Aggregates {
		if a.Name == agg && len(a.Members) > 0 {
			for _, p := range w.Providers {
				if p.UUID == a.Members[0] {
					return p.Name
				}
			}
		}
	}
	t.Fatalf("aggregate %s has no member", agg)
	return ""
}
