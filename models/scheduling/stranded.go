package scheduling

import (
	"errors"
	"fmt"
	"maps"
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
	// Flavors lists, when the server is stranded only if it runs one of
	// them, the flavors that may no longer land on its host (a server
	// does not record its flavor); empty when it is stranded whatever it
	// runs.
	Flavors []string `json:"flavors,omitempty"`
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
	sameTenancy := lx.tenantSig == dx.tenantSig
	fits := func(sets []placement.Bitset, h int) []string {
		var names []string
		for j, b := range sets {
			if b != nil && b.Has(h) {
				names = append(names, flavors[j])
			}
		}
		return names
	}
	// What the host offers is judged once per host, not per server.
	type hostFits struct {
		lh, dh               int
		ok                   bool
		live, draft, lost    []string
		zoneMoved, anyFlavor bool
	}
	byHost := map[string]*hostFits{}
	judgeHost := func(name string) *hostFits {
		if hf, ok := byHost[name]; ok {
			return hf
		}
		hf := &hostFits{}
		byHost[name] = hf
		lh, lok := slices.BinarySearch(lx.names, name)
		dh, dok := slices.BinarySearch(dx.names, name)
		if !lok || !dok {
			return hf
		}
		hf.ok, hf.lh, hf.dh = true, lh, dh
		// Most hosts offer the same flavors in both worlds: compare bits
		// before naming anything.
		same := true
		for j := range flavors {
			if lf[j].Has(lh) != df[j].Has(dh) {
				same = false
				break
			}
		}
		hf.zoneMoved = lx.zones[lh] != dx.zones[dh]
		for j := range flavors {
			if lf[j].Has(lh) {
				hf.anyFlavor = true
				break
			}
		}
		if same && !hf.zoneMoved && sameTenancy {
			return hf
		}
		hf.live, hf.draft = fits(lf, lh), fits(df, dh)
		for _, f := range hf.live {
			if !slices.Contains(hf.draft, f) {
				hf.lost = append(hf.lost, f)
			}
		}
		return hf
	}
	for _, srv := range draft.world.Servers {
		if srv.Host == "" {
			continue
		}
		hf := judgeHost(srv.Host)
		if !hf.ok {
			continue
		}
		out.Checked++
		lh, dh := hf.lh, hf.dh
		if !hf.anyFlavor {
			continue // no flavor fits the host on live data either
		}
		if sameTenancy && hf.live == nil {
			continue // nothing about the host changed
		}
		liveFits := hf.live
		// When tenant isolation reads the same in both worlds, the
		// project may use the same hosts in both: its parts are not
		// needed (computing them for 2,000 projects is most of the work).
		pp := &projectParts{}
		if !sameTenancy {
			var err error
			if pp, err = partOf(srv.ProjectID); err != nil {
				return nil, err
			}
			if !pp.live.Has(lh) {
				continue // not eligible on live data either: nothing the draft did
			}
		}
		if hf.live == nil {
			hf.live, hf.draft = fits(lf, lh), fits(df, dh)
			for _, f := range hf.live {
				if !slices.Contains(hf.draft, f) {
					hf.lost = append(hf.lost, f)
				}
			}
			liveFits = hf.live
		}
		reason := ""
		lostFlavors := hf.lost
		draftFits := hf.draft
		switch {
		case !sameTenancy && !pp.draft.Has(dh):
			reason = fmt.Sprintf("project %s may no longer use host %s (tenant isolation: the host's aggregates no longer admit it)", srv.ProjectID, srv.Host)
		case len(draftFits) == 0:
			reason = fmt.Sprintf("no flavor may land on host %s any more (extra specs or reservations); live data allowed %s", srv.Host, listNames(liveFits, 5))
		case hf.zoneMoved:
			reason = fmt.Sprintf("host %s moves from zone %s to zone %s; servers that asked for %s no longer fit it", srv.Host, lx.zones[lh], dx.zones[dh], lx.zones[lh])
		case len(lostFlavors) > 0:
			reason = fmt.Sprintf("if it runs %s: that flavor may no longer land on host %s (extra specs or reservations)", listNames(lostFlavors, 5), srv.Host)
		default:
			lostFlavors = nil
		}
		if reason != "" {
			if len(draftFits) == 0 || !sameTenancy && !pp.draft.Has(dh) {
				lostFlavors = nil
			}
			out.Servers = append(out.Servers, StrandedServer{UUID: srv.UUID, Name: srv.Name, Project: srv.ProjectID, Host: srv.Host, Reason: reason, Flavors: lostFlavors})
		}
	}
	slices.SortFunc(out.Servers, func(a, b StrandedServer) int {
		return strings.Compare(a.Host+"\x00"+a.Name, b.Host+"\x00"+b.Name)
	})
	// A draft moves no server, so a group can newly break only when its
	// members change: judge those groups alone.
	liveGroups := make(map[string]*models.ServerGroup, len(live.world.ServerGroups))
	for i := range live.world.ServerGroups {
		liveGroups[live.world.ServerGroups[i].UUID] = &live.world.ServerGroups[i]
	}
	var hostOf map[string]string
	for i := range draft.world.ServerGroups {
		g := &draft.world.ServerGroups[i]
		lg, ok := liveGroups[g.UUID]
		if ok && slices.Equal(lg.Members, g.Members) && lg.Policy == g.Policy && maps.Equal(lg.Rules, g.Rules) {
			continue
		}
		if hostOf == nil {
			hostOf = make(map[string]string, len(draft.world.Servers))
			for _, s := range draft.world.Servers {
				hostOf[s.UUID] = s.Host
			}
		}
		if ok && groupBreak(hostOf, lg) != "" {
			continue // already broken on live data
		}
		if r := groupBreak(hostOf, g); r != "" {
			out.Groups = append(out.Groups, BrokenGroup{UUID: g.UUID, Name: g.Name, Project: g.ProjectID, Policy: g.Policy, Reason: r})
		}
	}
	return out, nil
}

// groupBreak says how the members' hosts break the group's hard policy,
// "" when they do not.
func groupBreak(hostOf map[string]string, g *models.ServerGroup) string {
	if g.Policy != models.PolicyAffinity && g.Policy != models.PolicyAntiAffinity {
		return ""
	}
	count := map[string]int{}
	for _, m := range g.Members {
		if h := hostOf[m]; h != "" {
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
