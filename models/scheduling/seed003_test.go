package scheduling

import (
	"fmt"
	"strings"
	"testing"
)

// Seed 003 (AggregateInstanceTypeFilter): every use case and table of the
// seed, each cell one row. Where the seed is ambiguous the rows follow
// reference aggregate_filters.md §3.3 and name the ambiguity (§3.4 A1..A10).

type hfTypeCell struct {
	flavor string            // label as the seed names it
	specs  map[string]string // flavor extra specs
	agg    string            // label
	md     map[string]string // aggregate metadata
	pass   bool
}

func runTypeCells(t *testing.T, cells []hfTypeCell) {
	t.Helper()
	for _, c := range cells {
		t.Run(c.flavor+"_on_"+c.agg, func(t *testing.T) {
			v := AggregateInstanceTypeFilter{}.Filter(hfHost("h", c.md), hfRequest(c.specs))
			if v.Passed != c.pass {
				t.Errorf("flavor %v on aggregate %v: passed %v, seed says %v (%s)", c.specs, c.md, v.Passed, c.pass, v.Reason)
			}
			if !v.Passed && v.Reason == "" {
				t.Error("a failing host has no reason")
			}
		})
	}
}

// hfGrid expands "flavor fi can be booted on exactly these aggregates".
func hfGrid(flavors []map[string]string, aggs []map[string]string, passes map[int][]int, fname, aname func(int) string) []hfTypeCell {
	var cells []hfTypeCell
	for fi, f := range flavors {
		ok := map[int]bool{}
		for _, a := range passes[fi] {
			ok[a] = true
		}
		for ai, a := range aggs {
			cells = append(cells, hfTypeCell{fname(fi), f, aname(ai), a, ok[ai]})
		}
	}
	return cells
}

func hfNth(prefix string) func(int) string {
	return func(i int) string { return fmt.Sprintf("%s%d", prefix, i+1) }
}

func TestSeed003DescriptionTable(t *testing.T) {
	flavors := []map[string]string{
		{"key": "~"},
		{"key": "<or> * <or> ~"},
		{"key": "*"},
		{},
	}
	aggs := []map[string]string{
		{"key": "1", "force_metadata_check": "False"},
		{},
		{"other key": "1", "force_metadata_check": "False"},
	}
	// Flavor 1 on aggregates 2 and 3; flavor 2 on all; flavor 3 on 1 only;
	// flavor 4 on all. (A2: a lone ~ fails where the key is present; A4:
	// "False" keeps the normal mode.)
	passes := map[int][]int{0: {1, 2}, 1: {0, 1, 2}, 2: {0}, 3: {0, 1, 2}}
	runTypeCells(t, hfGrid(flavors, aggs, passes, hfNth("flavor"), hfNth("aggregate")))
}

func TestSeed003UseCase1AnyValue(t *testing.T) {
	f := map[string]string{"key": "*"}
	runTypeCells(t, []hfTypeCell{
		{"key*", f, "key=1", map[string]string{"key": "1"}, true},
		{"key*", f, "key=anything", map[string]string{"key": "anything"}, true},
		{"key*", f, "key=empty", map[string]string{"key": ""}, true},
		{"key*", f, "no-key", map[string]string{"other": "1"}, false},
	})
}

func TestSeed003UseCase2Optional(t *testing.T) {
	f := map[string]string{"key": "<or> 1 <or> ~"}
	runTypeCells(t, []hfTypeCell{
		{"1-or-absent", f, "aggregate1", map[string]string{"key": "1"}, true},
		{"1-or-absent", f, "aggregate2", map[string]string{"key": "2"}, false},
		{"1-or-absent", f, "aggregate3", map[string]string{}, true},
	})
}

func TestSeed003UseCase3Absent(t *testing.T) {
	f := map[string]string{"key": "!"}
	runTypeCells(t, []hfTypeCell{
		{"absent", f, "aggregate1", map[string]string{"key": "1"}, false},
		{"absent", f, "aggregate2", map[string]string{}, true},
	})
}

func TestSeed003UseCase4ForceMetadataCheck(t *testing.T) {
	flavors := []map[string]string{{"key": "1"}, {"key": "2"}, {}}
	forced := []map[string]string{{"key": "1", "force_metadata_check": "True"}}
	runTypeCells(t, hfGrid(flavors, forced, map[int][]int{0: {0}}, hfNth("flavor"), hfNth("forced")))
	// Without force_metadata_check the flavor without extra specs passes too.
	plain := []map[string]string{{"key": "1"}}
	runTypeCells(t, hfGrid(flavors, plain, map[int][]int{0: {0}, 2: {0}}, hfNth("flavor"), hfNth("plain")))
}

func TestSeed003UseCase5SentinelsInAggregate(t *testing.T) {
	// Example 1: {key: *} forced accepts any flavor that sets key.
	flavors := []map[string]string{{"key": "1"}, {"key": "2"}, {}}
	runTypeCells(t, hfGrid(flavors, []map[string]string{{"key": "*", "force_metadata_check": "True"}},
		map[int][]int{0: {0}, 1: {0}}, hfNth("flavor"), hfNth("forced-star")))
	// Example 2: without the key "*" is a literal; flavor 4 lacks key2.
	flavors2 := []map[string]string{{"key": "1"}, {"key": "2"}, {}, {"key": "*", "key2": "2"}}
	runTypeCells(t, hfGrid(flavors2, []map[string]string{{"key": "*"}},
		map[int][]int{2: {0}}, hfNth("flavor"), hfNth("literal-star")))
	// Example 3: {key: !} forced accepts only flavors without key.
	runTypeCells(t, hfGrid(flavors, []map[string]string{{"key": "!", "force_metadata_check": "True"}},
		map[int][]int{2: {0}}, hfNth("flavor"), hfNth("forced-bang")))
}

func TestSeed003UseCase6OrInAggregate(t *testing.T) {
	// Example 1: forced, the aggregate's <or> alternatives; only flavor 4 fails.
	flavors := []map[string]string{{"key": "1"}, {"key": "2"}, {"key": "<or> 2 <or> 3"}, {}}
	runTypeCells(t, hfGrid(flavors, []map[string]string{{"key": "<or> 1 <or> 2", "force_metadata_check": "True"}},
		map[int][]int{0: {0}, 1: {0}, 2: {0}}, hfNth("flavor"), hfNth("forced-or")))
	// Example 2: not forced, the aggregate value is literal, so no flavor
	// with key passes. Flavor 4 has no extra specs and passes (A1: the seed
	// says "no flavor", but an empty flavor passes in normal mode, as in
	// use case 5 and nova).
	flavors2 := []map[string]string{{"key": "1"}, {"key": "2"}, {"key": "<or> 2 <or> 3"}, {}, {"key": "<or> 1 <or> 2"}}
	runTypeCells(t, hfGrid(flavors2, []map[string]string{{"key": "<or> 1 <or> 2"}},
		map[int][]int{3: {0}}, hfNth("flavor"), hfNth("literal-or")))
}

func TestSeed003UseCase7Namespaced(t *testing.T) {
	f := map[string]string{"hw:cpu_policy": "shared"}
	runTypeCells(t, []hfTypeCell{
		{"shared", f, "aggregate1", map[string]string{"hw:cpu_policy": "shared"}, true},
		{"shared", f, "aggregate2", map[string]string{"hw:cpu_policy": "dedicated"}, false},
		{"shared", f, "aggregate3", map[string]string{}, true},
	})
	// With force_metadata_check every aggregate key, namespaced or not, is
	// checked (A5: the seed over upstream code, which skipped them).
	forced := map[string]string{"hw:cpu_policy": "dedicated", "force_metadata_check": "True"}
	runTypeCells(t, []hfTypeCell{
		{"none", map[string]string{}, "forced", forced, false},
		{"dedicated", map[string]string{"hw:cpu_policy": "dedicated"}, "forced", forced, true},
		{"shared", map[string]string{"hw:cpu_policy": "shared"}, "forced", forced, false},
	})
}

// TestSeed003Ambiguities pins down the readings of reference §3.3/§3.4.
func TestSeed003Ambiguities(t *testing.T) {
	runTypeCells(t, []hfTypeCell{
		// A4: the mode follows the value, trimmed and case-folded.
		{"A4-empty", map[string]string{"key": "1"}, "fmc-empty", map[string]string{"key": "1", "force_metadata_check": ""}, true},
		{"A4-none", map[string]string{}, "fmc-TRUE", map[string]string{"key": "1", "force_metadata_check": " TRUE "}, false},
		{"A4-none", map[string]string{}, "fmc-yes", map[string]string{"key": "1", "force_metadata_check": "yes"}, true},
		// A6: * on an optional namespaced key needs the key.
		{"A6-star", map[string]string{"hw:x": "*"}, "no-key", map[string]string{}, false},
		{"A6-star-or-absent", map[string]string{"hw:x": "<or> * <or> ~"}, "no-key", map[string]string{}, true},
		{"A6-bang", map[string]string{"hw:x": "!"}, "has-key", map[string]string{"hw:x": "1"}, false},
		// Scoped keys are looked up without the scope and are mandatory.
		{"scoped", map[string]string{"aggregate_instance_extra_specs:key": "1"}, "key=1", map[string]string{"key": "1"}, true},
		{"scoped", map[string]string{"aggregate_instance_extra_specs:key": "1"}, "no-key", map[string]string{}, false},
		// A7: forced comma pieces are all requirements.
		{"one", map[string]string{"key": "1"}, "forced-1,2", map[string]string{"key": "1,2", "force_metadata_check": "True"}, false},
		{"both", map[string]string{"key": "<or> 1 <or> 2"}, "forced-1,2", map[string]string{"key": "1,2", "force_metadata_check": "True"}, true},
		// A8: ! mixed with anything else rejects the host.
		{"A8", map[string]string{"key": "<or> ! <or> 1"}, "no-key", map[string]string{}, false},
		{"A8", map[string]string{"key": "<or> ! <or> ~"}, "no-key", map[string]string{}, false},
		{"A8-agg", map[string]string{}, "forced-bang-or-1", map[string]string{"key": "<or> ! <or> 1", "force_metadata_check": "True"}, false},
		// A9: any whitespace separates alternatives.
		{"A9", map[string]string{"key": "<or>  1\t<or> ~"}, "key=1", map[string]string{"key": "1"}, true},
		// A10: case matters; <OR> is a literal.
		{"A10", map[string]string{"key": "<OR> 1 <OR> 2"}, "key=1", map[string]string{"key": "1"}, false},
		// nova's operators apply to flavor values in normal mode...
		{"ops", map[string]string{"ram": ">= 8"}, "ram=16", map[string]string{"ram": "16"}, true},
		{"ops", map[string]string{"ram": ">= 8"}, "ram=4", map[string]string{"ram": "4"}, false},
		{"ops-hfCrash", map[string]string{"ram": ">= 8"}, "ram=fast", map[string]string{"ram": "fast"}, false},
		// ...and to aggregate values in forced mode.
		{"ram=16", map[string]string{"ram": "16"}, "forced->=8", map[string]string{"ram": ">= 8", "force_metadata_check": "True"}, true},
		{"ram=4", map[string]string{"ram": "4"}, "forced->=8", map[string]string{"ram": ">= 8", "force_metadata_check": "True"}, false},
		// Forced mode ignores flavor keys the aggregate does not mention, and
		// finds a key written with the scope.
		{"extra-keys", map[string]string{"key": "1", "other": "x"}, "forced", map[string]string{"key": "1", "force_metadata_check": "True"}, true},
		{"scoped", map[string]string{"aggregate_instance_extra_specs:key": "1"}, "forced", map[string]string{"key": "1", "force_metadata_check": "True"}, true},
		// Forced mode with nothing but the reserved key passes everyone.
		{"any", map[string]string{"key": "1"}, "forced-empty", map[string]string{"force_metadata_check": "True"}, true},
		// A lone ~ on the aggregate side is symmetric (A2).
		{"set", map[string]string{"key": "1"}, "forced-tilde", map[string]string{"key": "~", "force_metadata_check": "True"}, false},
		{"unset", map[string]string{}, "forced-tilde", map[string]string{"key": "~", "force_metadata_check": "True"}, true},
	})
}

func TestSeed003SeveralAggregates(t *testing.T) {
	f := AggregateInstanceTypeFilter{}
	// Normal mode: values of several aggregates are alternatives.
	h := hfHost("h", map[string]string{"key": "1"}, map[string]string{"key": "2"})
	if v := f.Filter(h, hfRequest(map[string]string{"key": "2"})); !v.Passed {
		t.Errorf("normal mode, united values {1, 2} vs 2: %s", v.Reason)
	}
	// Forced mode: one forcing aggregate switches the host, and each
	// aggregate's value must be satisfied (A7).
	h = hfHost("h", map[string]string{"key": "1", "force_metadata_check": "True"}, map[string]string{"key": "2"})
	if v := f.Filter(h, hfRequest(map[string]string{"key": "2"})); v.Passed {
		t.Error("forced mode, requirements 1 and 2, flavor 2: passed")
	}
	if v := f.Filter(h, hfRequest(map[string]string{"key": "<or> 1 <or> 2"})); !v.Passed {
		t.Errorf("forced mode, requirements 1 and 2, flavor <or> 1 <or> 2: %s", v.Reason)
	}
}

func TestSeed003Reasons(t *testing.T) {
	cases := []struct {
		specs, md map[string]string
		reason    string
	}{
		{map[string]string{"key": "<or> 1 <or> ~"}, map[string]string{"key": "2"},
			"key: aggregate values {2} do not satisfy '<or> 1 <or> ~'"},
		{map[string]string{"key": "!"}, map[string]string{"key": "1"},
			"key: must be absent ('!') but aggregate values are {1}"},
		{map[string]string{"key": "~"}, map[string]string{"key": "1"},
			"key: '~' alone accepts only an absent key, but aggregate values are {1}"},
		{map[string]string{"key": "*"}, map[string]string{},
			"key: no aggregate of the host has this key (required by '*')"},
		{map[string]string{"key": "<or> ! <or> 1"}, map[string]string{},
			`key: '<or> ! <or> 1' cannot be evaluated: '!' (must be absent) cannot be combined with other alternatives in "<or> ! <or> 1"`},
		{map[string]string{}, map[string]string{"key": "1", "force_metadata_check": "True"},
			"force_metadata_check: key: the flavor lacks this key (the aggregate requires '1')"},
		{map[string]string{"key": "<or> 2 <or> 3"}, map[string]string{"key": "1", "force_metadata_check": "True"},
			"force_metadata_check: key: flavor values {2, 3} do not satisfy '1'"},
	}
	for _, c := range cases {
		v := AggregateInstanceTypeFilter{}.Filter(hfHost("h", c.md), hfRequest(c.specs))
		if v.Passed || v.Reason != c.reason {
			t.Errorf("flavor %v, aggregate %v:\n got  %v %q\n want false %q", c.specs, c.md, v.Passed, v.Reason, c.reason)
		}
	}
}

func TestParseTypeRequirement(t *testing.T) {
	cases := []struct {
		in   string
		want string // flags and values
	}{
		{"1", "values=[1]"},
		{"*", "any values=[]"},
		{" ! ", "absent values=[]"},
		{"* foo", "values=[* foo]"},
		{"<or> * <or> ~", "or any opt values=[]"},
		{"<or> 1 <or> ~", "or opt values=[1]"},
		{"<or> a b", "or values=[a b]"},
		{"<or>", "or values=[]"},
	}
	for _, c := range cases {
		r := ParseTypeRequirement(c.in)
		var flags []string
		for _, f := range []struct {
			on   bool
			name string
		}{{r.Or, "or"}, {r.Any, "any"}, {r.Opt, "opt"}, {r.Absent, "absent"}} {
			if f.on {
				flags = append(flags, f.name)
			}
		}
		got := strings.Join(append(flags, fmt.Sprintf("values=%v", r.Values)), " ")
		if got != c.want {
			t.Errorf("ParseTypeRequirement(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	if ParseTypeRequirement("<or>").Err() == nil {
		t.Error("a bare <or> has no problem")
	}
	if ParseTypeRequirement("<or> ! <or> *").Err() == nil {
		t.Error("! with * has no problem")
	}
	if err := ParseTypeRequirement("<or> * <or> ~").Err(); err != nil {
		t.Errorf("* with ~: %v", err)
	}
}
