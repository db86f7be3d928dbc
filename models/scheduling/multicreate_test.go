package scheduling

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
)

// emptyGroupWorld adds a group "g" without members to the seed world (hosts
// cn1 and cn2) and enables the server-group filters.
func emptyGroupWorld(policy string, rules map[string]int) func(w *models.World) {
	return func(w *models.World) {
		w.ServerGroups = []models.ServerGroup{{UUID: "7aaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", Name: "g", ProjectID: "tA",
			Policy: policy, Rules: rules}}
		w.Settings.EnabledFilters = []string{models.FilterServerGroupAffinity, models.FilterServerGroupAntiAffinity}
	}
}

type hostFate struct {
	Name      string
	Passed    bool
	Instances int
	Stage     string
}

func fates(tr *Trace) []hostFate {
	var out []hostFate
	for _, h := range tr.Hosts {
		out = append(out, hostFate{h.Name, h.Passed, h.Instances, h.Stage})
	}
	return out
}

// TestMultiCreateLikeNova schedules multi-create requests one instance at a
// time through the whole pipeline, as nova's scheduler does, and checks
// where each instance goes, every host's fate and the error.
func TestMultiCreateLikeNova(t *testing.T) {
	anti := models.FilterServerGroupAntiAffinity
	aff := models.FilterServerGroupAffinity
	cases := []struct {
		name       string
		policy     string
		rules      map[string]int
		n          int
		selections []string
		hosts      []hostFate
		err        string // substring of the trace's error; "" for none
	}{
		// Seed 002: 6 instances, max 3 per host, 2 hosts: 3 and 3.
		{"anti-affinity max 3, 6 instances", models.PolicyAntiAffinity, map[string]int{models.RuleMaxServerPerHost: 3}, 6,
			[]string{"cn1", "cn1", "cn1", "cn2", "cn2", "cn2"},
			[]hostFate{{"cn1", true, 3, ""}, {"cn2", true, 3, ""}}, ""},
		// A 7th instance finds no host: the request fails, and both hosts
		// show the anti-affinity verdict of the 7th round.
		{"anti-affinity max 3, 7 instances", models.PolicyAntiAffinity, map[string]int{models.RuleMaxServerPerHost: 3}, 7,
			[]string{"cn1", "cn1", "cn1", "cn2", "cn2", "cn2"},
			[]hostFate{{"cn1", false, 3, anti}, {"cn2", false, 3, anti}}, "instance 7 of 7"},
		// The default limit of 1: the seed's rejected example.
		{"anti-affinity default limit, 6 instances", models.PolicyAntiAffinity, nil, 6,
			[]string{"cn1", "cn2"},
			[]hostFate{{"cn1", false, 1, anti}, {"cn2", false, 1, anti}}, "instance 3 of 6"},
		{"anti-affinity default limit, 2 instances", models.PolicyAntiAffinity, nil, 2,
			[]string{"cn1", "cn2"},
			[]hostFate{{"cn1", true, 1, ""}, {"cn2", true, 1, ""}}, ""},
		// Affinity: the first instance may go anywhere, the rest follow it.
		{"affinity, 3 instances", models.PolicyAffinity, nil, 3,
			[]string{"cn1", "cn1", "cn1"},
			[]hostFate{{"cn1", true, 3, ""}, {"cn2", false, 0, aff}}, ""},
		// Soft anti-affinity spreads, soft affinity packs.
		{"soft anti-affinity, 4 instances", models.PolicySoftAntiAffinity, nil, 4,
			[]string{"cn1", "cn2", "cn1", "cn2"},
			[]hostFate{{"cn1", true, 2, ""}, {"cn2", true, 2, ""}}, ""},
		{"soft affinity, 3 instances", models.PolicySoftAffinity, nil, 3,
			[]string{"cn1", "cn1", "cn1"},
			[]hostFate{{"cn1", true, 3, ""}, {"cn2", true, 0, ""}}, ""},
		// Without a group every instance goes to the best host.
		{"no group, 3 instances", "", nil, 3,
			[]string{"cn1", "cn1", "cn1"},
			[]hostFate{{"cn1", true, 3, ""}, {"cn2", true, 0, ""}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := seedSnapshot(t, emptyGroupWorld(c.policy, c.rules))
			spec := &RequestSpec{ProjectID: "tA", NumInstances: c.n}
			if c.policy != "" {
				spec.ServerGroup = "g"
			}
			tr := mustRun(t, s, spec)
			if !reflect.DeepEqual(tr.Selections, c.selections) {
				t.Errorf("selections %v, want %v", tr.Selections, c.selections)
			}
			if got := fates(tr); !reflect.DeepEqual(got, c.hosts) {
				t.Errorf("hosts %+v, want %+v", got, c.hosts)
			}
			switch {
			case c.err == "" && tr.Error != nil:
				t.Errorf("error %q, want none", *tr.Error)
			case c.err != "" && (tr.Error == nil || !strings.Contains(*tr.Error, c.err)):
				t.Errorf("error %v, want one mentioning %q", deref2(tr.Error), c.err)
			}
			passed := 0
			for _, h := range c.hosts {
				if h.Passed {
					passed++
				}
			}
			if tr.Summary.HostsPassed != passed {
				t.Errorf("summary: %d hosts passed, want %d", tr.Summary.HostsPassed, passed)
			}
		})
	}
}

func deref2(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// TestMultiCreateChecksShowTheDecidingRound: a host excluded for a later
// instance explains itself with that round's counts, and its checks agree.
// As in nova, a round only judges the hosts the previous round kept: cn1,
// full after 3 instances, is excluded for the 4th; cn2 for the 7th.
func TestMultiCreateChecksShowTheDecidingRound(t *testing.T) {
	s := seedSnapshot(t, emptyGroupWorld(models.PolicyAntiAffinity, map[string]int{models.RuleMaxServerPerHost: 3}))
	tr := mustRun(t, s, &RequestSpec{ProjectID: "tA", ServerGroup: "g", NumInstances: 7})
	cn1 := tr.Hosts[0]
	if cn1.Name != "cn1" || !strings.HasPrefix(cn1.Reason, "instance 4 of 7: host already holds 3 member(s)") {
		t.Fatalf("cn1 %q: reason %q", cn1.Name, cn1.Reason)
	}
	var anti *Check
	for i := range cn1.Checks {
		if cn1.Checks[i].Stage == models.FilterServerGroupAntiAffinity {
			anti = &cn1.Checks[i]
		}
	}
	if anti == nil || anti.Passed == nil || *anti.Passed || !strings.Contains(anti.Reason, "holds 3 member(s)") {
		t.Errorf("cn1's anti-affinity check %+v", anti)
	}
	// The summary counts both hosts under the filter, with the round named.
	st := tr.Summary.Stages
	if len(st) != 3 || st[2].Stage != models.FilterServerGroupAntiAffinity || st[2].HostsExcluded != 2 {
		t.Errorf("stages %+v", st)
	}
	var rounds []string
	for _, g := range tr.Summary.Reasons {
		if g.Stage == models.FilterServerGroupAntiAffinity {
			rounds = append(rounds, strings.SplitN(g.Reason, ":", 2)[0]+" "+strings.Join(g.Examples, ","))
		}
	}
	if want := []string{"instance 4 of 7 cn1", "instance 7 of 7 cn2"}; !reflect.DeepEqual(rounds, want) {
		t.Errorf("anti-affinity reasons %q, want %q", rounds, want)
	}
	// DiffTraces sees the same outcomes as the listed hosts.
	single := mustRun(t, s, &RequestSpec{ProjectID: "tA", ServerGroup: "g", NumInstances: 6})
	d := DiffTraces(single, tr)
	if len(d.NewlyExcluded) != 2 || len(d.NewlyEligible) != 0 || !strings.HasPrefix(d.NewlyExcluded[1].Reason, "instance 7 of 7:") {
		t.Errorf("diff %+v", d)
	}
}

// TestMultiCreateWeightsPerRound: with soft anti-affinity the host picked
// for the last instance had the best weight in that round, and the entries
// show that round's weights.
func TestMultiCreateWeightsPerRound(t *testing.T) {
	s := seedSnapshot(t, emptyGroupWorld(models.PolicySoftAntiAffinity, nil))
	tr := mustRun(t, s, &RequestSpec{ProjectID: "tA", ServerGroup: "g", NumInstances: 3})
	// Round 3 sees cn1 with 1 member and cn2 with 1: equal weights, cn1
	// first by name, as picked.
	if want := []string{"cn1", "cn2", "cn1"}; !reflect.DeepEqual(tr.Selections, want) {
		t.Fatalf("selections %v, want %v", tr.Selections, want)
	}
	for _, h := range tr.Hosts {
		if h.Weight == nil || *h.Weight != 0 {
			t.Errorf("%s weight %v, want 0 (round 3: one member each)", h.Name, deref(h.Weight))
		}
	}
	tr = mustRun(t, s, &RequestSpec{ProjectID: "tA", ServerGroup: "g", NumInstances: 2})
	// Round 2 sees cn1 with 1 member: cn2 weighs 1, cn1 0.
	h0, h1 := tr.Hosts[0], tr.Hosts[1]
	if h0.Name != "cn1" || h1.Name != "cn2" || deref(h0.Weight) != 0.0 || deref(h1.Weight) != 1.0 {
		t.Errorf("hosts %s %v, %s %v; want cn1 0 (picked first), cn2 1", h0.Name, deref(h0.Weight), h1.Name, deref(h1.Weight))
	}
}

func TestMultiCreateBounded(t *testing.T) {
	s := seedSnapshot(t, nil)
	_, err := s.Run(&RequestSpec{NumInstances: MaxInstances + 1})
	if models.KindOf(err) != models.Invalid || !strings.Contains(err.Error(), "num_instances") {
		t.Errorf("err %v, want Invalid naming num_instances", err)
	}
	tr := mustRun(t, s, &RequestSpec{NumInstances: MaxInstances})
	if len(tr.Selections) != MaxInstances {
		t.Errorf("%d selections, want %d", len(tr.Selections), MaxInstances)
	}
}

// naiveMultiCreate is nova's loop written out plainly over the hosts that
// pass placement: every round runs every filter on the hosts the previous
// round kept, weighs them with nova's normalisation and takes the best
// (ties by name). It returns the picks and the instance (from 0) that found
// no host, or -1.
func naiveMultiCreate(t *testing.T, s *Snapshot, spec *RequestSpec, candidates []*HostState) ([]string, int) {
	t.Helper()
	settings := spec.Settings.Apply(s.World().Settings)
	var filters []HostFilter
	for _, name := range settings.EnabledFilters {
		f, ok := LookupHostFilter(name)
		if !ok {
			t.Fatalf("unknown filter %s", name)
		}
		filters = append(filters, f)
	}
	flavor, ok := s.Flavor(spec.Flavor.Name)
	if !ok {
		t.Fatalf("no flavor %s", spec.Flavor.Name)
	}
	g, err := s.ServerGroup(spec.ServerGroup, spec.ProjectID)
	if err != nil {
		t.Fatal(err)
	}
	req := &Request{ProjectID: spec.ProjectID, Flavor: flavor, Group: g, NumInstances: spec.NumInstances,
		GroupHosts: s.GroupHosts(g), Settings: settings}
	hosts := candidates
	var picks []string
	for k := 0; k < spec.NumInstances; k++ {
		var kept []*HostState
	next:
		for _, h := range hosts {
			for _, f := range filters {
				if !f.Filter(h, req).Passed {
					continue next
				}
			}
			kept = append(kept, h)
		}
		if len(kept) == 0 {
			return picks, k
		}
		totals := make([]float64, len(kept))
		for _, w := range DefaultWeighers() {
			raw := make([]float64, len(kept))
			for i, h := range kept {
				raw[i] = w.Weigh(h, req)
			}
			for i, norm := range NormalizeWeigherWeights(raw) {
				m := w.Multiplier(settings)
				if hm, ok := w.(HostWeightMultiplier); ok {
					m = hm.HostMultiplier(kept[i], settings)
				}
				if norm != 0 {
					totals[i] += m * norm
				}
			}
		}
		best := 0
		for i := range kept {
			if totals[i] > totals[best] || totals[i] == totals[best] && kept[i].Name() < kept[best].Name() {
				best = i
			}
		}
		picks = append(picks, kept[best].Name())
		req.ConsumeGroupHost(kept[best].Name())
		hosts = kept
	}
	return picks, -1
}

// TestMultiCreateMatchesNaiveLoop compares the pipeline's multi-create
// scheduling with naiveMultiCreate on a generated cloud, for groups of every
// policy (with members already placed), per-aggregate weigher multipliers
// and the flavor and group filters enabled.
func TestMultiCreateMatchesNaiveLoop(t *testing.T) {
	w := cloudgen.Generate(cloudgen.Small())
	// The naive loop re-runs single-instance requests with the group
	// members counted; it knows nothing of capacity, so the world here has
	// none (TestMultiCreateConsumesCapacity covers that).
	for i := range w.Providers {
		w.Providers[i].Inventories, w.Providers[i].Usages = nil, nil
	}
	// Per-aggregate multipliers that differ from host to host.
	for i, p := range w.Providers {
		if p.ParentUUID == nil && strings.HasPrefix(p.Name, cloudgen.HostPrefix) && i%3 == 0 {
			w.Aggregates = append(w.Aggregates, models.Aggregate{Name: "mult-" + p.Name, UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
				Members: []string{p.UUID}, Metadata: map[string]string{
					KeySoftAffinityMultiplier:     fmt.Sprint(0.5 + float64(i%5)),
					KeySoftAntiAffinityMultiplier: fmt.Sprint(4.5 - float64(i%4)),
				}})
		}
	}
	s, err := NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	// Tenant isolation would leave few hosts to choose from.
	filters := []string{models.FilterAggregateInstanceExtraSpecs, models.FilterAggregateInstanceType,
		models.FilterServerGroupAffinity, models.FilterServerGroupAntiAffinity}
	none := []string{}
	compared, failures, laterFailures := 0, 0, 0
	for gi, g := range w.ServerGroups {
		for _, n := range []int{2, 3, 5, 12, 45} {
			flavor := w.Flavors[(gi+n)%len(w.Flavors)].Name
			spec := &RequestSpec{ProjectID: g.ProjectID, Flavor: FlavorRef{Name: flavor}, ServerGroup: g.UUID, NumInstances: n,
				Settings: &SettingsOverride{EnabledFilters: &filters}}
			// The candidates: the hosts placement passes.
			base := mustRun(t, s, &RequestSpec{ProjectID: g.ProjectID, Flavor: FlavorRef{Name: flavor},
				Settings: &SettingsOverride{EnabledFilters: &none}})
			var candidates []*HostState
			for _, h := range base.Hosts {
				if h.Passed {
					hs, _ := s.Host(h.Name)
					candidates = append(candidates, hs)
				}
			}
			wantPicks, wantFail := naiveMultiCreate(t, s, spec, candidates)
			tr := mustRun(t, s, spec)
			if wantFail >= 0 {
				failures++
			}
			if !reflect.DeepEqual(tr.Selections, wantPicks) && !(len(tr.Selections) == 0 && len(wantPicks) == 0) {
				t.Errorf("group %s (%s), %d instances of %s: picks %v, want %v", g.Name, g.Policy, n, flavor, tr.Selections, wantPicks)
			}
			if failed := tr.Error != nil; failed != (wantFail >= 0) {
				t.Errorf("group %s, %d instances: error %v, want failure at %d", g.Name, n, deref2(tr.Error), wantFail)
			}
			if wantFail > 0 {
				laterFailures++
			}
			compared++
		}
	}
	if failures == 0 || failures == compared || laterFailures == 0 {
		t.Errorf("%d of %d requests failed, %d after placing some instances: the cases should include each", failures, compared, laterFailures)
	}
}
