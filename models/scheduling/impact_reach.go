package scheduling

import (
	"maps"
	"slices"

	"corral/models"
	"corral/models/placement"
)

// FlavorReach says whether any project at all may land one server of a
// flavor on some host.
type FlavorReach struct {
	Flavor string
	Fits   bool
	// Error is why the flavor's request cannot be judged, as a matrix
	// cell says it.
	Error string
}

// FlavorsReach answers FlavorReach for each flavor, for every project at
// once: those tenant keys and access lists name, and any other. It reads
// the impact matrix's parts (impact.go says why a pair's hosts are its
// project's part ∩ its flavor's): a public flavor whose hosts a new
// project may use fits; otherwise only the projects its hosts' tenant keys
// admit can do better, and they are asked one by one (a private flavor's
// access list likewise). When the matrix cannot be factored, a whole
// matrix of every project named answers instead.
func (s *Snapshot) FlavorsReach(flavors []string) ([]FlavorReach, error) {
	x, err := s.impactIdx()
	if err != nil {
		return nil, err
	}
	if x.exact {
		return s.flavorsReachWhole(flavors)
	}
	out := make([]FlavorReach, len(flavors))
	parts := make([]partResult, len(flavors))
	var newPart partResult
	jobs := []func(){func() { newPart = x.projectPartResult(anyOtherProjectID) }}
	for j, f := range flavors {
		jobs = append(jobs, func() { parts[j] = x.flavorPartResult(f) })
	}
	parallel(jobs)
	for j, f := range flavors {
		r := &out[j]
		r.Flavor = f
		if parts[j].err != nil {
			r.Error = errMessage(parts[j].err)
			continue
		}
		fl, ok := s.Flavor(f)
		if !ok {
			return nil, models.E(models.NotFound, "flavor", "no flavor %q", f)
		}
		if !fl.Private && newPart.err == nil && andCount(newPart.bits, parts[j].bits) > 0 {
			r.Fits = true
			continue
		}
		for _, p := range x.reachCandidates(fl, parts[j].bits) {
			if pp := x.projectPartResult(p); pp.err == nil && andCount(pp.bits, parts[j].bits) > 0 {
				r.Fits = true
				break
			}
		}
	}
	return out, nil
}

// reachCandidates are the projects that may use hosts of set a new
// project may not: a private flavor's access list, or the tenants the
// restricted hosts of set admit (their classes' tenants: tenant isolation
// keeps only other projects out, so a host a new project is refused and
// some project is not must name that project in a tenant key).
func (x *impactIndex) reachCandidates(f *models.Flavor, set placement.Bitset) []string {
	if f.Private {
		return f.Projects
	}
	seen := map[string]bool{}
	classes := make([]bool, len(x.classRep))
	set.Each(func(i int) {
		c := x.tenantClass[i]
		if classes[c] || !x.restricted[c] {
			return
		}
		classes[c] = true
		for _, t := range TenantsOf(&x.hosts[x.classRep[c]]) {
			seen[t] = true
		}
	})
	return slices.Sorted(maps.Keys(seen))
}

// flavorsReachWhole is FlavorsReach by a whole matrix of every project
// tenant keys and access lists name, and any other.
func (s *Snapshot) flavorsReachWhole(flavors []string) ([]FlavorReach, error) {
	seen := map[string]bool{}
	for i := range s.world.Aggregates {
		for _, p := range TenantTags(s.world.Aggregates[i].Metadata) {
			seen[p] = true
		}
	}
	for i := range s.world.Flavors {
		for _, p := range s.world.Flavors[i].Projects {
			seen[p] = true
		}
	}
	projects := append(slices.Sorted(maps.Keys(seen)), AnyOtherProject)
	m, err := ComputeImpact(s, s, projects, flavors)
	if err != nil {
		return nil, err
	}
	out := make([]FlavorReach, len(flavors))
	for j, f := range flavors {
		out[j].Flavor = f
		for i := range m.Cells {
			c := m.Cells[i][j]
			out[j].Fits = out[j].Fits || c.Live > 0
			if out[j].Error == "" && c.Error != "" {
				out[j].Error = c.Error
			}
		}
		if out[j].Fits {
			out[j].Error = ""
		}
	}
	return out, nil
}
