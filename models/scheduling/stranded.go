package scheduling

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"corral/models"
	"corral/models/placement"
)

// StrandedServer is a running server whose host the draft makes
// ineligible for it: it keeps running, but nova would not place it there
// again (a rebuild, an evacuation, a resize to the same host fails).
type StrandedServer struct {
	UUID    string `json:"uuid"`
	Name    string `json:"name"`
	Project string `json:"project"`
	Host    string `json:"host"`
	Reason  string `json:"reason"`
}

// BrokenGroup is a server group whose policy the draft's placement of its
// members breaks.
type BrokenGroup struct {
	UUID    string `json:"uuid"`
	Name    string `json:"name"`
	Project string `json:"project"`
	Policy  string `json:"policy"`
	Reason  string `json:"reason"`
}

// Stranding is what a draft does to what already runs.
type Stranding struct {
	Servers []StrandedServer `json:"servers"`
	Groups  []BrokenGroup    `json:"groups"`
	// Checked is how many running servers were judged.
	Checked int `json:"checked"`
}

// Strandings lists the running servers of the draft world whose host was
// eligible for them on live data and is not on the draft, each with the
// reason (tenant isolation, zone, flavor extra specs or reservations), and
// the server groups whose rules the draft breaks. A server records its
// project and host but not its flavor, so a host counts as eligible for it
// when some flavor of the world may land there for its project: the draft
// strands the server when no flavor may any more.
func Strandings(live, draft *Snapshot) (*Stranding, error) {
	lx, err := live.impactIdx()
	if err != nil {
		return nil, err
	}
	dx, err := draft.impactIdx()
	if err != nil {
		return nil, err
	}
	out := &Stranding{Servers: []StrandedServer{}, Groups: []BrokenGroup{}}
	// Flavor parts of both worlds, by the draft's flavors.
	flavors := make([]string, len(draft.world.Flavors))
	for i, f := range draft.world.Flavors {
		flavors[i] = f.Name
	}
	lf, df := make([]placement.Bitset, len(flavors)), make([]placement.Bitset, len(flavors))
	errs := make([]error, 2*len(flavors))
	var jobs []func()
	for j, f := range flavors {
		jobs = append(jobs,
			func() { lf[j], errs[2*j] = lx.flavorPart(f) },
			func() { df[j], errs[2*j+1] = dx.flavorPart(f) })
	}
	parallel(jobs)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	type projectParts struct{ live, draft placement.Bitset }
	parts := map[string]*projectParts{}
	partOf := func(p string) (*projectParts, error) {
		if pp, ok := parts[p]; ok {
			return pp, nil
		}
		l, err := lx.projectPart(p)
		if err != nil {
			return nil, err
		}
		d, err := dx.projectPart(p)
		if err != nil {
			return nil, err
		}
		pp := &projectParts{l, d}
		parts[p] = pp
		return pp, nil
	}
	fits := func(sets []placement.Bitset, h int) []string {
		var names []string
		for j, b := range sets {
			if b != nil && b.Has(h) {
				names = append(names, flavors[j])
			}
		}
		return names
	}
	for _, srv := range draft.world.Servers {
		if srv.Host == "" {
			continue
		}
		lh, lok := slices.BinarySearch(lx.names, srv.Host)
		dh, dok := slices.BinarySearch(dx.names, srv.Host)
		if !lok || !dok {
			continue
		}
		out.Checked++
		pp, err := partOf(srv.ProjectID)
		if err != nil {
			return nil, err
		}
		liveFits := fits(lf, lh)
		if !pp.live.Has(lh) || len(liveFits) == 0 {
			continue // not eligible on live data either: nothing the draft did
		}
		reason := ""
		draftFits := fits(df, dh)
		switch {
		case !pp.draft.Has(dh):
			reason = fmt.Sprintf("project %s may no longer use host %s (tenant isolation: the host's aggregates no longer admit it)", srv.ProjectID, srv.Host)
		case len(draftFits) == 0:
			reason = fmt.Sprintf("no flavor may land on host %s any more (extra specs or reservations); live data allowed %s", srv.Host, listNames(liveFits, 5))
		case lx.zones[lh] != dx.zones[dh]:
			reason = fmt.Sprintf("host %s moves from zone %s to zone %s; servers that asked for %s no longer fit it", srv.Host, lx.zones[lh], dx.zones[dh], lx.zones[lh])
		}
		if reason != "" {
			out.Servers = append(out.Servers, StrandedServer{UUID: srv.UUID, Name: srv.Name, Project: srv.ProjectID, Host: srv.Host, Reason: reason})
		}
	}
	slices.SortFunc(out.Servers, func(a, b StrandedServer) int {
		return strings.Compare(a.Host+"\x00"+a.Name, b.Host+"\x00"+b.Name)
	})
	liveBroken := map[string]bool{}
	for _, g := range live.world.ServerGroups {
		if groupBreak(live.world, &g) != "" {
			liveBroken[g.UUID] = true
		}
	}
	for _, g := range draft.world.ServerGroups {
		if liveBroken[g.UUID] {
			continue
		}
		if r := groupBreak(draft.world, &g); r != "" {
			out.Groups = append(out.Groups, BrokenGroup{UUID: g.UUID, Name: g.Name, Project: g.ProjectID, Policy: g.Policy, Reason: r})
		}
	}
	return out, nil
}

// groupBreak says how the members' hosts break the group's hard policy,
// "" when they do not.
func groupBreak(w *models.World, g *models.ServerGroup) string {
	if g.Policy != models.PolicyAffinity && g.Policy != models.PolicyAntiAffinity {
		return ""
	}
	hostOf := make(map[string]string, len(g.Members))
	for _, m := range g.Members {
		hostOf[m] = ""
	}
	for _, s := range w.Servers {
		if _, ok := hostOf[s.UUID]; ok {
			hostOf[s.UUID] = s.Host
		}
	}
	count := map[string]int{}
	for _, h := range hostOf {
		if h != "" {
			count[h]++
		}
	}
	hosts := sortedKeys(count)
	if g.Policy == models.PolicyAffinity {
		if len(hosts) > 1 {
			return fmt.Sprintf("affinity: members run on %d hosts (%s)", len(hosts), listNames(hosts, 5))
		}
		return ""
	}
	limit := g.MaxServerPerHost()
	for _, h := range hosts {
		if count[h] > limit {
			return fmt.Sprintf("anti-affinity: host %s runs %d members, more than max_server_per_host=%d", h, count[h], limit)
		}
	}
	return ""
}

// listNames names a few items ("a, b and 3 more").
func listNames(names []string, show int) string {
	if len(names) <= show {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:show], ", "), len(names)-show)
}
