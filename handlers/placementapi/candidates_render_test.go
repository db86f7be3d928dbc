package placementapi

import "corral/models/placement"

// The tests' reference for the candidates answer: the maps encoding/json
// would write, which appendCandidates must match byte for byte.

// writeCandidates is appendCandidates into a new buffer.
func writeCandidates(ix *placement.Index, enc *encodedProviders, res *placement.Candidates, req *candidateRequest, v placement.Version) []byte {
	return appendCandidates(nil, ix, enc, res, req, v)
}

// renderCandidates is the answer as maps, the form encoding/json would
// write; writeCandidates must say the same (a test compares them).
func renderCandidates(ix *placement.Index, res *placement.Candidates, req *candidateRequest, v placement.Version) map[string]any {
	areqs := make([]any, 0, len(res.Requests))
	for _, cand := range res.Requests {
		if v.AtLeast(12) {
			allocs := map[string]map[string]map[string]int64{}
			for _, a := range cand.Allocs {
				u := ix.Provider(a.Provider).UUID
				if allocs[u] == nil {
					allocs[u] = map[string]map[string]int64{"resources": {}}
				}
				allocs[u]["resources"][a.Class] = a.Amount
			}
			item := map[string]any{"allocations": allocs}
			if v.AtLeast(34) {
				m := map[string][]string{}
				for _, gm := range cand.Mappings {
					l := make([]string, len(gm.Providers))
					for i, p := range gm.Providers {
						l[i] = ix.Provider(p).UUID
					}
					m[gm.Suffix] = l
				}
				item["mappings"] = m
			}
			areqs = append(areqs, item)
			continue
		}
		var list []any
		var order []int
		by := map[int]map[string]int64{}
		for _, a := range cand.Allocs {
			if by[a.Provider] == nil {
				by[a.Provider] = map[string]int64{}
				order = append(order, a.Provider)
			}
			by[a.Provider][a.Class] = a.Amount
		}
		for _, p := range order {
			list = append(list, map[string]any{
				"resource_provider": map[string]string{"uuid": ix.Provider(p).UUID},
				"resources":         by[p],
			})
		}
		areqs = append(areqs, map[string]any{"allocations": list})
	}
	sums := make(map[string]any, len(res.Summaries))
	for _, i := range res.Summaries {
		p := ix.Provider(i)
		resources := map[string]summaryResource{}
		for rc, inv := range p.Inventories {
			if !v.AtLeast(27) && !req.requested[rc] {
				continue
			}
			resources[rc] = summaryResource{Capacity: placement.Capacity(inv), Used: p.Usages[rc]}
		}
		s := map[string]any{"resources": resources}
		if v.AtLeast(17) {
			traits := p.Traits
			if traits == nil {
				traits = []string{}
			}
			s["traits"] = traits
		}
		if v.AtLeast(29) {
			root := p.RootUUID
			if root == "" {
				root = p.UUID
			}
			s["parent_provider_uuid"] = p.ParentUUID
			s["root_provider_uuid"] = root
		}
		sums[p.UUID] = s
	}
	return map[string]any{"allocation_requests": areqs, "provider_summaries": sums}
}
