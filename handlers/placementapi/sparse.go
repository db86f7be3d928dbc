package placementapi

import (
	"slices"

	"corral/models/placement"
)

// sparseLimit is the most candidates the sparse evaluation walks; above
// it the bitset evaluation of the index is as cheap.
const sparseLimit = 4096

// directSparse answers member_of in Direct mode from the member lists of
// the smallest required term, without the index's provider-wide bitsets:
// a query naming an aggregate of a few dozen providers then costs a few
// dozen lookups, not five 100,000-bit sets. ok is false when there is no
// required term or the smallest is too large; the caller then evaluates.
// The answer is the providers directly in one aggregate of every required
// term and in no forbidden one, in provider order, as
// ix.Evaluate(t, placement.Direct) answers.
func directSparse(ix *placement.Index, t placement.Terms) (providers []int32, ok bool) {
	if len(t.Required) == 0 {
		return nil, false
	}
	terms := make([][]int32, len(t.Required))
	smallest, size := 0, -1
	for k, term := range t.Required {
		n := 0
		for _, u := range term {
			if a, found := ix.AggregateByUUID(u); found {
				terms[k] = append(terms[k], int32(a))
				n += len(ix.Members(a))
			}
		}
		if size < 0 || n < size {
			smallest, size = k, n
		}
	}
	if size > sparseLimit {
		return nil, false
	}
	var cand []int32
	for _, a := range terms[smallest] {
		cand = append(cand, ix.Members(int(a))...)
	}
	slices.Sort(cand)
	cand = slices.Compact(cand)
	var forbidden []int32
	for _, u := range t.Forbidden {
		if a, found := ix.AggregateByUUID(u); found {
			forbidden = append(forbidden, int32(a))
		}
	}
	out := cand[:0]
	for _, p := range cand {
		aggs := ix.AggregatesOf(int(p)) // sorted
		keep := true
		for k, term := range terms {
			if k != smallest && !anyIn(aggs, term) {
				keep = false
				break
			}
		}
		if keep && anyIn(aggs, forbidden) {
			keep = false
		}
		if keep {
			out = append(out, p)
		}
	}
	return out, true
}

// anyIn reports whether one of want is in sorted.
func anyIn(sorted, want []int32) bool {
	for _, a := range want {
		if _, found := slices.BinarySearch(sorted, a); found {
			return true
		}
	}
	return false
}
