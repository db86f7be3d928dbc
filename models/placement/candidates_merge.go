package placement

import (
	"slices"
	"sort"
	"strconv"

	"corral/models"
)

// Merging the groups' requests per anchor root (_merge_candidates):
// group_policy, same_subtree, consolidation, the final capacity check,
// deduplication and the stable order a limit keeps.

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
	if len(perGroup) == 1 {
		return ix.mergeOne(q, perGroup[0], stopAt)
	}
	n := len(ix.providers)
	G := len(perGroup)
	start, byAnchor := bucketByAnchor(perGroup, n)
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

// mergeOne is merge for a single group: each request is its own
// consolidation, and every row was checked against capacity. Per anchor
// the first request is kept; otherwise only a sharing provider can yield
// the same request for two anchors.
func (ix *Index) mergeOne(q CandidateQuery, reqs []*areq, stopAt int) []*areq {
	if q.PerAnchor {
		var out []*areq
		done := map[int32]bool{}
		for _, a := range reqs {
			if done[a.anchor] {
				continue
			}
			done[a.anchor] = true
			sortAllocs(a.allocs)
			out = append(out, a)
		}
		return out
	}
	dedup := ix.HasSharing()
	var seen map[string]bool
	if dedup {
		seen = map[string]bool{}
	}
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

// bucketByAnchor groups each group's requests by anchor, keeping their
// order (a counting sort): byAnchor[g][start[g][r]:start[g][r+1]] are
// group g's requests anchored to r, for the n providers.
func bucketByAnchor(perGroup [][]*areq, n int) (start [][]int32, byAnchor [][]*areq) {
	start = make([][]int32, len(perGroup))
	byAnchor = make([][]*areq, len(perGroup))
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
	return start, byAnchor
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
