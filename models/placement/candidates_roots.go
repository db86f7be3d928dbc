package placement

import (
	"math/bits"
)

// Which roots have a candidate at all (the preview's question), answered
// from the class index without building candidates when the query allows.

// CandidateRoots returns the roots that have at least one allocation
// candidate for q, without building the candidates when q is one
// unnumbered group without traits (a root then qualifies exactly when
// every class has a row anchored to it); otherwise it asks
// AllocationCandidates.
func (ix *Index) CandidateRoots(q CandidateQuery, cat Catalog) (Bitset, error) {
	if !rootsWithoutCandidates(q) {
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
	rf := rowFilter{treeRoot: treeRoot, inAggs: inAggs, badAggs: badAggs}
	if inAggs != nil {
		rf.allow = ix.spanKids(inAggs)
		defer ix.release(rf.allow)
	}
	if badAggs != nil {
		rf.deny = ix.spanKids(badAggs)
		defer ix.release(rf.deny)
	}
	rows := ix.scratch()
	defer ix.release(rows)
	for k, a := range g.Resources {
		ci := ix.resIndex().classes[a.Class]
		if ci == nil {
			return out, nil
		}
		clear(rows)
		ix.classRowRoots(rows, ci, a, q.Consumed, rf)
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

// rootsWithoutCandidates reports whether CandidateRoots may answer q from
// the class rows alone: one unnumbered group with resources, no traits, no
// root traits and no Within.
func rootsWithoutCandidates(q CandidateQuery) bool {
	return len(q.Groups) == 1 && q.Groups[0].Suffix == "" && len(q.Groups[0].Required) == 0 && len(q.Groups[0].Forbidden) == 0 &&
		len(q.RootRequired) == 0 && len(q.RootForbidden) == 0 && q.Within == nil && len(q.Groups[0].Resources) != 0
}

// rowFilter is what keeps a class row in CandidateRoots: in_tree's root
// (-1 for any), the required and forbidden aggregates, and the providers
// they allow and deny in their own trees (nil: no such term).
type rowFilter struct {
	treeRoot        int32
	inAggs, badAggs Bitset
	allow, deny     Bitset
}

// classRowRoots sets in rows the roots having a row of class ci with room
// for a (on top of consumed) that rf keeps, sharing providers included.
func (ix *Index) classRowRoots(rows Bitset, ci *classInv, a Amount, consumed map[int]map[string]int64, rf rowFilter) {
	treeRoot, allow, deny := rf.treeRoot, rf.allow, rf.deny
	if len(consumed) == 0 {
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
			if ci.fits(j, a.Amount, consumed[int(p)][a.Class]) {
				rows.Set(int(ix.root[p]))
			}
		}
	}
	if treeRoot < 0 && ix.HasSharing() {
		// A sharing provider in the required aggregates also serves
		// the roots it anchors.
		inAggs, badAggs := rf.inAggs, rf.badAggs
		for _, s := range ix.sharingWith(ci) {
			p := int(s)
			j := int(ci.pos[p])
			if inAggs != nil && !inAggs.Has(p) || badAggs != nil && badAggs.Has(p) || len(ix.AggregatesOf(p)) == 0 ||
				!ci.fits(j, a.Amount, consumed[p][a.Class]) {
				continue
			}
			for _, r := range ix.Anchors(p) {
				if badAggs == nil || !badAggs.Has(r) {
					rows.Set(r)
				}
			}
		}
	}
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
