package scheduling

import (
	"fmt"
	"sort"
	"strings"

	"corral/models"
	"corral/models/placement"
)

// The capacity check is part of the placement stage: a host that member_of
// keeps still fails when no allocation candidate — computed as Placement
// computes them, over inventories, usages and traits — is anchored to it.
// It applies when the flavor asks for resources and the world has any
// inventory at all (a world without inventories is a member_of study).

// capacityDetail is hostResult.detail for a host without a candidate.
const capacityDetail = -2

// computeDisabledDetail is hostResult.detail for a host whose root carries
// COMPUTE_STATUS_DISABLED: Nova's compute_status_filter request filter
// (nova/scheduler/request_filter.py compute_status_filter, always on)
// forbids it with root_required=!COMPUTE_STATUS_DISABLED.
const computeDisabledDetail = -3

// computeDisabledReason is the reason of such a host.
const computeDisabledReason = "compute_status_filter: the host's compute service is disabled (its provider has trait COMPUTE_STATUS_DISABLED, which Nova forbids in every request)"

// capacity holds one run's allocation-candidate state.
type capacity struct {
	ix       *placement.Index
	q        placement.CandidateQuery
	fits     placement.Bitset // roots with a candidate this round
	first    map[int]placement.Candidate
	consumed map[int]map[string]int64
	err      string
	// serves caches sharingServes for the unnumbered group (-1: unknown).
	serves int8
	// tables holds, per group and requested class, the class's table.
	tables [][]placement.ClassTable
	tree   []int // explain's scratch list of one tree's providers
	// quick, when set, summarises a host whose children have no
	// inventory of the classes asked from the index's fit sets: no traits
	// asked, no sharing provider serving the request, nothing consumed
	// yet. fit, below (roots with the class below them) and the texts are
	// per group and class.
	quick        bool
	fit, below   [][]placement.Bitset
	short, noInv [][]string
}

// anyCatalog takes every name as known: an unknown class or trait simply
// has no provider, which the reasons then say.
type anyCatalog struct{}

func (anyCatalog) HasClass(string) bool { return true }
func (anyCatalog) HasTrait(string) bool { return true }

// newCapacity builds the check for a request, or nil when it does not apply.
func (s *Snapshot) newCapacity(req *Request, unnumbered placement.Terms, numbered map[string]placement.Terms) *capacity {
	rr := NovaResourceRequest(req.Flavor, req.Image, req.IsBFV)
	groups, policy := rr.Groups, rr.GroupPolicy
	has := false
	for _, g := range groups {
		if len(g.Resources) > 0 {
			has = true
		}
	}
	if !has || !s.ix.HasInventories() {
		return nil
	}
	for i := range groups {
		if groups[i].Suffix == "" {
			groups[i].MemberOf = unnumbered
		} else if t, ok := numbered[groups[i].Suffix]; ok {
			groups[i].MemberOf = t
		}
	}
	if len(groups) > 0 && groups[0].Suffix != "" && len(groups[0].Resources) == 0 {
		groups = groups[1:]
	}
	if policy == "" {
		policy = "none"
	}
	c := &capacity{ix: s.ix, q: placement.CandidateQuery{Groups: groups, GroupPolicy: policy, NestedAware: true, PerAnchor: true},
		consumed: map[int]map[string]int64{}}
	c.tables = make([][]placement.ClassTable, len(groups))
	c.quick = true
	c.fit = make([][]placement.Bitset, len(groups))
	c.below = make([][]placement.Bitset, len(groups))
	c.short = make([][]string, len(groups))
	c.noInv = make([][]string, len(groups))
	for gi, g := range groups {
		c.tables[gi] = make([]placement.ClassTable, len(g.Resources))
		c.fit[gi] = make([]placement.Bitset, len(g.Resources))
		c.below[gi] = make([]placement.Bitset, len(g.Resources))
		c.short[gi] = make([]string, len(g.Resources))
		c.noInv[gi] = make([]string, len(g.Resources))
		for k, a := range g.Resources {
			c.tables[gi][k] = s.ix.Class(a.Class)
			c.fit[gi][k] = s.ix.Fitting(a.Class, a.Amount)
			c.below[gi][k] = s.ix.RootsWithClassBelow(a.Class)
			c.short[gi][k] = capacityPrefix + a.Class + " short"
			c.noInv[gi][k] = capacityPrefix + "no " + a.Class + " inventory"
		}
		if len(g.Required) > 0 || len(g.Forbidden) > 0 {
			c.quick = false
		}
	}
	c.evaluate()
	for _, g := range groups {
		if g.Suffix == "" && c.sharingServes(g) {
			c.quick = false
		}
	}
	return c
}

// aloneInTree reports whether no descendant of root p has an inventory
// of a class the request asks for.
func (c *capacity) aloneInTree(p int) bool {
	for _, below := range c.below {
		for _, b := range below {
			if b.Has(p) {
				return false
			}
		}
	}
	return true
}

// evaluate computes which roots have a candidate, with what earlier
// instances consumed.
func (c *capacity) evaluate() {
	c.first = map[int]placement.Candidate{}
	c.q.Consumed = c.consumed
	fits, err := c.ix.CandidateRoots(c.q, anyCatalog{})
	if err != nil {
		c.err = err.Error()
		c.fits = placement.NewBitset(c.ix.Len())
		return
	}
	c.fits = fits
}

// candidateFor finds root p's first candidate (for an instance to take).
func (c *capacity) candidateFor(p int) (placement.Candidate, bool) {
	if cand, ok := c.first[p]; ok {
		return cand, true
	}
	q := c.q
	q.Consumed, q.Within, q.PerAnchor = c.consumed, []int{p}, true
	res, err := c.ix.AllocationCandidates(q, anyCatalog{})
	if err != nil {
		return placement.Candidate{}, false
	}
	for _, cand := range res.Requests {
		if cand.Anchor == p {
			c.first[p] = cand
			return cand, true
		}
	}
	return placement.Candidate{}, false
}

// fitsHost reports whether root p has a candidate.
func (c *capacity) fitsHost(p int) bool { return c.err == "" && c.fits.Has(p) }

// take consumes the first candidate anchored to root p for one instance
// and re-evaluates.
func (c *capacity) take(p int) {
	cand, ok := c.candidateFor(p)
	if !ok {
		return
	}
	shared := false
	for _, a := range cand.Allocs {
		if c.consumed[a.Provider] == nil {
			c.consumed[a.Provider] = map[string]int64{}
		}
		c.consumed[a.Provider][a.Class] += a.Amount
		if c.ix.IsSharing(a.Provider) {
			shared = true
		}
	}
	if shared {
		// A sharing provider serves other trees too: judge them all again.
		c.evaluate()
		return
	}
	// Only p's own tree changed.
	q := c.q
	q.Consumed, q.Within = c.consumed, []int{p}
	c.fits.Clear(p)
	delete(c.first, p)
	res, err := c.ix.AllocationCandidates(q, anyCatalog{})
	if err != nil {
		c.err = err.Error()
		return
	}
	for _, cand := range res.Requests {
		if cand.Anchor == p {
			c.fits.Set(p)
			if _, ok := c.first[p]; !ok {
				c.first[p] = cand
			}
		}
	}
}

// extra is what earlier instances of the run took of class on provider q.
func (c *capacity) extra(q int, class string) int64 {
	if len(c.consumed) == 0 {
		return 0
	}
	return c.consumed[q][class]
}

// reason says why root p has no candidate, and the shorter text a summary
// groups hosts under.
func (c *capacity) reason(p int) (text, summary string) {
	text, summary, _ = c.explain(p, true, nil)
	return text, summary
}

// summary is reason's short form alone, cheaper for the many hosts a
// trace's summary counts. Only Run calls it (it reuses a scratch list);
// reason stays safe to call from a finished trace.
func (c *capacity) summary(p int) string {
	if c.quick && c.err == "" && len(c.consumed) == 0 && c.aloneInTree(p) {
		// explain's answer when only the root has what is asked, from
		// bitsets.
		for gi, fits := range c.fit {
			for k, fit := range fits {
				if fit.Has(p) {
					continue
				}
				if _, _, has := c.tables[gi][k].Inventory(p); has {
					return c.short[gi][k]
				}
				return c.noInv[gi][k]
			}
		}
		return capacityPrefix + "resources do not fit together"
	}
	_, s, tree := c.explain(p, false, c.tree)
	c.tree = tree
	return s
}

// explain builds its list of p's tree in buf.
func (c *capacity) explain(p int, wantText bool, buf []int) (text, summary string, tree []int) {
	const prefix = capacityPrefix
	if c.err != "" {
		return prefix + c.err, prefix + c.err, buf
	}
	ix := c.ix
	kids := ix.Descendants(p)
	tree = append(buf[:0], p)
	for _, k := range kids {
		tree = append(tree, int(k))
	}
	var withShared []int
	shared := func() []int {
		// Sharing providers anchored to p, looked up only when the tree
		// alone does not explain the failure.
		if withShared == nil {
			withShared = tree
			if ix.HasSharing() {
				withShared = append(append([]int(nil), tree...), ix.SharingFor(p)...)
			}
		}
		return withShared
	}
	for gi, g := range c.q.Groups {
		tables := c.tables[gi]
		pool := tree
		label := ""
		if g.Suffix != "" {
			label = "group " + g.Suffix + ": "
		} else if c.sharingServes(g) && c.needsShared(g, tables, tree) {
			pool = shared()
		}
		for _, any := range g.Required {
			found := false
			for _, q := range pool {
				for _, t := range any {
					if ix.Provider(q).HasTrait(t) {
						found = true
					}
				}
			}
			if !found {
				t := strings.Join(any, " or ")
				return fmt.Sprintf("%s%strait %s is required and no provider of the tree has it", prefix, label, t), prefix + "trait " + t + " missing", tree
			}
		}
		for k, a := range g.Resources {
			var best *placement.Shortfall
			ok := false
			for _, q := range pool {
				inv, used, has := tables[k].Inventory(q)
				if !has {
					continue
				}
				sf := placement.CheckInventory(inv, a.Class, a.Amount, used+c.extra(q, a.Class))
				if !sf.Short {
					forbidden := ""
					for _, t := range g.Forbidden {
						if ix.Provider(q).HasTrait(t) {
							forbidden = t
						}
					}
					if forbidden == "" {
						ok = true
						break
					}
					sf = placement.Shortfall{Short: true, Class: a.Class, Need: a.Amount, Reason: "forbidden " + forbidden}
				}
				if best == nil || sf.Free > best.Free {
					s := sf
					best = &s
				}
			}
			if ok {
				continue
			}
			if best == nil {
				return fmt.Sprintf("%s%sno provider of the tree, nor a sharing provider anchored to it, has %s inventory", prefix, label, a.Class),
					prefix + "no " + a.Class + " inventory", tree
			}
			if t, isForb := strings.CutPrefix(best.Reason, "forbidden "); isForb {
				return fmt.Sprintf("%s%strait %s is forbidden and every provider with room for %s has it", prefix, label, t, a.Class),
					prefix + "trait " + t + " forbidden", tree
			}
			if !wantText {
				return "", prefix + a.Class + " short", tree
			}
			return prefix + label + best.String(), prefix + a.Class + " short", tree
		}
	}
	return prefix + "each class fits on its own, but not all together (one provider per numbered group, group policy, or the total over groups)",
		prefix + "resources do not fit together", tree
}

// sharingServes reports whether some sharing provider has inventory of a
// class the group asks for (only then can it be part of a candidate).
func (c *capacity) sharingServes(g placement.Group) bool {
	if c.serves != 0 {
		return c.serves > 0
	}
	c.serves = -1
	if !c.ix.HasSharing() {
		return false
	}
	for _, a := range g.Resources {
		if len(c.ix.SharingWithClass(a.Class)) > 0 {
			c.serves = 1
			return true
		}
	}
	return false
}

// needsShared reports whether the tree alone lacks a requested class or
// trait of the unnumbered group, so that sharing providers matter to the
// explanation.
func (c *capacity) needsShared(g placement.Group, tables []placement.ClassTable, tree []int) bool {
	for k, a := range g.Resources {
		ok := false
		for _, q := range tree {
			inv, used, has := tables[k].Inventory(q)
			if has && !placement.CheckInventory(inv, a.Class, a.Amount, used+c.extra(q, a.Class)).Short {
				ok = true
				break
			}
		}
		if !ok {
			return true
		}
	}
	for _, any := range g.Required {
		ok := false
		for _, q := range tree {
			for _, t := range any {
				if c.ix.Provider(q).HasTrait(t) {
					ok = true
				}
			}
		}
		if !ok {
			return true
		}
	}
	return false
}

// GroupVerdict is one request group's outcome in a trace: its terms and
// how many hosts it excluded.
type GroupVerdict struct {
	Suffix        string   `json:"suffix"`
	MemberOf      []string `json:"member_of,omitempty"`
	Resources     string   `json:"resources,omitempty"`
	Required      []string `json:"required,omitempty"`
	HostsExcluded int      `json:"hosts_excluded"`
}

func resourcesText(g placement.Group) string {
	parts := make([]string, len(g.Resources))
	for i, a := range g.Resources {
		parts[i] = fmt.Sprintf("%s:%d", a.Class, a.Amount)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func requiredText(g placement.Group) []string {
	var out []string
	for _, any := range g.Required {
		out = append(out, strings.Join(any, "|"))
	}
	for _, t := range g.Forbidden {
		out = append(out, "!"+t)
	}
	return out
}

// FlavorFit is how many hosts have an allocation candidate for a flavor
// now (Placement's view only: no member_of, no host filters).
type FlavorFit struct {
	Hosts int  // hosts in the world
	Fit   int  // hosts with a candidate
	Known bool // false when the flavor asks for nothing or no inventory exists
}

// FlavorFits counts the hosts on which one instance of f would find an
// allocation candidate.
func (s *Snapshot) FlavorFits(f *models.Flavor) FlavorFit {
	out := FlavorFit{Hosts: len(s.hosts)}
	c := s.newCapacity(&Request{Flavor: f}, placement.Terms{}, nil)
	if c == nil {
		return out
	}
	out.Known = true
	for _, h := range s.ix.Hosts() {
		if c.fitsHost(int(h)) {
			out.Fit++
		}
	}
	return out
}

// FlavorFitBits is the set of roots with an allocation candidate for one
// instance of f without member_of, or nil when capacity does not apply.
// Do not modify.
func (s *Snapshot) FlavorFitBits(f *models.Flavor) placement.Bitset {
	c := s.newCapacity(&Request{Flavor: f}, placement.Terms{}, nil)
	if c == nil || c.err != "" {
		return nil
	}
	return c.fits
}
