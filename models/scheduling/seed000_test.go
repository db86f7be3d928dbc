package scheduling

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"corral/models"
)

// UUIDs of testdata/seed_world.json.
const (
	uuidAggA = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	uuidAggB = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	uuidAggC = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
)

// seedWorld loads the seed-000 topology (cn1[aggA]{numa1_1[aggC], numa1_2},
// cn2[aggB]{numa2_1, numa2_2}, ss1[aggB], ss2[aggC]) and lets a test adjust it.
func seedWorld(t testing.TB, adjust func(w *models.World)) *models.World {
	t.Helper()
	f, err := os.Open("testdata/seed_world.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := models.DecodeWorld(f)
	if err != nil {
		t.Fatal(err)
	}
	if adjust != nil {
		adjust(w)
	}
	return w
}

func seedSnapshot(t testing.TB, adjust func(w *models.World)) *Snapshot {
	t.Helper()
	s, err := NewSnapshot(seedWorld(t, adjust))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func aggByName(w *models.World, name string) *models.Aggregate {
	for i := range w.Aggregates {
		if w.Aggregates[i].Name == name {
			return &w.Aggregates[i]
		}
	}
	return nil
}

func excludedProviders(tr *Trace) string {
	var out []string
	for _, p := range tr.Providers {
		if p.Excluded {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func passingHosts(tr *Trace) string {
	var out []string
	for _, h := range tr.Hosts {
		if h.Passed {
			out = append(out, h.Name)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func mustRun(t *testing.T, s *Snapshot, spec *RequestSpec) *Trace {
	t.Helper()
	tr, err := s.Run(spec)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return tr
}

// TestSeed000Spanning runs the seed's forbidden-aggregate examples through
// the whole pipeline: the unnumbered group spans trees, the numbered group
// does not. Aggregates are named as a person types them.
func TestSeed000Spanning(t *testing.T) {
	s := seedSnapshot(t, nil)
	cases := []struct {
		name     string
		spec     RequestSpec
		excluded string // providers
		hosts    string // passing hosts
	}{
		{"!aggA", RequestSpec{Placement: PlacementSpec{MemberOf: []string{"!aggA"}}}, "cn1 numa1_1 numa1_2", "cn2"},
		{"!aggB", RequestSpec{Placement: PlacementSpec{MemberOf: []string{"!aggB"}}}, "cn2 numa2_1 numa2_2 ss1", "cn1"},
		{"!aggC", RequestSpec{Placement: PlacementSpec{MemberOf: []string{"!" + uuidAggC}}}, "numa1_1 ss2", "cn1 cn2"},
		{"!in:aggA,aggB", RequestSpec{Placement: PlacementSpec{MemberOf: []string{"!in:aggA,aggB"}}}, "cn1 cn2 numa1_1 numa1_2 numa2_1 numa2_2 ss1", ""},
		{"aggA", RequestSpec{Placement: PlacementSpec{MemberOf: []string{"aggA"}}}, "cn2 numa2_1 numa2_2 ss1 ss2", "cn1"},
		{"aggA&!aggA", RequestSpec{Placement: PlacementSpec{MemberOf: []string{"aggA", "!aggA"}}}, "cn1 cn2 numa1_1 numa1_2 numa2_1 numa2_2 ss1 ss2", ""},
		// member_of1=!aggA excludes cn1 alone; cn1's NUMA nodes still
		// satisfy the numbered group, so host cn1 stays a candidate.
		{"member_of1=!aggA", RequestSpec{Placement: PlacementSpec{Groups: map[string]GroupSpec{"1": {MemberOf: []string{"!aggA"}}}}}, "", "cn1 cn2"},
		// member_of1=aggC: only numa1_1 (and ss2, anchored to cn1) qualify.
		{"member_of1=aggC", RequestSpec{Placement: PlacementSpec{Groups: map[string]GroupSpec{"1": {MemberOf: []string{"aggC"}}}}}, "", "cn1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := mustRun(t, s, &c.spec)
			if got := excludedProviders(tr); got != c.excluded {
				t.Errorf("excluded providers %q, want %q", got, c.excluded)
			}
			if got := passingHosts(tr); got != c.hosts {
				t.Errorf("passing hosts %q, want %q", got, c.hosts)
			}
			if len(tr.Providers) != 8 || len(tr.Hosts) != 2 || tr.Summary.Providers != 8 || tr.Summary.Hosts != 2 {
				t.Errorf("trace must list every provider and host: %d providers, %d hosts", len(tr.Providers), len(tr.Hosts))
			}
			if n := len(strings.Fields(c.excluded)); tr.Summary.ProvidersExcluded != n {
				t.Errorf("summary providers_excluded %d, want %d", tr.Summary.ProvidersExcluded, n)
			}
			if (c.hosts == "") != (tr.Error != nil) {
				t.Errorf("error %v with passing hosts %q", tr.Error, c.hosts)
			}
		})
	}
}

// TestSeed000TraceShape checks the trace of FORMATS.md on !aggA: reasons
// naming the root, the grouped reason, the stage funnel, the query string.
func TestSeed000TraceShape(t *testing.T) {
	s := seedSnapshot(t, nil)
	tr := mustRun(t, s, &RequestSpec{Flavor: FlavorRef{Name: "m1.small"}, Placement: PlacementSpec{MemberOf: []string{"!aggA"}}})
	if want := "member_of=!in:" + uuidAggA + "&resources=DISK_GB:20,MEMORY_MB:2048,VCPU:1"; tr.PlacementQuery != want {
		t.Errorf("placement_query %q, want %q", tr.PlacementQuery, want)
	}
	byName := map[string]ProviderEntry{}
	for _, p := range tr.Providers {
		byName[p.Name] = p
	}
	if p := byName["numa1_1"]; !p.Excluded || p.Stage != "placement" || p.Reason != "root cn1 is in forbidden aggregate aggA" || p.Root != "cn1" || p.Via != "root" {
		t.Errorf("numa1_1 = %+v", p)
	}
	if p := byName["cn1"]; p.Reason != "in forbidden aggregate aggA" || p.Via != "self" {
		t.Errorf("cn1 = %+v", p)
	}
	// Excluded providers are listed first.
	for i, p := range tr.Providers {
		if p.Excluded != (i < 3) {
			t.Errorf("provider %d (%s) out of order", i, p.Name)
		}
	}
	want := []ReasonGroup{{Stage: "placement", Reason: "in forbidden aggregate aggA (itself or its root)", Count: 3, Examples: []string{"cn1", "numa1_1", "numa1_2"}}}
	if !reflect.DeepEqual(tr.Summary.Reasons, want) {
		t.Errorf("reasons %+v, want %+v", tr.Summary.Reasons, want)
	}
	if want := []StageCount{{Stage: "placement", Excluded: 3, HostsExcluded: 1}}; !reflect.DeepEqual(tr.Summary.Stages, want) {
		t.Errorf("stages %+v, want %+v", tr.Summary.Stages, want)
	}
	// Passing hosts first, with a weight; the failed host names its stage.
	if tr.Hosts[0].Name != "cn2" || !tr.Hosts[0].Passed || tr.Hosts[0].Weight == nil {
		t.Errorf("first host %+v", tr.Hosts[0])
	}
	if h := tr.Hosts[1]; h.Passed || h.Stage != "placement" || h.Reason != "in forbidden aggregate aggA" {
		t.Errorf("cn1 host entry %+v", h)
	}
	// Every check is present even for the failed host: placement + the
	// two default weighers (no filters are enabled in the seed world).
	if got := len(tr.Hosts[1].Checks); got != 3 {
		t.Errorf("cn1 has %d checks, want 3: %+v", got, tr.Hosts[1].Checks)
	}
}

// TestSeed000Reservations is the seed's "Developer impact" flow: a flavor
// with a reservation key requires the aggregates carrying that key; a
// flavor without one has every reservation aggregate forbidden.
func TestSeed000Reservations(t *testing.T) {
	s := seedSnapshot(t, func(w *models.World) {
		aggByName(w, "aggA").Metadata["reservation:freepool"] = "freepool" // the free pool: cn1
		aggByName(w, "aggB").Metadata["reservation:r1"] = "r1"             // reservation r1: cn2
		w.Flavors = append(w.Flavors,
			models.Flavor{ID: "f2", Name: "reserved", VCPUs: 1, ExtraSpecs: map[string]string{"reservation:r1": "true"}},
			models.Flavor{ID: "f3", Name: "ghost", VCPUs: 1, ExtraSpecs: map[string]string{"reservation:nope": "true"}})
	})
	cases := []struct {
		flavor   string
		settings *SettingsOverride
		query    string
		hosts    string
		err      string
	}{
		{"reserved", nil, "member_of=in:" + uuidAggB + "&resources=VCPU:1", "cn2", ""},
		{"m1.small", nil, "member_of=!in:" + uuidAggA + "," + uuidAggB + "&resources=DISK_GB:20,MEMORY_MB:2048,VCPU:1", "", "no valid host"},
		{"ghost", nil, "resources=VCPU:1", "", "no hosts available for reservation reservation:nope"},
		// Empty prefixes turn the filter off.
		{"m1.small", &SettingsOverride{RequiredMemberPrefix: ptr(""), DefaultForbiddenMemberPrefix: ptr("")}, "resources=DISK_GB:20,MEMORY_MB:2048,VCPU:1", "cn1 cn2", ""},
	}
	for _, c := range cases {
		tr := mustRun(t, s, &RequestSpec{Flavor: FlavorRef{Name: c.flavor}, Settings: c.settings})
		if tr.PlacementQuery != c.query {
			t.Errorf("%s: query %q, want %q", c.flavor, tr.PlacementQuery, c.query)
		}
		if got := passingHosts(tr); got != c.hosts {
			t.Errorf("%s: hosts %q, want %q", c.flavor, got, c.hosts)
		}
		if c.err == "" && tr.Error != nil || c.err != "" && (tr.Error == nil || !strings.Contains(*tr.Error, c.err)) {
			t.Errorf("%s: error %v, want %q", c.flavor, tr.Error, c.err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestMemberOfModesSideBySide is what the live query page shows.
func TestMemberOfModesSideBySide(t *testing.T) {
	s := seedSnapshot(t, nil)
	rs, err := s.MemberOfModes([]string{"!aggB"})
	if err != nil {
		t.Fatal(err)
	}
	want := []int{2, 4, 2} // direct, unnumbered, numbered
	for i, r := range rs {
		if r.CountExcluded() != want[i] {
			t.Errorf("%s excludes %d, want %d", r.Mode, r.CountExcluded(), want[i])
		}
	}
	if _, err := s.MemberOfModes([]string{"in:aggA,!aggB"}); err == nil ||
		err.Error() != "member_of: Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: !aggB" {
		t.Errorf("err = %v", err)
	}
}

func TestSnapshotLookups(t *testing.T) {
	s := seedSnapshot(t, nil)
	if p, ok := s.Provider("numa1_1"); !ok || p.UUID != "00000000-0000-4000-8000-000000000002" {
		t.Errorf("Provider(numa1_1) = %v, %v", p, ok)
	}
	if p, ok := s.Provider("00000000-0000-4000-8000-000000000004"); !ok || p.Name != "cn2" {
		t.Errorf("Provider(uuid) = %v, %v", p, ok)
	}
	var kids []string
	for _, c := range s.Children("cn2") {
		kids = append(kids, c.Name)
	}
	if !reflect.DeepEqual(kids, []string{"numa2_1", "numa2_2"}) {
		t.Errorf("Children(cn2) = %v", kids)
	}
	if a, ok := s.Aggregate("aggC"); !ok || a.UUID != uuidAggC {
		t.Errorf("Aggregate(aggC) = %v", a)
	}
	if got := s.AggregatesByPrefix("agg", 2); len(got) != 2 || got[0].Name != "aggA" || got[1].Name != "aggB" {
		t.Errorf("AggregatesByPrefix = %v", got)
	}
	if got := s.AggregatesOf("ss1"); len(got) != 1 || got[0].Name != "aggB" {
		t.Errorf("AggregatesOf(ss1) = %v", got)
	}
	if h, ok := s.Host("cn1"); !ok || len(h.Aggregates) != 1 || h.Aggregates[0].Name != "aggA" {
		t.Errorf("Host(cn1) = %+v", h)
	}
	if _, ok := s.Host("numa1_1"); ok {
		t.Error("a child provider is not a host")
	}
}
