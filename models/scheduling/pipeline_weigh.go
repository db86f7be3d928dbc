package scheduling

// Weighing a round's hosts as nova's weigh handler does.

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
		keys := []string{KeySoftAffinityMultiplier, KeySoftAntiAffinityMultiplier}
		if k, ok := wp.w.(interface{ multiplierKeys() []string }); ok {
			keys = k.multiplierKeys()
		}
		wp.views = r.s.viewsForKeys(keys)
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
