package scheduling

import (
	"slices"
	"strings"
)

// Trace is what the core decided for one request (FORMATS.md, "Trace").
type Trace struct {
	PlacementQuery string              `json:"placement_query"`
	RequestFilters []RequestFilterStep `json:"request_filters"`
	Providers      []ProviderEntry     `json:"providers"`
	Hosts          []HostEntry         `json:"hosts"`
	Summary        Summary             `json:"summary"`
	Truncated      bool                `json:"truncated"`
	Error          *string             `json:"error"`
	// HostsMatched counts the hosts the request's HostSelect matched
	// (all hosts without one), of which Hosts lists a page.
	HostsMatched int `json:"-"`

	// Selections names the host of each instance of a multi-create request,
	// in order (nova's selections); empty for a single instance.
	Selections []string `json:"selections,omitempty"`

	// Groups is each Placement request group's verdict: its terms and
	// how many hosts it excluded (the unnumbered group first).
	Groups []GroupVerdict `json:"groups,omitempty"`

	// Nova says which Nova the preview follows and what it asks Placement.
	Nova *NovaView `json:"nova,omitempty"`

	// outcomesFn builds every host's result even when Limit cut Hosts, so
	// that DiffTraces can compare complete answers; only diffs need it, so
	// it is built on demand, and reasonOf builds the reason of host i only
	// for the hosts a diff reports. Not serialised.
	outcomesFn func() []hostOutcome
	reasonOf   func(i int) string
}

// NovaView is what a trace says of the Nova it previews.
type NovaView struct {
	Release string `json:"release"` // "2022.2 Zed (nova 26)"
	// AllocationCandidatesQuery is the exact query string of the GET
	// /allocation_candidates Nova sends (URL-encoded, sorted, with limit).
	AllocationCandidatesQuery string `json:"allocation_candidates_query"`
	// Skipped are the parts of the request Nova ignores with a warning.
	Skipped []string `json:"skipped,omitempty"`
	// NotModelled are the enabled filters and weighers corral does not
	// model: the preview may differ from Nova there.
	NotModelled []string `json:"not_modelled,omitempty"`
	// Ranking says how Nova picks among the best hosts
	// (host_subset_size, shuffle_best_same_weighed_hosts).
	Ranking string `json:"ranking,omitempty"`
}

// ProviderEntry is one provider's fate.
type ProviderEntry struct {
	UUID     string `json:"uuid"`
	Name     string `json:"name"`
	Root     string `json:"root"`
	Excluded bool   `json:"excluded"`
	Stage    string `json:"stage,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Via is "self" or "root": whose aggregate excluded the provider.
	Via string `json:"via,omitempty"`
}

// HostEntry is one host's fate: the first stage that failed it, and the
// verdict of every stage and weigher.
type HostEntry struct {
	UUID   string   `json:"uuid"`
	Name   string   `json:"name"`
	Passed bool     `json:"passed"`
	Stage  string   `json:"stage,omitempty"`
	Reason string   `json:"reason,omitempty"`
	Weight *float64 `json:"weight,omitempty"`
	// Instances counts the instances of a multi-create request placed on
	// the host.
	Instances int `json:"instances,omitempty"`
	// Round is, for a multi-create request, the instance (from 1) whose
	// scheduling round excluded the host, or for a passing host the round
	// that weighed it last; 0 for a single instance.
	Round  int     `json:"round,omitempty"`
	Checks []Check `json:"checks"`
}

// Check is one stage's verdict (Passed) or one weigher's score (Weight,
// with the raw value and multiplier it came from) for one host.
type Check struct {
	Stage      string   `json:"stage"`
	Passed     *bool    `json:"passed,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Weight     *float64 `json:"weight,omitempty"`
	Raw        *float64 `json:"raw,omitempty"`
	Multiplier *float64 `json:"multiplier,omitempty"`
}

// Summary is the funnel: totals, what each stage removed, and the
// exclusions grouped by reason.
type Summary struct {
	Providers         int           `json:"providers"`
	ProvidersExcluded int           `json:"providers_excluded"`
	Hosts             int           `json:"hosts"`
	HostsPassed       int           `json:"hosts_passed"`
	Stages            []StageCount  `json:"stages"`
	Reasons           []ReasonGroup `json:"reasons"`
}

// StageCount is how much one stage removed: Excluded counts providers for
// the placement and request-filter stages and hosts for host filters;
// HostsExcluded counts hosts for every stage.
type StageCount struct {
	Stage         string `json:"stage"`
	Excluded      int    `json:"excluded"`
	HostsExcluded int    `json:"hosts_excluded"`
}

// ReasonGroup counts exclusions that share a reason (object names taken out).
type ReasonGroup struct {
	Stage    string   `json:"stage"`
	Reason   string   `json:"reason"`
	Count    int      `json:"count"`
	Examples []string `json:"examples"`
}

// maxExamples is how many names a reason group lists.
const maxExamples = 3

// hostOutcome is one host's result, kept for diffs.
type hostOutcome struct {
	Name   string
	Passed bool
	Stage  string
	Reason string
	// of and i build Reason when it was left empty.
	of *Trace
	i  int
}

// reason is the outcome's reason, built on demand.
func (o hostOutcome) reason() string {
	if o.Reason == "" && !o.Passed && o.of != nil && o.of.reasonOf != nil {
		return o.of.reasonOf(o.i)
	}
	return o.Reason
}

// reasonCounter groups reasons per stage, keeping first-seen order for
// ties and a few examples.
type reasonCounter struct {
	groups []*ReasonGroup
	index  map[[2]string]*ReasonGroup
	// Groups and their examples are carved from blocks: tenant isolation
	// alone can make thousands of groups per request.
	slab     []ReasonGroup
	examples []string
}

// reserve makes room for about n more groups.
func (c *reasonCounter) reserve(n int) {
	m := make(map[[2]string]*ReasonGroup, len(c.index)+n)
	for k, g := range c.index {
		m[k] = g
	}
	c.index = m
}

// newGroup returns an empty group with room for maxExamples examples.
func (c *reasonCounter) newGroup(stage, reason string) *ReasonGroup {
	if len(c.slab) == 0 {
		c.slab = make([]ReasonGroup, 128)
		c.examples = make([]string, 128*maxExamples)
	}
	g := &c.slab[0]
	c.slab = c.slab[1:]
	*g = ReasonGroup{Stage: stage, Reason: reason, Examples: c.examples[:0:maxExamples]}
	c.examples = c.examples[maxExamples:]
	return g
}

func (c *reasonCounter) add(stage, reason, example string) {
	c.group(stage, reason).note(example)
}

// group finds or makes the group of a reason, without counting anything.
func (c *reasonCounter) group(stage, reason string) *ReasonGroup {
	if c.index == nil {
		c.index = map[[2]string]*ReasonGroup{}
	}
	key := [2]string{stage, reason}
	g := c.index[key]
	if g == nil {
		g = c.newGroup(stage, reason)
		c.index[key] = g
		c.groups = append(c.groups, g)
	}
	return g
}

// note counts one more exclusion in g.
func (g *ReasonGroup) note(example string) {
	g.Count++
	if len(g.Examples) < maxExamples {
		g.Examples = append(g.Examples, example)
	}
}

// addGroup adds a group counted elsewhere (merging with an equal reason).
func (c *reasonCounter) addGroup(g ReasonGroup) {
	if c.index == nil {
		c.index = map[[2]string]*ReasonGroup{}
	}
	key := [2]string{g.Stage, g.Reason}
	if have := c.index[key]; have != nil {
		have.Count += g.Count
		for _, ex := range g.Examples {
			if len(have.Examples) < maxExamples {
				have.Examples = append(have.Examples, ex)
			}
		}
		return
	}
	cp := g
	c.index[key] = &cp
	c.groups = append(c.groups, &cp)
}

// sorted returns the groups, largest first.
func (c *reasonCounter) sorted() []ReasonGroup {
	// Tenant isolation alone can make thousands of groups: sort positions,
	// ties in first-seen order, rather than stable-sort the structs.
	order := make([]int32, len(c.groups))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if d := c.groups[b].Count - c.groups[a].Count; d != 0 {
			return d
		}
		return int(a - b)
	})
	out := make([]ReasonGroup, len(order))
	for i, g := range order {
		out[i] = *c.groups[g]
	}
	return out
}

// genericReason takes a host's own name out of a filter's reason so that
// hosts failing for the same cause group together.
func genericReason(reason, host string) string {
	if host == "" || !strings.Contains(reason, host) {
		return reason
	}
	return strings.ReplaceAll(reason, host, "<host>")
}

// hostOutcomes returns every host's outcome by name, and whether the set
// is complete.
func (t *Trace) hostOutcomes() (map[string]hostOutcome, bool) {
	if t == nil {
		return map[string]hostOutcome{}, true
	}
	if t.outcomesFn != nil {
		all := t.outcomesFn()
		out := make(map[string]hostOutcome, len(all))
		for i, o := range all {
			o.of, o.i = t, i
			out[o.Name] = o
		}
		return out, true
	}
	out := make(map[string]hostOutcome, len(t.Hosts))
	for _, h := range t.Hosts {
		out[h.Name] = hostOutcome{Name: h.Name, Passed: h.Passed, Stage: h.Stage, Reason: h.Reason}
	}
	return out, !t.Truncated
}
