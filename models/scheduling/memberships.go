package scheduling

import (
	"slices"

	"corral/models/placement"
)

// Nova's side of aggregate membership. The placement index holds
// Placement's (what member_of reads); host filters, zones and the impact
// matrix read Nova's aggregate hosts. The two are the same except where a
// synced aggregate names the members only one side has
// (models.Aggregate.NotInPlacement / NotInNova); novaView holds just those
// differences, and is nil when there are none.
type novaView struct {
	extra   map[int32][]int32 // provider → aggregates Nova has it in, Placement not
	missing map[[2]int32]bool // (provider, aggregate) Placement has, Nova not
	members map[int32][]int32 // aggregate → Nova's members, for aggregates that differ
}

func buildNovaView(ix *placement.Index) *novaView {
	var v *novaView
	for a := 0; a < ix.NumAggregates(); a++ {
		agg := ix.Aggregate(a)
		if !agg.Diverges() {
			continue
		}
		if v == nil {
			v = &novaView{extra: map[int32][]int32{}, missing: map[[2]int32]bool{}, members: map[int32][]int32{}}
		}
		var out []int32
		for _, p := range ix.Members(a) {
			if slices.Contains(agg.NotInNova, ix.Provider(int(p)).UUID) {
				v.missing[[2]int32{p, int32(a)}] = true
				continue
			}
			out = append(out, p)
		}
		for _, u := range agg.NotInPlacement {
			if p, ok := ix.LookupProvider(u); ok {
				v.extra[int32(p)] = append(v.extra[int32(p)], int32(a))
				out = append(out, int32(p))
			}
		}
		slices.Sort(out)
		v.members[int32(a)] = slices.Compact(out)
	}
	return v
}

// novaAggregatesOf lists, sorted, the aggregates Nova has provider p in.
func (s *Snapshot) novaAggregatesOf(p int) []int32 {
	in := s.ix.AggregatesOf(p)
	v := s.nova
	if v == nil {
		return in
	}
	extra := v.extra[int32(p)]
	var out []int32
	for _, a := range in {
		if !v.missing[[2]int32{int32(p), a}] {
			out = append(out, a)
		}
	}
	if len(out) == len(in) && len(extra) == 0 {
		return in
	}
	out = append(out, extra...)
	slices.Sort(out)
	return slices.Compact(out)
}

// novaMembers lists, sorted, the providers Nova has in aggregate a.
func (s *Snapshot) novaMembers(a int) []int32 {
	if s.nova != nil {
		if m, ok := s.nova.members[int32(a)]; ok {
			return m
		}
	}
	return s.ix.Members(a)
}
