package query

import (
	"slices"
	"strconv"
	"strings"

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
	if n := tr.Nova; n != nil {
		v.Nova = &views.QueryNova{Release: n.Release, Query: n.AllocationCandidatesQuery, Ranking: n.Ranking,
			NotModelled: n.NotModelled, Skipped: n.Skipped}
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

// funnel is providers → after Placement, then hosts → after each stage
// that removed some → eligible hosts. Stages that removed nothing are left
// out: the matrix shows them.
func funnel(tr *scheduling.Trace) []views.QueryFunnelStep {
	s := tr.Summary
	out := []views.QueryFunnelStep{
		{Label: "providers", Unit: "providers", Remain: s.Providers},
	}
	if len(s.Stages) == 0 {
		return append(out, views.QueryFunnelStep{Label: "eligible hosts", Unit: "hosts", Remain: s.HostsPassed})
	}
	first := s.Stages[0]
	out = append(out,
		views.QueryFunnelStep{Label: "after " + first.Stage, Unit: "providers", Remain: s.Providers - s.ProvidersExcluded, Removed: s.ProvidersExcluded},
		views.QueryFunnelStep{Label: "hosts", Unit: "hosts", Remain: s.Hosts, Break: true},
	)
	remain := s.Hosts
	for _, st := range s.Stages {
		remain -= st.HostsExcluded
		if st.HostsExcluded == 0 {
			continue
		}
		out = append(out, views.QueryFunnelStep{Label: "after " + st.Stage, Unit: "hosts", Remain: remain, Removed: st.HostsExcluded})
	}
	out = append(out, views.QueryFunnelStep{Label: "eligible hosts", Unit: "hosts", Remain: s.HostsPassed})
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

// presentMatrix is the host × stage matrix of a trace: the request
// filters, placement, every host filter and every weigher, one row per
// host listed (a page of those the form's matrix filter keeps).
func presentMatrix(tr *scheduling.Trace, f views.QueryForm, _ []string) *views.QueryMatrix {
	m := &views.QueryMatrix{Matched: tr.HostsMatched, Page: max(f.HostsPage, 1)}
	m.Pages = max((m.Matched+hostsPerPage-1)/hostsPerPage, 1)
	m.First = (m.Page-1)*hostsPerPage + 1
	if m.Page > 1 {
		m.PrevURL = f.PageURL(m.Page - 1)
	}
	if m.Page < m.Pages {
		m.NextURL = f.PageURL(m.Page + 1)
	}
	requestFailed := ""
	m.Columns = append(m.Columns, views.QueryColumn{Name: "request filters", Short: "request filters", Kind: "request"})
	for i, st := range tr.Summary.Stages {
		m.Stages = append(m.Stages, st.Stage)
		switch {
		case i == 0 && st.Stage != scheduling.StagePlacement:
			// A request filter failed the whole request: Placement was
			// never asked.
			requestFailed = st.Stage
			m.Columns = append(m.Columns, views.QueryColumn{Name: scheduling.StagePlacement, Short: scheduling.StagePlacement, Kind: "placement"})
		case i == 0:
			m.Columns = append(m.Columns, views.QueryColumn{Name: st.Stage, Short: st.Stage, Kind: "placement"})
		default:
			m.Columns = append(m.Columns, views.QueryColumn{Name: st.Stage, Short: shortStage(st.Stage), Kind: "filter"})
		}
	}
	// Capacity gets a column of its own when the request asks for
	// resources: the trace records a host without an allocation candidate
	// as failing placement, with a reason that says so.
	capacity := false
	for _, g := range tr.Groups {
		capacity = capacity || g.Resources != ""
	}
	if capacity {
		m.Columns = slices.Insert(m.Columns, 2, views.QueryColumn{Name: scheduling.StageCapacity, Short: scheduling.StageCapacity, Kind: "capacity"})
	}
	for _, w := range weigherNames(tr) {
		m.Columns = append(m.Columns, views.QueryColumn{Name: w, Short: shortStage(w), Kind: "weigher"})
	}
	instances := map[string][]int{}
	for i, h := range tr.Selections {
		instances[h] = append(instances[h], i+1)
		m.Rounds = append(m.Rounds, views.QueryRound{Instance: i + 1, Host: h})
	}
	nStages := len(tr.Summary.Stages)
	rawSeen := map[int]map[string]bool{} // weigher column → raw values of passing hosts
	for _, h := range tr.Hosts {
		row := views.QueryMatrixRow{Name: h.Name, Passed: h.Passed, Stage: h.Stage, Reason: h.Reason,
			Instances: instances[h.Name], Round: h.Round}
		if h.Weight != nil {
			row.Total = strconv.FormatFloat(*h.Weight, 'f', 3, 64)
		}
		// The request filters' column.
		if requestFailed != "" {
			reason := ""
			if len(h.Checks) > 0 {
				reason = h.Checks[0].Reason
			}
			row.Cells = append(row.Cells, views.QueryCell{Kind: "fail", First: true, Reason: requestFailed + ": " + reason},
				views.QueryCell{Kind: "skip", Reason: "not asked: a request filter failed the request"})
		} else {
			row.Cells = append(row.Cells, views.QueryCell{Kind: "pass"})
		}
		firstSeen := requestFailed != ""
		for ci, c := range h.Checks {
			switch {
			case ci == 0 && requestFailed != "":
				continue
			case ci < nStages:
				cell := views.QueryCell{Kind: "pass"}
				if c.Passed != nil && !*c.Passed {
					cell.Kind, cell.Reason = "fail", c.Reason
					cell.First = !firstSeen
					firstSeen = true
				}
				row.Cells = append(row.Cells, cell)
			default:
				cell := views.QueryCell{Kind: "weight"}
				if c.Raw != nil {
					cell.Raw = strconv.FormatFloat(*c.Raw+0, 'g', 4, 64) // +0 turns −0 into 0
					if h.Passed {
						if rawSeen[ci] == nil {
							rawSeen[ci] = map[string]bool{}
						}
						rawSeen[ci][cell.Raw] = true
					}
				}
				if c.Multiplier != nil {
					cell.Mult = strconv.FormatFloat(*c.Multiplier, 'g', 4, 64)
				}
				if c.Weight != nil {
					cell.Norm = strconv.FormatFloat(*c.Weight, 'f', 3, 64)
				}
				row.Cells = append(row.Cells, cell)
			}
		}
		if capacity {
			row.Cells = splitCapacity(row.Cells)
			if !h.Passed && h.Stage == scheduling.StagePlacement && scheduling.IsCapacityReason(h.Reason) {
				row.Stage = scheduling.StageCapacity
			}
		}
		m.Rows = append(m.Rows, row)
	}
	flat := len(rawSeen) > 0
	for _, vals := range rawSeen {
		flat = flat && len(vals) == 1
	}
	if flat && tr.Summary.HostsPassed > 1 {
		m.WeightNote = "Every eligible host scores the same raw value on each weigher, so every normalised weight is 0 and hosts are ordered by name. " +
			"The server-group weighers count the members of a soft-affinity or soft-anti-affinity group on each host: name such a group, with members running, to see them differ; " +
			"the resource weighers (weight_classes) read each host's free RAM, VCPUs and disk."
	}
	return m
}

// splitCapacity turns a row's placement cell (cells[1]) into the
// member_of verdict and a capacity cell after it: a host failing placement
// for want of an allocation candidate passed member_of; one failing
// member_of was never judged for capacity.
func splitCapacity(cells []views.QueryCell) []views.QueryCell {
	place := cells[1]
	capCell := views.QueryCell{Kind: "pass"}
	switch {
	case place.Kind == "skip":
		capCell = place
	case place.Kind == "fail" && scheduling.IsCapacityReason(place.Reason):
		capCell, place = place, views.QueryCell{Kind: "pass"}
	case place.Kind == "fail":
		capCell = views.QueryCell{Kind: "skip", Reason: "not judged: member_of excluded the host"}
	}
	out := make([]views.QueryCell, 0, len(cells)+1)
	out = append(out, cells[0], place, capCell)
	return append(out, cells[2:]...)
}

// shortStage is a column head for a filter or weigher: nova's name without
// the words every column shares (the full name is the head's title).
func shortStage(name string) string {
	short := strings.TrimSuffix(strings.TrimSuffix(name, "Filter"), "Weigher")
	for _, p := range []string{"Aggregate", "ServerGroup"} {
		if s := strings.TrimPrefix(short, p); s != short && s != "" {
			short = s
			break
		}
	}
	return short
}

// weigherNames are the weighers the trace's hosts were weighed with (the
// settings' weight_classes), in order: the checks after the stages.
func weigherNames(tr *scheduling.Trace) []string {
	var out []string
	if len(tr.Hosts) == 0 {
		for _, w := range scheduling.DefaultWeighers() {
			out = append(out, w.Name())
		}
		return out
	}
	for _, c := range tr.Hosts[0].Checks {
		if c.Passed == nil {
			out = append(out, c.Stage)
		}
	}
	return out
}
