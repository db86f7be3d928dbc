package scheduling

import (
	"fmt"
	"math/bits"
	"strings"

	"corral/models/placement"
)

// What a run reports in its trace: the provider list, the summary's stage
// counts and reason groups, the listed hosts with every check, the
// request groups' verdicts and the error.

// stageCounts is the summary's row per stage: the placement stage (or the
// request filter that failed the request), then each host filter.
func (r *run) stageCounts() []StageCount {
	firstStage := StagePlacement
	if r.rf.failure != "" {
		firstStage = r.rf.failStage
	}
	stageCounts := make([]StageCount, 1+len(r.stages))
	stageCounts[0] = StageCount{Stage: firstStage}
	for i, st := range r.stages {
		stageCounts[i+1] = StageCount{Stage: st.name}
	}
	return stageCounts
}

// countExclusions counts each excluded host at its stage and under its
// reason: hosts failing one shared verdict in one round share a reason
// group, unless the reason names the host itself.
func (r *run) countExclusions(stageCounts []StageCount, reasons *reasonCounter) {
	s := r.s
	groupReasons := make([]string, len(r.suffixes))
	for i, k := range r.suffixes {
		groupReasons[i] = "no provider of the tree satisfies member_of" + k
	}
	type verdictRound struct{ verdict, round int32 }
	type cachedReason struct {
		text    string
		summary string       // what the summary groups it under
		named   bool         // the text may contain a host's name
		group   *ReasonGroup // made on first use
	}
	var capGroup *ReasonGroup // the last capacity reason's group
	var capText string
	// Round 0, where nearly every exclusion happens, is indexed directly.
	first := make([]*cachedReason, len(r.verdicts))
	later := map[verdictRound]*cachedReason{}
	failing := 0 // only failed verdicts make reason groups
	for _, v := range r.verdicts {
		if !v.Passed {
			failing++
		}
	}
	reasons.reserve(min(failing, 4096))
	for i, hr := range r.results {
		if hr.stage < 0 {
			continue
		}
		stageCounts[hr.stage].HostsExcluded++
		if hr.stage == 0 && (r.res == nil || hr.detail == -1) {
			// Counted with the providers: the common case, read nothing
			// more of the host.
			continue
		}
		name := s.hosts[i].Provider.Name
		stage := stageCounts[hr.stage].Stage
		switch {
		case hr.stage > 0:
			stageCounts[hr.stage].Excluded++
			var c *cachedReason
			round := r.roundOf(int32(i))
			if round == 0 {
				c = first[hr.detail]
			} else {
				c = later[verdictRound{hr.detail, round}]
			}
			if c == nil {
				c = &cachedReason{text: r.filterReason(hr.detail, round), summary: r.filterSummary(hr.detail, round)}
				c.named = s.mayNameHost(c.text)
				if round == 0 {
					first[hr.detail] = c
				} else {
					later[verdictRound{hr.detail, round}] = c
				}
			}
			switch {
			case c.named && name != "" && strings.Contains(c.text, name):
				reasons.add(stage, genericReason(c.summary, name), name)
			case c.group == nil:
				c.group = reasons.group(stage, c.summary)
				fallthrough
			default:
				c.group.note(name)
			}
		case r.res != nil && hr.detail >= 0:
			// The provider list does not count numbered-group failures.
			reasons.add(stage, groupReasons[hr.detail], name)
		case r.res != nil && hr.detail == computeDisabledDetail:
			reasons.add(stage, computeDisabledReason, name)
		case r.res != nil && hr.detail == capacityDetail:
			text := r.inRound(r.capacity.summary(int(s.ix.Hosts()[i])), r.roundOf(int32(i)))
			if capGroup == nil || text != capText {
				// Hosts in a row often lack the same class.
				capGroup, capText = reasons.group(stage, text), text
			}
			capGroup.note(name)
		}
	}
}

// listHosts adds the host entries: passing hosts in weighed order, then
// the others, as spec.Hosts selects them (spec.Limit bounds them unless
// spec.Hosts sets its own limit).
func (r *run) listHosts(tr *Trace, spec *RequestSpec, passing []int32, stageCounts []StageCount) {
	s := r.s
	n := r.req.NumInstances
	var counts map[int32]int
	if n > 1 {
		counts = map[int32]int{}
		for _, h := range r.picks {
			counts[h]++
			tr.Selections = append(tr.Selections, s.hosts[h].Provider.Name)
		}
	}
	sel := spec.Hosts
	if sel == nil {
		sel = &HostSelect{}
	}
	skip := sel.Offset
	hostLimit := spec.Limit
	if sel.Limit > 0 {
		hostLimit = sel.Limit
	}
	add := func(h int32, passed bool) bool {
		if sel.FailedOnly && passed {
			return true
		}
		if sel.Stage != "" && (passed || stageCounts[r.results[h].stage].Stage != sel.Stage) {
			return true
		}
		if sel.Name != "" && !strings.Contains(s.hosts[h].Provider.Name, sel.Name) {
			return true
		}
		tr.HostsMatched++
		if skip > 0 {
			skip--
			return true
		}
		if hostLimit > 0 && len(tr.Hosts) >= hostLimit {
			tr.Truncated = true
			// Keep counting the matches only when a page needs the count.
			return spec.Hosts != nil
		}
		e := r.hostEntry(h, passed)
		e.Instances = counts[h]
		if n > 1 {
			if passed {
				e.Round = int(r.weighedOf(h)) + 1
			} else {
				e.Round = int(r.roundOf(h)) + 1
			}
		}
		tr.Hosts = append(tr.Hosts, e)
		return true
	}
	more := true
	for _, h := range passing {
		if more = add(h, true); !more {
			break
		}
	}
	for i, hr := range r.results {
		if !more {
			break
		}
		if hr.stage < 0 {
			continue
		}
		more = add(int32(i), false)
	}
}

// failure is the trace's error, nil when an instance found a host: the
// request filter that failed the request, the instance that found none,
// or every host excluded (passed is how many hosts passed).
func (r *run) failure(passed int) *string {
	var msg string
	switch {
	case r.rf.failure != "":
		msg = r.rf.failure
	case r.failedRound > 0:
		msg = fmt.Sprintf("no valid host was found for instance %d of %d: after placing %d, all %d hosts were excluded",
			r.failedRound+1, r.req.NumInstances, r.failedRound, len(r.s.hosts))
	case passed == 0:
		msg = fmt.Sprintf("no valid host was found: all %d hosts were excluded", len(r.s.hosts))
	default:
		return nil
	}
	return &msg
}

// providers fills the provider list and the provider side of the summary.
func (r *run) providers(tr *Trace, limit int, reasons *reasonCounter) {
	ix := r.s.ix
	n := ix.Len()
	sum := &tr.Summary
	add := func(p int, excluded bool, stage, reason, via string) bool {
		if limit > 0 && len(tr.Providers) >= limit {
			tr.Truncated = true
			return false
		}
		pr := ix.Provider(p)
		tr.Providers = append(tr.Providers, ProviderEntry{UUID: pr.UUID, Name: pr.Name, Root: ix.Name(ix.Root(p)),
			Excluded: excluded, Stage: stage, Reason: reason, Via: via})
		return true
	}
	if r.res == nil {
		// The request failed before Placement: nothing is a candidate.
		sum.ProvidersExcluded = n
		g := ReasonGroup{Stage: r.rf.failStage, Reason: r.rf.failure, Count: n, Examples: []string{}}
		for p := 0; p < n && p < maxExamples; p++ {
			g.Examples = append(g.Examples, ix.Name(p))
		}
		if n > 0 {
			reasons.addGroup(g)
		}
		for p := 0; p < n && add(p, true, r.rf.failStage, r.rf.failure, ""); p++ {
		}
		return
	}
	excl := r.res.ExcludedSet()
	sum.ProvidersExcluded = excl.Count()
	// Counted by cause with bitsets; sentences only per cause and for the
	// providers listed.
	for _, g := range r.res.Groups(maxExamples) {
		rg := ReasonGroup{Stage: StagePlacement, Reason: r.res.GroupReason(g.First, g.Exclusion), Count: g.Count,
			Examples: make([]string, len(g.Examples))}
		for i, p := range g.Examples {
			rg.Examples[i] = ix.Name(p)
		}
		reasons.addGroup(rg)
	}
	listing := true
	for wi, w := range excl {
		for ; w != 0 && listing; w &= w - 1 {
			p := wi<<6 + bits.TrailingZeros64(w)
			e, _ := r.res.Explain(p)
			listing = add(p, true, StagePlacement, r.res.ReasonFor(p, e), e.Via.String())
		}
		if !listing {
			break
		}
	}
	if !listing {
		return
	}
	for p := 0; p < n; p++ {
		if !excl.Has(p) && !add(p, false, "", "", "") {
			return
		}
	}
}

// filterReason is the reason of a host-filter failure, naming the instance
// whose round it was when that was not the first.
func (r *run) filterReason(verdict, round int32) string {
	return r.inRound(r.verdicts[verdict].Reason, round)
}

// filterSummary is the reason a trace's summary groups the exclusion under.
func (r *run) filterSummary(verdict, round int32) string {
	v := r.verdicts[verdict]
	if v.Summary == "" {
		return r.inRound(v.Reason, round)
	}
	return r.inRound(v.Summary, round)
}

func (r *run) inRound(reason string, round int32) string {
	if round > 0 {
		return fmt.Sprintf("instance %d of %d: %s", round+1, r.req.NumInstances, reason)
	}
	return reason
}

// reason is the sentence for failed host i.
func (r *run) reason(i int32) string {
	hr := r.results[i]
	p := int(r.s.ix.Hosts()[i])
	switch {
	case hr.stage != 0:
		return r.filterReason(hr.detail, r.roundOf(i))
	case r.res == nil:
		return r.rf.failure
	case hr.detail == computeDisabledDetail:
		return computeDisabledReason
	case hr.detail == capacityDetail:
		text, _ := r.capacity.reason(p)
		return r.inRound(text, r.roundOf(i))
	case hr.detail < 0:
		return r.res.Reason(p)
	}
	return r.placementGroupReason(int(hr.detail))
}

func (r *run) placementGroupReason(group int) string {
	return fmt.Sprintf("no provider of the tree, nor a sharing provider anchored to it, is directly in the aggregates of member_of%s (numbered groups do not span trees)", r.suffixes[group])
}

// outcomes is every host's outcome, for DiffTraces.
func (r *run) outcomes() []hostOutcome {
	out := make([]hostOutcome, len(r.results))
	for i, hr := range r.results {
		o := hostOutcome{Name: r.s.hosts[i].Provider.Name, Passed: hr.stage < 0}
		if !o.Passed {
			o.Stage = r.stageName(hr.stage) // the reason is built if a diff reports the host
		}
		out[i] = o
	}
	return out
}

// hostEntry builds a listed host's entry with every check evaluated, as
// the round that decided the host saw the request.
func (r *run) hostEntry(i int32, passed bool) HostEntry {
	h := &r.s.hosts[i]
	hr := r.results[i]
	round := r.roundOf(i)
	if passed {
		round = r.weighedOf(i)
	}
	req := r.reqAt(round)
	e := HostEntry{UUID: h.Provider.UUID, Name: h.Provider.Name, Passed: passed, Checks: make([]Check, 0, 1+len(r.stages)+len(r.weighers))}
	yes, no := true, false
	reason := "" // built once for the placement check and the entry
	if !passed || r.res != nil && hr.stage == 0 {
		reason = r.reason(i)
	}
	if r.res == nil {
		e.Checks = append(e.Checks, Check{Stage: r.rf.failStage, Passed: &no, Reason: r.rf.failure})
	} else if hr.stage != 0 {
		e.Checks = append(e.Checks, Check{Stage: StagePlacement, Passed: &yes})
	} else {
		e.Checks = append(e.Checks, Check{Stage: StagePlacement, Passed: &no, Reason: reason})
	}
	for si, st := range r.stages {
		var v Verdict
		if st.scope == scopeGroup || st.scope == scopeHost {
			v = filter(st.f, h, req)
		} else {
			v = r.verdicts[r.judge(si, i)]
		}
		c := Check{Stage: st.name, Passed: &yes}
		if !v.Passed {
			c.Passed, c.Reason = &no, v.Reason
		}
		e.Checks = append(e.Checks, c)
	}
	total := 0.0
	for wi, wp := range r.weighers {
		raw := wp.w.Weigh(h, req)
		m := r.multiplier(wi, i)
		c := Check{Stage: wp.w.Name(), Raw: &raw, Multiplier: &m}
		if passed {
			wt := 0.0
			if lh := r.roundRange(round, wi); lh[0] != lh[1] {
				wt = m * ((raw - lh[0]) / (lh[1] - lh[0]))
				total += wt
			}
			c.Weight = &wt
		}
		e.Checks = append(e.Checks, c)
	}
	if passed {
		e.Weight = &total
	} else {
		e.Stage = r.stageName(hr.stage)
		e.Reason = reason
	}
	return e
}

func (r *run) stageName(stage int32) string {
	switch {
	case stage == 0 && r.res == nil:
		return r.rf.failStage
	case stage == 0:
		return StagePlacement
	case stage > 0 && int(stage) <= len(r.stages):
		return r.stages[stage-1].name
	}
	return ""
}

// groupVerdicts lists each request group of the placement stage with the
// hosts it excluded: the unnumbered group (member_of and capacity) and
// each numbered group.
func (r *run) groupVerdicts() []GroupVerdict {
	if r.res == nil {
		return nil
	}
	// Placement details are -3 (compute disabled), -2 (capacity), -1
	// (unnumbered) or a numbered group's position: counted at detail+3.
	byGroup := make([]int, len(r.suffixes)+3)
	for _, hr := range r.results {
		if hr.stage == 0 {
			byGroup[hr.detail+3]++
		}
	}
	var capGroups map[string]placement.Group
	if r.capacity != nil {
		capGroups = map[string]placement.Group{}
		for _, g := range r.capacity.q.Groups {
			capGroups[g.Suffix] = g
		}
	}
	un := GroupVerdict{Suffix: "", MemberOf: r.memberOf, HostsExcluded: byGroup[-1+3] + byGroup[capacityDetail+3] + byGroup[computeDisabledDetail+3]}
	if g, ok := capGroups[""]; ok {
		un.Resources, un.Required = resourcesText(g), requiredText(g)
	}
	out := []GroupVerdict{un}
	seen := map[string]bool{"": true}
	for gi, k := range r.suffixes {
		v := GroupVerdict{Suffix: k, MemberOf: r.groups[k].Terms.Values(), HostsExcluded: byGroup[gi+3]}
		if g, ok := capGroups[k]; ok {
			v.Resources, v.Required = resourcesText(g), requiredText(g)
		}
		seen[k] = true
		out = append(out, v)
	}
	for _, g := range r.capacityGroups() {
		if !seen[g.Suffix] {
			out = append(out, GroupVerdict{Suffix: g.Suffix, Resources: resourcesText(g), Required: requiredText(g)})
		}
	}
	return out
}

func (r *run) capacityGroups() []placement.Group {
	if r.capacity == nil {
		return nil
	}
	return r.capacity.q.Groups
}
