package query

import (
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"

	"corral/models"
	"corral/models/placement"
	"corral/models/scheduling"
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
// taken from the core itself, by running the pipeline on a world with the
// same aggregates and no providers, so they are exactly nova's. Should the
// settings enable a host filter this reasoning does not cover, every pair
// is run through the whole pipeline instead, and so is every pair of a
// world with inventories (capacity, see newImpactIndex).

// projectFilters and flavorFilters sort the known host filters by what they
// read of the request.
var (
	projectFilters = []string{models.FilterAggregateMultiTenancy}
	flavorFilters  = []string{
		models.FilterAggregateInstanceExtraSpecs, models.FilterAggregateInstanceType,
		models.FilterServerGroupAffinity, models.FilterServerGroupAntiAffinity,
	}
)

// impactIndex is what the matrix needs of one world, built once per world.
type impactIndex struct {
	st    *state
	tiny  *scheduling.Snapshot // same aggregates and flavors, no providers
	hosts []scheduling.HostState
	names []string
	// aggHosts lists, per aggregate (index in the snapshot), the positions
	// of the hosts whose root provider is a direct member.
	aggHosts [][]int32
	aggIndex map[string]int // aggregate uuid → index
	hostRoot []int          // host position → its provider in the snapshot's index

	projectSide, flavorSide []scheduling.HostFilter
	exact                   bool // a host filter is not covered: run pairs whole
	capacity                bool // the world has inventories: flavor parts need a candidate

	// tenantClass groups hosts by the tenants their aggregates admit, all
	// that AggregateMultiTenancyIsolation reads of a host, so that it runs
	// once per group of hosts instead of once per host.
	tenantClass []int32
	classRep    []int32
	classOf     map[string][]int32 // tenant → classes admitting it
	restricted  []bool             // per class: some aggregate carries a tenant key
}

// impactIndex returns the state's matrix index, building it on first use.
func (st *state) impactIdx() (*impactIndex, error) {
	st.impactOnce.Do(func() { st.impact, st.impactErr = newImpactIndex(st) })
	return st.impact, st.impactErr
}

func newImpactIndex(st *state) (*impactIndex, error) {
	w := st.world
	tw := &models.World{Settings: w.Settings, Flavors: w.Flavors}
	tw.Aggregates = make([]models.Aggregate, len(w.Aggregates))
	for i, a := range w.Aggregates {
		a.Members = nil
		tw.Aggregates[i] = a
	}
	tiny, err := scheduling.NewSnapshot(tw)
	if err != nil {
		return nil, err
	}
	snap := st.snap
	ix := snap.Index()
	// Hosts in name order, so that walking a set of them yields names
	// sorted, and the first few can be listed without sorting them all.
	hosts := slices.Clone(snap.Hosts())
	slices.SortFunc(hosts, func(a, b scheduling.HostState) int { return strings.Compare(a.Provider.Name, b.Provider.Name) })
	x := &impactIndex{st: st, tiny: tiny, hosts: hosts, aggIndex: map[string]int{}}
	hostPos := make([]int32, ix.Len())
	for i := range hostPos {
		hostPos[i] = -1
	}
	x.names = make([]string, len(x.hosts))
	x.hostRoot = make([]int, len(x.hosts))
	for i := range x.hosts {
		x.names[i] = x.hosts[i].Provider.Name
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
	for _, name := range w.Settings.EnabledFilters {
		f, ok := scheduling.LookupHostFilter(name)
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
		if !capacityFactorable(ix, w.Settings) {
			x.exact = true
		}
	}
	classes := map[string]int32{}
	x.tenantClass = make([]int32, len(x.hosts))
	x.classOf = map[string][]int32{}
	for i := range x.hosts {
		h := &x.hosts[i]
		restricted := false
		for _, a := range h.Aggregates {
			for k := range a.Metadata {
				restricted = restricted || scheduling.IsTenantKey(k)
			}
		}
		tenants := scheduling.TenantsOf(h)
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

// part computes the hosts that pass what spec contributes: its request
// filters' terms at the root, and filters. perClass evaluates the filters
// once per tenant class (valid for the project-side filter only).
func (x *impactIndex) part(spec *scheduling.RequestSpec, filters []scheduling.HostFilter, perClass bool) (placement.Bitset, error) {
	n := len(x.hosts)
	bits := placement.NewBitset(n)
	tr, err := x.tiny.Run(spec)
	if err != nil {
		return nil, err
	}
	if len(tr.Summary.Stages) > 0 && tr.Summary.Stages[0].Stage != scheduling.StagePlacement {
		return bits, nil // a request filter failed the whole request
	}
	terms, err := memberOfTerms(tr.PlacementQuery)
	if err != nil {
		return nil, err
	}
	bits.Fill(n)
	for _, term := range terms.Required {
		in := placement.NewBitset(n)
		for _, u := range term {
			if a, ok := x.aggIndex[u]; ok {
				for _, h := range x.aggHosts[a] {
					in.Set(int(h))
				}
			}
		}
		bits.And(in)
	}
	for _, u := range terms.Forbidden {
		if a, ok := x.aggIndex[u]; ok {
			for _, h := range x.aggHosts[a] {
				bits.Clear(int(h))
			}
		}
	}
	if !perClass && x.capacity && spec.Flavor.Name != "" {
		f, ok := x.st.snap.Flavor(spec.Flavor.Name)
		if !ok {
			return nil, models.E(models.Invalid, "flavor", "no flavor named %q", spec.Flavor.Name)
		}
		fits := x.st.snap.FlavorFitBits(f)
		if fits != nil {
			bits.Each(func(i int) {
				if !fits.Has(x.hostRoot[i]) {
					bits.Clear(i)
				}
			})
		}
	}
	if len(filters) == 0 {
		return bits, nil
	}
	flavor := spec.Flavor.Inline
	if flavor == nil {
		f, ok := x.st.snap.Flavor(spec.Flavor.Name)
		if !ok {
			return nil, models.E(models.Invalid, "flavor", "no flavor named %q", spec.Flavor.Name)
		}
		flavor = f
	}
	req := scheduling.Request{ProjectID: spec.ProjectID, Flavor: flavor, NumInstances: 1,
		GroupHosts: map[string]int{}, Settings: x.st.world.Settings}
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
		bits.Each(func(i int) {
			if !verdict[x.tenantClass[i]] {
				bits.Clear(i)
			}
		})
		return bits, nil
	}
	bits.Each(func(i int) {
		if !passes(i) {
			bits.Clear(i)
		}
	})
	return bits, nil
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

// memberOfTerms reads the unnumbered member_of terms back from a placement
// query string (shown unescaped; UUIDs hold neither '&' nor '=').
func memberOfTerms(q string) (placement.Terms, error) {
	var values []string
	for _, kv := range strings.Split(q, "&") {
		if v, ok := strings.CutPrefix(kv, "member_of="); ok {
			values = append(values, v)
		}
	}
	if len(values) == 0 {
		return placement.Terms{}, nil
	}
	return placement.ParseMemberOf("member_of", values, placement.Latest)
}

func boolp(b bool) *bool         { return &b }
func strp(s string) *string      { return &s }
func listp(l []string) *[]string { return &l }

// projectPart is the hosts project p may use whatever the flavor.
func (x *impactIndex) projectPart(p string) (placement.Bitset, error) {
	spec := &scheduling.RequestSpec{ProjectID: p, NumInstances: 1,
		Flavor: scheduling.FlavorRef{Inline: &models.Flavor{ExtraSpecs: map[string]string{}}},
		Settings: &scheduling.SettingsOverride{
			RequiredMemberPrefix: strp(""), DefaultForbiddenMemberPrefix: strp(""),
			EnableIsolatedAggregateFiltering: boolp(false), EnabledFilters: listp([]string{}),
		}}
	return x.part(spec, x.projectSide, true)
}

// flavorPart is the hosts flavor f may use whatever the project.
func (x *impactIndex) flavorPart(f string) (placement.Bitset, error) {
	spec := &scheduling.RequestSpec{NumInstances: 1, Flavor: scheduling.FlavorRef{Name: f},
		Settings: &scheduling.SettingsOverride{
			LimitTenantsToPlacementAggregate: boolp(false), PlacementAggregateRequiredForTenants: boolp(false),
			EnabledFilters: listp([]string{}),
		}}
	return x.part(spec, x.flavorSide, false)
}

// maxNames caps the hosts a cell names: a draft that drains a zone takes
// thousands of hosts from every pair. (A variable so that tests can lower
// it.)
var maxNames = 50

// Cell is one project × flavor pair of the matrix.
type Cell struct {
	Project string `json:"project"`
	Flavor  string `json:"flavor"`
	Live    int    `json:"live"`
	Draft   int    `json:"draft"`
	// Lost and Gained name the hosts the draft takes away or adds, the
	// first maxNames of them by name; the counts are complete.
	Lost        []string `json:"lost"`
	Gained      []string `json:"gained"`
	LostCount   int      `json:"lost_count"`
	GainedCount int      `json:"gained_count"`
	Error       string   `json:"error,omitempty"`
}

// Stranded reports whether the draft leaves the pair with no host at all
// where live data had some.
func (c Cell) Stranded() bool { return c.Error == "" && c.Live > 0 && c.Draft == 0 }

// Matrix is the impact of a draft: one row per project, one cell per flavor.
type Matrix struct {
	Projects []string `json:"projects"`
	Flavors  []string `json:"flavors"`
	Cells    [][]Cell `json:"cells"`
	Dropped  int      `json:"dropped"`  // pairs that lose hosts
	Stranded int      `json:"stranded"` // pairs left with none
}

// ComputeMatrix runs every projects × flavors pair against live and draft.
func ComputeMatrix(live, draft *state, projects, flavors []string) (*Matrix, error) {
	lx, err := live.impactIdx()
	if err != nil {
		return nil, err
	}
	dx, err := draft.impactIdx()
	if err != nil {
		return nil, err
	}
	m := &Matrix{Projects: projects, Flavors: flavors, Cells: make([][]Cell, len(projects))}
	for i, p := range projects {
		m.Cells[i] = make([]Cell, len(flavors))
		for j, f := range flavors {
			m.Cells[i][j] = Cell{Project: p, Flavor: f, Lost: []string{}, Gained: []string{}}
		}
	}
	if lx.exact || dx.exact || !slices.Equal(lx.names, dx.names) {
		exactMatrix(m, live, draft)
	} else {
		factoredMatrix(m, lx, dx)
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

// factoredMatrix fills m from per-project and per-flavor parts.
func factoredMatrix(m *Matrix, lx, dx *impactIndex) {
	type part struct {
		bits placement.Bitset
		err  error
	}
	np, nf := len(m.Projects), len(m.Flavors)
	lp, dp := make([]part, np), make([]part, np)
	lf, df := make([]part, nf), make([]part, nf)
	var jobs []func()
	for i, p := range m.Projects {
		jobs = append(jobs,
			func() { lp[i].bits, lp[i].err = lx.projectPart(p) },
			func() { dp[i].bits, dp[i].err = dx.projectPart(p) })
	}
	for j, f := range m.Flavors {
		jobs = append(jobs,
			func() { lf[j].bits, lf[j].err = lx.flavorPart(f) },
			func() { df[j].bits, df[j].err = dx.flavorPart(f) })
	}
	parallel(jobs)

	n := len(lx.names)
	var rows []func()
	for i := range m.Projects {
		rows = append(rows, func() {
			l, d := placement.NewBitset(n), placement.NewBitset(n)
			for j := range m.Flavors {
				c := &m.Cells[i][j]
				if err := firstErr(lp[i].err, lf[j].err, dp[i].err, df[j].err); err != nil {
					c.Error = message(err)
					continue
				}
				copy(l, lp[i].bits)
				l.And(lf[j].bits)
				copy(d, dp[i].bits)
				d.And(df[j].bits)
				c.Live, c.Draft = l.Count(), d.Count()
				for w := range l {
					lost, gained := l[w]&^d[w], d[w]&^l[w]
					if lost|gained == 0 {
						continue
					}
					c.LostCount += bits.OnesCount64(lost)
					c.GainedCount += bits.OnesCount64(gained)
					for b := 0; b < 64 && (len(c.Lost) < maxNames || len(c.Gained) < maxNames); b++ {
						if lost&(1<<b) != 0 && len(c.Lost) < maxNames {
							c.Lost = append(c.Lost, lx.names[w*64+b])
						}
						if gained&(1<<b) != 0 && len(c.Gained) < maxNames {
							c.Gained = append(c.Gained, lx.names[w*64+b])
						}
					}
				}
			}
		})
	}
	parallel(rows)
}

// exactMatrix runs every pair through the whole pipeline on both worlds.
func exactMatrix(m *Matrix, live, draft *state) {
	var jobs []func()
	for i, p := range m.Projects {
		for j, f := range m.Flavors {
			c := &m.Cells[i][j]
			jobs = append(jobs, func() {
				spec := &scheduling.RequestSpec{ProjectID: p, Flavor: scheduling.FlavorRef{Name: f}, NumInstances: 1, Limit: 1}
				lt, err := live.snap.Run(spec)
				if err != nil {
					c.Error = message(err)
					return
				}
				dt, err := draft.snap.Run(spec)
				if err != nil {
					c.Error = message(err)
					return
				}
				c.Live, c.Draft = lt.Summary.HostsPassed, dt.Summary.HostsPassed
				d := scheduling.DiffTraces(lt, dt)
				for _, h := range d.NewlyExcluded {
					c.Lost = append(c.Lost, h.Name)
				}
				for _, h := range d.NewlyEligible {
					c.Gained = append(c.Gained, h.Name)
				}
				slices.Sort(c.Lost)
				slices.Sort(c.Gained)
				c.LostCount, c.GainedCount = len(c.Lost), len(c.Gained)
				c.Lost, c.Gained = c.Lost[:min(len(c.Lost), maxNames)], c.Gained[:min(len(c.Gained), maxNames)]
			})
		}
	}
	parallel(jobs)
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// parallel runs jobs on as many goroutines as there are CPUs.
func parallel(jobs []func()) {
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				if i >= len(jobs) {
					next.Unlock()
					return
				}
				job := jobs[i]
				i++
				next.Unlock()
				job()
			}
		}()
	}
	wg.Wait()
}

// String is a one-line summary, for logs and benchmarks.
func (m *Matrix) String() string {
	return fmt.Sprintf("%d×%d pairs, %d lose hosts, %d stranded", len(m.Projects), len(m.Flavors), m.Dropped, m.Stranded)
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
