package scheduling

import (
	"maps"
	"slices"
	"strings"

	"corral/models"
	"corral/models/placement"
)

// A draft's impact index derived from the live one: only the hosts the
// changed aggregates hold are judged again.

// derivedImpactIdx is the draft snapshot's index, derived from the live
// index base when the draft differs from it in aggregates alone (see
// derive), else built whole.
func (s *Snapshot) derivedImpactIdx(base *impactIndex) (*impactIndex, error) {
	s.impact.once.Do(func() {
		if x := derive(base, s); x != nil {
			s.impact.x = x
			return
		}
		s.impact.x, s.impact.err = newImpactIndex(s)
	})
	return s.impact.x, s.impact.err
}

// derive builds the index of snapshot s from base's when s has base's
// providers (the same ones, not copies) and settings, so that the two
// differ in aggregates and flavors at most: host order, capacity and
// every part of a host no changed aggregate holds carry over. It returns
// nil when they differ in more.
func derive(base *impactIndex, s *Snapshot) *impactIndex {
	bw, w := base.s.world, s.world
	if base.s == s || len(w.Providers) != len(bw.Providers) || len(w.Providers) == 0 ||
		&w.Providers[0] != &bw.Providers[0] || len(s.hosts) != len(base.hosts) ||
		s.ix.Len() != base.s.ix.Len() || !equalSettings(w.Settings, bw.Settings) {
		return nil
	}
	x := &impactIndex{s: s, base: base, names: base.names, order: base.order, hostRoot: base.hostRoot, hostAt: base.hostAt,
		projectSide: base.projectSide, flavorSide: base.flavorSide, filtersExact: base.filtersExact, capacity: base.capacity,
		aggIndex: make(map[string]int, s.ix.NumAggregates()), aggHosts: make([][]int32, s.ix.NumAggregates()),
		projectParts: map[string]partResult{}, flavorParts: map[string]partResult{}}
	x.hosts = make([]HostState, len(base.hosts))
	for i, o := range base.order {
		h := s.hosts[o]
		if h.Provider != base.hosts[i].Provider || s.ix.Provider(base.hostRoot[i]) != h.Provider {
			return nil
		}
		x.hosts[i] = h
	}
	// The aggregates that differ, by UUID, in either world.
	x.affected = placement.NewBitset(len(x.hosts))
	tenancy, zones := false, false
	touch := func(a *models.Aggregate, members []int32) {
		for k := range a.Metadata {
			tenancy = tenancy || IsTenantKey(k)
		}
		zones = zones || aggregateAZ(a) != ""
		for _, h := range members {
			x.affected.Set(int(h))
		}
	}
	seen := make(map[string]bool, s.ix.NumAggregates())
	for a := 0; a < s.ix.NumAggregates(); a++ {
		agg := s.ix.Aggregate(a)
		x.aggIndex[agg.UUID] = a
		seen[agg.UUID] = true
		if ba, ok := base.aggIndex[agg.UUID]; ok && sameAggregate(base.s.ix.Aggregate(ba), agg) {
			x.aggHosts[a] = base.aggHosts[ba]
			continue
		}
		for _, p := range s.novaMembers(a) {
			if h := x.hostAt[p]; h >= 0 {
				x.aggHosts[a] = append(x.aggHosts[a], h)
			}
		}
		touch(agg, x.aggHosts[a])
		if ba, ok := base.aggIndex[agg.UUID]; ok {
			touch(base.s.ix.Aggregate(ba), base.aggHosts[ba])
		}
	}
	for ba := 0; ba < base.s.ix.NumAggregates(); ba++ {
		if agg := base.s.ix.Aggregate(ba); !seen[agg.UUID] {
			touch(agg, base.aggHosts[ba])
		}
	}
	x.zones = base.zones
	if zones {
		x.zones = slices.Clone(base.zones)
		x.affected.Each(func(i int) { x.zones[i] = hostZone(&x.hosts[i]) })
	}
	x.exact = x.filtersExact
	if x.capacity && !capacityFactorable(s.ix, w.Settings) {
		x.exact = true
	}
	x.sameTenancy = !tenancy
	if x.sameTenancy {
		x.tenantSig, x.tenantClass, x.classRep, x.classOf, x.restricted =
			base.tenantSig, base.tenantClass, base.classRep, base.classOf, base.restricted
	} else {
		x.tenantSig = tenantSignature(s)
		x.buildTenantClasses()
	}
	return x
}

// sameAggregate reports whether two versions of an aggregate read the same.
func sameAggregate(a, b *models.Aggregate) bool {
	return a.Name == b.Name && aggregateAZ(a) == aggregateAZ(b) &&
		(a.AvailabilityZone == nil) == (b.AvailabilityZone == nil) &&
		maps.Equal(a.Metadata, b.Metadata) && slices.Equal(a.Members, b.Members) && sameDrift(a, b)
}

// sameDrift reports whether two versions of an aggregate have the same
// members on one side only.
func sameDrift(a, b *models.Aggregate) bool {
	return slices.Equal(a.NotInPlacement, b.NotInPlacement) && slices.Equal(a.NotInNova, b.NotInNova)
}

// equalSettings reports whether two settings are the same.
func equalSettings(a, b models.Settings) bool {
	return a.LimitTenantsToPlacementAggregate == b.LimitTenantsToPlacementAggregate &&
		a.PlacementAggregateRequiredForTenants == b.PlacementAggregateRequiredForTenants &&
		a.EnableIsolatedAggregateFiltering == b.EnableIsolatedAggregateFiltering &&
		a.QueryPlacementForAvailabilityZone == b.QueryPlacementForAvailabilityZone &&
		a.RequiredMemberPrefix == b.RequiredMemberPrefix && a.DefaultForbiddenMemberPrefix == b.DefaultForbiddenMemberPrefix &&
		a.SoftAffinityWeightMultiplier == b.SoftAffinityWeightMultiplier &&
		a.SoftAntiAffinityWeightMultiplier == b.SoftAntiAffinityWeightMultiplier &&
		slices.Equal(a.EnabledFilters, b.EnabledFilters)
}

// sameFlavor reports whether flavor name reads the same in both snapshots
// (absent from both counts as the same).
func sameFlavor(a, b *Snapshot, name string) bool {
	fa, oka := a.flavorByName[name]
	fb, okb := b.flavorByName[name]
	if oka != okb || fa == fb {
		return oka == okb
	}
	return fa.VCPUs == fb.VCPUs && fa.RAMMB == fb.RAMMB && fa.DiskGB == fb.DiskGB && fa.ID == fb.ID &&
		maps.Equal(fa.ExtraSpecs, fb.ExtraSpecs)
}

// sameCapacityAsk reports whether flavor name asks the same of capacity in
// both snapshots: its size, and its resources*, trait* and group_policy
// extra specs (what FlavorGroups reads).
func sameCapacityAsk(a, b *Snapshot, name string) bool {
	fa, oka := a.flavorByName[name]
	fb, okb := b.flavorByName[name]
	if oka != okb || fa == fb {
		return oka == okb
	}
	if fa.VCPUs != fb.VCPUs || fa.RAMMB != fb.RAMMB || fa.DiskGB != fb.DiskGB {
		return false
	}
	asks := func(k string) bool {
		return strings.HasPrefix(k, "resources") || strings.HasPrefix(k, "trait") || k == "group_policy"
	}
	for k, v := range fa.ExtraSpecs {
		if w, ok := fb.ExtraSpecs[k]; (!ok || w != v) && asks(k) {
			return false
		}
	}
	for k := range fb.ExtraSpecs {
		if _, ok := fa.ExtraSpecs[k]; !ok && asks(k) {
			return false
		}
	}
	return true
}
