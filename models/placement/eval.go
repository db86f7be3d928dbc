package placement

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Mode is how a member_of request group is evaluated.
type Mode uint8

const (
	// Direct is GET /resource_providers: a provider is judged by its own
	// aggregates only.
	Direct Mode = iota
	// Unnumbered is the unnumbered group of GET /allocation_candidates,
	// which scheduling uses: an aggregate on a root spans its whole tree,
	// AND-ed terms are resolved on direct membership first, and a sharing
	// provider must itself be in the required aggregates.
	Unnumbered
	// Numbered is a member_of<N> granular group: direct membership only.
	Numbered
)

// Modes lists the three modes in the order the console shows them.
var Modes = []Mode{Direct, Unnumbered, Numbered}

func (m Mode) String() string {
	switch m {
	case Direct:
		return "direct"
	case Unnumbered:
		return "unnumbered"
	case Numbered:
		return "numbered"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// Via says whose membership excluded a provider.
type Via uint8

const (
	ViaSelf Via = iota // the provider's own aggregates
	ViaRoot            // its root's aggregates (unnumbered mode only)
)

func (v Via) String() string {
	if v == ViaRoot {
		return "root"
	}
	return "self"
}

// Exclusion explains why one provider was excluded.
type Exclusion struct {
	// Forbidden is true when a forbidden aggregate excluded the provider;
	// otherwise a required term was not met.
	Forbidden bool
	// Term is the index into Terms.Required of the first term not met, or -1.
	Term int
	// Aggregate is the index of the forbidden aggregate, or -1.
	Aggregate int
	Via       Via
	// Root is the provider's root (meaningful when Via is ViaRoot).
	Root int
	// Split is set when every required term is met by the provider or its
	// root, but not all of them by the same provider: Placement resolves
	// AND-ed terms on direct membership before spanning the tree.
	Split bool
}

// Result is the outcome of evaluating one group's terms over every provider.
type Result struct {
	ix    *Index
	Mode  Mode
	Terms Terms

	req      [][]int32 // known aggregates of each required term
	forbAggs []int32   // known forbidden aggregates
	isForb   Bitset    // over aggregates
	direct   []Bitset  // providers directly in each required term
	all      Bitset    // providers directly in every term; nil if no terms
	bad      Bitset    // providers directly in a forbidden aggregate
	excluded Bitset

	anchorOnce sync.Once
	anchored   Bitset // roots served by a passing sharing provider (lazy)

	// termTexts names each required term's aggregates (lazy): every
	// listed provider's reason repeats them.
	termOnce  sync.Once
	termTexts []string
}

// Evaluate judges every provider against t in the given mode.
// Unknown aggregate UUIDs are not an error: an unknown forbidden UUID
// excludes nothing, and a required term naming only unknown UUIDs matches
// nothing.
func (ix *Index) Evaluate(t Terms, mode Mode) *Result {
	n := len(ix.providers)
	r := &Result{ix: ix, Mode: mode, Terms: t, isForb: NewBitset(len(ix.aggs))}
	for _, term := range t.Required {
		var known []int32
		for _, u := range term {
			if a, ok := ix.aggByID[u]; ok {
				known = append(known, a)
			}
		}
		r.req = append(r.req, known)
		d := ix.union(known)
		r.direct = append(r.direct, d)
		if r.all == nil {
			r.all = d.Clone()
		} else {
			r.all.And(d)
		}
	}
	for _, u := range t.Forbidden {
		if a, ok := ix.aggByID[u]; ok && !r.isForb.Has(int(a)) {
			r.isForb.Set(int(a))
			r.forbAggs = append(r.forbAggs, a)
		}
	}
	r.bad = ix.union(r.forbAggs)

	pass := NewBitset(n)
	if r.all != nil {
		copy(pass, r.all)
	} else {
		pass.Fill(n)
	}
	if mode == Unnumbered && n > 0 {
		// A provider also passes the positive side through its root (not a
		// sharing provider: it must itself be in the aggregates), and fails
		// the negative side through its root. Only non-roots can differ from
		// the direct answer, so walk those.
		// Only a root in every required term or in a forbidden aggregate
		// changes its children's answer (without required terms every
		// provider passes them already): visit those roots only, each
		// once, in any order, since trees do not overlap.
		span := func(root int) {
			t := ix.treePos[root]
			if t < 0 {
				return
			}
			rootOK := r.all == nil || r.all.Has(root)
			rootBad := r.bad.Has(root)
			for _, c := range ix.treeKids[t] {
				ok := pass.Has(int(c)) || (rootOK && !ix.sharing.Has(int(c)))
				if ok && !rootBad {
					pass.Set(int(c))
				} else {
					pass.Clear(int(c))
				}
			}
		}
		if len(ix.trees) > 0 {
			r.bad.Each(span)
			if r.all != nil {
				for wi, w := range r.all {
					for w &^= r.bad[wi]; w != 0; w &= w - 1 {
						span(wi<<6 + bits.TrailingZeros64(w))
					}
				}
			}
		}
	}
	pass.AndNot(r.bad)
	// The excluded set is the complement, made in place.
	for i := range pass {
		pass[i] = ^pass[i]
	}
	if rem := n & 63; rem != 0 && len(pass) > 0 {
		pass[len(pass)-1] &= 1<<uint(rem) - 1
	}
	r.excluded = pass
	return r
}

// EvaluateAll evaluates t in the three modes, for the side-by-side view.
func (ix *Index) EvaluateAll(t Terms) [3]*Result {
	return [3]*Result{ix.Evaluate(t, Direct), ix.Evaluate(t, Unnumbered), ix.Evaluate(t, Numbered)}
}

// Index returns the index the result was computed on.
func (r *Result) Index() *Index { return r.ix }

// Excluded reports whether provider p is excluded.
func (r *Result) Excluded(p int) bool { return r.excluded.Has(p) }

// ExcludedSet is the set of excluded providers. Do not modify.
func (r *Result) ExcludedSet() Bitset { return r.excluded }

// CountExcluded is how many providers are excluded.
func (r *Result) CountExcluded() int { return r.excluded.Count() }

// Matching returns the providers that pass, in provider order: the answer
// of GET /resource_providers?member_of=… in Direct mode.
func (r *Result) Matching() []int {
	pass := NewBitset(len(r.ix.providers))
	pass.Fill(len(r.ix.providers))
	pass.AndNot(r.excluded)
	return pass.Members()
}

// spans reports whether root membership counts for provider p.
func (r *Result) spans(p int) bool {
	return r.Mode == Unnumbered && r.ix.root[p] != int32(p)
}

// Explain says why p is excluded; ok is false when p passes. Forbidden
// aggregates are reported before unmet required terms, the provider's own
// membership before its root's.
func (r *Result) Explain(p int) (e Exclusion, ok bool) {
	if !r.excluded.Has(p) {
		return Exclusion{}, false
	}
	e = Exclusion{Term: -1, Aggregate: -1, Root: int(r.ix.root[p])}
	if a := r.firstForbidden(p); a >= 0 {
		e.Forbidden, e.Aggregate = true, a
		return e, true
	}
	if r.spans(p) {
		if a := r.firstForbidden(int(r.ix.root[p])); a >= 0 {
			e.Forbidden, e.Aggregate, e.Via = true, a, ViaRoot
			return e, true
		}
	}
	sharing := r.ix.sharing.Has(p)
	root := int(r.ix.root[p])
	for i, d := range r.direct {
		if d.Has(p) {
			continue
		}
		if r.spans(p) && !sharing {
			if d.Has(root) {
				continue
			}
			e.Via = ViaRoot
		}
		e.Term = i
		return e, true
	}
	// Every term is met by p or its root, but not by one provider alone.
	e.Split = true
	for i, d := range r.direct {
		if !d.Has(p) {
			e.Term = i
			break
		}
	}
	return e, true
}

func (r *Result) firstForbidden(p int) int {
	if len(r.forbAggs) == 0 {
		return -1
	}
	for _, a := range r.ix.AggregatesOf(p) {
		if r.isForb.Has(int(a)) {
			return int(a)
		}
	}
	return -1
}

// termText names a required term's aggregates for a person.
func (r *Result) termText(i int) string {
	r.termOnce.Do(func() {
		r.termTexts = make([]string, len(r.Terms.Required))
		for t := range r.termTexts {
			r.termTexts[t] = r.renderTerm(t)
		}
	})
	return r.termTexts[i]
}

func (r *Result) renderTerm(i int) string {
	term := r.Terms.Required[i]
	names := make([]string, 0, len(term))
	for _, u := range term {
		if a, ok := r.ix.aggByID[u]; ok {
			names = append(names, r.ix.aggs[a].Name)
		} else {
			names = append(names, u+" (unknown)")
		}
	}
	if len(names) == 1 {
		return "aggregate " + names[0]
	}
	return "any of aggregates " + strings.Join(names, ", ")
}

// Reason is a sentence for a person saying why p is excluded ("" if it
// passes), naming the provider's root where that is what excluded it.
func (r *Result) Reason(p int) string {
	e, ok := r.Explain(p)
	if !ok {
		return ""
	}
	return r.ReasonFor(p, e)
}

// ReasonFor renders the reason for provider p from its Exclusion.
func (r *Result) ReasonFor(p int, e Exclusion) string {
	ix := r.ix
	switch {
	case e.Forbidden && e.Via == ViaRoot:
		return fmt.Sprintf("root %s is in forbidden aggregate %s", ix.providers[e.Root].Name, ix.aggs[e.Aggregate].Name)
	case e.Forbidden:
		return "in forbidden aggregate " + ix.aggs[e.Aggregate].Name
	case e.Split:
		return fmt.Sprintf("meets the required terms only by combining its own aggregates with root %s's; Placement matches AND-ed member_of terms on one provider's aggregates", ix.providers[e.Root].Name)
	case len(r.req[e.Term]) == 0:
		return fmt.Sprintf("no known aggregate in required term member_of=in:%s", strings.Join(r.Terms.Required[e.Term], ","))
	case e.Via == ViaRoot:
		return fmt.Sprintf("neither it nor its root %s is in %s", ix.providers[e.Root].Name, r.termText(e.Term))
	case ix.sharing.Has(p) && r.Mode == Unnumbered:
		return "sharing provider is not itself in " + r.termText(e.Term)
	default:
		return "not in " + r.termText(e.Term)
	}
}

// GroupReason is the reason with the provider's own name (and its root's)
// taken out, so that exclusions can be counted by cause.
func (r *Result) GroupReason(p int, e Exclusion) string {
	ix := r.ix
	span := ""
	if r.Mode == Unnumbered {
		span = " (itself or its root)"
	}
	switch {
	case e.Forbidden:
		return ix.forbiddenReason(e.Aggregate, r.Mode == Unnumbered)
	case e.Split:
		return "required member_of terms met only across a root and its child"
	case len(r.req[e.Term]) == 0:
		return fmt.Sprintf("no known aggregate in required term member_of=in:%s", strings.Join(r.Terms.Required[e.Term], ","))
	case ix.sharing.Has(p) && r.Mode == Unnumbered:
		return "sharing provider is not itself in " + r.termText(e.Term)
	default:
		return "not in " + r.termText(e.Term) + span
	}
}

// GroupKey identifies the GroupReason of an exclusion without building the
// string, so that tens of thousands of exclusions can be counted cheaply.
type GroupKey struct {
	Forbidden bool
	Split     bool
	Sharing   bool
	Term      int
	Aggregate int
}

// Key returns the GroupKey of provider p's exclusion e.
func (r *Result) Key(p int, e Exclusion) GroupKey {
	k := GroupKey{Forbidden: e.Forbidden, Split: e.Split, Term: e.Term, Aggregate: e.Aggregate}
	if e.Forbidden || e.Split {
		k.Term = -1
	}
	if e.Split {
		k.Aggregate = -1
	}
	k.Sharing = !e.Forbidden && !e.Split && r.ix.sharing.Has(p) && r.Mode == Unnumbered
	return k
}

// TreeSatisfies reports whether root's tree can satisfy this group: some
// provider of the tree passes, or a passing sharing provider anchors to it.
// It answers a numbered group, which any one provider of the candidate may
// satisfy. Safe for concurrent use.
func (r *Result) TreeSatisfies(root int) bool {
	if !r.excluded.Has(root) {
		return true
	}
	for _, c := range r.ix.kids(int32(root)) {
		if !r.excluded.Has(int(c)) {
			return true
		}
	}
	r.anchorOnce.Do(func() {
		r.anchored = NewBitset(len(r.ix.providers))
		r.ix.sharing.Each(func(s int) {
			if r.excluded.Has(s) {
				return
			}
			for _, a := range r.ix.Anchors(s) {
				r.anchored.Set(a)
			}
		})
	})
	return r.anchored.Has(root)
}

// ForbiddenAnchors lists, for a sharing provider in Unnumbered mode, the
// anchor roots it can no longer serve because they are in a forbidden
// aggregate: Placement drops the (sharing provider, anchor) pairing while
// the sharing provider itself stays a candidate for its other anchors.
// Other modes and other providers get nil.
func (r *Result) ForbiddenAnchors(p int) []int {
	if r.Mode != Unnumbered || !r.ix.sharing.Has(p) || len(r.forbAggs) == 0 {
		return nil
	}
	var out []int
	for _, a := range r.ix.Anchors(p) {
		if a != p && r.bad.Has(a) {
			out = append(out, a)
		}
	}
	return out
}

// ExclusionGroup counts the excluded providers whose exclusions share a
// GroupKey (and so a GroupReason).
type ExclusionGroup struct {
	Key   GroupKey
	Count int
	// Examples are the group's first providers, in provider order.
	Examples []int
	// First is the group's first provider and Exclusion its exclusion:
	// GroupReason(First, Exclusion) is the group's reason.
	First     int
	Exclusion Exclusion
}

// Groups counts every excluded provider by cause, in order of each group's
// first provider, with up to examples providers each: what Explain and Key
// give provider by provider, computed with bitsets. Only exclusions by a
// forbidden aggregate are explained one by one; there are few of them.
func (r *Result) Groups(examples int) []ExclusionGroup {
	ix := r.ix
	unnumbered := r.Mode == Unnumbered
	// spanned(d): the children of the roots in d, which an unnumbered group
	// judges through their root.
	// Every set made here is scratch, given back when Groups returns.
	var scratch []Bitset
	defer func() {
		for _, b := range scratch {
			ix.release(b)
		}
	}()
	temp := func(from Bitset) Bitset {
		b := ix.scratch()
		if from != nil {
			copy(b, from)
		}
		scratch = append(scratch, b)
		return b
	}
	spanned := func(d Bitset) Bitset {
		out := temp(nil)
		if !unnumbered {
			return out
		}
		if d.Count() < len(ix.trees) {
			// Walk d's members, usually far fewer than the trees.
			d.Each(func(p int) {
				if t := ix.treePos[p]; t >= 0 {
					for _, c := range ix.treeKids[t] {
						out.Set(int(c))
					}
				}
			})
			return out
		}
		for t, root := range ix.trees {
			if d.Has(int(root)) {
				for _, c := range ix.treeKids[t] {
					out.Set(int(c))
				}
			}
		}
		return out
	}
	// Forbidden: in a forbidden aggregate, itself or (spanning) through
	// its root; forbiddenGroups adds the latter to forb as it finds them.
	forb := temp(r.bad)
	forb.And(r.excluded)
	groups := r.forbiddenGroups(forb, examples)
	add := func(set Bitset, k GroupKey) {
		count := set.Count()
		if count == 0 {
			return
		}
		first := set.Min()
		e, _ := r.Explain(first)
		groups = append(groups, ExclusionGroup{Key: k, Count: count, Examples: set.First(examples, nil), First: first, Exclusion: e})
	}
	// The rest fail the first required term that neither they nor (when
	// spanning) their root meet; sharing providers count apart.
	rest := temp(r.excluded)
	rest.AndNot(forb)
	for i, d := range r.direct {
		met := spanned(d)
		met.AndNot(ix.sharing) // a sharing provider must be in the term itself
		met.Or(d)
		failed := temp(rest)
		failed.AndNot(met)
		rest.And(met)
		if unnumbered {
			shared := temp(failed)
			shared.And(ix.sharing)
			failed.AndNot(ix.sharing)
			add(shared, GroupKey{Term: i, Aggregate: -1, Sharing: true})
		}
		add(failed, GroupKey{Term: i, Aggregate: -1})
	}
	// Every term is met, but not by one provider alone.
	add(rest, GroupKey{Split: true, Term: -1, Aggregate: -1})
	// Each group has its own first provider: no ties to keep in order.
	// Sorted by position, then moved once: a preview forbidding hundreds
	// of aggregates has hundreds of groups, and swapping the structs cost
	// more than the rest of the grouping.
	if len(groups) < 2 {
		return groups
	}
	order := make([]int32, len(groups))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return groups[a].First - groups[b].First })
	sorted := make([]ExclusionGroup, len(groups))
	for i, g := range order {
		sorted[i] = groups[g]
	}
	return sorted
}

// forbiddenGroups groups the providers excluded by a forbidden aggregate
// by that aggregate, as Explain and Key would one by one: a provider's own
// forbidden aggregate with the lowest index, else (spanning) its root's.
// It walks the forbidden aggregates' member lists and the trees of
// forbidden roots instead of explaining each provider. forb holds the
// providers directly in a forbidden aggregate; those excluded through
// their root are added to it.
func (r *Result) forbiddenGroups(forb Bitset, examples int) []ExclusionGroup {
	if len(r.forbAggs) == 0 {
		return nil
	}
	ix := r.ix
	type acc struct {
		count int
		ex    []int // the smallest providers, sorted
	}
	add := func(g *acc, p int) {
		g.count++
		if examples <= 0 || len(g.ex) == examples && p > g.ex[len(g.ex)-1] {
			return
		}
		i := sort.SearchInts(g.ex, p)
		if len(g.ex) < examples {
			g.ex = append(g.ex, 0)
		}
		copy(g.ex[i+1:], g.ex[i:])
		g.ex[i] = p
	}
	aggs := slices.Clone(r.forbAggs)
	slices.Sort(aggs)
	byAgg := make([]acc, len(aggs)) // by position in aggs
	var order []int                 // positions, in order of first member
	own := ix.scratch()
	defer ix.release(own)
	copy(own, r.bad)
	own.And(forb)
	unnumbered := r.Mode == Unnumbered
	for ai, a := range aggs {
		var g *acc
		for _, p := range ix.aggMembers[a] {
			if !own.Has(int(p)) {
				continue
			}
			own.Clear(int(p))
			if g == nil {
				g = &byAgg[ai]
				g.ex = make([]int, 0, max(examples, 0))
				order = append(order, ai)
			}
			add(g, int(p))
			t := ix.treePos[p]
			if !unnumbered || t < 0 {
				continue
			}
			// The root's first forbidden aggregate is a: its children
			// that are not themselves forbidden are excluded through it.
			for _, c := range ix.treeKids[t] {
				if !r.bad.Has(int(c)) && r.excluded.Has(int(c)) {
					forb.Set(int(c))
					add(g, int(c))
				}
			}
		}
	}
	groups := make([]ExclusionGroup, 0, len(order))
	for _, ai := range order {
		g := &byAgg[ai]
		first := -1
		if len(g.ex) > 0 {
			first = g.ex[0]
		}
		if examples <= 0 {
			first = r.firstOf(forb, aggs[ai])
		}
		e, _ := r.Explain(first)
		groups = append(groups, ExclusionGroup{Key: r.Key(first, e), Count: g.count, Examples: g.ex, First: first, Exclusion: e})
	}
	return groups
}

// firstOf finds the first provider of forb whose exclusion is by forbidden
// aggregate a (only needed when no examples are kept).
func (r *Result) firstOf(forb Bitset, a int32) int {
	first := -1
	forb.Each(func(p int) {
		if first >= 0 {
			return
		}
		if e, _ := r.Explain(p); e.Forbidden && int32(e.Aggregate) == a {
			first = p
		}
	})
	return first
}
