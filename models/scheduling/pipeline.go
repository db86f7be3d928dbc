package scheduling

import (
	"fmt"
	"runtime"
	"sort"
	"sync"

	"corral/models/placement"
)

// StagePlacement names the placement stage in traces.
const StagePlacement = "placement"

// hostResult is one host's first failure: stage 0 is placement (or the
// request filter that failed the whole request), stage i+1 is host filter i,
// -1 means the host passed. Placement reasons are built only for the hosts
// a trace lists, because tenant isolation can exclude tens of thousands.
type hostResult struct {
	stage  int
	reason string // for host filters
	group  int    // placement: -1 for the unnumbered group, else the numbered group's position
}

// run holds the state of one Run.
type run struct {
	s        *Snapshot
	rv       *resolved
	rf       requestFilterOutcome
	res      *placement.Result            // unnumbered group; nil on failure
	groups   map[string]*placement.Result // numbered groups
	suffixes []string
}

// Run takes one request through the pipeline — request filters, placement,
// host filters, weighers — and returns the trace. Bad input (an unknown
// flavor, group or filter, malformed member_of) is an Invalid error naming
// the field; a request that cannot be scheduled is a trace with Error set.
// Run does not modify the snapshot and may be called concurrently.
func (s *Snapshot) Run(spec *RequestSpec) (*Trace, error) {
	if spec == nil {
		spec = &RequestSpec{}
	}
	rv, err := s.resolve(spec)
	if err != nil {
		return nil, err
	}
	req := &rv.req
	r := &run{s: s, rv: rv, rf: s.runRequestFilters(req), groups: map[string]*placement.Result{}}
	unnumbered := r.rf.terms.And(rv.user)
	tr := &Trace{
		PlacementQuery: placementQuery(req.Flavor, unnumbered, rv.groups),
		RequestFilters: r.rf.steps,
		Providers:      []ProviderEntry{},
		Hosts:          []HostEntry{},
	}
	if r.rf.failure == "" {
		r.res = s.ix.Evaluate(unnumbered, placement.Unnumbered)
		r.suffixes = sortedKeys(rv.groups)
		for _, k := range r.suffixes {
			r.groups[k] = s.ix.Evaluate(rv.groups[k], placement.Numbered)
		}
	}
	limit := spec.Limit
	var reasons reasonCounter
	r.providers(tr, limit, &reasons)

	// Hosts: first failure of each (filters short-circuit here; the listed
	// entries below evaluate every check).
	hostIdx := s.ix.Hosts()
	results := r.firstFailures(hostIdx)
	var passing []int
	for i := range results {
		if results[i].stage < 0 {
			passing = append(passing, i)
		}
	}
	// weigh works on host positions; totals and weights are indexed by host.
	totalOf, weightsOf := r.weigh(passing)
	rank := s.nameRank
	sort.Slice(passing, func(a, b int) bool {
		ha, hb := passing[a], passing[b]
		if totalOf[ha] != totalOf[hb] {
			return totalOf[ha] > totalOf[hb]
		}
		return rank[ha] < rank[hb]
	})

	// Summary.
	sum := &tr.Summary
	sum.Providers = s.ix.Len()
	sum.Hosts = len(s.hosts)
	sum.HostsPassed = len(passing)
	firstStage := StagePlacement
	if r.rf.failure != "" {
		firstStage = r.rf.failStage
	}
	stageCounts := make([]StageCount, 1+len(rv.filters))
	stageCounts[0] = StageCount{Stage: firstStage}
	for i, f := range rv.filters {
		stageCounts[i+1] = StageCount{Stage: f.Name()}
	}
	stageCounts[0].Excluded = sum.ProvidersExcluded
	tr.outcomes = make([]hostOutcome, len(s.hosts))
	for i, hr := range results {
		name := s.hosts[i].Provider.Name
		o := hostOutcome{Name: name, Passed: hr.stage < 0}
		if hr.stage >= 0 {
			o.Stage, o.Reason = stageCounts[hr.stage].Stage, hr.reason
			stageCounts[hr.stage].HostsExcluded++
			switch {
			case hr.stage > 0:
				stageCounts[hr.stage].Excluded++
				reasons.add(o.Stage, genericReason(hr.reason, name), name)
			case r.res != nil && hr.group >= 0:
				// The provider list does not count numbered-group failures.
				reasons.add(o.Stage, "no provider of the tree satisfies member_of"+r.suffixes[hr.group], name)
			}
		}
		tr.outcomes[i] = o
	}
	sum.Stages = stageCounts
	tr.reasonOf = func(i int) string { return r.reason(int(hostIdx[i]), results[i]) }
	sum.Reasons = reasons.sorted()

	// Host entries: passing hosts in weighed order, then the others.
	for _, h := range passing {
		if limit > 0 && len(tr.Hosts) >= limit {
			tr.Truncated = true
			break
		}
		tr.Hosts = append(tr.Hosts, r.hostEntry(h, int(hostIdx[h]), results[h], totalOf[h], weightsOf[h], true))
	}
	for i, hr := range results {
		if hr.stage < 0 {
			continue
		}
		if limit > 0 && len(tr.Hosts) >= limit {
			tr.Truncated = true
			break
		}
		tr.Hosts = append(tr.Hosts, r.hostEntry(i, int(hostIdx[i]), hr, 0, nil, false))
	}

	switch {
	case r.rf.failure != "":
		msg := r.rf.failure
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
		tr.Providers = append(tr.Providers, ProviderEntry{UUID: pr.UUID, Name: pr.Name, Root: ix.Provider(ix.Root(p)).Name,
			Excluded: excluded, Stage: stage, Reason: reason, Via: via})
		return true
	}
	if r.res == nil {
		// The request failed before Placement: nothing is a candidate.
		sum.ProvidersExcluded = n
		g := ReasonGroup{Stage: r.rf.failStage, Reason: r.rf.failure, Count: n, Examples: []string{}}
		for p := 0; p < n && p < maxExamples; p++ {
			g.Examples = append(g.Examples, ix.Provider(p).Name)
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
	// Group by cause without building a sentence per provider.
	type keyed struct {
		key placement.GroupKey
		p   int
		e   placement.Exclusion
	}
	groups := map[placement.GroupKey]*ReasonGroup{}
	// Neighbouring providers (a tree) usually share a cause.
	var last *ReasonGroup
	var lastKey placement.GroupKey
	var order []keyed
	listing := true
	excl.Each(func(p int) {
		e, _ := r.res.Explain(p)
		k := r.res.Key(p, e)
		g := last
		if k != lastKey || g == nil {
			g = groups[k]
			last, lastKey = g, k
		}
		if g == nil {
			g = &ReasonGroup{Stage: StagePlacement, Examples: []string{}}
			groups[k] = g
			last = g
			order = append(order, keyed{k, p, e})
		}
		g.Count++
		if len(g.Examples) < maxExamples {
			g.Examples = append(g.Examples, ix.Provider(p).Name)
		}
		if listing {
			listing = add(p, true, StagePlacement, r.res.ReasonFor(p, e), e.Via.String())
		}
	})
	for _, o := range order {
		g := groups[o.key]
		g.Reason = r.res.GroupReason(o.p, o.e)
		reasons.addGroup(*g)
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

// parallelHosts is the host count from which the host filters run on
// every CPU: filters are stateless and cost microseconds per host, so a
// 25,000-host cloud gains from it and a small one would only pay overhead.
const parallelHosts = 2048

// firstFailures runs hostFirstFailure for every host, split over the CPUs.
func (r *run) firstFailures(hostIdx []int32) []hostResult {
	results := make([]hostResult, len(hostIdx))
	workers := runtime.GOMAXPROCS(0)
	if len(hostIdx) < parallelHosts || workers < 2 {
		workers = 1
	}
	chunk := (len(hostIdx) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < len(hostIdx); lo += chunk {
		hi := min(lo+chunk, len(hostIdx))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				results[i] = r.hostFirstFailure(i, int(hostIdx[i]))
			}
		}()
	}
	wg.Wait()
	return results
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

// hostFirstFailure finds the first stage that fails host i (provider p).
func (r *run) hostFirstFailure(i, p int) hostResult {
	if r.res == nil {
		return hostResult{stage: 0, group: -1}
	}
	if group, ok := r.placementVerdict(p); !ok {
		return hostResult{stage: 0, group: group}
	}
	h := &r.s.hosts[i]
	for fi, f := range r.rv.filters {
		if v := filter(f, h, &r.rv.req); !v.Passed {
			return hostResult{stage: fi + 1, reason: v.Reason}
		}
	}
	return hostResult{stage: -1}
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

// reason is the sentence for a failed host (provider p).
func (r *run) reason(p int, hr hostResult) string {
	switch {
	case hr.stage != 0:
		return hr.reason
	case r.res == nil:
		return r.rf.failure
	case hr.group < 0:
		return r.res.Reason(p)
	}
	return fmt.Sprintf("no provider of the tree, nor a sharing provider anchored to it, is directly in the aggregates of member_of%s (numbered groups do not span trees)", r.suffixes[hr.group])
}

// weigh scores the passing hosts (host positions): per weigher, raw
// weights normalised over the passing hosts and multiplied, as nova's weigh
// handler does. It returns, indexed by host position, each host's total and
// its per-weigher weights (nil for hosts that did not pass).
func (r *run) weigh(passing []int) (totals []float64, weights [][]float64) {
	ws := r.rv.weighers
	totals = make([]float64, len(r.s.hosts))
	weights = make([][]float64, len(r.s.hosts))
	flat := make([]float64, len(passing)*len(ws))
	for i, h := range passing {
		weights[h] = flat[i*len(ws) : (i+1)*len(ws) : (i+1)*len(ws)]
	}
	raw := make([]float64, len(passing))
	for wi, w := range ws {
		same := true
		for i, h := range passing {
			raw[i] = w.Weigh(&r.s.hosts[h], &r.rv.req)
			same = same && raw[i] == raw[0]
		}
		if same {
			// Normalisation maps equal weights to 0, whatever the
			// multiplier: the common case of a request without a group.
			continue
		}
		norm := NormalizeWeigherWeights(raw)
		for i, h := range passing {
			weights[h][wi] = r.multiplier(w, h) * norm[i]
			totals[h] += weights[h][wi]
		}
	}
	return totals, weights
}

func (r *run) multiplier(w Weigher, h int) float64 {
	if hm, ok := w.(HostWeightMultiplier); ok {
		return hm.HostMultiplier(&r.s.hosts[h], r.rv.req.Settings)
	}
	return w.Multiplier(r.rv.req.Settings)
}

// hostEntry builds a listed host's entry with every check evaluated.
func (r *run) hostEntry(i, p int, hr hostResult, total float64, weights []float64, passed bool) HostEntry {
	h := &r.s.hosts[i]
	e := HostEntry{UUID: h.Provider.UUID, Name: h.Provider.Name, Passed: passed, Checks: []Check{}}
	yes, no := true, false
	if r.res == nil {
		e.Checks = append(e.Checks, Check{Stage: r.rf.failStage, Passed: &no, Reason: r.rf.failure})
	} else if group, ok := r.placementVerdict(p); ok {
		e.Checks = append(e.Checks, Check{Stage: StagePlacement, Passed: &yes})
	} else {
		e.Checks = append(e.Checks, Check{Stage: StagePlacement, Passed: &no, Reason: r.reason(p, hostResult{group: group})})
	}
	for _, f := range r.rv.filters {
		v := filter(f, h, &r.rv.req)
		c := Check{Stage: f.Name(), Passed: &yes}
		if !v.Passed {
			c.Passed, c.Reason = &no, v.Reason
		}
		e.Checks = append(e.Checks, c)
	}
	for wi, w := range r.rv.weighers {
		raw := w.Weigh(h, &r.rv.req)
		m := r.multiplier(w, i)
		c := Check{Stage: w.Name(), Raw: &raw, Multiplier: &m}
		if passed {
			wt := weights[wi]
			c.Weight = &wt
		}
		e.Checks = append(e.Checks, c)
	}
	if passed {
		e.Weight = &total
	} else {
		e.Stage = r.stageName(hr.stage)
		e.Reason = r.reason(p, hr)
	}
	return e
}

func (r *run) stageName(stage int) string {
	switch {
	case stage == 0 && r.res == nil:
		return r.rf.failStage
	case stage == 0:
		return StagePlacement
	case stage > 0 && stage <= len(r.rv.filters):
		return r.rv.filters[stage-1].Name()
	}
	return ""
}
