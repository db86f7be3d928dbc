package scheduling

import (
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"corral/models"
	"corral/models/placement"
)

// The impact matrix runs every chosen project × flavor pair against live
// data and against a draft. Running the whole pipeline per pair would cost
// 4,000 runs for 100 projects × 20 flavors; instead each pair's eligible
// hosts are assembled from one part per project and one per flavor:
//
//   - Placement judges a host by its root provider alone (the unnumbered
//     group: the root must be directly in every required term and in no
//     forbidden aggregate), and the request filters' terms come from the
//     project (tenant isolation) or from the flavor (reservations,
//     isolated aggregates), never from both. So the root passes the pair's
//     terms exactly when it passes the project's and the flavor's.
//   - Each host filter reads either the project (AggregateMultiTenancy-
//     Isolation) or the flavor (the extra-spec filters) or neither (the
//     server-group filters, with no group in the request).
//
// Hence eligible(p, f) = part(p) ∩ part(f). The request filters' terms are
// taken from the request filters themselves (requestTerms), so they are
// exactly nova's. Should the settings enable a host filter this reasoning
// does not cover, every pair is run through the whole pipeline instead.

// projectFilters and flavorFilters sort the known host filters by what they
// read of the request.
var (
	projectFilters = []string{models.FilterAggregateMultiTenancy}
	flavorFilters  = []string{
		models.FilterAggregateInstanceExtraSpecs, models.FilterAggregateInstanceType,
		models.FilterServerGroupAffinity, models.FilterServerGroupAntiAffinity,
	}
)

// impactNames caps the hosts a cell names: a draft that drains a zone
// takes thousands of hosts from every pair. (A variable so that tests can
// lower it.)
var impactNames = 50

// AnyOtherProject is the matrix row of every project the world does not
// name: no aggregate is tagged for it, no server of it runs. Its cells are
// what a new project would get.
const AnyOtherProject = "(any other project)"

// anyOtherProjectID is the project the "any other project" row runs as; no
// world names it (the characters are not those of a project id).
const anyOtherProjectID = "<any other project>"

// ImpactCell is one project × flavor pair of the matrix.
type ImpactCell struct {
	Project string `json:"project"`
	Flavor  string `json:"flavor"`
	Zone    string `json:"zone,omitempty"`
	Live    int    `json:"live"`
	Draft   int    `json:"draft"`
	// Lost and Gained name the hosts the draft takes away or adds, the
	// first 50 of them by name; the counts are complete.
	Lost        []string `json:"lost"`
	Gained      []string `json:"gained"`
	LostCount   int      `json:"lost_count"`
	GainedCount int      `json:"gained_count"`
	Error       string   `json:"error,omitempty"`
}

// Stranded reports whether the draft leaves the pair with no host at all
// where live data had some.
func (c ImpactCell) Stranded() bool { return c.Error == "" && c.Live > 0 && c.Draft == 0 }

// Impact is what a draft does to where servers may land: one row per
// project, one cell per flavor.
type Impact struct {
	Projects []string       `json:"projects"`
	Flavors  []string       `json:"flavors"`
	Cells    [][]ImpactCell `json:"cells"`
	Dropped  int            `json:"dropped"`  // pairs that lose hosts
	Stranded int            `json:"stranded"` // pairs left with none
	// WholeRuns is set when every pair went through the whole pipeline
	// (settings enable a host filter the factoring does not cover).
	WholeRuns bool `json:"whole_runs"`
}

// String is a one-line summary, for logs and benchmarks.
func (m *Impact) String() string {
	return fmt.Sprintf("%d×%d pairs, %d lose hosts, %d stranded", len(m.Projects), len(m.Flavors), m.Dropped, m.Stranded)
}

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
		for _, p := range ix.Members(a) {
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
	shared := [2]int8{} // [unrestricted, restricted]: 0 unknown, 1 pass, 2 fail
	for c := range x.classRep {
		if admits[c] {
			continue
		}
		k := 0
		if x.restricted[c] {
			k = 1
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
		for _, p := range s.ix.Members(a) {
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
		maps.Equal(a.Metadata, b.Metadata) && slices.Equal(a.Members, b.Members)
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

// ImpactOptions chooses the matrix: which projects (AnyOtherProject among
// them for a project no world names) and flavors, and whether each cell is
// split by availability zone.
type ImpactOptions struct {
	Projects []string
	Flavors  []string
	// ByZone makes one cell per project × flavor × zone (the zones of
	// either world), instead of one per project × flavor.
	ByZone bool
	// WholeRuns runs every pair through the whole pipeline instead of
	// factoring the matrix: slow, and the check the factoring is held to.
	WholeRuns bool
}

// ComputeImpact runs every project × flavor pair against live and draft:
// the hosts each pair may land on in each, and the difference. Projects
// need not exist anywhere: a project no aggregate names is judged as any
// new project would be.
func ComputeImpact(live, draft *Snapshot, projects, flavors []string) (*Impact, error) {
	return ComputeImpactWith(live, draft, ImpactOptions{Projects: projects, Flavors: flavors})
}

// ComputeImpactWith is ComputeImpact with options. With ByZone the
// matrix's Flavors read "flavor @ zone".
func ComputeImpactWith(live, draft *Snapshot, o ImpactOptions) (*Impact, error) {
	lx, err := live.impactIdx()
	if err != nil {
		return nil, err
	}
	dx, err := draft.derivedImpactIdx(lx)
	if err != nil {
		return nil, err
	}
	runAs := make([]string, len(o.Projects))
	for i, p := range o.Projects {
		runAs[i] = p
		if p == AnyOtherProject {
			runAs[i] = anyOtherProjectID
		}
	}
	var zones []string
	if o.ByZone {
		seen := map[string]bool{}
		for _, z := range append(slices.Clone(lx.zones), dx.zones...) {
			seen[z] = true
		}
		zones = slices.Sorted(maps.Keys(seen))
	}
	m := &Impact{Projects: o.Projects, Flavors: o.Flavors, Cells: make([][]ImpactCell, len(o.Projects))}
	if o.ByZone {
		m.Flavors = nil
		for _, f := range o.Flavors {
			for _, z := range zones {
				m.Flavors = append(m.Flavors, f+" @ "+z)
			}
		}
	}
	for i, p := range o.Projects {
		m.Cells[i] = make([]ImpactCell, len(m.Flavors))
		for j := range m.Flavors {
			c := ImpactCell{Project: p, Lost: []string{}, Gained: []string{}}
			if o.ByZone {
				c.Flavor, c.Zone = o.Flavors[j/len(zones)], zones[j%len(zones)]
			} else {
				c.Flavor = o.Flavors[j]
			}
			m.Cells[i][j] = c
		}
	}
	if o.WholeRuns || lx.exact || dx.exact || !slices.Equal(lx.names, dx.names) {
		m.WholeRuns = true
		exactImpact(m, runAs, lx, dx)
	} else {
		factoredImpact(m, runAs, o.Flavors, zones, lx, dx)
	}
	for i := range m.Cells {
		for j := range m.Cells[i] {
			c := &m.Cells[i][j]
			if c.Error == "" && c.Draft < c.Live {
				m.Dropped++
			}
			if c.Stranded() {
				m.Stranded++
			}
		}
	}
	return m, nil
}

// factoredImpact fills m from per-project and per-flavor parts.
func factoredImpact(m *Impact, projects, flavors, zones []string, lx, dx *impactIndex) {
	type part struct {
		bits placement.Bitset
		err  error
	}
	np, nf := len(projects), len(flavors)
	lp, dp := make([]part, np), make([]part, np)
	lf, df := make([]part, nf), make([]part, nf)
	// Live parts first: a draft's index derives its parts from them.
	var liveJobs, draftJobs []func()
	for i, p := range projects {
		liveJobs = append(liveJobs, func() { lp[i].bits, lp[i].err = lx.projectPart(p) })
		draftJobs = append(draftJobs, func() { dp[i].bits, dp[i].err = dx.projectPart(p) })
	}
	for j, f := range flavors {
		liveJobs = append(liveJobs, func() { lf[j].bits, lf[j].err = lx.flavorPart(f) })
		draftJobs = append(draftJobs, func() { df[j].bits, df[j].err = dx.flavorPart(f) })
	}
	parallel(liveJobs)
	parallel(draftJobs)

	n := len(lx.names)
	var rows []func()
	for i := range projects {
		rows = append(rows, func() {
			l, d := placement.NewBitset(n), placement.NewBitset(n)
			for j := range m.Cells[i] {
				c := &m.Cells[i][j]
				fj, zi := j, -1
				if len(zones) > 0 {
					fj, zi = j/len(zones), j%len(zones)
				}
				if err := errors.Join(lp[i].err, lf[fj].err, dp[i].err, df[fj].err); err != nil {
					c.Error = errMessage(err)
					continue
				}
				// Project and flavor meet only here: a private flavor is
				// no flavor at all for a project off its access list.
				livePrivate, draftPrivate := privateTo(lx.s, flavors[fj], projects[i]), privateTo(dx.s, flavors[fj], projects[i])
				if zi < 0 && livePrivate == draftPrivate && same(lp[i].bits, dp[i].bits) && same(lf[fj].bits, df[fj].bits) {
					// Neither part changed: the pair keeps its hosts.
					if !livePrivate {
						c.Live = andCount(lp[i].bits, lf[fj].bits)
					}
					c.Draft = c.Live
					continue
				}
				copy(l, lp[i].bits)
				l.And(lf[fj].bits)
				copy(d, dp[i].bits)
				d.And(df[fj].bits)
				if livePrivate {
					clear(l)
				}
				if draftPrivate {
					clear(d)
				}
				if zi >= 0 {
					// A host moved between zones counts in each zone it
					// is in, on the side where it is there.
					inZone(l, lx.zones, zones[zi])
					inZone(d, dx.zones, zones[zi])
				}
				c.Live, c.Draft = l.Count(), d.Count()
				for w := range l {
					lost, gained := l[w]&^d[w], d[w]&^l[w]
					if lost|gained == 0 {
						continue
					}
					c.LostCount += bits.OnesCount64(lost)
					c.GainedCount += bits.OnesCount64(gained)
					c.Lost = appendNames(c.Lost, lost, w, lx.names)
					c.Gained = appendNames(c.Gained, gained, w, lx.names)
				}
			}
		})
	}
	parallel(rows)
}

// same reports whether a and b are one set (not merely equal ones): a
// derived index hands out its base's part when the draft changes nothing
// of it.
func same(a, b placement.Bitset) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// andCount is the size of a ∩ b.
func andCount(a, b placement.Bitset) int {
	n := 0
	for i := range a {
		n += bits.OnesCount64(a[i] & b[i])
	}
	return n
}

// appendNames adds the names of the hosts in word w of a set (bits word)
// while names has room for them (impactNames).
func appendNames(names []string, word uint64, w int, all []string) []string {
	for word != 0 && len(names) < impactNames {
		names = append(names, all[w*64+bits.TrailingZeros64(word)])
		word &= word - 1
	}
	return names
}

// privateTo says whether flavor is private and project not on its access
// list, so that Nova refuses the pair before scheduling.
func privateTo(s *Snapshot, flavor, project string) bool {
	f, ok := s.Flavor(flavor)
	return ok && project != "" && !f.UsableBy(project)
}

// inZone keeps the hosts of set whose zone is z.
func inZone(set placement.Bitset, zones []string, z string) {
	set.Each(func(i int) {
		if zones[i] != z {
			set.Clear(i)
		}
	})
}

// exactImpact runs every pair through the whole pipeline on both worlds.
func exactImpact(m *Impact, projects []string, lx, dx *impactIndex) {
	var jobs []func()
	for i := range m.Cells {
		for j := range m.Cells[i] {
			c := &m.Cells[i][j]
			p := projects[i]
			jobs = append(jobs, func() {
				if privateTo(lx.s, c.Flavor, p) && privateTo(dx.s, c.Flavor, p) {
					return // refused by Nova on both sides: no host, as factored
				}
				spec := &RequestSpec{ProjectID: p, Flavor: FlavorRef{Name: c.Flavor}, NumInstances: 1, Limit: 1}
				if c.Zone != "" {
					spec.AvailabilityZone = c.Zone
				}
				lt, err := lx.s.runInSlot(spec)
				if err != nil {
					c.Error = errMessage(err)
					return
				}
				dt, err := dx.s.runInSlot(spec)
				if err != nil {
					c.Error = errMessage(err)
					return
				}
				c.Live, c.Draft = lt.Summary.HostsPassed, dt.Summary.HostsPassed
				d := DiffTraces(lt, dt)
				for _, h := range d.NewlyExcluded {
					c.Lost = append(c.Lost, h.Name)
				}
				for _, h := range d.NewlyEligible {
					c.Gained = append(c.Gained, h.Name)
				}
				slices.Sort(c.Lost)
				slices.Sort(c.Gained)
				c.LostCount, c.GainedCount = len(c.Lost), len(c.Gained)
				c.Lost, c.Gained = c.Lost[:min(len(c.Lost), impactNames)], c.Gained[:min(len(c.Gained), impactNames)]
			})
		}
	}
	parallel(jobs)
}

// errMessage is an error's message without its field, for a cell.
func errMessage(err error) string {
	var ce *models.Error
	if errors.As(err, &ce) && ce.Msg != "" {
		return ce.Msg
	}
	return err.Error()
}

// parallel runs jobs on the run slots (runSlots): the matrix competes for
// the CPUs with every other run, under the same limit.
func parallel(jobs []func()) {
	workers := min(cap(runSlots), len(jobs))
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next >= len(jobs) {
					mu.Unlock()
					return
				}
				job := jobs[next]
				next++
				mu.Unlock()
				runSlots <- struct{}{}
				job()
				<-runSlots
			}
		}()
	}
	wg.Wait()
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
