package scheduling

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
)

// groupWorld puts members of a group "g" (policy set by the test) on the
// seed hosts: two on cn2, one on cn1.
func groupWorld(policy string, rules map[string]int) func(w *models.World) {
	return func(w *models.World) {
		w.Servers = []models.Server{
			{UUID: "51111111-1111-4111-8111-111111111111", Name: "a", ProjectID: "tA", Host: "cn2"},
			{UUID: "52222222-2222-4222-8222-222222222222", Name: "b", ProjectID: "tA", Host: "cn2"},
			{UUID: "53333333-3333-4333-8333-333333333333", Name: "c", ProjectID: "tA", Host: "cn1"},
			{UUID: "54444444-4444-4444-8444-444444444444", Name: "other", ProjectID: "tA", Host: "cn1"},
		}
		w.ServerGroups = []models.ServerGroup{{UUID: "6aaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", Name: "g", ProjectID: "tA",
			Policy: policy, Rules: rules, Members: []string{"51111111-1111-4111-8111-111111111111",
				"52222222-2222-4222-8222-222222222222", "53333333-3333-4333-8333-333333333333"}}}
		w.Settings.EnabledFilters = []string{models.FilterServerGroupAffinity, models.FilterServerGroupAntiAffinity}
	}
}

func TestWeighersOrderHosts(t *testing.T) {
	cases := []struct {
		policy     string
		multiplier *float64
		first      string
		weight     float64
	}{
		{models.PolicySoftAffinity, nil, "cn2", 1},
		{models.PolicySoftAntiAffinity, nil, "cn1", 1},
		{models.PolicySoftAffinity, ptr(2.5), "cn2", 2.5},
		{models.PolicyAffinity, nil, "", 0}, // hard affinity filters instead
	}
	for _, c := range cases {
		s := seedSnapshot(t, groupWorld(c.policy, nil))
		spec := &RequestSpec{ProjectID: "tA", ServerGroup: "g",
			Settings: &SettingsOverride{SoftAffinityWeightMultiplier: c.multiplier, SoftAntiAffinityWeightMultiplier: c.multiplier}}
		tr := mustRun(t, s, spec)
		if c.first == "" {
			continue
		}
		h := tr.Hosts[0]
		if h.Name != c.first || !h.Passed || h.Weight == nil || *h.Weight != c.weight {
			t.Errorf("%s ×%v: first host %s weight %v, want %s %v", c.policy, c.multiplier, h.Name, deref(h.Weight), c.first, c.weight)
		}
		if w := tr.Hosts[1].Weight; w == nil || *w != 0 {
			t.Errorf("%s: second host weight %v, want 0", c.policy, deref(w))
		}
	}
	// By group name or uuid, members counted per host from the servers.
	s := seedSnapshot(t, groupWorld(models.PolicyAffinity, nil))
	g, err := s.ServerGroup("6aaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.GroupHosts(g); !reflect.DeepEqual(got, map[string]int{"cn1": 1, "cn2": 2}) {
		t.Errorf("GroupHosts = %v", got)
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// TestEveryCheckEvaluated: a host that fails placement still shows the
// verdict of every filter and weigher.
func TestEveryCheckEvaluated(t *testing.T) {
	s := seedSnapshot(t, groupWorld(models.PolicyAntiAffinity, map[string]int{models.RuleMaxServerPerHost: 2}))
	tr := mustRun(t, s, &RequestSpec{ProjectID: "tA", ServerGroup: "g", Placement: PlacementSpec{MemberOf: []string{"!aggB"}}})
	if passingHosts(tr) != "cn1" {
		t.Fatalf("passing %q, want cn1", passingHosts(tr))
	}
	cn2 := tr.Hosts[1]
	if cn2.Name != "cn2" || cn2.Stage != "placement" {
		t.Fatalf("cn2 %+v", cn2)
	}
	var stages []string
	var failed []string
	for _, c := range cn2.Checks {
		stages = append(stages, c.Stage)
		if c.Passed != nil && !*c.Passed {
			failed = append(failed, c.Stage)
		}
	}
	want := []string{"placement", models.FilterServerGroupAffinity, models.FilterServerGroupAntiAffinity,
		"ServerGroupSoftAffinityWeigher", "ServerGroupSoftAntiAffinityWeigher"}
	if !reflect.DeepEqual(stages, want) {
		t.Errorf("checks %v, want %v", stages, want)
	}
	// Two members on cn2 reach max_server_per_host=2: it fails there too.
	if !reflect.DeepEqual(failed, []string{"placement", models.FilterServerGroupAntiAffinity}) {
		t.Errorf("failed checks %v", failed)
	}
	if st := tr.Summary.Stages; len(st) != 3 || st[0].HostsExcluded != 1 || st[2].Excluded != 0 {
		t.Errorf("stages %+v", st)
	}
}

func TestLimitTruncates(t *testing.T) {
	s := seedSnapshot(t, nil)
	full := mustRun(t, s, &RequestSpec{Placement: PlacementSpec{MemberOf: []string{"!aggA"}}})
	cut := mustRun(t, s, &RequestSpec{Placement: PlacementSpec{MemberOf: []string{"!aggA"}}, Limit: 2})
	if full.Truncated || !cut.Truncated {
		t.Errorf("truncated: full %v, cut %v", full.Truncated, cut.Truncated)
	}
	if len(cut.Providers) != 2 || !cut.Providers[0].Excluded || !cut.Providers[1].Excluded || len(cut.Hosts) != 2 {
		t.Errorf("cut lists: %d providers, %d hosts", len(cut.Providers), len(cut.Hosts))
	}
	if !reflect.DeepEqual(full.Summary, cut.Summary) {
		t.Errorf("summary changed with the limit:\n%+v\n%+v", full.Summary, cut.Summary)
	}
	one := mustRun(t, s, &RequestSpec{Placement: PlacementSpec{MemberOf: []string{"!aggA"}}, Limit: 1})
	if len(one.Hosts) != 1 || one.Hosts[0].Name != "cn2" || !one.Hosts[0].Passed {
		t.Errorf("limit 1 must list the passing host first: %+v", one.Hosts)
	}
}

// TestParallelRunMatchesSequential: the number of CPUs must not change the
// answer on a cloud of a few thousand hosts.
func TestParallelRunMatchesSequential(t *testing.T) {
	cfg := cloudgen.Small()
	cfg.Hosts, cfg.Aggregates, cfg.Servers, cfg.ServerGroups = 3000, 400, 3000, 100
	w := cloudgen.Generate(cfg)
	s, err := NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	spec := &RequestSpec{ProjectID: cloudgen.ProjectPrefix + "3", Flavor: FlavorRef{Name: cloudgen.FlavorSSD},
		ServerGroup: "group-0", Settings: &SettingsOverride{EnabledFilters: &[]string{
			models.FilterAggregateInstanceExtraSpecs, models.FilterAggregateMultiTenancy, models.FilterServerGroupAntiAffinity}}}
	par := mustRun(t, s, spec)
	prev := runtime.GOMAXPROCS(1)
	seq := mustRun(t, s, spec)
	runtime.GOMAXPROCS(prev)
	a, _ := json.Marshal(par)
	b, _ := json.Marshal(seq)
	if string(a) != string(b) {
		t.Error("parallel and sequential runs differ")
	}
	if par.Summary.HostsPassed == 0 || par.Summary.HostsPassed == cfg.Hosts {
		t.Errorf("the request should pass some hosts and fail others: %d of %d", par.Summary.HostsPassed, cfg.Hosts)
	}
}

// TestNumberedGroupReasons: a host failed by a numbered group is explained
// and counted once in the summary (no provider is excluded for it).
func TestNumberedGroupReasons(t *testing.T) {
	s := seedSnapshot(t, nil)
	tr := mustRun(t, s, &RequestSpec{Placement: PlacementSpec{Groups: map[string]GroupSpec{"1": {MemberOf: []string{"aggC"}}}}})
	if tr.PlacementQuery != "member_of1=in:"+uuidAggC {
		t.Errorf("query %q", tr.PlacementQuery)
	}
	var cn2 *HostEntry
	for i := range tr.Hosts {
		if tr.Hosts[i].Name == "cn2" {
			cn2 = &tr.Hosts[i]
		}
	}
	if cn2 == nil || cn2.Passed || cn2.Stage != "placement" || !strings.Contains(cn2.Reason, "member_of1 (numbered groups do not span trees)") {
		t.Fatalf("cn2 = %+v", cn2)
	}
	want := []ReasonGroup{{Stage: "placement", Reason: "no provider of the tree satisfies member_of1", Count: 1, Examples: []string{"cn2"}}}
	if !reflect.DeepEqual(tr.Summary.Reasons, want) || tr.Summary.ProvidersExcluded != 0 {
		t.Errorf("reasons %+v, providers excluded %d", tr.Summary.Reasons, tr.Summary.ProvidersExcluded)
	}
}

// TestConcurrentRuns: one snapshot serves concurrent requests (run with
// -race to check the sharing).
func TestConcurrentRuns(t *testing.T) {
	w := cloudgen.Generate(cloudgen.Small())
	s, err := NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	spec := &RequestSpec{ProjectID: cloudgen.ProjectPrefix + "1", Flavor: FlavorRef{Name: cloudgen.FlavorReserved},
		Placement: PlacementSpec{Groups: map[string]GroupSpec{"1": {MemberOf: []string{"!" + cloudgen.FreePool}}}}}
	want, _ := json.Marshal(mustRun(t, s, spec))
	errs := make(chan string, 8)
	for range 8 {
		go func() {
			tr, err := s.Run(spec)
			if err != nil {
				errs <- err.Error()
				return
			}
			got, _ := json.Marshal(tr)
			if string(got) != string(want) {
				errs <- "concurrent run differs"
				return
			}
			errs <- ""
		}()
	}
	for range 8 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

// TestConcurrentRunsShareViews: concurrent first requests for different
// flavors build the snapshot's cached host views at the same time (run with
// -race) and get the answers of a snapshot used one request at a time.
func TestConcurrentRunsShareViews(t *testing.T) {
	w := cloudgen.Generate(cloudgen.Small())
	all := HostFilterNames()
	var specs []*RequestSpec
	for _, f := range w.Flavors {
		specs = append(specs, &RequestSpec{ProjectID: cloudgen.ProjectPrefix + "2", Flavor: FlavorRef{Name: f.Name},
			ServerGroup: w.ServerGroups[len(specs)%len(w.ServerGroups)].UUID, NumInstances: 1 + len(specs)%3,
			Settings: &SettingsOverride{EnabledFilters: &all}})
	}
	calm, err := NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, len(specs))
	for i, spec := range specs {
		j, _ := json.Marshal(mustRun(t, calm, spec))
		want[i] = string(j)
	}
	busy, err := NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan string, len(specs))
	for i, spec := range specs {
		go func() {
			tr, err := busy.Run(spec)
			if err != nil {
				errs <- err.Error()
				return
			}
			got, _ := json.Marshal(tr)
			if string(got) != want[i] {
				errs <- fmt.Sprintf("flavor %s: concurrent run differs", spec.Flavor.Name)
				return
			}
			errs <- ""
		}()
	}
	for range specs {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

// The summary counts alike exclusions once: two hosts refused to the same
// project for different tenant sets are one reason, while each host's own
// reason still names its tenants.
func TestSummaryGroupsTenantRefusals(t *testing.T) {
	s := seedSnapshot(t, func(w *models.World) {
		w.Settings.EnabledFilters = []string{models.FilterAggregateMultiTenancy}
		aggByName(w, "aggA").Metadata = map[string]string{"filter_tenant_id": "tA"}
		aggByName(w, "aggB").Metadata = map[string]string{"filter_tenant_id": "tB", "filter_tenant_id2": "tC"}
	})
	tr := mustRun(t, s, &RequestSpec{ProjectID: "tZ"})
	if passingHosts(tr) != "" {
		t.Fatalf("passing %q, want none", passingHosts(tr))
	}
	reasons := map[string]string{}
	for _, h := range tr.Hosts {
		reasons[h.Name] = h.Reason
	}
	if !strings.Contains(reasons["cn1"], "{tA}") || !strings.Contains(reasons["cn2"], "{tB, tC}") {
		t.Errorf("host reasons lost their tenants: %q", reasons)
	}
	var groups []ReasonGroup
	for _, g := range tr.Summary.Reasons {
		if g.Stage == models.FilterAggregateMultiTenancy {
			groups = append(groups, g)
		}
	}
	want := `project "tZ" is not among the host's tenants (filter_tenant_id keys)`
	if len(groups) != 1 || groups[0].Reason != want || groups[0].Count != 2 {
		t.Fatalf("tenant reasons in the summary = %+v, want one %q counting 2", groups, want)
	}
}

// A request without a project is told so, not that project "" is refused.
func TestTenantRefusalWithoutProject(t *testing.T) {
	s := seedSnapshot(t, func(w *models.World) {
		w.Settings.EnabledFilters = []string{models.FilterAggregateMultiTenancy}
		aggByName(w, "aggA").Metadata = map[string]string{"filter_tenant_id": "tA"}
	})
	tr := mustRun(t, s, &RequestSpec{})
	for _, h := range tr.Hosts {
		if h.Name == "cn1" {
			want := "the request names no project, and the host admits only the tenants {tA} (filter_tenant_id keys)"
			if h.Passed || h.Reason != want {
				t.Errorf("cn1: passed %v, reason %q; want %q", h.Passed, h.Reason, want)
			}
			return
		}
	}
	t.Fatal("no cn1 in the trace")
}
