package scheduling

import (
	"errors"
	"fmt"
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
	exact                   bool  // a host filter is not covered: run pairs whole
	capacity                bool  // the world has inventories: flavor parts need a candidate
	hostRoot                []int // host position → its provider in the index

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
	err  error
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
	hosts := slices.Clone(s.hosts)
	slices.SortFunc(hosts, func(a, b HostState) int { return strings.Compare(a.Provider.Name, b.Provider.Name) })
	x := &impactIndex{s: s, hosts: hosts, aggIndex: map[string]int{},
		projectParts: map[string]partResult{}, flavorParts: map[string]partResult{}}
	hostPos := make([]int32, ix.Len())
	for i := range hostPos {
		hostPos[i] = -1
	}
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
			x.exact = true
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
	return x, nil
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
// filters' terms at the root, and filters. perClass evaluates the filters
// once per tenant class (valid for the project-side filter only).
func (x *impactIndex) part(spec *RequestSpec, filters []HostFilter, perClass bool) (placement.Bitset, error) {
	n := len(x.hosts)
	set := placement.NewBitset(n)
	rv, terms, failed, err := x.s.requestTerms(spec)
	if err != nil {
		return nil, err
	}
	if failed {
		return set, nil
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
	if !perClass && x.capacity && rv.req.Flavor != nil {
		if fits := x.s.FlavorFitBits(rv.req.Flavor); fits != nil {
			set.Each(func(i int) {
				if !fits.Has(x.hostRoot[i]) {
					set.Clear(i)
				}
			})
		}
	}
	if len(filters) == 0 {
		return set, nil
	}
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
	if perClass {
		verdict := x.classVerdicts(spec.ProjectID, passes)
		set.Each(func(i int) {
			if !verdict[x.tenantClass[i]] {
				set.Clear(i)
			}
		})
		return set, nil
	}
	set.Each(func(i int) {
		if !passes(i) {
			set.Clear(i)
		}
	})
	return set, nil
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
func (x *impactIndex) cached(m map[string]partResult, key string, fn func() (placement.Bitset, error)) (placement.Bitset, error) {
	x.mu.Lock()
	r, ok := m[key]
	x.mu.Unlock()
	if ok {
		return r.bits, r.err
	}
	r.bits, r.err = fn()
	x.mu.Lock()
	if len(m) < maxCachedParts {
		m[key] = r
	}
	x.mu.Unlock()
	return r.bits, r.err
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
		for _, k := range sortedKeys(agg.Metadata) {
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
	return x.cached(x.projectParts, p, func() (placement.Bitset, error) { return x.computeProjectPart(p) })
}

func (x *impactIndex) computeProjectPart(p string) (placement.Bitset, error) {
	spec := &RequestSpec{ProjectID: p, NumInstances: 1,
		Flavor: FlavorRef{Inline: &models.Flavor{ExtraSpecs: map[string]string{}}},
		Settings: &SettingsOverride{
			RequiredMemberPrefix: strp(""), DefaultForbiddenMemberPrefix: strp(""),
			EnableIsolatedAggregateFiltering: boolp(false), EnabledFilters: listp([]string{}),
		}}
	return x.part(spec, x.projectSide, true)
}

// flavorPart is the hosts flavor f may use whatever the project.
func (x *impactIndex) flavorPart(f string) (placement.Bitset, error) {
	return x.cached(x.flavorParts, f, func() (placement.Bitset, error) { return x.computeFlavorPart(f) })
}

func (x *impactIndex) computeFlavorPart(f string) (placement.Bitset, error) {
	spec := &RequestSpec{NumInstances: 1, Flavor: FlavorRef{Name: f},
		Settings: &SettingsOverride{
			LimitTenantsToPlacementAggregate: boolp(false), PlacementAggregateRequiredForTenants: boolp(false),
			EnabledFilters: listp([]string{}),
		}}
	return x.part(spec, x.flavorSide, false)
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
	dx, err := draft.impactIdx()
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
		zones = sortedKeys(seen)
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
	var jobs []func()
	for i, p := range projects {
		jobs = append(jobs,
			func() { lp[i].bits, lp[i].err = lx.projectPart(p) },
			func() { dp[i].bits, dp[i].err = dx.projectPart(p) })
	}
	for j, f := range flavors {
		jobs = append(jobs,
			func() { lf[j].bits, lf[j].err = lx.flavorPart(f) },
			func() { df[j].bits, df[j].err = dx.flavorPart(f) })
	}
	parallel(jobs)

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
				copy(l, lp[i].bits)
				l.And(lf[fj].bits)
				copy(d, dp[i].bits)
				d.And(df[fj].bits)
				// Project and flavor meet only here: a private flavor is
				// no flavor at all for a project off its access list.
				if privateTo(lx.s, flavors[fj], projects[i]) {
					clear(l)
				}
				if privateTo(dx.s, flavors[fj], projects[i]) {
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
					for b := 0; b < 64 && (len(c.Lost) < impactNames || len(c.Gained) < impactNames); b++ {
						if lost&(1<<b) != 0 && len(c.Lost) < impactNames {
							c.Lost = append(c.Lost, lx.names[w*64+b])
						}
						if gained&(1<<b) != 0 && len(c.Gained) < impactNames {
							c.Gained = append(c.Gained, lx.names[w*64+b])
						}
					}
				}
			}
		})
	}
	parallel(rows)
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
