package scheduling

import (
	"fmt"
	"maps"
	"math/bits"
	"runtime"
	"slices"
	"strings"

	"corral/models"
	"corral/models/placement"
)

// StagePlacement names the placement stage in traces.
const StagePlacement = "placement"

// runSlots admits one run per CPU at a time. A run is pure CPU work: more
// of them at once only preempt one another, so that under load every
// request is slow; waiting for a slot (in arrival order) keeps the tail
// short at the same throughput.
var runSlots = make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))

// MaxInstances bounds num_instances: each instance is one more scheduling
// round over the hosts still in the running.
const MaxInstances = 1000

// hostResult is one host's fate. stage 0 is placement (or the request
// filter that failed the whole request), stage i+1 is host filter i, -1
// means the host passed. Placement reasons are built only for the hosts a
// trace lists, because tenant isolation can exclude tens of thousands.
type hostResult struct {
	stage int32
	// detail is, for placement, -1 for the unnumbered group or the
	// numbered group's position; for a host filter, the failing verdict
	// (an index into run.verdicts).
	detail int32
}

// stagePlan is how one host filter is applied in a run: per host, or once
// per view (hostviews.go) with the verdict shared.
type stagePlan struct {
	f      HostFilter
	name   string
	scope  filterScope
	views  *hostViews
	byView []int32 // verdict per view, -1 until judged
	shared int32   // scopeGroup: verdict of the hosts holding no member, -1 until judged
}

// weigherPlan is how one weigher is applied in a run.
type weigherPlan struct {
	w     Weigher
	scope filterScope
	hm    HostWeightMultiplier // nil: mult for every host
	mult  float64
	// Per-host multipliers, once per view of the multiplier keys.
	views  *hostViews
	multOf []float64
	multOK []bool
	// scopeGroup: the raw weight of hosts holding no member, this round.
	shared   float64
	sharedOK bool
}

// run holds the state of one Run.
type run struct {
	s        *Snapshot
	rv       *resolved
	rf       requestFilterOutcome
	res      *placement.Result            // unnumbered group; nil on failure
	memberOf []string                     // the unnumbered group's member_of values
	groups   map[string]*placement.Result // numbered groups
	suffixes []string
	// capacity is the allocation-candidate check; nil when the request
	// asks for no resources or the world has no inventories.
	capacity *capacity

	// req is the request as the current round sees it: a multi-create
	// request counts the instances already placed (ConsumeGroupHost).
	req      Request
	initial  map[string]int // GroupHosts before the first instance
	stages   []stagePlan
	weighers []weigherPlan
	verdicts []Verdict
	// special marks the hosts req.GroupHosts names; nil without a group.
	special []bool
	results []hostResult
	// round is the instance (from 0) whose round excluded each host, and
	// weighed the last round that weighed it; nil while all is round 0.
	round, weighed []int32
	// rounds holds, per round, each weigher's lowest and highest raw weight.
	rounds      [][2]float64
	picks       []int32            // the host of each instance placed
	consumed    int32              // how many picks req counts
	failedRound int                // the instance that found no host; -1 if none
	reqs        map[int32]*Request // reqAt's answers by round
}

// Run takes one request through the pipeline — request filters, placement,
// host filters, weighers — and returns the trace. Bad input (an unknown
// flavor, group or filter, malformed member_of) is an Invalid error naming
// the field; a request that cannot be scheduled is a trace with Error set.
// Run does not modify the snapshot and may be called concurrently.
//
// A multi-create request (NumInstances > 1) is scheduled as nova does:
// one instance at a time, each round filtering and weighing the hosts the
// previous round kept, with the group members placed so far counted.
func (s *Snapshot) Run(spec *RequestSpec) (*Trace, error) {
	if spec == nil {
		spec = &RequestSpec{}
	}
	runSlots <- struct{}{}
	defer func() { <-runSlots }()
	return s.runInSlot(spec)
}

// RunJSON is Run followed by the trace's encoding (AppendJSON onto dst),
// in the same run slot: encoding a large trace is CPU work as well, and
// done outside the slots it competes with the runs they admit, which
// lengthens the tail under load.
func (s *Snapshot) RunJSON(spec *RequestSpec, dst []byte) ([]byte, error) {
	runSlots <- struct{}{}
	defer func() { <-runSlots }()
	tr, err := s.runInSlot(spec)
	if err != nil {
		return nil, err
	}
	return tr.AppendJSON(dst)
}

// runInSlot is Run for a caller already holding a run slot.
func (s *Snapshot) runInSlot(spec *RequestSpec) (*Trace, error) {
	if spec == nil {
		spec = &RequestSpec{}
	}
	if spec.NumInstances > MaxInstances {
		return nil, models.E(models.Invalid, "num_instances", "must be at most %d, got %d", MaxInstances, spec.NumInstances)
	}
	rv, err := s.resolve(spec)
	if err != nil {
		return nil, err
	}
	if rv.refused != nil {
		return nil, rv.refused
	}
	r := &run{s: s, rv: rv, rf: s.runRequestFilters(&rv.req), groups: map[string]*placement.Result{}, req: rv.req, failedRound: -1}
	r.req.tenantTexts = newTenantTexts(r.req.ProjectID)
	unnumbered := r.rf.terms.And(rv.user)
	r.memberOf = unnumbered.Values()
	tr := &Trace{
		PlacementQuery: placementQuery(rv.req.Flavor, r.memberOf, rv.groups),
		RequestFilters: r.rf.steps,
		Providers:      []ProviderEntry{},
		Hosts:          []HostEntry{},
	}
	if r.rf.failure == "" {
		r.res = s.ix.Evaluate(unnumbered, placement.Unnumbered)
		r.suffixes = slices.Sorted(maps.Keys(rv.groups))
		for _, k := range r.suffixes {
			r.groups[k] = s.ix.Evaluate(rv.groups[k], placement.Numbered)
		}
		r.capacity = s.newCapacity(&rv.req, unnumbered, rv.groups)
	}
	limit := spec.Limit
	var reasons reasonCounter
	r.providers(tr, limit, &reasons)

	r.plan()
	passing := r.schedule(r.firstRound())
	n := r.req.NumInstances

	// Summary.
	sum := &tr.Summary
	sum.Providers = s.ix.Len()
	sum.Hosts = len(s.hosts)
	sum.HostsPassed = len(passing)
	firstStage := StagePlacement
	if r.rf.failure != "" {
		firstStage = r.rf.failStage
	}
	stageCounts := make([]StageCount, 1+len(r.stages))
	stageCounts[0] = StageCount{Stage: firstStage}
	for i, st := range r.stages {
		stageCounts[i+1] = StageCount{Stage: st.name}
	}
	stageCounts[0].Excluded = sum.ProvidersExcluded
	groupReasons := make([]string, len(r.suffixes))
	for i, k := range r.suffixes {
		groupReasons[i] = "no provider of the tree satisfies member_of" + k
	}
	// Hosts failing one shared verdict in one round share a reason group,
	// unless the reason names the host itself.
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
		case r.res != nil && hr.detail == capacityDetail:
			text := r.inRound(r.capacity.summary(int(s.ix.Hosts()[i])), r.roundOf(int32(i)))
			if capGroup == nil || text != capText {
				// Hosts in a row often lack the same class.
				capGroup, capText = reasons.group(stage, text), text
			}
			capGroup.note(name)
		}
	}
	tr.Groups = r.groupVerdicts()
	sum.Stages = stageCounts
	sum.Reasons = reasons.sorted()
	// Every host's outcome, for DiffTraces, is built only when asked for.
	tr.outcomesFn = r.outcomes
	tr.reasonOf = func(i int) string { return r.reason(int32(i)) }

	var counts map[int32]int
	if n > 1 {
		counts = map[int32]int{}
		for _, h := range r.picks {
			counts[h]++
			tr.Selections = append(tr.Selections, s.hosts[h].Provider.Name)
		}
	}
	// Host entries: passing hosts in weighed order, then the others, as
	// spec.Hosts selects them.
	sel := spec.Hosts
	if sel == nil {
		sel = &HostSelect{}
	}
	skip := sel.Offset
	hostLimit := limit
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

	switch {
	case r.rf.failure != "":
		msg := r.rf.failure
		tr.Error = &msg
	case r.failedRound > 0:
		msg := fmt.Sprintf("no valid host was found for instance %d of %d: after placing %d, all %d hosts were excluded",
			r.failedRound+1, n, r.failedRound, len(s.hosts))
		tr.Error = &msg
	case len(passing) == 0:
		msg := fmt.Sprintf("no valid host was found: all %d hosts were excluded", len(s.hosts))
		tr.Error = &msg
	}
	return tr, nil
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

// plan decides how each filter and weigher is applied.
func (r *run) plan() {
	s := r.s
	var flavorViews *hostViews
	need := 8 // verdicts: at most one per view, plus a few per host
	// Most views are never judged when placement leaves few hosts: start
	// small, grow as verdicts come.
	defer func() { r.verdicts = make([]Verdict, 0, min(need, 1024)) }()
	for _, f := range r.rv.filters {
		st := stagePlan{f: f, name: f.Name(), scope: scopeOf(f), shared: -1}
		switch st.scope {
		case scopeTenantKeys:
			st.views = s.tenantViews
		case scopeFlavorKeys, scopeFlavorKeysUnlessForced:
			if flavorViews == nil {
				var specs map[string]string
				if r.req.Flavor != nil {
					specs = r.req.Flavor.ExtraSpecs
				}
				flavorViews = s.viewsForKeys(flavorLookupKeys(specs))
			}
			st.views = flavorViews
		}
		if st.views != nil {
			need += len(st.views.reps)
			st.byView = make([]int32, len(st.views.reps))
			for i := range st.byView {
				st.byView[i] = -1
			}
		}
		r.stages = append(r.stages, st)
	}
	for _, w := range r.rv.weighers {
		wp := weigherPlan{w: w, scope: scopeOf(w), mult: w.Multiplier(r.req.Settings)}
		wp.hm, _ = w.(HostWeightMultiplier)
		r.weighers = append(r.weighers, wp)
	}
	if r.req.Group == nil {
		return
	}
	if r.req.NumInstances > 1 {
		// Rounds count their picks in a copy; entries replay them from here.
		r.initial = r.req.GroupHosts
		if r.initial == nil {
			r.initial = map[string]int{}
		}
		r.req.GroupHosts = maps.Clone(r.initial)
	}
	r.special = make([]bool, len(s.hosts))
	if len(s.hostPos) == len(s.hosts) {
		for name := range r.req.GroupHosts {
			if i, ok := s.hostPos[name]; ok {
				r.special[i] = true
			}
		}
		return
	}
	// Host names are not unique: look every host up.
	for i := range s.hosts {
		_, r.special[i] = r.req.GroupHosts[s.hosts[i].Provider.Name]
	}
}

// eval runs filter f on host i and keeps the verdict.
func (r *run) eval(f HostFilter, i int32, req *Request) int32 {
	r.verdicts = append(r.verdicts, filter(f, &r.s.hosts[i], req))
	return int32(len(r.verdicts) - 1)
}

// judge is stage si's verdict on host i this round, judged once per view
// (or, for the group filters, once for all hosts holding no member).
func (r *run) judge(si int, i int32) int32 {
	st := &r.stages[si]
	switch st.scope {
	case scopeFlavorKeysUnlessForced:
		if r.s.forcing[i] {
			break
		}
		fallthrough
	case scopeTenantKeys, scopeFlavorKeys:
		v := st.views.of[i]
		if st.byView[v] < 0 {
			st.byView[v] = r.eval(st.f, st.views.reps[v], &r.req)
		}
		return st.byView[v]
	case scopeGroup:
		if r.special == nil || !r.special[i] {
			if st.shared < 0 {
				st.shared = r.eval(st.f, i, &r.req)
			}
			return st.shared
		}
	}
	return r.eval(st.f, i, &r.req)
}

// firstRound judges every host for the first instance and returns the
// hosts that passed, in host order.
func (r *run) firstRound() []int32 {
	n := len(r.s.hosts)
	r.results = make([]hostResult, n)
	var alive []int32 // often a few hosts of tens of thousands
	hostIdx := r.s.ix.Hosts()
	for i := range int32(n) {
		hr := r.firstFailure(i, int(hostIdx[i]))
		r.results[i] = hr
		if hr.stage < 0 {
			alive = append(alive, i)
		}
	}
	return alive
}

// firstFailure finds the first stage that fails host i (provider p).
func (r *run) firstFailure(i int32, p int) hostResult {
	if r.res == nil {
		return hostResult{stage: 0, detail: -1}
	}
	// With capacity, an allocation candidate anchored to the host decides
	// (member_of is part of it: a tree may pass through a NUMA node or a
	// sharing provider in the aggregate although its root is not).
	if r.capacity != nil && r.capacity.fitsHost(p) {
		// passes placement
	} else if group, ok := r.placementVerdict(p); !ok {
		return hostResult{stage: 0, detail: int32(group)}
	} else if r.capacity != nil {
		return hostResult{stage: 0, detail: capacityDetail}
	}
	for si := range r.stages {
		if v := r.judge(si, i); !r.verdicts[v].Passed {
			return hostResult{stage: int32(si + 1), detail: v}
		}
	}
	return hostResult{stage: -1}
}

// schedule places the instances one by one, as nova's scheduler does: each
// round filters the hosts the previous round kept (only what the instances
// placed so far can change is judged again), weighs them and picks the
// best, whose group member count the next round sees. It returns the
// passing hosts in order: the hosts picked, in order of first pick, then
// the others by the last round's weights.
func (r *run) schedule(alive []int32) []int32 {
	n := max(r.req.NumInstances, 1)
	var totals []float64
	for k := 0; k < n; k++ {
		if k > 0 {
			if r.capacity != nil {
				alive = r.refilterCapacity(alive, int32(k))
			}
			if r.req.Group == nil && r.capacity == nil {
				// Without a group nothing a round sees changes: every
				// instance goes where the first went.
				r.picks = append(r.picks, r.picks[0])
				continue
			}
			if r.req.Group != nil {
				alive = r.refilter(alive, int32(k))
			}
		}
		if len(alive) == 0 {
			r.failedRound = k
			break
		}
		totals = r.weighRound(alive, int32(k), totals)
		best := 0
		rank := r.s.nameRank
		for j := 1; j < len(alive); j++ {
			switch {
			case totals == nil: // equal weights
				if rank[alive[j]] < rank[alive[best]] {
					best = j
				}
			case totals[j] > totals[best] || totals[j] == totals[best] && rank[alive[j]] < rank[alive[best]]:
				best = j
			}
		}
		r.picks = append(r.picks, alive[best])
		if k < n-1 {
			r.consume(alive[best])
			if r.capacity != nil {
				r.capacity.take(int(r.s.ix.Hosts()[alive[best]]))
			}
		}
	}
	if r.failedRound >= 0 {
		return nil
	}
	order := make([]int32, 0, len(alive)+len(r.picks))
	var listed []bool // the hosts picked, listed first
	if n > 1 {
		listed = make([]bool, len(r.s.hosts))
		for _, h := range r.picks {
			if !listed[h] {
				listed[h] = true
				order = append(order, h)
				r.results[h].stage = -1 // it holds instances even if a later round excluded it
			}
		}
	}
	if totals == nil {
		// Equal weights: name order, without a sort. The hosts still
		// passing are exactly those left at stage -1.
		for _, h := range r.s.byName {
			if r.results[h].stage < 0 && (listed == nil || !listed[h]) {
				order = append(order, h)
			}
		}
		return order
	}
	idx := make([]int32, len(alive))
	for j := range idx {
		idx[j] = int32(j)
	}
	rank := r.s.nameRank
	slices.SortFunc(idx, func(a, b int32) int {
		switch {
		case totals[a] > totals[b]:
			return -1
		case totals[a] < totals[b]:
			return 1
		}
		return int(rank[alive[a]] - rank[alive[b]])
	})
	for _, j := range idx {
		if h := alive[j]; listed == nil || !listed[h] {
			order = append(order, h)
		}
	}
	return order
}

// consume counts one instance placed on host h for the rounds that follow.
func (r *run) consume(h int32) {
	r.req.ConsumeGroupHost(r.s.hosts[h].Provider.Name)
	r.consumed++
	if r.special != nil {
		r.special[h] = true
	}
	for si := range r.stages {
		r.stages[si].shared = -1
	}
	for wi := range r.weighers {
		r.weighers[wi].sharedOK = false
	}
}

// refilter judges the hosts still in the running for round k. Filters that
// do not look at the group passed them before and still do.
func (r *run) refilter(alive []int32, k int32) []int32 {
	kept := alive[:0]
next:
	for _, h := range alive {
		for si := range r.stages {
			if sc := r.stages[si].scope; sc != scopeGroup && sc != scopeHost {
				continue
			}
			if v := r.judge(si, h); !r.verdicts[v].Passed {
				r.results[h] = hostResult{stage: int32(si + 1), detail: v}
				r.setRound(h, k)
				continue next
			}
		}
		kept = append(kept, h)
	}
	return kept
}

// raw is weigher wi's raw weight of host i this round.
func (r *run) raw(wi int, i int32) float64 {
	wp := &r.weighers[wi]
	if wp.scope == scopeGroup && (r.special == nil || !r.special[i]) {
		if !wp.sharedOK {
			wp.shared, wp.sharedOK = wp.w.Weigh(&r.s.hosts[i], &r.req), true
		}
		return wp.shared
	}
	return wp.w.Weigh(&r.s.hosts[i], &r.req)
}

// multiplier is weigher wi's multiplier for host i, which an aggregate of
// the host may override.
func (r *run) multiplier(wi int, i int32) float64 {
	wp := &r.weighers[wi]
	if wp.hm == nil {
		return wp.mult
	}
	if wp.views == nil {
		wp.views = r.s.viewsForKeys([]string{KeySoftAffinityMultiplier, KeySoftAntiAffinityMultiplier})
		wp.multOf = make([]float64, len(wp.views.reps))
		wp.multOK = make([]bool, len(wp.views.reps))
	}
	v := wp.views.of[i]
	if !wp.multOK[v] {
		wp.multOf[v] = wp.hm.HostMultiplier(&r.s.hosts[wp.views.reps[v]], r.req.Settings)
		wp.multOK[v] = true
	}
	return wp.multOf[v]
}

// weighRound weighs the hosts of round k as nova's weigh handler does: per
// weigher, raw weights normalised over the hosts and multiplied. It returns
// each host's total (reusing buf), nil when every total is 0, and records
// the round's weight ranges.
func (r *run) weighRound(alive []int32, k int32, buf []float64) []float64 {
	var totals []float64 // made when a weigher tells hosts apart
	lohi := make([][2]float64, len(r.weighers))
	// Hosts holding group members are the only ones a group weigher tells
	// apart: the range comes from them and one other host.
	var members []int32
	others := len(alive)
	if r.special != nil {
		for _, h := range alive {
			if r.special[h] {
				members = append(members, h)
			}
		}
		others -= len(members)
	}
	var raw []float64
	for wi := range r.weighers {
		var lo, hi float64
		if r.weighers[wi].scope == scopeGroup {
			sample := members
			if others > 0 {
				sample = append(sample[:len(sample):len(sample)], firstOther(alive, r.special))
			}
			lo, hi = r.raw(wi, sample[0]), r.raw(wi, sample[0])
			for _, h := range sample[1:] {
				w := r.raw(wi, h)
				lo, hi = min(lo, w), max(hi, w)
			}
			if lo == hi {
				lohi[wi] = [2]float64{lo, hi}
				continue
			}
		}
		if raw == nil {
			raw = make([]float64, len(alive))
		}
		for j, h := range alive {
			raw[j] = r.raw(wi, h)
		}
		lo, hi = raw[0], raw[0]
		for _, w := range raw[1:] {
			lo, hi = min(lo, w), max(hi, w)
		}
		lohi[wi] = [2]float64{lo, hi}
		if lo == hi {
			// Normalisation maps equal weights to 0, whatever the
			// multiplier: the common case of a request without a group.
			continue
		}
		if totals == nil {
			totals = buf[:0]
			if cap(totals) < len(alive) {
				totals = make([]float64, 0, len(alive))
			}
			for range alive {
				totals = append(totals, 0)
			}
		}
		for j, h := range alive {
			totals[j] += r.multiplier(wi, h) * ((raw[j] - lo) / (hi - lo))
		}
	}
	if k > 0 {
		if r.weighed == nil {
			r.weighed = make([]int32, len(r.s.hosts))
		}
		for _, h := range alive {
			r.weighed[h] = k
		}
	}
	r.rounds = append(r.rounds, lohi...)
	return totals
}

// firstOther is the first of hosts not marked special.
func firstOther(hosts []int32, special []bool) int32 {
	for _, h := range hosts {
		if special == nil || !special[h] {
			return h
		}
	}
	return -1
}

// roundRange is weigher wi's lowest and highest raw weight in round k.
func (r *run) roundRange(k int32, wi int) [2]float64 {
	return r.rounds[int(k)*len(r.weighers)+wi]
}

// reqAt is the request as round k saw it.
func (r *run) reqAt(k int32) *Request {
	if r.initial == nil || k == r.consumed {
		return &r.req // no group, or the round req is at
	}
	if q := r.reqs[k]; q != nil {
		return q
	}
	q := r.req
	q.GroupHosts = maps.Clone(r.initial)
	for _, h := range r.picks[:k] {
		q.ConsumeGroupHost(r.s.hosts[h].Provider.Name)
	}
	if r.reqs == nil {
		r.reqs = map[int32]*Request{}
	}
	r.reqs[k] = &q
	return &q
}

// filter runs one host filter, turning a panic (a bug: filters must not
// panic) into a failed verdict rather than a crashed server.
func filter(f HostFilter, h *HostState, req *Request) (v Verdict) {
	defer func() {
		if p := recover(); p != nil {
			v = Verdict{Reason: fmt.Sprintf("%s failed internally: %v", f.Name(), p)}
		}
	}()
	return f.Filter(h, req)
}

// placementVerdict judges host p at the placement stage: ok, or which group
// failed it (-1 for the unnumbered group, else the numbered group's
// position in r.suffixes).
func (r *run) placementVerdict(p int) (group int, ok bool) {
	if r.res.Excluded(p) {
		return -1, false
	}
	for gi, k := range r.suffixes {
		if !r.groups[k].TreeSatisfies(p) {
			return gi, false
		}
	}
	return 0, true
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

func (r *run) roundOf(i int32) int32 {
	if r.round == nil {
		return 0
	}
	return r.round[i]
}

func (r *run) weighedOf(i int32) int32 {
	if r.weighed == nil {
		return 0
	}
	return r.weighed[i]
}

func (r *run) setRound(i, k int32) {
	if r.round == nil {
		r.round = make([]int32, len(r.s.hosts))
	}
	r.round[i] = k
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

// refilterCapacity drops, in round k, the hosts that no longer have an
// allocation candidate once the earlier instances took theirs.
func (r *run) refilterCapacity(alive []int32, k int32) []int32 {
	kept := alive[:0]
	hosts := r.s.ix.Hosts()
	for _, h := range alive {
		if r.capacity.fitsHost(int(hosts[h])) {
			kept = append(kept, h)
			continue
		}
		r.results[h] = hostResult{stage: 0, detail: capacityDetail}
		r.setRound(h, k)
	}
	return kept
}

// groupVerdicts lists each request group of the placement stage with the
// hosts it excluded: the unnumbered group (member_of and capacity) and
// each numbered group.
func (r *run) groupVerdicts() []GroupVerdict {
	if r.res == nil {
		return nil
	}
	// Placement details are -2 (capacity), -1 (unnumbered) or a
	// numbered group's position: counted at detail+2.
	byGroup := make([]int, len(r.suffixes)+2)
	for _, hr := range r.results {
		if hr.stage == 0 {
			byGroup[hr.detail+2]++
		}
	}
	var capGroups map[string]placement.Group
	if r.capacity != nil {
		capGroups = map[string]placement.Group{}
		for _, g := range r.capacity.q.Groups {
			capGroups[g.Suffix] = g
		}
	}
	un := GroupVerdict{Suffix: "", MemberOf: r.memberOf, HostsExcluded: byGroup[-1+2] + byGroup[capacityDetail+2]}
	if g, ok := capGroups[""]; ok {
		un.Resources, un.Required = resourcesText(g), requiredText(g)
	}
	out := []GroupVerdict{un}
	seen := map[string]bool{"": true}
	for gi, k := range r.suffixes {
		v := GroupVerdict{Suffix: k, MemberOf: r.groups[k].Terms.Values(), HostsExcluded: byGroup[gi+2]}
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
