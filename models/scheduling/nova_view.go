package scheduling

import (
	"fmt"
	"slices"

	"corral/models"
)

// novaView is the trace's account of the Nova previewed: the release, the
// exact allocation-candidates query, and what corral does not model.
func (r *run) novaView() *NovaView {
	st := &r.req.Settings
	rel, ok := models.LookupNovaRelease(st.NovaRelease)
	if !ok {
		rel, _ = models.LookupNovaRelease("")
	}
	rr := NovaResourceRequest(r.req.Flavor, r.req.Image, r.req.IsBFV)
	numbered := map[string][]string{}
	for _, k := range r.suffixes {
		numbered[k] = r.groups[k].Terms.Values()
	}
	v := &NovaView{Release: rel.Label(), Skipped: rr.Skipped,
		AllocationCandidatesQuery: rr.QueryString(placementLimit(st), r.memberOf, numbered)}
	for _, f := range st.EnabledFilters {
		if !models.ModelledHostFilter(f) {
			v.NotModelled = append(v.NotModelled, f)
		}
	}
	v.NotModelled = append(v.NotModelled, notModelledWeighers(st)...)
	slices.Sort(v.NotModelled)
	v.Ranking = rankingNote(st)
	return v
}

// placementLimit is max_placement_results as Nova sends it.
func placementLimit(st *models.Settings) int {
	return int(st.MaxPlacementResults)
}

// rankingNote says how Nova picks among the best-weighed hosts
// (nova/scheduler/manager.py _get_sorted_hosts): at random among the
// host_subset_size best, or, with a subset of 1 and
// shuffle_best_same_weighed_hosts, among those sharing the best weight.
func rankingNote(st *models.Settings) string {
	n := int(st.HostSubsetSize)
	switch {
	case n > 1:
		return fmt.Sprintf("host_subset_size = %d: Nova picks at random among the %d best-weighed hosts, not always the first", n, n)
	case st.ShuffleBestSameWeighedHosts:
		return "shuffle_best_same_weighed_hosts: Nova picks at random among the hosts sharing the best weight"
	}
	return "Nova picks the best-weighed host; among equal weights it takes the first Placement returned (corral lists them by name)"
}

// notePlacementLimit says when more hosts pass placement than Nova asks
// Placement for (max_placement_results): Nova then weighs only a subset.
func (r *run) notePlacementLimit(v *NovaView) {
	limit := placementLimit(&r.req.Settings)
	if v == nil || limit <= 0 || r.res == nil {
		return
	}
	n := 0
	for _, hr := range r.results {
		if hr.stage != 0 {
			n++
		}
	}
	if n > limit {
		v.Ranking += fmt.Sprintf("; %d hosts pass placement but Nova asks for %d candidates (max_placement_results): it filters and weighs only those Placement returns", n, limit)
	}
}
