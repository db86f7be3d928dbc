package placement

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"corral/models"
)

// Aggregate UUIDs of the seed-000 topology.
const (
	aggA = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	aggB = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	aggC = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
	aggD = "dddddddd-dddd-4ddd-8ddd-dddddddddddd" // no members
	aggX = "eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee" // not in the world
)

// seedIndex builds the topology of seed 000 ("Nested resource providers"):
// cn1[aggA]{numa1_1[aggC], numa1_2}, cn2[aggB]{numa2_1, numa2_2},
// ss1[aggB], ss2[aggC] (both sharing).
func seedIndex(t testing.TB) *Index {
	t.Helper()
	str := func(s string) *string { return &s }
	sharing := []string{models.TraitSharesViaAggregate}
	provs := []models.Provider{
		{UUID: "00000000-0000-4000-8000-000000000001", Name: "cn1"},
		{UUID: "00000000-0000-4000-8000-000000000002", Name: "numa1_1", ParentUUID: str("00000000-0000-4000-8000-000000000001")},
		{UUID: "00000000-0000-4000-8000-000000000003", Name: "numa1_2", ParentUUID: str("00000000-0000-4000-8000-000000000001")},
		{UUID: "00000000-0000-4000-8000-000000000004", Name: "cn2"},
		{UUID: "00000000-0000-4000-8000-000000000005", Name: "numa2_1", ParentUUID: str("00000000-0000-4000-8000-000000000004")},
		{UUID: "00000000-0000-4000-8000-000000000006", Name: "numa2_2", ParentUUID: str("00000000-0000-4000-8000-000000000004")},
		{UUID: "00000000-0000-4000-8000-000000000007", Name: "ss1", Traits: sharing},
		{UUID: "00000000-0000-4000-8000-000000000008", Name: "ss2", Traits: sharing},
	}
	aggs := []models.Aggregate{
		{UUID: aggA, Name: "aggA", Members: []string{"00000000-0000-4000-8000-000000000001"}},
		{UUID: aggB, Name: "aggB", Members: []string{"00000000-0000-4000-8000-000000000004", "00000000-0000-4000-8000-000000000007"}},
		{UUID: aggC, Name: "aggC", Members: []string{"00000000-0000-4000-8000-000000000002", "00000000-0000-4000-8000-000000000008"}},
		{UUID: aggD, Name: "aggD"},
	}
	ix, err := NewIndex(provs, aggs)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func names(ix *Index, ps []int) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, ix.Provider(p).Name)
	}
	sort.Strings(out)
	return out
}

func excludedNames(r *Result) []string { return names(r.Index(), r.ExcludedSet().Members()) }

// parse is the test shorthand for one group's values at the latest version.
func parse(t *testing.T, key string, values ...string) Terms {
	t.Helper()
	terms, err := ParseMemberOf(key, values, Latest)
	if err != nil {
		t.Fatalf("ParseMemberOf(%q, %q): %v", key, values, err)
	}
	return terms
}

// TestSeed000Table is the table of the member_of reference §3c plus the
// seed's own lists: what each forbidden aggregate excludes in each mode.
func TestSeed000Table(t *testing.T) {
	ix := seedIndex(t)
	cases := []struct {
		value                      string
		unnumbered, numbered, list string // excluded names, space separated
	}{
		{"!" + aggA, "cn1 numa1_1 numa1_2", "cn1", "cn1"},
		{"!" + aggB, "cn2 numa2_1 numa2_2 ss1", "cn2 ss1", "cn2 ss1"},
		{"!" + aggC, "numa1_1 ss2", "numa1_1 ss2", "numa1_1 ss2"},
		{"!" + aggD, "", "", ""},
		{"!" + aggX, "", "", ""},
		{"!in:" + aggA + "," + aggB, "cn1 cn2 numa1_1 numa1_2 numa2_1 numa2_2 ss1", "cn1 cn2 ss1", "cn1 cn2 ss1"},
	}
	for _, c := range cases {
		t.Run(c.value, func(t *testing.T) {
			un := ix.Evaluate(parse(t, "member_of", c.value), Unnumbered)
			nu := ix.Evaluate(parse(t, "member_of1", c.value), Numbered)
			di := ix.Evaluate(parse(t, "member_of", c.value), Direct)
			for _, x := range []struct {
				mode string
				r    *Result
				want string
			}{{"unnumbered", un, c.unnumbered}, {"numbered", nu, c.numbered}, {"direct", di, c.list}} {
				if got := strings.Join(excludedNames(x.r), " "); got != x.want {
					t.Errorf("%s: excluded %q, want %q", x.mode, got, x.want)
				}
			}
		})
	}
}

// TestSeed000Positive covers the positive side, including the reference's
// findings: AND resolved on direct membership first, sharing providers must
// be in the aggregate themselves, and GET /resource_providers is direct.
func TestSeed000Positive(t *testing.T) {
	ix := seedIndex(t)
	cases := []struct {
		name   string
		values []string
		mode   Mode
		want   string // matching providers
	}{
		{"aggA spans cn1's tree", []string{aggA}, Unnumbered, "cn1 numa1_1 numa1_2"},
		{"aggA direct", []string{aggA}, Direct, "cn1"},
		{"aggA numbered", []string{aggA}, Numbered, "cn1"},
		{"aggC on a child does not reach its root", []string{aggC}, Unnumbered, "numa1_1 ss2"},
		{"aggB includes sharing ss1", []string{aggB}, Unnumbered, "cn2 numa2_1 numa2_2 ss1"},
		{"aggA and aggC resolve directly first", []string{aggA, aggC}, Unnumbered, ""},
		{"in:A,B", []string{"in:" + aggA + "," + aggB}, Direct, "cn1 cn2 ss1"},
		{"in:A,B and not B", []string{"in:" + aggA + "," + aggB, "!" + aggB}, Direct, "cn1"},
		{"X and not X is empty, not an error", []string{aggA, "!" + aggA}, Unnumbered, ""},
		{"only unknown uuids match nothing", []string{aggX}, Unnumbered, ""},
		{"unknown uuids inside in: are ignored", []string{"in:" + aggX + "," + aggA}, Direct, "cn1"},
		{"no terms match everything", nil, Direct, "cn1 cn2 numa1_1 numa1_2 numa2_1 numa2_2 ss1 ss2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ix.Evaluate(parse(t, "member_of", c.values...), c.mode)
			if got := strings.Join(names(ix, r.Matching()), " "); got != c.want {
				t.Errorf("matching %q, want %q", got, c.want)
			}
		})
	}
}

func TestSeed000Reasons(t *testing.T) {
	ix := seedIndex(t)
	p := func(name string) int {
		i, ok := ix.ProviderByName(name)
		if !ok {
			t.Fatalf("no provider %s", name)
		}
		return i
	}
	cases := []struct {
		values   []string
		mode     Mode
		provider string
		reason   string
		group    string
		via      Via
	}{
		{[]string{"!" + aggA}, Unnumbered, "numa1_1", "root cn1 is in forbidden aggregate aggA", "in forbidden aggregate aggA (itself or its root)", ViaRoot},
		{[]string{"!" + aggA}, Unnumbered, "cn1", "in forbidden aggregate aggA", "in forbidden aggregate aggA (itself or its root)", ViaSelf},
		{[]string{"!" + aggA}, Numbered, "cn1", "in forbidden aggregate aggA", "in forbidden aggregate aggA", ViaSelf},
		{[]string{aggB}, Unnumbered, "numa1_2", "neither it nor its root cn1 is in aggregate aggB", "not in aggregate aggB (itself or its root)", ViaRoot},
		{[]string{aggA}, Unnumbered, "ss2", "sharing provider is not itself in aggregate aggA", "sharing provider is not itself in aggregate aggA", ViaSelf},
		{[]string{"in:" + aggA + "," + aggB}, Direct, "numa1_1", "not in any of aggregates aggA, aggB", "not in any of aggregates aggA, aggB", ViaSelf},
		{[]string{aggA, aggC}, Unnumbered, "numa1_1", "meets the required terms only by combining its own aggregates with root cn1's; Placement matches AND-ed member_of terms on one provider's aggregates", "required member_of terms met only across a root and its child", ViaSelf},
		{[]string{aggX}, Direct, "cn1", "no known aggregate in required term member_of=in:" + aggX, "no known aggregate in required term member_of=in:" + aggX, ViaSelf},
	}
	for _, c := range cases {
		r := ix.Evaluate(parse(t, "member_of", c.values...), c.mode)
		i := p(c.provider)
		e, ok := r.Explain(i)
		if !ok {
			t.Errorf("%v %s: %s not excluded", c.values, c.mode, c.provider)
			continue
		}
		if got := r.ReasonFor(i, e); got != c.reason {
			t.Errorf("%v %s %s: reason %q, want %q", c.values, c.mode, c.provider, got, c.reason)
		}
		if got := r.GroupReason(i, e); got != c.group {
			t.Errorf("%v %s %s: group reason %q, want %q", c.values, c.mode, c.provider, got, c.group)
		}
		if e.Via != c.via {
			t.Errorf("%v %s %s: via %s, want %s", c.values, c.mode, c.provider, e.Via, c.via)
		}
	}
	// A passing provider has no reason.
	r := ix.Evaluate(parse(t, "member_of", "!"+aggA), Unnumbered)
	if _, ok := r.Explain(p("cn2")); ok || r.Reason(p("cn2")) != "" {
		t.Errorf("cn2 should pass !aggA")
	}
}

func TestSeed000Anchors(t *testing.T) {
	ix := seedIndex(t)
	ss2, _ := ix.ProviderByName("ss2")
	cn1, _ := ix.ProviderByName("cn1")
	if got := names(ix, ix.Anchors(ss2)); !reflect.DeepEqual(got, []string{"cn1", "ss2"}) {
		t.Errorf("anchors of ss2 = %v", got)
	}
	if got := names(ix, ix.SharingFor(cn1)); !reflect.DeepEqual(got, []string{"ss2"}) {
		t.Errorf("sharing providers for cn1 = %v", got)
	}
	// A numbered group satisfied only by ss2 (aggC) still serves cn1's tree
	// through the anchor; cn2's tree has nothing in aggC.
	r := ix.Evaluate(parse(t, "member_of1", aggC), Numbered)
	cn2, _ := ix.ProviderByName("cn2")
	if !r.TreeSatisfies(cn1) || r.TreeSatisfies(cn2) {
		t.Errorf("TreeSatisfies(cn1)=%v (want true), TreeSatisfies(cn2)=%v (want false)", r.TreeSatisfies(cn1), r.TreeSatisfies(cn2))
	}
	// Under !aggA, ss2 stays a candidate but can no longer serve cn1.
	un := ix.Evaluate(parse(t, "member_of", "!"+aggA), Unnumbered)
	if got := names(ix, un.ForbiddenAnchors(ss2)); !reflect.DeepEqual(got, []string{"cn1"}) || un.Excluded(ss2) {
		t.Errorf("ForbiddenAnchors(ss2) = %v, excluded %v", got, un.Excluded(ss2))
	}
	if got := ix.Evaluate(parse(t, "member_of", "!"+aggA), Direct).ForbiddenAnchors(ss2); got != nil {
		t.Errorf("direct mode has no anchors: %v", got)
	}
	if got := names(ix, toInts(ix.Descendants(cn1))); !reflect.DeepEqual(got, []string{"numa1_1", "numa1_2"}) {
		t.Errorf("descendants of cn1 = %v", got)
	}
	if got := names(ix, toInts(ix.Hosts())); !reflect.DeepEqual(got, []string{"cn1", "cn2"}) {
		t.Errorf("hosts = %v", got)
	}
}

func toInts(s []int32) []int {
	out := make([]int, len(s))
	for i, v := range s {
		out[i] = int(v)
	}
	return out
}

func TestNewIndexRejectsBadWorlds(t *testing.T) {
	str := func(s string) *string { return &s }
	cases := []struct {
		name  string
		provs []models.Provider
		aggs  []models.Aggregate
		want  string
	}{
		{"dangling parent", []models.Provider{{UUID: "p1", Name: "a", ParentUUID: str("nope")}}, nil, `no parent provider "nope"`},
		{"cycle", []models.Provider{{UUID: "p1", Name: "a", ParentUUID: str("p2")}, {UUID: "p2", Name: "b", ParentUUID: str("p1")}}, nil, "cycle"},
		{"duplicate", []models.Provider{{UUID: "p1", Name: "a"}, {UUID: "p1", Name: "b"}}, nil, "duplicate provider uuid"},
		{"unknown member", []models.Provider{{UUID: "p1", Name: "a"}}, []models.Aggregate{{UUID: "g", Name: "g", Members: []string{"zz"}}}, `no member provider "zz"`},
	}
	for _, c := range cases {
		_, err := NewIndex(c.provs, c.aggs)
		if err == nil || !strings.Contains(err.Error(), c.want) || models.KindOf(err) != models.Invalid {
			t.Errorf("%s: err = %v, want Invalid containing %q", c.name, err, c.want)
		}
	}
}
