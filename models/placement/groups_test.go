package placement

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"corral/models/cloudgen"
)

// explainGroups is Groups computed the slow way: Explain and Key for every
// excluded provider, groups in order of first sight.
func explainGroups(r *Result, examples int) []ExclusionGroup {
	var out []ExclusionGroup
	at := map[GroupKey]int{}
	r.ExcludedSet().Each(func(p int) {
		e, _ := r.Explain(p)
		k := r.Key(p, e)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, ExclusionGroup{Key: k, First: p, Exclusion: e})
		}
		g := &out[i]
		g.Count++
		if len(g.Examples) < examples {
			g.Examples = append(g.Examples, p)
		}
	})
	return out
}

// TestGroupsMatchExplain compares Groups with explainGroups in every mode
// on a generated cloud (trees, sharing providers, aggregates of children)
// for required, forbidden and mixed terms.
func TestGroupsMatchExplain(t *testing.T) {
	w := cloudgen.Generate(cloudgen.Small())
	ix, err := NewIndex(w.Providers, w.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	byPrefix := func(prefix string, n int) []string {
		var out []string
		for _, a := range w.Aggregates {
			if strings.HasPrefix(a.Name, prefix) && len(out) < n {
				out = append(out, a.UUID)
			}
		}
		return out
	}
	cases := map[string]Terms{
		"required":  {Required: [][]string{byPrefix("tenant-", 3)}},
		"two terms": {Required: [][]string{byPrefix("zone-", 1), byPrefix("spec-", 30)}},
		"forbidden": {Forbidden: byPrefix("spec-", 10)},
		"mixed":     {Required: [][]string{byPrefix("storage-", 4), byPrefix("", 40)}, Forbidden: byPrefix("reservation-", 3)},
		"unknown":   {Required: [][]string{{"00000000-0000-4000-8000-000000000000"}}},
		"none":      {},
	}
	groups := 0
	for name, terms := range cases {
		for _, mode := range []Mode{Direct, Unnumbered, Numbered} {
			r := ix.Evaluate(terms, mode)
			want := explainGroups(r, 3)
			got := r.Groups(3)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %s:\n got %s\nwant %s", name, mode, show(got), show(want))
			}
			groups += len(got)
		}
	}
	if groups < 20 {
		t.Errorf("only %d groups in all: the cases should exclude providers for many causes", groups)
	}
}

func show(gs []ExclusionGroup) string {
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "%+v×%d%v ", g.Key, g.Count, g.Examples)
	}
	return b.String()
}

// TestEvaluateUnnumberedRule checks Evaluate's unnumbered answer provider
// by provider against the rule it implements: a provider passes when it
// is directly in every required term, or (not being a sharing provider)
// its root is; and neither it nor its root is in a forbidden aggregate.
func TestEvaluateUnnumberedRule(t *testing.T) {
	w := cloudgen.Generate(cloudgen.Small())
	ix, err := NewIndex(w.Providers, w.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	in := func(p int, term []string) bool {
		for _, u := range term {
			if a, ok := ix.AggregateByUUID(u); ok && ix.InAggregate(p, a) {
				return true
			}
		}
		return false
	}
	inAll := func(p int, t Terms) bool {
		for _, term := range t.Required {
			if !in(p, term) {
				return false
			}
		}
		return true
	}
	for seed := range 40 {
		var terms Terms
		for k := range seed % 3 {
			var term []string
			for j := 0; j <= (seed+k)%4; j++ {
				term = append(term, w.Aggregates[(seed*7+k*13+j*5)%len(w.Aggregates)].UUID)
			}
			terms.Required = append(terms.Required, term)
		}
		for j := 0; j < seed%4; j++ {
			terms.Forbidden = append(terms.Forbidden, w.Aggregates[(seed*11+j*3)%len(w.Aggregates)].UUID)
		}
		r := ix.Evaluate(terms, Unnumbered)
		for p := 0; p < ix.Len(); p++ {
			root := ix.Root(p)
			pass := (inAll(p, terms) || root != p && !ix.IsSharing(p) && inAll(root, terms)) &&
				!in(p, terms.Forbidden) && !in(root, terms.Forbidden)
			if r.Excluded(p) == pass {
				t.Fatalf("terms %+v: provider %s excluded=%v, the rule says pass=%v", terms, ix.Name(p), r.Excluded(p), pass)
			}
		}
	}
}
