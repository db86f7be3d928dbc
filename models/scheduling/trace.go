package scheduling

import (
	"sort"
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

	// outcomes holds every host's result even when Limit cut Hosts, so
	// that DiffTraces can compare complete answers. Not serialised.
	outcomes []hostOutcome
	// reasonOf builds the reason of host i's outcome when it was left
	// empty (placement reasons are built on demand).
	reasonOf func(i int) string
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
	Checks []Check  `json:"checks"`
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
}

// reasonCounter groups reasons per stage, keeping first-seen order for
// ties and a few examples.
type reasonCounter struct {
	groups []*ReasonGroup
	index  map[[2]string]*ReasonGroup
}

func (c *reasonCounter) add(stage, reason, example string) {
	if c.index == nil {
		c.index = map[[2]string]*ReasonGroup{}
	}
	key := [2]string{stage, reason}
	g := c.index[key]
	if g == nil {
		g = &ReasonGroup{Stage: stage, Reason: reason, Examples: []string{}}
		c.index[key] = g
		c.groups = append(c.groups, g)
	}
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
	out := make([]ReasonGroup, len(c.groups))
	for i, g := range c.groups {
		out[i] = *g
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
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
	if t.outcomes != nil {
		out := make(map[string]hostOutcome, len(t.outcomes))
		for i, o := range t.outcomes {
			if !o.Passed && o.Reason == "" && t.reasonOf != nil {
				o.Reason = t.reasonOf(i)
			}
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
