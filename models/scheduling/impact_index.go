package scheduling

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"corral/models"
	"corral/models/placement"
)

// The impact index: what the matrix needs of one snapshot (hosts in name
// order, their zones, tenant classes), and the per-project and per-flavor
// parts whose intersection is a pair's eligible hosts, cached.

// impactIndex is what the matrix needs of one snapshot, built once.
type impactIndex struct {
	s     *Snapshot
	hosts []HostState // in name order
	names []string
	// zones is each host's availability zone (as in hosts).
	zones []string
	// aggHosts lists, per aggregate (index in the snapshot), the positions
	// of the hosts whose root provider is a direct member.
	aggHosts [][]int32
	aggIndex map[string]int // aggregate uuid → index

	projectSide, flavorSide []HostFilter
	filtersExact            bool  // a host filter is not covered
	exact                   bool  // filtersExact, or capacity not factorable: run pairs whole
	capacity                bool  // the world has inventories: flavor parts need a candidate
	hostRoot                []int // host position → its provider in the index
	// order is each host's position in s.hosts (hosts are in name order
	// here); hostAt is the inverse from provider index to host position
	// (-1 for a provider that is not a host).
	order  []int32
	hostAt []int32

	// base, for the index of a draft, is the live index it was derived
	// from (derive): the draft differs from it in some aggregates only,
	// and the parts of hosts none of those aggregates holds are taken
	// from base instead of judged again. affected marks the hosts a
	// changed aggregate holds in either world; sameTenancy says no changed
	// aggregate carries a tenant key in either, so every project part is
	// base's.
	base        *impactIndex
	affected    placement.Bitset
	sameTenancy bool
	posOnce     sync.Once
	pos         map[string]int32 // host name → position, built on first use
	// serverPos is each server's host position (-1 for none), in the
	// order of the world's servers, built on first use.
	serverPosOnce sync.Once
	serverPos     []int32

	// tenantClass groups hosts by the tenants their aggregates admit, all
	// that AggregateMultiTenancyIsolation reads of a host, so that it runs
	// once per group of hosts instead of once per host.
	tenantClass []int32
	classRep    []int32
	classOf     map[string][]int32 // tenant → classes admitting it
	restricted  []bool             // per class: some aggregate carries a tenant key
	// tenantSig is a signature of everything tenant isolation reads: the
	// settings and every aggregate's tenant keys with its members. Two
	// worlds with the same signature admit every project on the same hosts.
	tenantSig string

	// Parts computed so far, by project and by flavor: a live snapshot
	// answers many matrices and inline previews.
	mu           sync.Mutex
	projectParts map[string]partResult
	flavorParts  map[string]partResult
}

type partResult struct {
	bits placement.Bitset
	// considered is the hosts the filters were run on (those passing the
	// terms and capacity); fits is the hosts with an allocation candidate
	// for the flavor, nil when capacity does not apply. A derived index
	// reuses both for the hosts its changes leave alone.
	considered placement.Bitset
	fits       placement.Bitset
	err        error
}

// impactCache is the snapshot's matrix index, built on first use.
type impactCache struct {
	once sync.Once
	x    *impactIndex
	err  error
}

func (s *Snapshot) impactIdx() (*impactIndex, error) {
	s.impact.once.Do(func() { s.impact.x, s.impact.err = newImpactIndex(s) })
	return s.impact.x, s.impact.err
}

func newImpactIndex(s *Snapshot) (*impactIndex, error) {
	ix := s.ix
	// Hosts in name order, so that walking a set of them yields names
	// sorted, and the first few can be listed without sorting them all.
	order := make([]int32, len(s.hosts))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(s.hosts[a].Provider.Name, s.hosts[b].Provider.Name) })
	hosts := make([]HostState, len(order))
	for i, o := range order {
		hosts[i] = s.hosts[o]
	}
	x := &impactIndex{s: s, hosts: hosts, order: order, aggIndex: map[string]int{},
		projectParts: map[string]partResult{}, flavorParts: map[string]partResult{}}
	hostPos := make([]int32, ix.Len())
	for i := range hostPos {
		hostPos[i] = -1
	}
	x.hostAt = hostPos
	x.names = make([]string, len(x.hosts))
	x.zones = make([]string, len(x.hosts))
	x.hostRoot = make([]int, len(x.hosts))
	for i := range x.hosts {
		x.names[i] = x.hosts[i].Provider.Name
		x.zones[i] = hostZone(&x.hosts[i])
		if p, ok := ix.ProviderByUUID(x.hosts[i].Provider.UUID); ok {
			hostPos[p] = int32(i)
			x.hostRoot[i] = p
		}
	}
	x.aggHosts = make([][]int32, ix.NumAggregates())
	for a := 0; a < ix.NumAggregates(); a++ {
		x.aggIndex[ix.Aggregate(a).UUID] = a
		for _, p := range s.novaMembers(a) {
			if h := hostPos[p]; h >= 0 {
				x.aggHosts[a] = append(x.aggHosts[a], h)
			}
		}
	}
	for _, name := range s.world.Settings.EnabledFilters {
		f, ok := LookupHostFilter(name)
		switch {
		case !ok:
			return nil, models.E(models.Invalid, "settings.enabled_filters", "unknown host filter %q", name)
		case slices.Contains(projectFilters, name):
			x.projectSide = append(x.projectSide, f)
		case slices.Contains(flavorFilters, name):
			x.flavorSide = append(x.flavorSide, f)
		default:
			x.filtersExact, x.exact = true, true
		}
	}
	if ix.HasInventories() {
		// Capacity: whether a tree has an allocation candidate depends on
		// the flavor's resources and the pair's member_of terms together
		// when a term's aggregate holds a provider below a root (it can
		// carry or bar a tree whose root it is not) or a sharing provider
		// has inventory (a required term decides which one may serve).
		// Otherwise a host has a candidate under the pair's terms exactly
		// when its root passes them and it has one without terms, which
		// the flavor's part can say.
		x.capacity = true
		if !capacityFactorable(ix, s.world.Settings) {
			x.exact = true
		}
	}
	x.tenantSig = tenantSignature(s)
	x.buildTenantClasses()
	return x, nil
}

// buildTenantClasses groups the hosts by the tenants their aggregates
// admit (see tenantClass).
func (x *impactIndex) buildTenantClasses() {
	classes := map[string]int32{}
	x.tenantClass = make([]int32, len(x.hosts))
	x.classOf = map[string][]int32{}
	for i := range x.hosts {
		h := &x.hosts[i]
		restricted := false
		for _, a := range h.Aggregates {
			for k := range a.Metadata {
				restricted = restricted || IsTenantKey(k)
			}
		}
		tenants := TenantsOf(h)
		key := strings.Join(tenants, "\x00")
		if restricted {
			key = "r\x00" + key
			// Before nova 30 only the exact filter_tenant_id key counts
			// (filter_tenant.go): hosts alike in every tenant but unlike
			// in that key's are told apart, and a class restricted only
			// by suffixed keys (exact = "") shares no verdict with the
			// others.
			key = exactTenantKey(h) + "\x01" + key
		}
		c, ok := classes[key]
		if !ok {
			c = int32(len(x.classRep))
			classes[key] = c
			x.classRep = append(x.classRep, int32(i))
			x.restricted = append(x.restricted, restricted)
			for _, t := range tenants {
				x.classOf[t] = append(x.classOf[t], c)
			}
		}
		x.tenantClass[i] = c
	}
}

// DefaultZone is the zone of a host no aggregate puts in one, as nova's
// default_availability_zone names it.
const DefaultZone = "nova"

// hostZone is the availability zone a host is in.
func hostZone(h *HostState) string {
	for _, a := range h.Aggregates {
		if z := aggregateAZ(a); z != "" {
			return z
		}
	}
	return DefaultZone
}

// requestTerms is what the request filters and the request's own
// unnumbered member_of ask of a host's root provider. failed is set when a
// request filter fails the whole request.
func (s *Snapshot) requestTerms(spec *RequestSpec) (rv *resolved, terms placement.Terms, failed bool, err error) {
	rv, err = s.resolve(spec)
	if err != nil {
		return nil, placement.Terms{}, false, err
	}
	if rv.refused != nil {
		return rv, placement.Terms{}, true, nil
	}
	rf := s.runRequestFilters(&rv.req)
	if rf.failure != "" {
		return rv, placement.Terms{}, true, nil
	}
	return rv, rf.terms.And(rv.user), false, nil
}

// part computes the hosts that pass what spec contributes: its request
// filters' terms at the root, capacity (flavor side), and filters.
// perClass evaluates the filters once per tenant class (valid for the
// project-side filter only). With base, the same part on the live index
// this one derives from, a host no changed aggregate holds keeps base's
// verdict when base judged it: its aggregates, and so what every filter
// reads of it, are the same.
//
// fitsOf, when not nil, is a part whose capacity fits hold for this one
// too (same providers, a flavor asking the same resources and traits).
func (x *impactIndex) part(spec *RequestSpec, filters []HostFilter, perClass bool, base, fitsOf *partResult) partResult {
	n := len(x.hosts)
	set := placement.NewBitset(n)
	rv, terms, failed, err := x.s.requestTerms(spec)
	if err != nil {
		return partResult{err: err}
	}
	if failed {
		return partResult{bits: set, considered: set}
	}
	set.Fill(n)
	for _, term := range terms.Required {
		in := placement.NewBitset(n)
		for _, u := range term {
			if a, ok := x.aggIndex[u]; ok {
				for _, h := range x.aggHosts[a] {
					in.Set(int(h))
				}
			}
		}
		set.And(in)
	}
	for _, u := range terms.Forbidden {
		if a, ok := x.aggIndex[u]; ok {
			for _, h := range x.aggHosts[a] {
				set.Clear(int(h))
			}
		}
	}
	var fits placement.Bitset
	if !perClass && x.capacity && rv.req.Flavor != nil {
		if fitsOf != nil {
			fits = fitsOf.fits // same providers, same resources asked
		} else if roots := x.s.FlavorFitBits(rv.req.Flavor); roots != nil {
			fits = placement.NewBitset(n)
			for i, p := range x.hostRoot {
				if roots.Has(p) {
					fits.Set(i)
				}
			}
		}
		if fits != nil {
			set.And(fits)
		}
	}
	if len(filters) == 0 {
		return x.shared(partResult{bits: set, considered: set, fits: fits}, base)
	}
	considered := set.Clone()
	// The filters see the world's settings, not the override that kept
	// the other side's request filters out of the terms.
	req := Request{ProjectID: spec.ProjectID, Flavor: rv.req.Flavor, NumInstances: 1,
		GroupHosts: map[string]int{}, Settings: x.s.world.Settings}
	passes := func(i int) bool {
		for _, f := range filters {
			if !f.Filter(&x.hosts[i], &req).Passed {
				return false
			}
		}
		return true
	}
	judge := passes
	if perClass {
		var verdict []bool
		judge = func(i int) bool {
			if verdict == nil {
				verdict = x.classVerdicts(spec.ProjectID, passes)
			}
			return verdict[x.tenantClass[i]]
		}
	}
	set.Each(func(i int) {
		if base != nil && !x.affected.Has(i) && base.considered.Has(i) {
			if !base.bits.Has(i) {
				set.Clear(i)
			}
			return
		}
		if !judge(i) {
			set.Clear(i)
		}
	})
	return x.shared(partResult{bits: set, considered: considered, fits: fits}, base)
}

// shared returns base's sets in place of r's equal ones, so that a matrix
// cell can tell an unchanged part by its identity.
func (x *impactIndex) shared(r partResult, base *partResult) partResult {
	if base != nil && slices.Equal(r.bits, base.bits) && slices.Equal(r.considered, base.considered) {
		return *base
	}
	return r
}

// classVerdicts runs the project-side filters once for each class of hosts
// admitting project, once for an unrestricted class and once for a
// restricted class not admitting it; every class of the last two kinds
// shares that verdict, as the hosts differ only in tenants the project is
// not among.
func (x *impactIndex) classVerdicts(project string, passes func(i int) bool) []bool {
	verdict := make([]bool, len(x.classRep))
	admits := make([]bool, len(x.classRep))
	for _, c := range x.classOf[project] {
		admits[c] = true
		verdict[c] = passes(int(x.classRep[c]))
	}
	shared := [3]int8{} // [unrestricted, restricted, by suffixed keys only]: 0 unknown, 1 pass, 2 fail
	for c := range x.classRep {
		if admits[c] {
			continue
		}
		k := 0
		if x.restricted[c] {
			k = 1
			if exactTenantKey(&x.hosts[x.classRep[c]]) == "" {
				k = 2
			}
		}
		if shared[k] == 0 {
			shared[k] = 2
			if passes(int(x.classRep[c])) {
				shared[k] = 1
			}
		}
		verdict[c] = shared[k] == 1
	}
	return verdict
}

func boolp(b bool) *bool         { return &b }
func strp(s string) *string      { return &s }
func listp(l []string) *[]string { return &l }

// maxCachedParts bounds the parts an index keeps (3 KiB each on the
// 100,000-provider cloud).
const maxCachedParts = 5000

// cached returns the part under key, computing it with fn once.
func (x *impactIndex) cached(m map[string]partResult, key string, fn func() partResult) partResult {
	x.mu.Lock()
	r, ok := m[key]
	x.mu.Unlock()
	if ok {
		return r
	}
	r = fn()
	x.mu.Lock()
	if len(m) < maxCachedParts {
		m[key] = r
	}
	x.mu.Unlock()
	return r
}

// tenantSignature is what tenant isolation reads of a world: the settings
// and every aggregate's tenant keys and members.
func tenantSignature(s *Snapshot) string {
	var b strings.Builder
	st := s.world.Settings
	fmt.Fprintf(&b, "%t %t|", st.LimitTenantsToPlacementAggregate, st.PlacementAggregateRequiredForTenants)
	b.WriteString(strings.Join(st.EnabledFilters, ","))
	for a := 0; a < s.ix.NumAggregates(); a++ {
		agg := s.ix.Aggregate(a)
		keys := false
		for _, k := range slices.Sorted(maps.Keys(agg.Metadata)) {
			if IsTenantKey(k) {
				fmt.Fprintf(&b, "|%s=%s", k, agg.Metadata[k])
				keys = true
			}
		}
		if keys {
			fmt.Fprintf(&b, "@%s:%s", agg.UUID, strings.Join(agg.Members, ","))
		}
	}
	return b.String()
}

// projectPart is the hosts project p may use whatever the flavor.
func (x *impactIndex) projectPart(p string) (placement.Bitset, error) {
	r := x.projectPartResult(p)
	return r.bits, r.err
}

func (x *impactIndex) projectPartResult(p string) partResult {
	if x.base != nil && x.sameTenancy {
		// Nothing tenant isolation reads changed: the project may use
		// the same hosts.
		return x.base.projectPartResult(p)
	}
	return x.cached(x.projectParts, p, func() partResult {
		var base *partResult
		if x.base != nil {
			r := x.base.projectPartResult(p)
			base = &r
		}
		spec := &RequestSpec{ProjectID: p, NumInstances: 1,
			Flavor: FlavorRef{Inline: &models.Flavor{ExtraSpecs: map[string]string{}}},
			Settings: &SettingsOverride{
				RequiredMemberPrefix: strp(""), DefaultForbiddenMemberPrefix: strp(""),
				EnableIsolatedAggregateFiltering: boolp(false), EnabledFilters: listp([]string{}),
			}}
		return x.part(spec, x.projectSide, true, base, nil)
	})
}

// flavorPart is the hosts flavor f may use whatever the project.
func (x *impactIndex) flavorPart(f string) (placement.Bitset, error) {
	r := x.flavorPartResult(f)
	return r.bits, r.err
}

func (x *impactIndex) flavorPartResult(f string) partResult {
	return x.cached(x.flavorParts, f, func() partResult {
		// The live part of the same flavor: all of it carries over to the
		// hosts the changes leave alone when the flavor is unchanged, its
		// capacity fits when the flavor asks the same resources.
		var base, fitsOf *partResult
		if x.base != nil && sameCapacityAsk(x.base.s, x.s, f) {
			if r := x.base.flavorPartResult(f); r.err == nil {
				fitsOf = &r
				if sameFlavor(x.base.s, x.s, f) {
					base = &r
				}
			}
		}
		spec := &RequestSpec{NumInstances: 1, Flavor: FlavorRef{Name: f},
			Settings: &SettingsOverride{
				LimitTenantsToPlacementAggregate: boolp(false), PlacementAggregateRequiredForTenants: boolp(false),
				EnabledFilters: listp([]string{}),
			}}
		return x.part(spec, x.flavorSide, false, base, fitsOf)
	})
}

// position is the host's position in the index, or -1.
func (x *impactIndex) position(name string) int {
	x.posOnce.Do(func() {
		if x.base != nil {
			x.pos = x.base.positions()
			return
		}
		x.pos = make(map[string]int32, len(x.names))
		for i, n := range x.names {
			x.pos[n] = int32(i)
		}
	})
	if p, ok := x.pos[name]; ok {
		return int(p)
	}
	return -1
}

// serverPositions is each of the world's servers' host position, -1 when
// it runs on no host the index knows.
func (x *impactIndex) serverPositions() []int32 {
	x.serverPosOnce.Do(func() {
		servers := x.s.world.Servers
		x.serverPos = make([]int32, len(servers))
		for i := range servers {
			x.serverPos[i] = -1
			if servers[i].Host != "" {
				x.serverPos[i] = int32(x.position(servers[i].Host))
			}
		}
	})
	return x.serverPos
}

func (x *impactIndex) positions() map[string]int32 {
	x.position("")
	return x.pos
}

// capacityFactorable reports whether no aggregate a request filter can
// name holds a provider below a root, and no sharing provider has
// inventory (see newImpactIndex).
func capacityFactorable(ix *placement.Index, st models.Settings) bool {
	for p := 0; p < ix.Len(); p++ {
		if ix.IsSharing(p) && len(ix.Provider(p).Inventories) > 0 {
			return false
		}
	}
	for a := 0; a < ix.NumAggregates(); a++ {
		if !termAggregate(ix.Aggregate(a), st) {
			continue
		}
		for _, p := range ix.Members(a) {
			if ix.Parent(int(p)) >= 0 {
				return false
			}
		}
	}
	return true
}

// termAggregate reports whether a request filter may put aggregate a in a
// member_of term: tenant, zone, reservation and isolated-trait aggregates.
func termAggregate(a *models.Aggregate, st models.Settings) bool {
	if a.AvailabilityZone != nil {
		return true
	}
	for k := range a.Metadata {
		switch {
		case strings.HasPrefix(k, "filter_tenant_id"), k == "availability_zone", strings.HasPrefix(k, "trait:"),
			st.RequiredMemberPrefix != "" && strings.HasPrefix(k, st.RequiredMemberPrefix),
			st.DefaultForbiddenMemberPrefix != "" && strings.HasPrefix(k, st.DefaultForbiddenMemberPrefix):
			return true
		}
	}
	return false
}
