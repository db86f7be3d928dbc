package scheduling

import (
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"slices"
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
