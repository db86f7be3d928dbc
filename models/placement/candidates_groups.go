package placement

import (
	"sort"
)

// One request group's allocation requests: a numbered group is satisfied
// by one provider (single), the unnumbered group may span a provider tree
// and the sharing providers anchored to it (multiple).

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
	K := len(gc.g.Resources)
	if K == 0 {
		// Upstream's tree search finds nothing without a resource.
		return nil
	}
	rows, roots := gc.treeRows()
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
		var enough bool
		if out, enough = gc.combinations(r, lists, out); enough {
			return out
		}
	}
	return out
}

// treeRows gathers, per requested class, the rows (provider with room,
// anchor root) member_of and the anchor roots keep: a provider anchors
// its own root, a sharing provider also every root it is anchored to. It
// returns the rows and, in order, the roots having a row of every class.
func (gc *groupCtx) treeRows() ([]classRows, []int32) {
	ix := gc.ix
	n := len(ix.providers)
	K := len(gc.g.Resources)
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
	for k := range gc.g.Resources {
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
			return nil, nil
		}
		alive := 0
		for _, r := range cr.roots {
			if int(hits[r]) == k {
				hits[r]++
				alive++
			}
		}
		if alive == 0 {
			return nil, nil
		}
	}
	var roots []int32
	for _, r := range rows[0].roots {
		if int(hits[r]) == K {
			roots = append(roots, r)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i] < roots[j] })
	return rows, roots
}

// combinations appends to out a request for each combination of one
// provider per class from lists (the anchor r's rows) whose traits pass, in
// odometer order; enough is true when the group's stopAt is reached.
func (gc *groupCtx) combinations(r int32, lists [][]int32, out []*areq) (_ []*areq, enough bool) {
	g := gc.g
	K := len(lists)
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
				return out, true
			}
			if gc.onePerRoot {
				// One group asks each class once, and each row was
				// checked against capacity: the first combination
				// fits.
				return out, false
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
			return out, false
		}
	}
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
