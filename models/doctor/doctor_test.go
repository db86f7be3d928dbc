package doctor

import (
	"fmt"
	"strings"
	"testing"

	"corral/models"
	"corral/models/scheduling"
)

// baseWorld is a healthy small cloud: three hosts (h1, h2 in zone east),
// a tenant aggregate for p1, a public flavor, an anti-affinity group.
func baseWorld() *models.World {
	w := &models.World{Settings: models.DefaultSettings()}
	for i := 1; i <= 3; i++ {
		u := fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i)
		w.Providers = append(w.Providers, models.Provider{UUID: u, Name: fmt.Sprintf("h%d", i), RootUUID: u})
	}
	east := "east"
	w.Aggregates = []models.Aggregate{
		{ID: 1, UUID: "10000000-0000-0000-0000-000000000001", Name: "zone-east", AvailabilityZone: &east,
			Metadata: map[string]string{}, Members: []string{w.Providers[0].UUID, w.Providers[1].UUID}},
		{ID: 2, UUID: "10000000-0000-0000-0000-000000000002", Name: "tenant-p1",
			Metadata: map[string]string{"filter_tenant_id": "p1"}, Members: []string{w.Providers[2].UUID}},
	}
	w.Flavors = []models.Flavor{{ID: "1", Name: "m1.small", VCPUs: 1, RAMMB: 512, ExtraSpecs: map[string]string{}}}
	w.Servers = []models.Server{
		{UUID: "20000000-0000-0000-0000-000000000001", Name: "s1", ProjectID: "p1", Host: "h1"},
		{UUID: "20000000-0000-0000-0000-000000000002", Name: "s2", ProjectID: "p1", Host: "h2"},
	}
	w.ServerGroups = []models.ServerGroup{{UUID: "30000000-0000-0000-0000-000000000001", Name: "spread", ProjectID: "p1",
		Policy: models.PolicyAntiAffinity, Members: []string{w.Servers[0].UUID, w.Servers[1].UUID}}}
	return w
}

func run(t *testing.T, w *models.World, drift ...models.Disagreement) []Finding {
	t.Helper()
	s, err := scheduling.NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := Check(Input{Snapshot: s, Drift: drift})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// hasErrors reports whether a finding has error severity.
func hasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

func withCode(fs []Finding, code string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

func TestHealthyWorldHasNoFindings(t *testing.T) {
	if fs := run(t, baseWorld()); len(fs) != 0 {
		t.Fatalf("findings on a healthy world: %+v", fs)
	}
}

// trapCase makes a world with one trap; the check must find it exactly
// once, and, when wantFix, applying the fix must make it go away.
type trapCase struct {
	code     string
	severity Severity
	trap     func(w *models.World)
	wantFix  bool
	objects  []string // names the finding must involve
}

var trapCases = []trapCase{
	{code: "isolation_trait_missing", severity: SeverityWarning, wantFix: true, objects: []string{"zone-east", "h2"},
		trap: func(w *models.World) {
			w.Aggregates[0].Metadata["trait:CUSTOM_GPU"] = "required"
			w.Providers[0].Traits = []string{"CUSTOM_GPU"}
		}},
	{code: "tenant_comma_list", severity: SeverityWarning, wantFix: true, objects: []string{"tenant-p1"},
		trap: func(w *models.World) { w.Aggregates[1].Metadata["filter_tenant_id"] = "p1,p2, p3" }},
	{code: "metadata_near_limit", severity: SeverityWarning, objects: []string{"tenant-p1"},
		trap: func(w *models.World) { w.Aggregates[1].Metadata["note"] = strings.Repeat("x", 240) }},
	{code: "metadata_over_limit", severity: SeverityError, objects: []string{"m1.small"},
		trap: func(w *models.World) {
			w.Flavors[0].ExtraSpecs["aggregate_instance_extra_specs:x"] = strings.Repeat("x", 256)
		}},
	{code: "host_in_two_zones", severity: SeverityError, objects: []string{"h1", "zone-east", "zone-west"},
		trap: func(w *models.World) {
			west := "west"
			w.Aggregates = append(w.Aggregates, models.Aggregate{ID: 3, UUID: "10000000-0000-0000-0000-000000000003",
				Name: "zone-west", AvailabilityZone: &west, Metadata: map[string]string{}, Members: []string{w.Providers[0].UUID}})
		}},
	{code: "reservation_prefix_missing", severity: SeverityError, wantFix: true, objects: []string{"g1", "tenant-p1"},
		trap: func(w *models.World) {
			w.Aggregates[1].Metadata["reservation"] = "gpu"
			w.Flavors = append(w.Flavors, models.Flavor{ID: "2", Name: "g1", VCPUs: 1, ExtraSpecs: map[string]string{"reservation:gpu": "true"}})
		}},
	{code: "reservation_not_forbidden", severity: SeverityWarning, wantFix: true, objects: []string{"tenant-p1", "g1"},
		trap: func(w *models.World) {
			w.Settings.DefaultForbiddenMemberPrefix = "resv:"
			w.Aggregates[1].Metadata["reservation:gpu"] = "true"
			w.Flavors = append(w.Flavors, models.Flavor{ID: "2", Name: "g1", VCPUs: 1, ExtraSpecs: map[string]string{"reservation:gpu": "true"}})
		}},
	{code: "disabled_host_in_tenant_aggregate", severity: SeverityWarning, wantFix: true, objects: []string{"h3", "tenant-p1"},
		trap: func(w *models.World) { w.Providers[2].Traits = []string{traitStatusDisabled} }},
	// The service as synced, before Nova has set the trait.
	{code: "disabled_host_in_tenant_aggregate", severity: SeverityWarning, wantFix: true, objects: []string{"h3", "tenant-p1"},
		trap: func(w *models.World) {
			w.Providers[2].Compute = &models.ComputeHost{Status: models.ServiceDisabled, State: models.ServiceDown}
		}},
	{code: "down_host_in_tenant_aggregate", severity: SeverityWarning, wantFix: true, objects: []string{"h3", "tenant-p1"},
		trap: func(w *models.World) {
			w.Providers[2].Compute = &models.ComputeHost{State: models.ServiceDown, LastSeen: "2026-11-30T08:00:00.000000"}
		}},
	{code: "down_host_in_tenant_aggregate", severity: SeverityWarning, wantFix: true, objects: []string{"h3", "tenant-p1"},
		trap: func(w *models.World) {
			w.Providers[2].Compute = &models.ComputeHost{State: models.ServiceDown, ForcedDown: true}
		}},
	{code: "flavor_unscoped_extra_spec", severity: SeverityError, wantFix: true, objects: []string{"m1.small"},
		trap: func(w *models.World) { w.Flavors[0].ExtraSpecs["ssd"] = "true" }},
	{code: "flavor_fits_no_host", severity: SeverityError, objects: []string{"m1.small"},
		trap: func(w *models.World) { w.Flavors[0].ExtraSpecs["aggregate_instance_extra_specs:ssd"] = "true" }},
	{code: "server_group_violated", severity: SeverityError, objects: []string{"spread"},
		trap: func(w *models.World) { w.Servers[1].Host = "h1" }},
	{code: "orphaned_allocation", severity: SeverityWarning, objects: []string{"h1"},
		trap: func(w *models.World) {
			w.Consumers = []models.Consumer{
				{UUID: w.Servers[0].UUID, ProjectID: "p1", Allocations: []models.Allocation{{ConsumerUUID: w.Servers[0].UUID, ProviderUUID: w.Providers[0].UUID, ResourceClass: "VCPU", Used: 1}}},
				{UUID: "40000000-0000-0000-0000-000000000001", ProjectID: "p9", Allocations: []models.Allocation{{ConsumerUUID: "40000000-0000-0000-0000-000000000001", ProviderUUID: w.Providers[0].UUID, ResourceClass: "VCPU", Used: 1}}},
			}
		}},
}

func TestEachTrapIsFoundAndItsFixRemovesIt(t *testing.T) {
	for _, tc := range trapCases {
		t.Run(tc.code, func(t *testing.T) {
			w := baseWorld()
			tc.trap(w)
			got := withCode(run(t, w), tc.code)
			if len(got) != 1 {
				t.Fatalf("%d %s findings, want 1: %+v", len(got), tc.code, got)
			}
			f := got[0]
			if f.Severity != tc.severity || f.Why == "" || f.Detail == "" {
				t.Errorf("finding %+v: want severity %s, a why and a detail", f, tc.severity)
			}
			for _, name := range tc.objects {
				found := false
				for _, o := range f.Objects {
					found = found || o.Name == name && o.UUID != "" && o.Kind != ""
				}
				if !found {
					t.Errorf("finding does not name %s: %+v", name, f.Objects)
				}
			}
			if !tc.wantFix {
				if len(f.Fix) != 0 {
					t.Errorf("unexpected fix %+v", f.Fix)
				}
				return
			}
			if len(f.Fix) == 0 {
				t.Fatal("no fix")
			}
			fixed, err := scheduling.ApplyChanges(w, f.Fix)
			if err != nil {
				t.Fatalf("fix does not apply: %v", err)
			}
			after := run(t, fixed)
			if left := withCode(after, tc.code); len(left) != 0 {
				t.Errorf("the fix leaves %+v", left)
			}
			// A fix must not make another trap.
			for _, f := range after {
				if len(withCode(run(t, w), f.Code)) == 0 {
					t.Errorf("the fix makes %s: %s", f.Code, f.Detail)
				}
			}
		})
	}
}

func TestTenantCommaFixWritesOneProjectPerKey(t *testing.T) {
	w := baseWorld()
	w.Aggregates[1].Metadata["filter_tenant_id"] = "p1,p2"
	f := withCode(run(t, w), "tenant_comma_list")[0]
	fixed, err := scheduling.ApplyChanges(w, f.Fix)
	if err != nil {
		t.Fatal(err)
	}
	if got := scheduling.TenantTags(fixed.Aggregates[1].Metadata); strings.Join(got, " ") != "p1 p2" {
		t.Errorf("tenants after the fix: %v", got)
	}
	for k, v := range fixed.Aggregates[1].Metadata {
		if strings.Contains(v, ",") {
			t.Errorf("%s=%s still a list", k, v)
		}
	}
}

func TestUnscopedFixKeepsTheRequirement(t *testing.T) {
	w := baseWorld()
	w.Flavors[0].ExtraSpecs["ssd"] = "true"
	f := withCode(run(t, w), "flavor_unscoped_extra_spec")[0]
	fixed, err := scheduling.ApplyChanges(w, f.Fix)
	if err != nil {
		t.Fatal(err)
	}
	specs := fixed.Flavors[0].ExtraSpecs
	if _, ok := specs["ssd"]; ok || specs["aggregate_instance_extra_specs:ssd"] != "true" {
		t.Errorf("extra specs after the fix: %v", specs)
	}
}

func TestIsolationIsAnErrorWhenFilteringIsOn(t *testing.T) {
	w := baseWorld()
	w.Aggregates[0].Metadata["trait:CUSTOM_GPU"] = "required"
	w.Settings.EnableIsolatedAggregateFiltering = true
	f := withCode(run(t, w), "isolation_trait_missing")
	if len(f) != 1 || f[0].Severity != SeverityError || len(f[0].Fix) != 2 {
		t.Fatalf("got %+v", f)
	}
}

func TestReservationWithoutPoolHasNoFix(t *testing.T) {
	w := baseWorld()
	w.Flavors = append(w.Flavors, models.Flavor{ID: "2", Name: "g1", ExtraSpecs: map[string]string{"reservation:gpu": "true"}})
	f := withCode(run(t, w), "reservation_prefix_missing")
	if len(f) != 1 || len(f[0].Fix) != 0 {
		t.Fatalf("got %+v", f)
	}
	w.Aggregates[1].Metadata["reservation:gpu"] = "true"
	if f := withCode(run(t, w), "reservation_prefix_missing"); len(f) != 0 {
		t.Fatalf("a carried reservation is reported: %+v", f)
	}
}

func TestMembershipDriftIsReported(t *testing.T) {
	w := baseWorld()
	if f := withCode(run(t, w), "membership_drift"); len(f) != 0 {
		t.Fatalf("drift without any reported: %+v", f)
	}
	// h2 in Nova's zone-east only, h1 in Placement's only.
	w.Aggregates[0].NotInPlacement = []string{w.Providers[1].UUID}
	w.Aggregates[0].NotInNova = []string{w.Providers[0].UUID}
	f := withCode(run(t, w), "membership_drift")
	details := map[string]string{}
	for _, x := range f {
		details[x.Objects[1].Name] = x.Detail
	}
	if len(f) != 2 || !strings.Contains(details["h2"], "Nova's aggregate zone-east but not in Placement's") ||
		!strings.Contains(details["h1"], "Placement's aggregate zone-east but not in Nova's") {
		t.Fatalf("got %+v", f)
	}
	// The fixes, applied, leave Placement's membership equal to Nova's.
	next := w
	for _, x := range f {
		var err error
		if next, err = scheduling.ApplyChanges(next, x.Fix); err != nil {
			t.Fatal(err)
		}
	}
	if got := withCode(run(t, next), "membership_drift"); len(got) != 0 {
		t.Errorf("after the fixes: %+v", got)
	}
	a := next.Aggregates[0]
	if !a.InPlacement(w.Providers[1].UUID) || a.InPlacement(w.Providers[0].UUID) || a.InNova(w.Providers[0].UUID) {
		t.Errorf("after the fixes zone-east: members %v, not in placement %v, not in nova %v", a.Members, a.NotInPlacement, a.NotInNova)
	}
	// A host Placement has no provider for comes from the sync's report.
	d := models.Disagreement{Aggregate: "zone-east", AggregateUUID: w.Aggregates[0].UUID, Host: "h9", InNova: true}
	if f := withCode(run(t, baseWorld(), d), "membership_drift"); len(f) != 1 || !strings.Contains(f[0].Detail, "no resource provider") {
		t.Fatalf("host without a provider: %+v", f)
	}
}

func TestFindingsAreOrderedAndKeyed(t *testing.T) {
	w := baseWorld()
	w.Aggregates[1].Metadata["note"] = strings.Repeat("x", 240)
	w.Servers[1].Host = "h1"
	fs := run(t, w)
	if len(fs) != 2 || fs[0].Severity != SeverityError || fs[1].Severity != SeverityWarning {
		t.Fatalf("not loudest first: %+v", fs)
	}
	a := fs[1]
	before := a.Fingerprint()
	w.Aggregates[1].Metadata["note"] = strings.Repeat("x", 241)
	b := withCode(run(t, w), a.Code)[0]
	if b.Key() != a.Key() || b.Fingerprint() == before {
		t.Errorf("key %q→%q, fingerprint %q→%q: the key must hold and the fingerprint move", a.Key(), b.Key(), before, b.Fingerprint())
	}
	if !a.Involves(KindAggregate, w.Aggregates[1].UUID) || a.Involves(KindAggregate, w.Aggregates[0].UUID) || a.Involves(KindProvider, w.Aggregates[1].UUID) {
		t.Error("Involves")
	}
	if !hasErrors(fs) || hasErrors(fs[1:]) {
		t.Error("hasErrors")
	}
}

// Services that are up and enabled, and a dead one outside every tenant
// aggregate, are no trap; the finding says which condition it found.
func TestUnschedulableHostsOnlyInTenantAggregates(t *testing.T) {
	w := baseWorld()
	for i := range w.Providers {
		w.Providers[i].Compute = &models.ComputeHost{Status: models.ServiceEnabled, State: models.ServiceUp}
	}
	w.Providers[0].Compute = &models.ComputeHost{State: models.ServiceDown}
	if fs := append(withCode(run(t, w), "down_host_in_tenant_aggregate"), withCode(run(t, w), "disabled_host_in_tenant_aggregate")...); len(fs) != 0 {
		t.Fatalf("findings on hosts that are up or in no tenant aggregate: %+v", fs)
	}
	w.Providers[2].Compute = &models.ComputeHost{State: models.ServiceDown, LastSeen: "2026-11-30T08:00:00.000000"}
	fs := withCode(run(t, w), "down_host_in_tenant_aggregate")
	if len(fs) != 1 || fs[0].Detail != "down (last heartbeat 2026-11-30T08:00:00.000000) host h3 is in tenant aggregate(s) tenant-p1" {
		t.Fatalf("findings %+v", fs)
	}
}
