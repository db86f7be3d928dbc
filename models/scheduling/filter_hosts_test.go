package scheduling

import (
	"strings"
	"testing"

	"corral/models"
)

// hostFiltersWorld: h1 (zone east, 2 instances, an aggregate limiting it
// to 2), h2 (zone "west, north", 1 instance), h3 (no zone aggregate).
const hostFiltersWorld = `{"providers": [
  {"name": "h1", "inventories": {"VCPU": {"total": 64, "allocation_ratio": 1}}},
  {"name": "h2", "inventories": {"VCPU": {"total": 64, "allocation_ratio": 1}}},
  {"name": "h3", "inventories": {"VCPU": {"total": 64, "allocation_ratio": 1}}}],
 "aggregates": [
  {"name": "east", "availability_zone": "east", "members": ["h1"], "metadata": {"max_instances_per_host": "2"}},
  {"name": "wn", "metadata": {"availability_zone": "west, north", "max_instances_per_host": "lots"}, "members": ["h2"]}],
 "servers": [
  {"uuid": "a0000000-0000-4000-8000-000000000001", "name": "web-1", "project_id": "p", "host": "h1"},
  {"uuid": "a0000000-0000-4000-8000-000000000002", "name": "web-2", "project_id": "p", "host": "h1"},
  {"uuid": "a0000000-0000-4000-8000-000000000003", "name": "db-1", "project_id": "p", "host": "h2"}],
 "flavors": [{"name": "f", "vcpus": 1, "ram_mb": 0, "disk_gb": 0}]}`

// The host filters that read zones, instance counts and scheduler hints,
// through the request format and the whole pipeline, each with Nova's
// semantics (nova/scheduler/filters, 26.0.0).
func TestHostFiltersOfZonesInstancesAndHints(t *testing.T) {
	w, err := models.DecodeWorldJSON([]byte(hostFiltersWorld), "")
	if err != nil {
		t.Fatal(err)
	}
	run := func(filters []string, req string, settings func(*models.Settings)) map[string]string {
		t.Helper()
		w.Settings = models.DefaultSettings()
		w.Settings.EnabledFilters = filters
		if settings != nil {
			settings(&w.Settings)
		}
		s, err := NewSnapshot(w)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := DecodeRequestJSON([]byte(req), "request")
		if err != nil {
			t.Fatal(err)
		}
		tr, err := s.Run(spec)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, h := range tr.Hosts {
			out[h.Name] = "pass"
			if !h.Passed {
				out[h.Name] = h.Stage + ": " + h.Reason
			}
		}
		return out
	}
	expect := func(what string, got map[string]string, want map[string]string) {
		t.Helper()
		for h, w := range want {
			if w == "pass" && got[h] != "pass" || w != "pass" && !strings.Contains(got[h], w) {
				t.Errorf("%s: %s got %q, want %q", what, h, got[h], w)
			}
		}
	}
	const f = `"project_id": "p", "flavor": "f"`
	az := []string{models.FilterAvailabilityZone}
	expect("no zone", run(az, `{`+f+`}`, nil), map[string]string{"h1": "pass", "h2": "pass", "h3": "pass"})
	expect("zone north", run(az, `{`+f+`, "availability_zone": "north"}`, func(st *models.Settings) { st.QueryPlacementForAvailabilityZone = false }),
		map[string]string{"h1": "the host's zone aggregates say {east}", "h2": "pass", "h3": "default_availability_zone nova"})
	expect("zone nova", run(az, `{`+f+`, "availability_zone": "nova"}`, func(st *models.Settings) { st.QueryPlacementForAvailabilityZone = false }),
		map[string]string{"h1": "AvailabilityZoneFilter", "h2": "AvailabilityZoneFilter", "h3": "pass"})

	num := []string{models.FilterNumInstances}
	expect("instances under 50", run(num, `{`+f+`}`, nil), map[string]string{"h1": "pass", "h2": "pass", "h3": "pass"})
	expect("at most 2", run(num, `{`+f+`}`, func(st *models.Settings) { st.MaxInstancesPerHost = 2 }),
		map[string]string{"h1": "the host has 2 instances; max_instances_per_host is 2", "h2": "pass", "h3": "pass"})
	// The aggregate's 2 holds h1; h2's "lots" is no int: Nova keeps the default.
	agg := []string{models.FilterAggregateNumInstances}
	expect("aggregate limit", run(agg, `{`+f+`}`, nil),
		map[string]string{"h1": "the host has 2 instances; the host's aggregate max_instances_per_host is 2", "h2": "pass", "h3": "pass"})
	// A multi-create counts its own: with a limit of 3 each host takes
	// 3 − its instances, h1 one, h2 two, h3 three; a seventh fits nowhere.
	placed := func(n int) (map[string]int, bool) {
		t.Helper()
		w.Settings = models.DefaultSettings()
		w.Settings.EnabledFilters, w.Settings.MaxInstancesPerHost = num, 3
		s, err := NewSnapshot(w)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := s.Run(&RequestSpec{ProjectID: "p", Flavor: FlavorRef{Name: "f"}, NumInstances: n})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, h := range tr.Hosts {
			out[h.Name] = h.Instances
		}
		return out, tr.Error == nil
	}
	if got, ok := placed(6); !ok || got["h1"] != 1 || got["h2"] != 2 || got["h3"] != 3 {
		t.Errorf("six instances at 3 a host: placed %v (all placed %v), want h1 1, h2 2, h3 3", got, ok)
	}
	if _, ok := placed(7); ok {
		t.Error("a seventh instance was placed where every host is at max_instances_per_host")
	}

	hints := []string{models.FilterSameHost, models.FilterDifferentHost}
	expect("same_host", run(hints, `{`+f+`, "scheduler_hints": {"same_host": ["a0000000-0000-4000-8000-000000000003"]}}`, nil),
		map[string]string{"h1": "runs none of the same_host servers", "h2": "pass", "h3": "runs none"})
	expect("different_host", run(hints, `{`+f+`, "scheduler_hints": {"different_host": ["a0000000-0000-4000-8000-000000000001", "a0000000-0000-4000-8000-000000000003"]}}`, nil),
		map[string]string{"h1": "runs web-1 (different_host)", "h2": "runs db-1", "h3": "pass"})
	// A server corral does not know runs nowhere: same_host fails every host.
	expect("unknown server", run(hints, `{`+f+`, "scheduler_hints": {"same_host": "a0000000-0000-4000-8000-00000000dead"}}`, nil),
		map[string]string{"h1": "SameHostFilter", "h2": "SameHostFilter", "h3": "SameHostFilter"})
}

// Scheduler hints are bounded and checked before anything runs.
func TestSchedulerHintsDecoded(t *testing.T) {
	for _, tc := range []struct{ doc, field string }{
		{`{"scheduler_hints": {"same_host": "cn1"}}`, "request.scheduler_hints.same_host"},
		{`{"scheduler_hints": {"different_host": [1]}}`, "request.scheduler_hints.different_host"},
		{`{"scheduler_hints": {"build_near_host_ip": "10.0.0.1"}}`, "request.scheduler_hints"},
		{`{"scheduler_hints": {"same_host": [` + strings.Repeat(`"a0000000-0000-4000-8000-000000000001",`, maxHintServers) + `"a0000000-0000-4000-8000-000000000001"]}}`, "request.scheduler_hints.same_host"},
	} {
		_, err := DecodeRequestJSON([]byte(tc.doc), "request")
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%.80s: %v, want an error naming %s", tc.doc, err, tc.field)
		}
	}
	spec, err := DecodeRequestJSON([]byte(`{"scheduler_hints": {"same_host": "a0000000-0000-4000-8000-000000000001"}}`), "request")
	if err != nil || spec.SchedulerHints == nil || len(spec.SchedulerHints.SameHost) != 1 {
		t.Fatalf("a single uuid: %+v, %v", spec, err)
	}
}
