package scheduling

import (
	"fmt"
	"maps"
	"runtime"
	"slices"

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
	r, err := s.newRun(spec)
	if err != nil {
		return nil, err
	}
	tr := &Trace{
		Nova:           r.novaView(),
		PlacementQuery: placementQuery(r.rv.req.Flavor, r.memberOf, r.rv.groups),
		RequestFilters: r.rf.steps,
		Providers:      []ProviderEntry{},
		Hosts:          []HostEntry{},
	}
	var reasons reasonCounter
	r.providers(tr, spec.Limit, &reasons)

	r.plan()
	passing := r.schedule(r.firstRound())

	sum := &tr.Summary
	sum.Providers = s.ix.Len()
	sum.Hosts = len(s.hosts)
	sum.HostsPassed = len(passing)
	stageCounts := r.stageCounts()
	stageCounts[0].Excluded = sum.ProvidersExcluded
	r.countExclusions(stageCounts, &reasons)
	tr.Groups = r.groupVerdicts()
	sum.Stages = stageCounts
	sum.Reasons = reasons.sorted()
	// Every host's outcome, for DiffTraces, is built only when asked for.
	tr.outcomesFn = r.outcomes
	tr.reasonOf = func(i int) string { return r.reason(int32(i)) }

	r.listHosts(tr, spec, passing, stageCounts)
	r.notePlacementLimit(tr.Nova)
	tr.Error = r.failure(len(passing))
	return tr, nil
}

// newRun resolves spec and evaluates its placement terms: the unnumbered
// group (request filters' terms and the user's member_of), each numbered
// group and the allocation-candidate check, unless a request filter
// already failed the request.
func (s *Snapshot) newRun(spec *RequestSpec) (*run, error) {
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
	if r.rf.failure == "" {
		r.res = s.ix.Evaluate(unnumbered, placement.Unnumbered)
		r.suffixes = slices.Sorted(maps.Keys(rv.groups))
		for _, k := range r.suffixes {
			r.groups[k] = s.ix.Evaluate(rv.groups[k], placement.Numbered)
		}
		r.capacity = s.newCapacity(&rv.req, unnumbered, rv.groups)
	}
	return r, nil
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
	if r.s.hosts[i].Provider.HasTrait(TraitComputeStatusDisabled) {
		return hostResult{stage: 0, detail: computeDisabledDetail}
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
			filtersUse := r.filtersUse()
			if r.req.Group == nil && r.capacity == nil && !r.weighsUse() && !filtersUse {
				// Without a group nothing a round sees changes: every
				// instance goes where the first went.
				r.picks = append(r.picks, r.picks[0])
				continue
			}
			if r.req.Group != nil || filtersUse {
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
	r.req.consumeOn(r.s.hosts[h].Provider.Name)
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

// refilter judges the hosts still in the running for round k with the
// filters Nova runs for every instance: the group filters and those that
// count the earlier instances. The others (run_filter_once_per_request)
// passed them before and still do.
func (r *run) refilter(alive []int32, k int32) []int32 {
	kept := alive[:0]
next:
	for _, h := range alive {
		for si := range r.stages {
			u, perInstance := r.stages[si].f.(interface{ readsUse() bool })
			if r.stages[si].scope != scopeGroup && !(perInstance && u.readsUse()) {
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

// reqAt is the request as round k saw it.
func (r *run) reqAt(k int32) *Request {
	if r.initial == nil && r.req.consumedOn == nil || k == r.consumed {
		return &r.req // nothing consumed, or the round req is at
	}
	if q := r.reqs[k]; q != nil {
		return q
	}
	q := r.req
	q.consumedOn = nil
	if r.initial != nil {
		q.GroupHosts = maps.Clone(r.initial)
	}
	for _, h := range r.picks[:k] {
		if r.initial != nil {
			q.ConsumeGroupHost(r.s.hosts[h].Provider.Name)
		}
		q.consumeOn(r.s.hosts[h].Provider.Name)
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
