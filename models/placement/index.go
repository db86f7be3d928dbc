package placement

import (
	"slices"
	"sort"
	"sync"

	"corral/models"
)

// Index is an immutable view of provider trees and aggregate membership,
// with providers and aggregates numbered densely so that sets of them are
// bitsets and slices instead of maps.
type Index struct {
	providers []*models.Provider
	names     []string // provider names, read without touching the providers
	provByID  map[string]int32
	provByNm  map[string]int32
	parent    []int32 // -1 for a root
	root      []int32
	sharing   Bitset
	hosts     []int32           // roots that are not sharing, in provider order
	children  map[int32][]int32 // root → every other provider of its tree
	// trees lists the roots that have children, in provider order, so that
	// evaluation walks a slice rather than the map.
	trees    []int32
	treeKids [][]int32 // children of trees[i]
	treePos  []int32   // provider → its position in trees, -1 if not there

	aggs      []*models.Aggregate
	aggByID   map[string]int32
	aggByName map[string]int32
	// aggregate → member providers, sorted
	aggMembers [][]int32
	// provider → aggregates, as one CSR array (provAggs[provStart[p]:provStart[p+1]])
	provStart []int32
	provAggs  []int32

	// res indexes inventories and traits for allocation candidates, built
	// on first use; it depends on the providers only, so an index updated
	// for its aggregates alone shares it (a new snapshot then finds it warm).
	res *catalogIndex
	// bitsets holds scratch sets over the providers (scratch, release).
	bitsets sync.Pool
	// anchors caches Anchors of sharing providers (they depend on the
	// aggregates, so they are not part of res).
	anchorMu sync.Mutex
	anchors  map[int32][]int

	// forbTexts holds each aggregate's forbidden-group reason, without
	// and with the spanning note (on first use: a preview forbidding
	// hundreds of reservation aggregates names each of them).
	forbOnce  sync.Once
	forbTexts [2][]string
}

// forbiddenReason is GroupReason for an exclusion by forbidden aggregate a.
func (ix *Index) forbiddenReason(a int, spanning bool) string {
	ix.forbOnce.Do(func() {
		for k, span := range []string{"", " (itself or its root)"} {
			ix.forbTexts[k] = make([]string, len(ix.aggs))
			for i, agg := range ix.aggs {
				ix.forbTexts[k][i] = "in forbidden aggregate " + agg.Name + span
			}
		}
	})
	if spanning {
		return ix.forbTexts[1][a]
	}
	return ix.forbTexts[0][a]
}

// NewIndex builds the index. Provider parents and aggregate members are
// provider UUIDs; a dangling reference, a duplicate UUID or a parent cycle is
// an Invalid error naming the offending object.
func NewIndex(providers []models.Provider, aggregates []models.Aggregate) (*Index, error) {
	n := len(providers)
	ix := &Index{
		providers: make([]*models.Provider, n),
		names:     make([]string, n),
		provByID:  make(map[string]int32, n),
		provByNm:  make(map[string]int32, n),
		parent:    make([]int32, n),
		root:      make([]int32, n),
		sharing:   NewBitset(n),
		children:  map[int32][]int32{},
		aggByID:   make(map[string]int32, len(aggregates)),
		aggByName: make(map[string]int32, len(aggregates)),
		res:       &catalogIndex{},
	}
	for i := range providers {
		p := &providers[i]
		ix.providers[i] = p
		ix.names[i] = p.Name
		// One map operation per provider: a duplicate leaves the size unchanged.
		before := len(ix.provByID)
		ix.provByID[p.UUID] = int32(i)
		if len(ix.provByID) == before {
			return nil, models.E(models.Invalid, "providers", "duplicate provider uuid %q", p.UUID)
		}
		if p.Name != "" {
			ix.provByNm[p.Name] = int32(i)
		}
		if p.IsSharing() {
			ix.sharing.Set(i)
		}
	}
	for i, p := range ix.providers {
		ix.parent[i] = -1
		if p.ParentUUID != nil {
			j, ok := ix.provByID[*p.ParentUUID]
			if !ok {
				return nil, models.E(models.Invalid, "providers", "provider %q: no parent provider %q", p.Name, *p.ParentUUID)
			}
			ix.parent[i] = j
		}
	}
	// Roots by walking parents; a walk longer than n means a cycle.
	for i := range ix.providers {
		r, steps := int32(i), 0
		for ix.parent[r] >= 0 {
			r = ix.parent[r]
			if steps++; steps > n {
				return nil, models.E(models.Invalid, "providers", "provider %q: parent chain forms a cycle", ix.providers[i].Name)
			}
		}
		ix.root[i] = r
		if r != int32(i) {
			if _, ok := ix.children[r]; !ok {
				ix.trees = append(ix.trees, r)
			}
			ix.children[r] = append(ix.children[r], int32(i))
		} else if !ix.sharing.Has(i) {
			ix.hosts = append(ix.hosts, int32(i))
		}
	}

	ix.treeKids = make([][]int32, len(ix.trees))
	ix.treePos = make([]int32, n)
	for i := range ix.treePos {
		ix.treePos[i] = -1
	}
	for i, r := range ix.trees {
		ix.treeKids[i] = ix.children[r]
		ix.treePos[r] = int32(i)
	}

	if err := ix.indexAggregates(aggregates, nil); err != nil {
		return nil, err
	}
	return ix, nil
}

// WithAggregates returns an index of the same providers with aggregates
// in place of ix's: what a change to aggregates (their metadata or
// members) needs, without indexing 100,000 providers again. The member
// lists of aggregates not in changed (by UUID) are taken from ix, so
// changed must name every aggregate whose members differ.
func (ix *Index) WithAggregates(aggregates []models.Aggregate, changed map[string]bool) (*Index, error) {
	return ix.WithWorld(nil, aggregates, changed)
}

// WithWorld is WithAggregates for a world whose providers may also have
// changed in place: providers, when not nil, must list the same providers
// in the same order, each with the same UUID, name, parent and sharing
// trait (what the tree and the lookups are built from) — their
// generations, inventories and other traits may differ. Anything else is
// an Invalid error.
func (ix *Index) WithWorld(providers []models.Provider, aggregates []models.Aggregate, changed map[string]bool) (*Index, error) {
	ptrs, res := ix.providers, ix.res
	if providers != nil {
		res = &catalogIndex{} // inventories, usages or traits may differ
		if len(providers) != len(ix.providers) {
			return nil, models.E(models.Invalid, "providers", "%d providers, the index has %d", len(providers), len(ix.providers))
		}
		ptrs = make([]*models.Provider, len(providers))
		for i := range providers {
			p, o := &providers[i], ix.providers[i]
			if p.UUID != o.UUID || p.Name != o.Name || !sameParent(p.ParentUUID, o.ParentUUID) || p.IsSharing() != o.IsSharing() {
				return nil, models.E(models.Invalid, "providers", "provider %q changed more than in place", p.UUID)
			}
			ptrs[i] = p
		}
	}
	nx := &Index{
		providers: ptrs, names: ix.names, provByID: ix.provByID, provByNm: ix.provByNm,
		parent: ix.parent, root: ix.root, sharing: ix.sharing, hosts: ix.hosts,
		children: ix.children, trees: ix.trees, treeKids: ix.treeKids, treePos: ix.treePos,
		aggByID:   make(map[string]int32, len(aggregates)),
		aggByName: make(map[string]int32, len(aggregates)),
		res:       res,
	}
	reuse := func(agg *models.Aggregate) ([]int32, bool) {
		if changed[agg.UUID] {
			return nil, false
		}
		a, ok := ix.aggByID[agg.UUID]
		if !ok {
			return nil, false
		}
		return ix.aggMembers[a], true
	}
	if err := nx.indexAggregates(aggregates, reuse); err != nil {
		return nil, err
	}
	return nx, nil
}

// indexAggregates fills in the aggregate side of the index; reuse, when
// set, may supply an aggregate's sorted member list.
func (ix *Index) indexAggregates(aggregates []models.Aggregate, reuse func(*models.Aggregate) ([]int32, bool)) error {
	n := len(ix.providers)
	ix.aggs = make([]*models.Aggregate, len(aggregates))
	ix.aggMembers = make([][]int32, len(aggregates))
	counts := make([]int32, n+1)
	for a := range aggregates {
		agg := &aggregates[a]
		ix.aggs[a] = agg
		if _, dup := ix.aggByID[agg.UUID]; dup {
			return models.E(models.Invalid, "aggregates", "duplicate aggregate uuid %q", agg.UUID)
		}
		ix.aggByID[agg.UUID] = int32(a)
		ix.aggByName[agg.Name] = int32(a)
		members, ok := []int32(nil), false
		if reuse != nil {
			members, ok = reuse(agg)
		}
		if !ok {
			members = make([]int32, 0, len(agg.Members))
			for _, m := range agg.Members {
				p, ok := ix.provByID[m]
				if !ok {
					return models.E(models.Invalid, "aggregates", "aggregate %q: no member provider %q", agg.Name, m)
				}
				// Placement's membership: member_of does not see a host
				// only Nova has in the aggregate.
				if len(agg.NotInPlacement) > 0 && slices.Contains(agg.NotInPlacement, m) {
					continue
				}
				members = append(members, p)
			}
			sort.Slice(members, func(i, j int) bool { return members[i] < members[j] })
			members = dedup(members)
		}
		ix.aggMembers[a] = members
		for _, p := range members {
			counts[p+1]++
		}
	}
	for i := 1; i <= n; i++ {
		counts[i] += counts[i-1]
	}
	ix.provStart = counts
	ix.provAggs = make([]int32, counts[n])
	fill := append([]int32(nil), counts[:n]...)
	for a, members := range ix.aggMembers {
		for _, p := range members {
			ix.provAggs[fill[p]] = int32(a)
			fill[p]++
		}
	}
	return nil
}

func sameParent(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

func dedup(s []int32) []int32 {
	if len(s) < 2 {
		return s
	}
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// Len is the number of providers.
func (ix *Index) Len() int { return len(ix.providers) }

// Provider returns provider i.
func (ix *Index) Provider(i int) *models.Provider { return ix.providers[i] }

// Name returns provider i's name.
func (ix *Index) Name(i int) string { return ix.names[i] }

// ProviderByUUID finds a provider's index by UUID.
func (ix *Index) ProviderByUUID(u string) (int, bool) {
	i, ok := ix.provByID[u]
	return int(i), ok
}

// ProviderByName finds a provider's index by name.
func (ix *Index) ProviderByName(name string) (int, bool) {
	i, ok := ix.provByNm[name]
	return int(i), ok
}

// LookupProvider finds a provider by UUID first, then by name.
func (ix *Index) LookupProvider(ref string) (int, bool) {
	if i, ok := ix.provByID[ref]; ok {
		return int(i), true
	}
	return ix.ProviderByName(ref)
}

// Parent is provider i's parent, or -1.
func (ix *Index) Parent(i int) int { return int(ix.parent[i]) }

// Root is provider i's root (i itself for a root).
func (ix *Index) Root(i int) int { return int(ix.root[i]) }

// IsSharing reports whether provider i carries MISC_SHARES_VIA_AGGREGATE.
func (ix *Index) IsSharing(i int) bool { return ix.sharing.Has(i) }

// IsHost reports whether provider i is a host (a root that is not sharing).
func (ix *Index) IsHost(i int) bool { return ix.root[i] == int32(i) && !ix.sharing.Has(i) }

// Hosts returns the host providers in provider order. Do not modify.
func (ix *Index) Hosts() []int32 { return ix.hosts }

// Descendants returns every provider below root i (not i itself), in
// provider order. Do not modify.
func (ix *Index) Descendants(root int) []int32 { return ix.kids(int32(root)) }

// kids is Descendants over the tree slices, cheaper than the map.
func (ix *Index) kids(root int32) []int32 {
	if t := ix.treePos[root]; t >= 0 {
		return ix.treeKids[t]
	}
	return nil
}

// NumAggregates is the number of aggregates.
func (ix *Index) NumAggregates() int { return len(ix.aggs) }

// Aggregate returns aggregate a.
func (ix *Index) Aggregate(a int) *models.Aggregate { return ix.aggs[a] }

// AggregateByUUID finds an aggregate's index by UUID (exact string match,
// as Placement compares them).
func (ix *Index) AggregateByUUID(u string) (int, bool) {
	a, ok := ix.aggByID[u]
	return int(a), ok
}

// AggregateByName finds an aggregate's index by name.
func (ix *Index) AggregateByName(name string) (int, bool) {
	a, ok := ix.aggByName[name]
	return int(a), ok
}

// Members returns aggregate a's member providers, sorted. Do not modify.
func (ix *Index) Members(a int) []int32 { return ix.aggMembers[a] }

// AggregatesOf returns the aggregates provider i is directly in, sorted.
// Do not modify.
func (ix *Index) AggregatesOf(i int) []int32 { return ix.provAggs[ix.provStart[i]:ix.provStart[i+1]] }

// InAggregate reports whether provider i is directly in aggregate a.
func (ix *Index) InAggregate(i, a int) bool {
	for _, x := range ix.AggregatesOf(i) {
		if int(x) == a {
			return true
		}
	}
	return false
}

// Anchors returns the roots a sharing provider serves: the roots of every
// provider that shares an aggregate with it, plus the sharing provider
// itself (Placement's anchors_for_sharing_providers), sorted. Computed on
// first use per sharing provider (every preview asks again), on demand for
// other providers. Do not modify.
func (ix *Index) Anchors(i int) []int {
	if !ix.sharing.Has(i) {
		return ix.computeAnchors(i)
	}
	ix.anchorMu.Lock()
	a, ok := ix.anchors[int32(i)]
	ix.anchorMu.Unlock()
	if ok {
		return a
	}
	a = ix.computeAnchors(i)
	ix.anchorMu.Lock()
	if ix.anchors == nil {
		ix.anchors = map[int32][]int{}
	}
	ix.anchors[int32(i)] = a
	ix.anchorMu.Unlock()
	return a
}

func (ix *Index) computeAnchors(i int) []int {
	seen := map[int32]bool{ix.root[i]: true}
	out := []int{int(ix.root[i])}
	for _, a := range ix.AggregatesOf(i) {
		for _, m := range ix.aggMembers[a] {
			r := ix.root[m]
			if !seen[r] {
				seen[r] = true
				out = append(out, int(r))
			}
		}
	}
	sort.Ints(out)
	return out
}

// SharingFor returns the sharing providers that serve root r: those sharing
// an aggregate with any provider of r's tree.
func (ix *Index) SharingFor(r int) []int {
	seen := map[int32]bool{}
	var out []int
	visit := func(p int32) {
		for _, a := range ix.AggregatesOf(int(p)) {
			for _, m := range ix.aggMembers[a] {
				if ix.sharing.Has(int(m)) && !seen[m] && m != int32(r) {
					seen[m] = true
					out = append(out, int(m))
				}
			}
		}
	}
	visit(int32(r))
	for _, c := range ix.kids(int32(r)) {
		visit(c)
	}
	sort.Ints(out)
	return out
}

// scratch returns an empty set over the providers, from a pool: every
// preview makes a dozen temporary sets of 100,000 bits, garbage the
// collector would otherwise mark the whole heap for. Give it back with
// release once nothing refers to it.
func (ix *Index) scratch() Bitset {
	if b, ok := ix.bitsets.Get().(*Bitset); ok {
		clear(*b)
		return *b
	}
	return NewBitset(len(ix.providers))
}

func (ix *Index) release(b Bitset) {
	if len(b) == (len(ix.providers)+63)/64 {
		ix.bitsets.Put(&b)
	}
}

// Providers in aggregate set (the union of the given aggregates' members).
func (ix *Index) union(aggs []int32) Bitset {
	b := NewBitset(len(ix.providers))
	for _, a := range aggs {
		for _, p := range ix.aggMembers[a] {
			b.Set(int(p))
		}
	}
	return b
}
