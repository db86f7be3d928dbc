package query

import (
	"strconv"

	"corral/models/placement"
	"corral/models/scheduling"
	"corral/views"
)

// maxReasons and maxModeRows cap what the page lists; the counts stay
// complete.
const (
	maxReasons  = 12
	maxModeRows = 100
)

// presentTrace turns a trace into what the page shows. snap is the world
// the trace was computed on, for tree shapes.
func presentTrace(tr *scheduling.Trace, snap *scheduling.Snapshot) *views.QueryTrace {
	v := &views.QueryTrace{
		PlacementQuery:    tr.PlacementQuery,
		Providers:         tr.Summary.Providers,
		ProvidersExcluded: tr.Summary.ProvidersExcluded,
		HostsTotal:        tr.Summary.Hosts,
		HostsPassed:       tr.Summary.HostsPassed,
		Truncated:         tr.Truncated,
	}
	if tr.Error != nil {
		v.Error = *tr.Error
	}
	for _, rf := range tr.RequestFilters {
		v.RequestFilters = append(v.RequestFilters, views.QueryRequestFilter{Name: rf.Name, Effect: rf.Effect, Detail: rf.Detail})
	}
	v.Funnel = funnel(tr)
	for i, r := range tr.Summary.Reasons {
		if i == maxReasons {
			break
		}
		v.Reasons = append(v.Reasons, views.QueryReason{Stage: r.Stage, Reason: r.Reason, Count: r.Count, Examples: r.Examples})
	}
	v.Trees = trees(tr.Providers, snap)
	for _, h := range tr.Hosts {
		qh := views.QueryHost{Name: h.Name, Passed: h.Passed, Stage: h.Stage, Reason: h.Reason}
		if h.Weight != nil {
			qh.Weight = strconv.FormatFloat(*h.Weight, 'f', 3, 64)
		}
		v.Hosts = append(v.Hosts, qh)
	}
	return v
}

// funnel is providers → after Placement, then hosts → after Placement →
// after each host filter → weighed hosts.
func funnel(tr *scheduling.Trace) []views.QueryFunnelStep {
	s := tr.Summary
	out := []views.QueryFunnelStep{
		{Label: "Providers", Unit: "providers", Remain: s.Providers},
	}
	if len(s.Stages) == 0 {
		return append(out, views.QueryFunnelStep{Label: "Eligible hosts", Unit: "hosts", Remain: s.HostsPassed})
	}
	first := s.Stages[0]
	out = append(out,
		views.QueryFunnelStep{Label: "Providers after " + first.Stage, Unit: "providers", Remain: s.Providers - s.ProvidersExcluded, Removed: s.ProvidersExcluded},
		views.QueryFunnelStep{Label: "Hosts", Unit: "hosts", Remain: s.Hosts},
	)
	remain := s.Hosts
	for _, st := range s.Stages {
		remain -= st.HostsExcluded
		out = append(out, views.QueryFunnelStep{Label: "Hosts after " + st.Stage, Unit: "hosts", Remain: remain, Removed: st.HostsExcluded})
	}
	out = append(out, views.QueryFunnelStep{Label: "Weighed hosts", Unit: "hosts", Remain: s.HostsPassed})
	return out
}

// trees groups the listed providers by root: each root first, then its
// descendants in the order listed, indented by depth. A root that the list
// left out (a limit cut it) is shown by name only.
func trees(list []scheduling.ProviderEntry, snap *scheduling.Snapshot) []views.QueryTree {
	var out []views.QueryTree
	pos := map[string]int{}
	for _, e := range list {
		i, ok := pos[e.Root]
		if !ok {
			i = len(out)
			pos[e.Root] = i
			t := views.QueryTree{Root: views.QueryProvider{Name: e.Root, Reason: "(not listed)"}}
			if p, ok := snap.Provider(e.Root); ok {
				t.Sharing = p.IsSharing()
				t.Root.UUID = p.UUID
			}
			out = append(out, t)
		}
		qp := views.QueryProvider{Name: e.Name, UUID: e.UUID, Excluded: e.Excluded, Stage: e.Stage, Reason: e.Reason}
		if e.Name == e.Root {
			out[i].Root = qp
			continue
		}
		qp.Depth = depth(snap, e.UUID)
		out[i].Children = append(out[i].Children, qp)
	}
	return out
}

// depth counts a provider's ancestors (capped: trees are shallow).
func depth(snap *scheduling.Snapshot, ref string) int {
	d := 0
	p, ok := snap.Provider(ref)
	for ok && p.ParentUUID != nil && d < 8 {
		d++
		p, ok = snap.Provider(*p.ParentUUID)
	}
	return d
}

// modeRows lists the providers on which the three member_of modes disagree
// for the same terms, with each mode's verdict.
func modeRows(snap *scheduling.Snapshot, values []string) ([]views.QueryModeRow, error) {
	res, err := snap.MemberOfModes(values)
	if err != nil {
		return nil, err
	}
	direct, unnumbered, numbered := res[0].ExcludedSet(), res[1].ExcludedSet(), res[2].ExcludedSet()
	diff := placement.NewBitset(snap.Index().Len())
	for i := range diff {
		diff[i] = (direct[i] ^ unnumbered[i]) | (direct[i] ^ numbered[i])
	}
	var rows []views.QueryModeRow
	diff.Each(func(p int) {
		if len(rows) >= maxModeRows {
			return
		}
		verdict := func(r *placement.Result) string {
			if !r.Excluded(p) {
				return "kept"
			}
			return r.Reason(p)
		}
		rows = append(rows, views.QueryModeRow{
			Name:       snap.Index().Provider(p).Name,
			Direct:     verdict(res[0]),
			Unnumbered: verdict(res[1]),
			Numbered:   verdict(res[2]),
		})
	})
	return rows, nil
}

// presentDiff turns a trace diff into what the page shows.
func presentDiff(d scheduling.TraceDiff, live, draft *scheduling.Trace) *views.QueryDiff {
	out := &views.QueryDiff{LiveEligible: live.Summary.HostsPassed, DraftEligible: draft.Summary.HostsPassed}
	for _, c := range d.NewlyExcluded {
		out.NewlyExcluded = append(out.NewlyExcluded, views.QueryDiffHost{Name: c.Name, Reason: stageReason(c)})
	}
	for _, c := range d.NewlyEligible {
		out.NewlyEligible = append(out.NewlyEligible, views.QueryDiffHost{Name: c.Name, Reason: "live: " + stageReason(c)})
	}
	return out
}

func stageReason(c scheduling.HostChange) string {
	if c.Stage == "" {
		return c.Reason
	}
	return c.Stage + ": " + c.Reason
}
