package scheduling

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"corral/models"
)

// The safety gate: before a write is committed (a console save, a
// removal, a draft applied or rolled out), the changes are judged against
// live data as a draft would be, and what cannot be undone by simply
// writing again — running servers stranded, hard-policy groups broken, a
// project × flavor pair left with no host at all — must be agreed to by
// name. Gate is that judgement; its Token names the consequences, so that
// an agreement given to one set of consequences does not cover another.

// gateProjects and gateFlavors bound the pairs the gate checks besides
// those the changes name: the impact matrix is factored (one part per
// project and one per flavor), so the bound is about the answer's size.
const (
	gateProjects = 500
	gateFlavors  = 200
	gateNames    = 5 // names a consequence line lists
)

// EmptiedPair is a project × flavor pair that had hosts on live data and
// has none after the changes.
type EmptiedPair struct {
	Project string   `json:"project"`
	Flavor  string   `json:"flavor"`
	Live    int      `json:"live"` // hosts it had
	Lost    []string `json:"lost"` // some of them
}

// Gate is what a write does that must be agreed to before it is
// committed, with the impact it was read from.
type Gate struct {
	Servers []StrandedServer `json:"servers"`
	Groups  []BrokenGroup    `json:"groups"`
	Pairs   []EmptiedPair    `json:"pairs"`
	// Zones are the hosts running servers moved out of their zone
	// (gate_zones.go).
	Zones []ZoneMove `json:"zones"`
	// PairsChecked is how many project × flavor pairs were judged;
	// PairsLosing and PairsGaining how many of them lose or gain hosts.
	PairsChecked int `json:"pairs_checked"`
	PairsLosing  int `json:"pairs_losing"`
	PairsGaining int `json:"pairs_gaining"`
	// Token names these consequences ("" when there are none): the
	// confirmation a write carries must be this one.
	Token string `json:"token,omitempty"`
	// Impact is the matrix the pairs were read from.
	Impact *Impact `json:"-"`
}

// NeedsConfirmation reports whether the write strands a server, breaks a
// group, leaves a pair with no host or moves running servers' hosts out
// of their zone.
func (g *Gate) NeedsConfirmation() bool {
	return len(g.Servers)+len(g.Groups)+len(g.Pairs)+len(g.Zones) > 0
}

// Confirmed reports whether token agrees to exactly these consequences
// (always, when there are none).
func (g *Gate) Confirmed(token string) bool {
	return !g.NeedsConfirmation() || token == g.Token
}

// Consequences are the gate's findings, one line each, as a person
// reads them ("strands 2 running servers: vm1 (acme, on cn1), …").
func (g *Gate) Consequences() []string {
	var out []string
	if n := len(g.Servers); n > 0 {
		names := make([]string, 0, min(n, gateNames))
		for _, s := range g.Servers[:min(n, gateNames)] {
			names = append(names, fmt.Sprintf("%s (%s, on %s)", s.Name, s.Project, s.Host))
		}
		out = append(out, fmt.Sprintf("strands %s: %s", countOf(n, "running server", "running servers"), listMore(names, n)))
	}
	if n := len(g.Groups); n > 0 {
		names := make([]string, 0, min(n, gateNames))
		for _, gr := range g.Groups[:min(n, gateNames)] {
			names = append(names, fmt.Sprintf("%s (%s, %s)", gr.Name, gr.Policy, gr.Project))
		}
		out = append(out, fmt.Sprintf("breaks %s: %s", countOf(n, "server group", "server groups"), listMore(names, n)))
	}
	if n := len(g.Pairs); n > 0 {
		names := make([]string, 0, min(n, gateNames))
		for _, p := range g.Pairs[:min(n, gateNames)] {
			names = append(names, p.Project+" × "+p.Flavor)
		}
		out = append(out, fmt.Sprintf("leaves %s with no host: %s", countOf(n, "project × flavor pair", "project × flavor pairs"), listMore(names, n)))
	}
	for _, z := range g.Zones[:min(len(g.Zones), gateNames)] {
		out = append(out, z.Reason)
	}
	if n := len(g.Zones) - gateNames; n > 0 {
		out = append(out, fmt.Sprintf("moves the hosts of %s more out of their zones under running servers", countOf(n, "aggregate", "aggregates")))
	}
	return out
}

// Refusal is the error a write gets when it lacks the confirmation: a
// Conflict on field, naming the consequences.
func (g *Gate) Refusal(field string) error {
	return models.E(models.Conflict, field, "this change %s; confirm these consequences to commit it", strings.Join(g.Consequences(), "; "))
}

func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func listMore(names []string, total int) string {
	s := strings.Join(names, ", ")
	if total > len(names) {
		s += fmt.Sprintf(" and %d more", total-len(names))
	}
	return s
}

// DraftOf is the snapshot of live with changes applied. Changes to
// aggregates alone build on live (Snapshot.WithAggregates), a fraction of
// a whole new snapshot.
func DraftOf(live *Snapshot, changes []Change) (*Snapshot, error) {
	w, err := ApplyChanges(live.world, changes)
	if err != nil {
		return nil, err
	}
	return DraftSnapshot(live, w, changes)
}

// DraftSnapshot indexes w, live's world with changes applied (as DraftOf).
func DraftSnapshot(live *Snapshot, w *models.World, changes []Change) (*Snapshot, error) {
	only, refs := OnlyAggregates(changes)
	if !only {
		return NewSnapshot(w)
	}
	changed := map[string]bool{}
	for _, ref := range refs {
		if a, ok := live.Aggregate(ref); ok {
			changed[a.UUID] = true
		}
		for i := range w.Aggregates {
			if a := &w.Aggregates[i]; a.UUID == ref || a.Name == ref {
				changed[a.UUID] = true
			}
		}
	}
	return live.WithAggregates(w, changed)
}

// GateOf judges changes against live: the servers they strand, the groups
// they break and the pairs they leave with no host, over the projects the
// world names (tenant tags, servers, groups), any other project, and its
// flavors, together with those the changes name.
func GateOf(live *Snapshot, changes []Change) (*Gate, error) {
	draft, err := DraftOf(live, changes)
	if err != nil {
		return nil, err
	}
	return GateBetween(live, draft, changes)
}

// GateBetween is GateOf for a draft snapshot already built.
func GateBetween(live, draft *Snapshot, changes []Change) (*Gate, error) {
	projects, flavors := gatePairs(live, draft, changes)
	m, err := ComputeImpact(live, draft, projects, flavors)
	if err != nil {
		return nil, err
	}
	st, err := Strandings(live, draft)
	if err != nil {
		return nil, err
	}
	g := &Gate{Servers: st.Servers, Groups: st.Groups, Pairs: []EmptiedPair{}, Zones: ZoneMoves(live, draft), Impact: m,
		PairsChecked: len(projects) * len(flavors)}
	for i := range m.Cells {
		for _, c := range m.Cells[i] {
			if c.Error != "" {
				continue
			}
			if c.Draft < c.Live || c.LostCount > 0 {
				g.PairsLosing++
			}
			if c.GainedCount > 0 {
				g.PairsGaining++
			}
			if c.Stranded() {
				g.Pairs = append(g.Pairs, EmptiedPair{Project: c.Project, Flavor: c.Flavor, Live: c.Live, Lost: c.Lost})
			}
		}
	}
	if g.NeedsConfirmation() {
		g.Token = g.token()
	}
	return g, nil
}

// token is a digest of the consequences' identities (not their wording).
func (g *Gate) token() string {
	h := sha256.New()
	for _, s := range g.Servers {
		fmt.Fprintf(h, "s\x00%s\x00%s\x00%s\n", s.UUID, s.Host, s.Reason)
	}
	for _, gr := range g.Groups {
		fmt.Fprintf(h, "g\x00%s\x00%s\n", gr.UUID, gr.Reason)
	}
	for _, p := range g.Pairs {
		fmt.Fprintf(h, "p\x00%s\x00%s\n", p.Project, p.Flavor)
	}
	for _, z := range g.Zones {
		fmt.Fprintf(h, "z\x00%s\x00%s\x00%s\x00%s\x00%s\n", z.Code, z.AggregateUUID, z.From, z.To, strings.Join(z.Hosts, ","))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// gatePairs chooses the projects and flavors the gate checks: those the
// world names (up to the bounds), those the changes name, and any other
// project; flavors only both sides have (a deleted or renamed flavor has
// no pair to compare).
func gatePairs(live, draft *Snapshot, changes []Change) (projects, flavors []string) {
	seen := map[string]bool{"": true}
	addProject := func(p string) {
		if !seen[p] {
			seen[p] = true
			projects = append(projects, p)
		}
	}
	w := live.world
	for _, p := range KnownProjects(w) {
		if len(projects) == gateProjects {
			break
		}
		addProject(p)
	}
	for _, c := range changes {
		addProject(strings.TrimSpace(c.Project))
	}
	projects = append(projects, AnyOtherProject)
	fseen := map[string]bool{}
	addFlavor := func(f string) {
		if f == "" || fseen[f] {
			return
		}
		fseen[f] = true
		if _, ok := live.Flavor(f); !ok {
			return
		}
		if _, ok := draft.Flavor(f); !ok {
			return
		}
		flavors = append(flavors, f)
	}
	for i, f := range w.Flavors {
		if i == gateFlavors {
			break
		}
		addFlavor(f.Name)
	}
	for _, c := range changes {
		if fl, ok := live.Flavor(c.Flavor); ok {
			addFlavor(fl.Name)
		}
	}
	return projects, flavors
}
