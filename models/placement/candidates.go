package placement

import (
	"math/bits"
	"sort"
)

// This file computes GET /allocation_candidates exactly as Placement 8.0
// does (objects/allocation_candidate.py and research_context.py): the
// unnumbered group spans provider trees and sharing providers, each
// numbered group is satisfied by one provider, the groups are merged per
// anchor root, then group_policy, same_subtree, the final capacity check,
// the pre-1.29 nested exclusion and limit apply. The stages have files of
// their own: candidates_index.go (the per-class and per-trait index),
// candidates_groups.go (each group's requests), candidates_merge.go (the
// merge) and candidates_roots.go (which roots have a candidate at all).

// Amount is one requested resource class and amount.
type Amount struct {
	Class  string
	Amount int64
}

// Group is one request group: Suffix "" is the unnumbered group.
type Group struct {
	Suffix    string
	Resources []Amount   // in request order
	Required  [][]string // AND of ORs
	Forbidden []string
	MemberOf  Terms
	InTree    string
}

// CandidateQuery is a whole GET /allocation_candidates request.
type CandidateQuery struct {
	Groups        []Group // in the order their keys first appear
	GroupPolicy   string  // "", "none" or "isolate"
	RootRequired  []string
	RootForbidden []string
	SameSubtree   [][]string
	Limit         int
	// Consumed adds usage on top of the providers' own (a preview placing
	// several instances counts what the earlier ones took).
	Consumed map[int]map[string]int64
	// PerAnchor keeps a candidate once per anchor tree instead of once
	// (the preview asks which hosts have a candidate at all).
	PerAnchor bool
	// Within, when set, restricts the answer to candidates anchored to
	// these roots, and the search to their trees and the sharing
	// providers (a preview re-checking one host after an instance).
	Within []int
	// NestedAware is false below microversion 1.29: a candidate may then
	// use only one provider per tree.
	NestedAware bool
}

// Catalog says which resource classes and traits exist; Placement refuses
// names missing from its tables.
type Catalog interface {
	HasClass(name string) bool
	HasTrait(name string) bool
}

// Unknown is returned for a resource class or trait the catalog lacks.
type Unknown struct {
	Trait bool
	Name  string
}

func (u *Unknown) Error() string {
	if u.Trait {
		return "No such trait(s): " + u.Name + "."
	}
	return "No such resource class " + u.Name + "."
}

// Alloc is one provider's share of a candidate.
type Alloc struct {
	Provider int
	Class    string
	Amount   int64
}

// Candidate is one allocation request.
type Candidate struct {
	// Anchor is the root of the tree the candidate serves (for a sharing
	// provider's resources, the tree it is anchored to).
	Anchor   int
	Allocs   []Alloc   // sorted by provider, then class
	Mappings []Mapping // sorted by suffix
}

// Mapping is one request group's providers in a candidate (an entry of
// Placement's mappings).
type Mapping struct {
	Suffix    string
	Providers []int // sorted
}

// Candidates is the answer: the allocation requests and the providers whose
// summaries go with them.
type Candidates struct {
	Requests  []Candidate
	Summaries []int // provider indices, sorted
}

// areq is an allocation request while groups are merged.
type areq struct {
	anchor   int32
	same     bool // from a numbered group
	allocs   []Alloc
	mappings []groupMap // sorted by suffix
}

// groupMap is one group's providers in a request (its mappings entry).
type groupMap struct {
	suffix string
	provs  []int32 // sorted
}

// providersOf returns the providers mapped to suffix.
func (a *areq) providersOf(suffix string) []int32 {
	for _, m := range a.mappings {
		if m.suffix == suffix {
			return m.provs
		}
	}
	return nil
}

// AllocationCandidates answers q. An unknown class or trait is an *Unknown
// error, detected in the order Placement looks names up (so a group after
// one that matched nothing is never checked, as upstream).
func (ix *Index) AllocationCandidates(q CandidateQuery, cat Catalog) (*Candidates, error) {
	empty := &Candidates{}
	anchorRoots, err := ix.rootTraitAnchors(q, cat)
	if err != nil {
		return nil, err
	}
	if anchorRoots != nil && anchorRoots.Min() < 0 {
		return empty, nil
	}
	var within Bitset // providers the search may use; nil: all
	if q.Within != nil {
		within, anchorRoots = ix.searchWithin(q.Within, anchorRoots)
	}
	inAnchors := func(r int32) bool { return anchorRoots == nil || anchorRoots.Has(int(r)) }

	perGroup := make([][]*areq, 0, len(q.Groups))
	for gi := range q.Groups {
		reqs, err := ix.groupRequests(q, &q.Groups[gi], cat, within, anchorRoots, inAnchors)
		if err != nil {
			return nil, err
		}
		if len(reqs) == 0 {
			return empty, nil
		}
		perGroup = append(perGroup, reqs)
	}
	merged := ix.merge(q, perGroup)
	if len(merged) == 0 {
		return empty, nil
	}
	if !q.PerAnchor && ix.HasSharing() {
		// Merged and deduplicated requests come out in map order; one
		// group without sharing is already in provider order.
		sortAreqs(merged)
	}

	// Below 1.29 a candidate may not take two providers of one tree.
	var summaryOnly map[int32]bool
	if !q.NestedAware && ix.HasTrees() {
		merged, summaryOnly = ix.onePerTree(merged)
		if len(merged) == 0 {
			return empty, nil
		}
	}
	if q.Limit > 0 && q.Limit < len(merged) {
		merged = merged[:q.Limit]
	}
	return ix.candidatesOf(merged, summaryOnly), nil
}

// rootTraitAnchors checks root_required and root_forbidden against the
// catalog and returns the roots they allow to anchor a candidate, or nil
// when the query names neither.
func (ix *Index) rootTraitAnchors(q CandidateQuery, cat Catalog) (Bitset, error) {
	if len(q.RootRequired) == 0 && len(q.RootForbidden) == 0 {
		return nil, nil
	}
	for _, t := range sortedCopy(q.RootRequired) {
		if !cat.HasTrait(t) {
			return nil, &Unknown{Trait: true, Name: t}
		}
	}
	for _, t := range sortedCopy(q.RootForbidden) {
		if !cat.HasTrait(t) {
			return nil, &Unknown{Trait: true, Name: t}
		}
	}
	anchorRoots := NewBitset(len(ix.providers))
	for i := range ix.providers {
		if ix.parent[i] >= 0 {
			continue
		}
		ok := true
		for _, t := range q.RootRequired {
			if !ix.WithTrait(t).Has(i) {
				ok = false
				break
			}
		}
		for _, t := range q.RootForbidden {
			if ok && ix.WithTrait(t).Has(i) {
				ok = false
			}
		}
		if ok {
			anchorRoots.Set(i)
		}
	}
	return anchorRoots, nil
}

// searchWithin returns the providers a search restricted to the trees of
// roots may use (those trees and every sharing provider) and the roots
// that may anchor a candidate then: those of roots that anchorRoots (nil:
// any) allows.
func (ix *Index) searchWithin(roots []int, anchorRoots Bitset) (within, anchors Bitset) {
	within = NewBitset(len(ix.providers))
	only := NewBitset(len(ix.providers))
	for _, r := range roots {
		r = int(ix.root[r])
		only.Set(r)
		within.Set(r)
		for _, d := range ix.kids(int32(r)) {
			within.Set(int(d))
		}
	}
	within.Or(ix.sharing)
	if anchorRoots != nil {
		only.And(anchorRoots)
	}
	return within, only
}

// groupRequests checks group g's names against the catalog and returns its
// allocation requests; none (and no error) means the whole query has no
// candidate.
func (ix *Index) groupRequests(q CandidateQuery, g *Group, cat Catalog, within, anchorRoots Bitset, inAnchors func(int32) bool) ([]*areq, error) {
	for _, a := range g.Resources {
		if !cat.HasClass(a.Class) {
			return nil, &Unknown{Name: a.Class}
		}
	}
	inAggs, badAggs, ok := ix.directAggs(g.MemberOf)
	if !ok {
		return nil, nil
	}
	for _, any := range g.Required {
		for _, t := range sortedCopy(any) {
			if !cat.HasTrait(t) {
				return nil, &Unknown{Trait: true, Name: t}
			}
		}
	}
	for _, t := range sortedCopy(g.Forbidden) {
		if !cat.HasTrait(t) {
			return nil, &Unknown{Trait: true, Name: t}
		}
	}
	treeRoot := int32(-1)
	if g.InTree != "" {
		p, found := ix.provByID[g.InTree]
		if !found {
			return nil, nil
		}
		treeRoot = ix.root[p]
	}
	fits := ix.groupFits(g, q.Consumed, treeRoot, within)
	if fits == nil {
		return nil, nil
	}
	gc := &groupCtx{ix: ix, g: g, inAggs: inAggs, badAggs: badAggs, treeRoot: treeRoot, fits: fits, inAnchors: inAnchors, anchorRoots: anchorRoots,
		onePerRoot: q.PerAnchor && len(q.Groups) == 1, consumed: q.Consumed}
	if len(q.Groups) == 1 {
		// One group's requests are the answer, in its order when
		// the merge may stop at the limit.
		gc.stopAt = ix.mergeStop(q)
	}
	if g.Suffix == "" && (ix.HasSharing() || ix.HasTrees()) {
		return gc.multiple(), nil
	}
	return gc.single(), nil
}

// groupFits lists, per class g requests, the providers with room for its
// amount (on top of consumed) in provider order, within in_tree's tree
// (treeRoot, -1 for any) and within (nil: all). It is nil when a class
// has no such provider.
func (ix *Index) groupFits(g *Group, consumed map[int]map[string]int64, treeRoot int32, within Bitset) [][]int32 {
	fits := make([][]int32, len(g.Resources))
	skip := func(p int32) bool {
		return treeRoot >= 0 && ix.root[p] != treeRoot || within != nil && !within.Has(int(p))
	}
	for k, a := range g.Resources {
		ci := ix.resIndex().classes[a.Class]
		if ci == nil {
			return nil
		}
		if len(consumed) == 0 {
			// The cached per-class fit set, read in provider order
			// as the class's rows are.
			for wi, w := range ix.Fitting(a.Class, a.Amount) {
				for ; w != 0; w &= w - 1 {
					if p := int32(wi<<6 + bits.TrailingZeros64(w)); !skip(p) {
						fits[k] = append(fits[k], p)
					}
				}
			}
		} else {
			for j, p := range ci.prov {
				if !skip(p) && ci.fits(j, a.Amount, consumed[int(p)][a.Class]) {
					fits[k] = append(fits[k], p)
				}
			}
		}
		if len(fits[k]) == 0 {
			return nil
		}
	}
	return fits
}

// onePerTree keeps the requests taking at most one provider per tree (the
// rule below microversion 1.29) and returns the providers they use, whose
// summaries alone are then returned.
func (ix *Index) onePerTree(merged []*areq) (kept []*areq, summaryOnly map[int32]bool) {
	kept = merged[:0]
	summaryOnly = map[int32]bool{}
	for _, a := range merged {
		roots := map[int32]int{}
		provs := map[int32]bool{}
		for _, al := range a.allocs {
			p := int32(al.Provider)
			if !provs[p] {
				provs[p] = true
				roots[ix.root[p]]++
			}
		}
		if len(roots) == len(provs) {
			kept = append(kept, a)
			for p := range provs {
				summaryOnly[p] = true
			}
		}
	}
	return kept, summaryOnly
}

// candidatesOf turns the final requests into the answer, with the
// summaries of summaryOnly's providers in the requests' trees, or when
// summaryOnly is nil of every provider of those trees.
func (ix *Index) candidatesOf(merged []*areq, summaryOnly map[int32]bool) *Candidates {
	roots := map[int32]bool{}
	for _, a := range merged {
		for _, al := range a.allocs {
			roots[ix.root[al.Provider]] = true
		}
	}
	out := &Candidates{Requests: make([]Candidate, len(merged))}
	mapped := 0
	for _, a := range merged {
		for _, m := range a.mappings {
			mapped += len(m.provs)
		}
	}
	// Every mapping and its providers come from two slabs: an answer may
	// hold thousands of requests.
	provSlab := make([]int, 0, mapped)
	mapSlab := make([]Mapping, 0, len(merged))
	for i, a := range merged {
		from := len(mapSlab)
		for _, m := range a.mappings {
			at := len(provSlab)
			for _, p := range m.provs {
				provSlab = append(provSlab, int(p))
			}
			mapSlab = append(mapSlab, Mapping{Suffix: m.suffix, Providers: provSlab[at:len(provSlab):len(provSlab)]})
		}
		out.Requests[i] = Candidate{Anchor: int(a.anchor), Allocs: a.allocs, Mappings: mapSlab[from:len(mapSlab):len(mapSlab)]}
	}
	if summaryOnly != nil {
		for p := range summaryOnly {
			if roots[ix.root[p]] {
				out.Summaries = append(out.Summaries, int(p))
			}
		}
	} else {
		for r := range roots {
			out.Summaries = append(out.Summaries, int(r))
			for _, d := range ix.kids(r) {
				out.Summaries = append(out.Summaries, int(d))
			}
		}
	}
	sort.Ints(out.Summaries)
	return out
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}
