package placement

import (
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"sync"

	"corral/models"
)

// This file computes GET /allocation_candidates exactly as Placement 8.0
// does (objects/allocation_candidate.py and research_context.py): the
// unnumbered group spans provider trees and sharing providers, each
// numbered group is satisfied by one provider, the groups are merged per
// anchor root, then group_policy, same_subtree, the final capacity check,
// the pre-1.29 nested exclusion and limit apply.

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

// catalogIndex is built once per Index, on first use, and shared by the
// indexes WithAggregates derives: it depends on the providers alone.
type catalogIndex struct {
	once     sync.Once
	byClass  map[string][]int32
	classes  map[string]*classInv
	hasTrees bool
	mu       sync.Mutex
	byTrait  map[string]Bitset
	// fit caches fitting's answers: a preview asks for a flavor's few
	// amounts over and over.
	fit map[fitKey]Bitset
}

// fitKey is one requested class and amount.
type fitKey struct {
	class  string
	amount int64
}

// maxFitCache bounds the fitting cache (a request may name any amount).
const maxFitCache = 256

func (ix *Index) resIndex() *catalogIndex {
	c := ix.res
	c.once.Do(func() {
		c.byClass = map[string][]int32{}
		c.byTrait = map[string]Bitset{}
		c.classes = map[string]*classInv{}
		c.fit = map[fitKey]Bitset{}
		for i, p := range ix.providers {
			for rc, inv := range p.Inventories {
				c.byClass[rc] = append(c.byClass[rc], int32(i))
				ci := c.classes[rc]
				if ci == nil {
					ci = &classInv{}
					c.classes[rc] = ci
				}
				ci.prov = append(ci.prov, int32(i))
				ci.inv = append(ci.inv, Normalized(inv))
				ci.used = append(ci.used, p.Usages[rc])
			}
			if ix.parent[i] >= 0 {
				c.hasTrees = true
			}
		}
		for _, ci := range c.classes {
			ci.pos = make([]int32, len(ix.providers))
			for i := range ci.pos {
				ci.pos[i] = -1
			}
			for j, p := range ci.prov {
				ci.pos[p] = int32(j)
			}
		}
	})
	return c
}

// Fitting is the set of providers with room for amount of class at their
// own usage (Placement's per-class check, Check), cached per index. Do
// not modify.
func (ix *Index) Fitting(class string, amount int64) Bitset {
	c := ix.resIndex()
	k := fitKey{class, amount}
	c.mu.Lock()
	b, ok := c.fit[k]
	c.mu.Unlock()
	if ok {
		return b
	}
	b = NewBitset(len(ix.providers))
	if ci := c.classes[class]; ci != nil {
		for j, p := range ci.prov {
			if ci.fits(j, amount, 0) {
				b.Set(int(p))
			}
		}
	}
	c.mu.Lock()
	if len(c.fit) < maxFitCache {
		c.fit[k] = b
	}
	c.mu.Unlock()
	return b
}

// ClassTable is one resource class's inventories and usages, looked up by
// provider without maps.
type ClassTable struct{ ci *classInv }

// Class returns class's table; a class no provider has gives an empty one.
func (ix *Index) Class(class string) ClassTable { return ClassTable{ix.resIndex().classes[class]} }

// Inventory returns provider p's inventory of the class (normalized, as
// Normalized returns it) and its usage; ok is false without inventory.
func (t ClassTable) Inventory(p int) (inv models.Inventory, used int64, ok bool) {
	if t.ci == nil {
		return models.Inventory{}, 0, false
	}
	j := t.ci.pos[p]
	if j < 0 {
		return models.Inventory{}, 0, false
	}
	return t.ci.inv[j], t.ci.used[j], true
}

// ProvidersWithClass returns the providers having inventory of class, in
// provider order. Do not modify.
func (ix *Index) ProvidersWithClass(class string) []int32 { return ix.resIndex().byClass[class] }

// HasTrees reports whether any provider has a parent.
func (ix *Index) HasTrees() bool { return ix.resIndex().hasTrees }

// HasSharing reports whether any provider shares via aggregates.
func (ix *Index) HasSharing() bool { return ix.sharing.Min() >= 0 }

// WithTrait returns the set of providers carrying trait t. Do not modify.
func (ix *Index) WithTrait(t string) Bitset {
	c := ix.resIndex()
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.byTrait[t]; ok {
		return b
	}
	b := NewBitset(len(ix.providers))
	for i, p := range ix.providers {
		if p.HasTrait(t) {
			b.Set(i)
		}
	}
	c.byTrait[t] = b
	return b
}

// directAggs returns the providers directly in every required term (nil
// when there are none) and those directly in a forbidden aggregate (nil
// when none). ok is false when a required term names only unknown
// aggregates or nothing matches: Placement then finds no provider at all.
func (ix *Index) directAggs(t Terms) (in, bad Bitset, ok bool) {
	for _, term := range t.Required {
		var known []int32
		for _, u := range term {
			if a, found := ix.aggByID[u]; found {
				known = append(known, a)
			}
		}
		if len(known) == 0 {
			return nil, nil, false
		}
		d := ix.union(known)
		if in == nil {
			in = d
		} else {
			in.And(d)
		}
	}
	if in != nil && in.Min() < 0 {
		return nil, nil, false
	}
	var forb []int32
	for _, u := range t.Forbidden {
		if a, found := ix.aggByID[u]; found {
			forb = append(forb, a)
		}
	}
	if len(forb) > 0 {
		bad = ix.union(forb)
	}
	return in, bad, true
}

// AllocationCandidates answers q. An unknown class or trait is an *Unknown
// error, detected in the order Placement looks names up (so a group after
// one that matched nothing is never checked, as upstream).
func (ix *Index) AllocationCandidates(q CandidateQuery, cat Catalog) (*Candidates, error) {
	empty := &Candidates{}
	var anchorRoots Bitset
	if len(q.RootRequired) > 0 || len(q.RootForbidden) > 0 {
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
		anchorRoots = NewBitset(len(ix.providers))
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
		if anchorRoots.Min() < 0 {
			return empty, nil
		}
	}
	var within Bitset // providers the search may use; nil: all
	if q.Within != nil {
		within = NewBitset(len(ix.providers))
		only := NewBitset(len(ix.providers))
		for _, r := range q.Within {
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
		anchorRoots = only
	}
	inAnchors := func(r int32) bool { return anchorRoots == nil || anchorRoots.Has(int(r)) }

	multiRCs := map[string]bool{}
	seenRCs := map[string]bool{}
	perGroup := make([][]*areq, 0, len(q.Groups))
	for gi := range q.Groups {
		g := &q.Groups[gi]
		for _, a := range g.Resources {
			if !cat.HasClass(a.Class) {
				return nil, &Unknown{Name: a.Class}
			}
			if seenRCs[a.Class] {
				multiRCs[a.Class] = true
			}
			seenRCs[a.Class] = true
		}
		inAggs, badAggs, ok := ix.directAggs(g.MemberOf)
		if !ok {
			return empty, nil
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
				return empty, nil
			}
			treeRoot = ix.root[p]
		}
		fits := make([][]int32, len(g.Resources))
		for k, a := range g.Resources {
			ci := ix.resIndex().classes[a.Class]
			if ci == nil {
				return empty, nil
			}
			skip := func(p int32) bool {
				return treeRoot >= 0 && ix.root[p] != treeRoot || within != nil && !within.Has(int(p))
			}
			if len(q.Consumed) == 0 {
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
					if !skip(p) && ci.fits(j, a.Amount, q.Consumed[int(p)][a.Class]) {
						fits[k] = append(fits[k], p)
					}
				}
			}
			if len(fits[k]) == 0 {
				return empty, nil
			}
		}
		gc := &groupCtx{ix: ix, g: g, inAggs: inAggs, badAggs: badAggs, treeRoot: treeRoot, fits: fits, inAnchors: inAnchors, anchorRoots: anchorRoots,
			onePerRoot: q.PerAnchor && len(q.Groups) == 1, consumed: q.Consumed}
		if len(q.Groups) == 1 {
			// One group's requests are the answer, in its order when
			// the merge may stop at the limit.
			gc.stopAt = ix.mergeStop(q)
		}
		var reqs []*areq
		if g.Suffix == "" && (ix.HasSharing() || ix.HasTrees()) {
			reqs = gc.multiple()
		} else {
			reqs = gc.single()
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
		kept := merged[:0]
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
		merged = kept
		if len(merged) == 0 {
			return empty, nil
		}
	}
	if q.Limit > 0 && q.Limit < len(merged) {
		merged = merged[:q.Limit]
	}
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
	return out, nil
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

type groupCtx struct {
	ix          *Index
	g           *Group
	inAggs      Bitset // nil: no required aggregates
	badAggs     Bitset // nil: no forbidden aggregates
	treeRoot    int32
	fits        [][]int32 // per requested class, providers with room
	inAnchors   func(int32) bool
	anchorRoots Bitset
	// onePerRoot stops at a tree's first valid combination: a preview
	// asking only which trees have a candidate needs no more.
	onePerRoot bool
	// stopAt, when positive, is how many requests are enough: the
	// group's first ones are the answer's.
	stopAt   int
	consumed map[int]map[string]int64
}

// traitsOK is the per-provider trait test of a numbered group.
func (gc *groupCtx) traitsOK(p int) bool {
	for _, any := range gc.g.Required {
		ok := false
		for _, t := range any {
			if gc.ix.WithTrait(t).Has(p) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, t := range gc.g.Forbidden {
		if gc.ix.WithTrait(t).Has(p) {
			return false
		}
	}
	return true
}

// single is _alloc_candidates_single_provider over
// get_provider_ids_matching: one provider satisfies the whole group;
// a sharing provider is paired with every anchor.
func (gc *groupCtx) single() []*areq {
	ix, g := gc.ix, gc.g
	pass := func(p int32) bool {
		if gc.inAggs != nil && !gc.inAggs.Has(int(p)) {
			return false
		}
		if gc.badAggs != nil && gc.badAggs.Has(int(p)) {
			return false
		}
		return gc.traitsOK(int(p))
	}
	var provs []int32
	if len(g.Resources) == 0 {
		// A resourceless group ignores in_tree, and without a required
		// trait or aggregate it matches nothing: upstream keeps only
		// providers in its (then empty) set of filtered providers
		// (get_provider_ids_matching).
		if len(g.Required) == 0 && len(g.MemberOf.Required) == 0 {
			return nil
		}
		for p := range ix.providers {
			if pass(int32(p)) {
				provs = append(provs, int32(p))
			}
		}
	} else {
		// Providers with room for every class: fits[0] in its order,
		// kept when each later class's list has them too.
		all := ix.scratch()
		defer ix.release(all)
		for _, p := range gc.fits[0] {
			if pass(p) {
				all.Set(int(p))
			}
		}
		if len(gc.fits) > 1 {
			next := ix.scratch()
			defer ix.release(next)
			for k := 1; k < len(gc.fits); k++ {
				clear(next)
				for _, p := range gc.fits[k] {
					if all.Has(int(p)) {
						next.Set(int(p))
					}
				}
				all, next = next, all
			}
		}
		enough := 0
		for _, p := range gc.fits[0] {
			if all.Has(int(p)) {
				provs = append(provs, p)
				// Without sharing a provider gives one request, when
				// its root may anchor one.
				if gc.stopAt > 0 && gc.inAnchors(ix.root[p]) {
					if enough++; enough == gc.stopAt {
						break
					}
				}
			}
		}
	}
	// One request per (provider, anchor), carved from shared slabs: a
	// group may match every provider of the cloud.
	K := len(g.Resources)
	allocSlab := make([]Alloc, len(provs)*K)
	provSlab := make([]int32, len(provs))
	mapSlab := make([]groupMap, len(provs))
	reqs := make([]areq, 0, len(provs))
	for i, p := range provs {
		allocs := allocSlab[i*K : (i+1)*K : (i+1)*K]
		for k, a := range g.Resources {
			allocs[k] = Alloc{Provider: int(p), Class: a.Class, Amount: a.Amount}
		}
		provSlab[i] = p
		mapSlab[i] = groupMap{g.Suffix, provSlab[i : i+1 : i+1]}
		m := mapSlab[i : i+1 : i+1]
		r := ix.root[p]
		if gc.inAnchors(r) {
			reqs = append(reqs, areq{anchor: r, same: g.Suffix != "", allocs: allocs, mappings: m})
		}
		if ix.sharing.Has(int(p)) {
			for _, a := range ix.Anchors(int(p)) {
				if int32(a) == r || !gc.inAnchors(int32(a)) {
					continue
				}
				reqs = append(reqs, areq{anchor: int32(a), same: g.Suffix != "", allocs: allocs, mappings: m})
			}
		}
	}
	out := make([]*areq, len(reqs))
	for i := range reqs {
		out[i] = &reqs[i]
	}
	return out
}

// classRows are one class's (provider, anchor root) rows, chained per
// root: head[root] is the first row, next[row] the following one.
type classRows struct {
	prov  []int32
	next  []int32
	head  []int32
	roots []int32 // roots having a row, in first-seen order
}

func (cr *classRows) add(p, root int32) {
	if cr.head[root] < 0 {
		cr.roots = append(cr.roots, root)
	}
	cr.prov = append(cr.prov, p)
	cr.next = append(cr.next, cr.head[root])
	cr.head[root] = int32(len(cr.prov) - 1)
}

// multiple is get_trees_matching_all followed by
// _alloc_candidates_multiple_providers: each class may come from any
// provider of the anchor's tree or from a sharing provider anchored there.
func (gc *groupCtx) multiple() []*areq {
	ix, g := gc.ix, gc.g
	n := len(ix.providers)
	K := len(g.Resources)
	if K == 0 {
		// Upstream's tree search finds nothing without a resource.
		return nil
	}
	rows := make([]classRows, K)
	hits := make([]uint16, n) // classes a root has rows for
	keep := func(p, root int32) bool {
		if gc.anchorRoots != nil && !gc.anchorRoots.Has(int(root)) {
			return false
		}
		if gc.inAggs != nil && !gc.inAggs.Has(int(p)) && !gc.inAggs.Has(int(root)) {
			return false
		}
		if gc.badAggs != nil && (gc.badAggs.Has(int(p)) || gc.badAggs.Has(int(root))) {
			return false
		}
		return true
	}
	for k := range g.Resources {
		cr := &rows[k]
		cr.head = make([]int32, n)
		for i := range cr.head {
			cr.head[i] = -1
		}
		for _, p := range gc.fits[k] {
			if r := ix.root[p]; keep(p, r) {
				cr.add(p, r)
			}
		}
		if gc.treeRoot < 0 {
			for _, p := range gc.fits[k] {
				s := int(p)
				if !ix.sharing.Has(s) || (gc.inAggs != nil && !gc.inAggs.Has(s)) || len(ix.AggregatesOf(s)) == 0 {
					continue
				}
				for _, a := range ix.Anchors(s) {
					if int32(a) != ix.root[s] && keep(p, int32(a)) {
						cr.add(p, int32(a))
					}
				}
			}
		}
		if len(cr.roots) == 0 {
			return nil
		}
		alive := 0
		for _, r := range cr.roots {
			if int(hits[r]) == k {
				hits[r]++
				alive++
			}
		}
		if alive == 0 {
			return nil
		}
	}
	var roots []int32
	for _, r := range rows[0].roots {
		if int(hits[r]) == K {
			roots = append(roots, r)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i] < roots[j] })
	var out []*areq
	lists := make([][]int32, K)
	for _, r := range roots {
		for k := range rows {
			l := lists[k][:0]
			for x := rows[k].head[r]; x >= 0; x = rows[k].next[x] {
				l = append(l, rows[k].prov[x])
			}
			sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
			lists[k] = l
		}
		idx := make([]int, K)
		for {
			combo := make([]int32, K)
			for k := range lists {
				combo[k] = lists[k][idx[k]]
			}
			if gc.comboTraitsOK(combo) {
				allocs := make([]Alloc, K)
				var provs []int32
				for k, p := range combo {
					allocs[k] = Alloc{Provider: int(p), Class: g.Resources[k].Class, Amount: g.Resources[k].Amount}
					if !containsInt32(provs, p) {
						provs = append(provs, p)
					}
				}
				sort.Slice(provs, func(i, j int) bool { return provs[i] < provs[j] })
				out = append(out, &areq{anchor: r, allocs: allocs, mappings: []groupMap{{g.Suffix, provs}}})
				if gc.stopAt > 0 && len(out) == gc.stopAt {
					return out
				}
				if gc.onePerRoot {
					// One group asks each class once, and each row was
					// checked against capacity: the first combination
					// fits.
					break
				}
			}
			// next combination (odometer)
			k := K - 1
			for k >= 0 {
				idx[k]++
				if idx[k] < len(lists[k]) {
					break
				}
				idx[k] = 0
				k--
			}
			if k < 0 {
				break
			}
		}
	}
	return out
}

func containsInt32(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// comboTraitsOK is _check_traits_for_alloc_request: no provider of the
// combination has a forbidden trait, and together they have every
// required one.
func (gc *groupCtx) comboTraitsOK(combo []int32) bool {
	for _, t := range gc.g.Forbidden {
		b := gc.ix.WithTrait(t)
		for _, p := range combo {
			if b.Has(int(p)) {
				return false
			}
		}
	}
	for _, any := range gc.g.Required {
		ok := false
		for _, t := range any {
			b := gc.ix.WithTrait(t)
			for _, p := range combo {
				if b.Has(int(p)) {
					ok = true
					break
				}
			}
			if ok {
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// mergeStop is how many merged requests make the answer, or 0 for all.
// Without sharing providers the merged order is the final one (anchor
// order, then each group's order) and requests of different anchors never
// collide, so a limit may stop the merge at the limit-th request. Below
// 1.29 in a world of trees requests are still dropped after the merge, and
// with sharing providers they are sorted: no early stop then.
func (ix *Index) mergeStop(q CandidateQuery) int {
	if q.Limit > 0 && !q.PerAnchor && !ix.HasSharing() && (q.NestedAware || !ix.HasTrees()) {
		return q.Limit
	}
	return 0
}

// merge is _merge_candidates: per anchor, every combination of one request
// per group, filtered by group_policy and same_subtree, consolidated and
// checked against capacity once more; duplicates collapse.
func (ix *Index) merge(q CandidateQuery, perGroup [][]*areq) []*areq {
	stopAt := ix.mergeStop(q)
	if len(perGroup) == 1 && !q.PerAnchor {
		// One group: each request is its own consolidation, and every
		// row was checked against capacity. Only a sharing provider can
		// yield the same request for two anchors.
		dedup := ix.HasSharing()
		var seen map[string]bool
		if dedup {
			seen = map[string]bool{}
		}
		reqs := perGroup[0]
		if stopAt > 0 && stopAt < len(reqs) {
			reqs = reqs[:stopAt]
		}
		out := make([]*areq, 0, len(reqs))
		for _, a := range reqs {
			sortAllocs(a.allocs)
			if dedup {
				k := a.key()
				if seen[k] {
					continue
				}
				seen[k] = true
			}
			out = append(out, a)
		}
		return out
	}
	if q.PerAnchor && len(perGroup) == 1 {
		// One group: each request is its own consolidation; keep the
		// first that fits per anchor.
		var out []*areq
		done := map[int32]bool{}
		for _, a := range perGroup[0] {
			if done[a.anchor] {
				continue
			}
			done[a.anchor] = true
			sortAllocs(a.allocs)
			out = append(out, a)
		}
		return out
	}
	// Each group's requests bucketed by anchor, keeping their order
	// (a counting sort): start[g][r]..start[g][r+1] are anchor r's.
	n := len(ix.providers)
	G := len(perGroup)
	start := make([][]int32, G)
	byAnchor := make([][]*areq, G)
	for gi, reqs := range perGroup {
		st := make([]int32, n+1)
		for _, a := range reqs {
			st[a.anchor+1]++
		}
		for r := 0; r < n; r++ {
			st[r+1] += st[r]
		}
		pos := make([]int32, n)
		copy(pos, st[:n])
		sorted := make([]*areq, len(reqs))
		for _, a := range reqs {
			sorted[pos[a.anchor]] = a
			pos[a.anchor]++
		}
		start[gi], byAnchor[gi] = st, sorted
	}
	numbered := 0
	for _, g := range q.Groups {
		if g.Suffix != "" {
			numbered++
		}
	}
	isolate := q.GroupPolicy == "isolate"
	// Requests of different anchors can be equal only through sharing
	// providers; without them there is nothing to deduplicate across
	// anchors, and within one anchor the groups' combinations differ.
	dedup := ix.HasSharing() || q.PerAnchor
	var seen map[string]bool
	if dedup {
		seen = map[string]bool{}
	}
	var out []*areq
	lists := make([][]*areq, G)
	idx := make([]int, G)
	pick := make([]*areq, G)
	// used holds the providers of the numbered groups picked so far,
	// level by level: each numbered group's request maps exactly one
	// provider, so under isolate a pick repeating one can never pass and
	// the combinations below it are skipped.
	used := make([]int32, 0, G)
	usedAt := make([]int, G+1)
anchors:
	for r := 0; r < n; r++ {
		for gi := range perGroup {
			lists[gi] = byAnchor[gi][start[gi][r]:start[gi][r+1]]
			if len(lists[gi]) == 0 {
				continue anchors
			}
		}
		// Depth-first over the combinations in odometer order.
		k := 0
		idx[0] = 0
		used = used[:0]
		for k >= 0 {
			if idx[k] == len(lists[k]) {
				k--
				if k >= 0 {
					idx[k]++
				}
				continue
			}
			a := lists[k][idx[k]]
			used = used[:usedAt[k]]
			if isolate && a.same {
				clash := false
				for _, m := range a.mappings {
					for _, p := range m.provs {
						if containsInt32(used, p) {
							clash = true
						}
						used = append(used, p)
					}
				}
				if clash {
					idx[k]++
					continue
				}
			}
			pick[k] = a
			if k+1 < G {
				usedAt[k+1] = len(used)
				k++
				idx[k] = 0
				continue
			}
			idx[k]++
			if !ix.groupPolicyOK(pick, q.GroupPolicy, numbered) || !ix.sameSubtreeOK(pick, q.SameSubtree) {
				continue
			}
			c := consolidate(pick)
			if ix.exceeds(c, q.Consumed) {
				continue
			}
			if dedup {
				key := c.key()
				if q.PerAnchor {
					key = strconv.Itoa(r) + "#" + key
				}
				if seen[key] {
					continue
				}
				seen[key] = true
			}
			out = append(out, c)
			if stopAt > 0 && len(out) == stopAt {
				return out
			}
		}
	}
	return out
}

func (ix *Index) groupPolicyOK(pick []*areq, policy string, numbered int) bool {
	if policy != "isolate" {
		return true
	}
	var buf [8]int32
	provs := buf[:0]
	for _, a := range pick {
		if !a.same {
			continue
		}
		for _, m := range a.mappings {
			for _, p := range m.provs {
				if !containsInt32(provs, p) {
					provs = append(provs, p)
				}
			}
		}
	}
	return len(provs) == numbered
}

// sameSubtreeOK is _satisfies_same_subtree: for each same_subtree set, one
// of the providers satisfying those groups is an ancestor (or itself) of
// all the others.
func (ix *Index) sameSubtreeOK(pick []*areq, subtrees [][]string) bool {
	for _, st := range subtrees {
		provs := map[int32]bool{}
		for _, a := range pick {
			for _, s := range st {
				for _, p := range a.providersOf(s) {
					provs[p] = true
				}
			}
		}
		if len(provs) <= 1 {
			continue
		}
		var common map[int32]bool
		for p := range provs {
			anc := map[int32]bool{}
			for x := p; x >= 0; x = ix.parent[x] {
				anc[x] = true
			}
			if common == nil {
				common = anc
			} else {
				for x := range common {
					if !anc[x] {
						delete(common, x)
					}
				}
			}
		}
		found := false
		for p := range provs {
			if common[p] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// consolidate sums the picked requests' amounts per provider and class and
// joins their mappings.
func consolidate(pick []*areq) *areq {
	total := 0
	for _, a := range pick {
		total += len(a.allocs)
	}
	out := &areq{anchor: pick[0].anchor, allocs: make([]Alloc, 0, total)}
	for _, a := range pick {
		for _, al := range a.allocs {
			merged := false
			for i := range out.allocs {
				if o := &out.allocs[i]; o.Provider == al.Provider && o.Class == al.Class {
					o.Amount += al.Amount
					merged = true
					break
				}
			}
			if !merged {
				out.allocs = append(out.allocs, al)
			}
		}
		for _, m := range a.mappings {
			out.addMapping(m)
		}
	}
	sortAllocs(out.allocs)
	return out
}

// addMapping joins m into a's mappings, keeping them sorted by suffix.
func (a *areq) addMapping(m groupMap) {
	i := 0
	for i < len(a.mappings) && a.mappings[i].suffix < m.suffix {
		i++
	}
	if i < len(a.mappings) && a.mappings[i].suffix == m.suffix {
		a.mappings[i].provs = unionSorted(a.mappings[i].provs, m.provs)
		return
	}
	a.mappings = slices.Insert(a.mappings, i, m)
}

func sortAllocs(allocs []Alloc) {
	// Requests hold a handful of allocations: insertion sort, no closure.
	for i := 1; i < len(allocs); i++ {
		for j := i; j > 0 && allocLess(allocs[j], allocs[j-1]); j-- {
			allocs[j], allocs[j-1] = allocs[j-1], allocs[j]
		}
	}
}

func allocLess(a, b Alloc) bool {
	if a.Provider != b.Provider {
		return a.Provider < b.Provider
	}
	return a.Class < b.Class
}

func unionSorted(a, b []int32) []int32 {
	out := append(append([]int32(nil), a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// exceeds is RequestWideSearchContext.exceeds_capacity on a consolidated
// request: used + amount over the (truncated) capacity, or over max_unit.
func (ix *Index) exceeds(a *areq, consumed map[int]map[string]int64) bool {
	classes := ix.resIndex().classes
	for _, al := range a.allocs {
		var inv models.Inventory
		var used int64
		if ci := classes[al.Class]; ci != nil && ci.pos[al.Provider] >= 0 {
			j := ci.pos[al.Provider]
			inv, used = ci.inv[j], ci.used[j]
		} else {
			p := ix.providers[al.Provider]
			inv, used = Normalized(p.Inventories[al.Class]), p.Usages[al.Class]
		}
		if consumed != nil {
			used += consumed[al.Provider][al.Class]
		}
		if used+al.Amount > Capacity(inv) || al.Amount > inv.MaxUnit {
			return true
		}
	}
	return false
}

// key identifies a request by its allocations and mappings, as Placement's
// AllocationRequest equality does (the anchor is not part of it).
func (a *areq) key() string {
	b := make([]byte, 0, 32*len(a.allocs)+16*len(a.mappings))
	for _, al := range a.allocs {
		b = strconv.AppendInt(b, int64(al.Provider), 10)
		b = append(b, ':')
		b = append(b, al.Class...)
		b = append(b, '=')
		b = strconv.AppendInt(b, al.Amount, 10)
		b = append(b, ';')
	}
	for _, m := range a.mappings {
		b = append(b, '|')
		b = append(b, m.suffix...)
		b = append(b, ':')
		for _, p := range m.provs {
			b = strconv.AppendInt(b, int64(p), 10)
			b = append(b, ',')
		}
	}
	return string(b)
}

// sortAreqs orders requests by their first provider, then their key, so
// that limit keeps a stable prefix.
func sortAreqs(reqs []*areq) {
	keys := make(map[*areq]string, len(reqs))
	for _, a := range reqs {
		keys[a] = a.key()
	}
	sort.SliceStable(reqs, func(i, j int) bool {
		ai, aj := reqs[i], reqs[j]
		fi, fj := firstProvider(ai), firstProvider(aj)
		if fi != fj {
			return fi < fj
		}
		return keys[ai] < keys[aj]
	})
}

func firstProvider(a *areq) int {
	if len(a.allocs) > 0 {
		return a.allocs[0].Provider
	}
	for _, m := range a.mappings {
		if len(m.provs) > 0 {
			return int(m.provs[0])
		}
	}
	return -1
}

// classInv is one class's inventories in provider order, so that a scan
// over every provider of the class reads slices, not maps.
type classInv struct {
	prov []int32
	inv  []models.Inventory // normalized
	used []int64
	pos  []int32 // provider → its row, -1 without inventory
	// sharing lists the sharing providers among prov, and belowRoot the
	// roots with a descendant among prov (both on first use).
	sharing   []int32
	belowRoot Bitset
}

// fits is Placement's per-class check on row j with extra usage on top.
func (ci *classInv) fits(j int, amount, extra int64) bool {
	inv := ci.inv[j]
	used := ci.used[j] + extra
	return float64(used+amount) <= float64(inv.Total-inv.Reserved)*inv.AllocationRatio &&
		amount >= inv.MinUnit && amount <= inv.MaxUnit && amount%inv.StepSize == 0
}

// CandidateRoots returns the roots that have at least one allocation
// candidate for q, without building the candidates when q is one
// unnumbered group without traits (a root then qualifies exactly when
// every class has a row anchored to it); otherwise it asks
// AllocationCandidates.
func (ix *Index) CandidateRoots(q CandidateQuery, cat Catalog) (Bitset, error) {
	if len(q.Groups) != 1 || q.Groups[0].Suffix != "" || len(q.Groups[0].Required) > 0 || len(q.Groups[0].Forbidden) > 0 ||
		len(q.RootRequired) > 0 || len(q.RootForbidden) > 0 || q.Within != nil || len(q.Groups[0].Resources) == 0 {
		q.PerAnchor = true
		res, err := ix.AllocationCandidates(q, cat)
		if err != nil {
			return nil, err
		}
		out := NewBitset(len(ix.providers))
		for _, c := range res.Requests {
			out.Set(c.Anchor)
		}
		return out, nil
	}
	g := &q.Groups[0]
	n := len(ix.providers)
	out := NewBitset(n)
	for _, a := range g.Resources {
		if !cat.HasClass(a.Class) {
			return nil, &Unknown{Name: a.Class}
		}
	}
	inAggs, badAggs, ok := ix.directAggs(g.MemberOf)
	if !ok {
		return out, nil
	}
	treeRoot := int32(-1)
	if g.InTree != "" {
		p, found := ix.provByID[g.InTree]
		if !found {
			return out, nil
		}
		treeRoot = ix.root[p]
	}
	// A row (provider p with room, anchor root r) counts when member_of
	// keeps it: p or r in every required term, neither in a forbidden
	// aggregate. For a provider's own tree that is a set of providers:
	// allow holds those in the required terms or under a root that is,
	// deny those in a forbidden aggregate or under a root that is. A root
	// qualifies when every class has a row anchored to it.
	var allow, deny Bitset
	if inAggs != nil {
		allow = ix.spanKids(inAggs)
		defer ix.release(allow)
	}
	if badAggs != nil {
		deny = ix.spanKids(badAggs)
		defer ix.release(deny)
	}
	rows := ix.scratch()
	defer ix.release(rows)
	for k, a := range g.Resources {
		ci := ix.resIndex().classes[a.Class]
		if ci == nil {
			return out, nil
		}
		clear(rows)
		if len(q.Consumed) == 0 {
			fit := ix.Fitting(a.Class, a.Amount)
			for wi, w := range fit {
				if allow != nil {
					w &= allow[wi]
				}
				if deny != nil {
					w &^= deny[wi]
				}
				for ; w != 0; w &= w - 1 {
					p := int32(wi<<6 + bits.TrailingZeros64(w))
					if treeRoot < 0 || ix.root[p] == treeRoot {
						rows.Set(int(ix.root[p]))
					}
				}
			}
		} else {
			for j, p := range ci.prov {
				if treeRoot >= 0 && ix.root[p] != treeRoot || allow != nil && !allow.Has(int(p)) || deny != nil && deny.Has(int(p)) {
					continue
				}
				if ci.fits(j, a.Amount, q.Consumed[int(p)][a.Class]) {
					rows.Set(int(ix.root[p]))
				}
			}
		}
		if treeRoot < 0 && ix.HasSharing() {
			// A sharing provider in the required aggregates also serves
			// the roots it anchors.
			for _, s := range ix.sharingWith(ci) {
				p := int(s)
				j := int(ci.pos[p])
				if inAggs != nil && !inAggs.Has(p) || badAggs != nil && badAggs.Has(p) || len(ix.AggregatesOf(p)) == 0 ||
					!ci.fits(j, a.Amount, q.Consumed[p][a.Class]) {
					continue
				}
				for _, r := range ix.Anchors(p) {
					if badAggs == nil || !badAggs.Has(r) {
						rows.Set(r)
					}
				}
			}
		}
		if k == 0 {
			copy(out, rows)
		} else {
			out.And(rows)
		}
		if out.IsEmpty() {
			return out, nil
		}
	}
	return out, nil
}

// spanKids is d with the other providers of every tree whose root is in d,
// in a scratch set.
func (ix *Index) spanKids(d Bitset) Bitset {
	out := ix.scratch()
	copy(out, d)
	if len(ix.trees) == 0 {
		return out
	}
	for wi, w := range d {
		for ; w != 0; w &= w - 1 {
			if t := ix.treePos[wi<<6+bits.TrailingZeros64(w)]; t >= 0 {
				for _, c := range ix.treeKids[t] {
					out.Set(int(c))
				}
			}
		}
	}
	return out
}

// RootsWithClassBelow is the set of roots having a descendant with an
// inventory of class. Do not modify.
func (ix *Index) RootsWithClassBelow(class string) Bitset {
	c := ix.resIndex()
	ci := c.classes[class]
	if ci == nil {
		return NewBitset(len(ix.providers))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ci.belowRoot == nil {
		ci.belowRoot = NewBitset(len(ix.providers))
		for _, p := range ci.prov {
			if ix.parent[p] >= 0 {
				ci.belowRoot.Set(int(ix.root[p]))
			}
		}
	}
	return ci.belowRoot
}

// SharingWithClass lists the sharing providers having inventory of class,
// in provider order. Do not modify.
func (ix *Index) SharingWithClass(class string) []int32 {
	ci := ix.resIndex().classes[class]
	if ci == nil {
		return nil
	}
	return ix.sharingWith(ci)
}

// sharingWith lists the sharing providers having inventory of ci's class.
func (ix *Index) sharingWith(ci *classInv) []int32 {
	c := ix.resIndex()
	c.mu.Lock()
	defer c.mu.Unlock()
	if ci.sharing == nil {
		ci.sharing = []int32{}
		for _, p := range ci.prov {
			if ix.sharing.Has(int(p)) {
				ci.sharing = append(ci.sharing, p)
			}
		}
	}
	return ci.sharing
}

// HasInventories reports whether any provider has an inventory.
func (ix *Index) HasInventories() bool { return len(ix.resIndex().byClass) > 0 }
