package scheduling

import (
	"cmp"
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
	dx, err := draft.derivedImpactIdx(lx)
	if err != nil {
		return nil, err
	}
	out := &Stranding{Servers: []StrandedServer{}, Groups: []BrokenGroup{}}
	sc, err := newStrandingScan(live, draft, lx, dx)
	if err != nil {
		return nil, err
	}
	// A draft that shares live's servers finds their hosts in live's
	// index, worked out once per snapshot.
	var serverPos []int32
	if sc.aligned && sc.sameTenancy && sameSlice(draft.world.Servers, live.world.Servers) {
		serverPos = lx.serverPositions()
	}
	for si := range draft.world.Servers {
		if err := sc.checkServer(out, &draft.world.Servers[si], si, serverPos); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out.Servers, func(a, b StrandedServer) int {
		return cmp.Or(strings.Compare(a.Host, b.Host), strings.Compare(a.Name, b.Name))
	})
	groups, gerr := brokenGroups(live, draft, lx, dx, sc.lf, sc.df, sc.sameTenancy)
	if gerr != nil {
		return nil, gerr
	}
	out.Groups = groups
	return out, nil
}

// strandingScan is what Strandings knows of the two worlds while it
// judges the draft's servers one by one.
type strandingScan struct {
	lx, dx *impactIndex
	// flavors are the draft's flavor names; lf and df their parts in live
	// and in the draft.
	flavors     []string
	lf, df      []placement.Bitset
	sameTenancy bool
	// aligned: the draft's index derives from live's, so hosts sit at the
	// same positions in both; changed then marks the hosts where some
	// flavor's verdict or the zone differs.
	aligned bool
	changed placement.Bitset
	byHost  map[string]*hostFits
	parts   map[string]*projectParts
}

// hostFits is what a host offers in both worlds, judged once per host,
// not per server.
type hostFits struct {
	lh, dh               int
	ok                   bool
	live, draft, lost    []string
	zoneMoved, anyFlavor bool
}

// projectParts are a project's parts in live and in the draft.
type projectParts struct{ live, draft placement.Bitset }

// newStrandingScan computes the flavor parts of both worlds (live first,
// as a derived draft index builds on them) and, when the indexes are
// aligned, the hosts whose offer changed.
func newStrandingScan(live, draft *Snapshot, lx, dx *impactIndex) (*strandingScan, error) {
	sc := &strandingScan{lx: lx, dx: dx, byHost: map[string]*hostFits{}, parts: map[string]*projectParts{}}
	// A flavor the draft creates or renames runs no server yet.
	sc.flavors = make([]string, 0, len(draft.world.Flavors))
	for _, f := range draft.world.Flavors {
		if _, ok := live.Flavor(f.Name); ok {
			sc.flavors = append(sc.flavors, f.Name)
		}
	}
	flavors := sc.flavors
	lf, df := make([]placement.Bitset, len(flavors)), make([]placement.Bitset, len(flavors))
	errs := make([]error, 2*len(flavors))
	var liveJobs, draftJobs []func()
	for j, f := range flavors {
		liveJobs = append(liveJobs, func() { lf[j], errs[2*j] = lx.flavorPart(f) })
		draftJobs = append(draftJobs, func() { df[j], errs[2*j+1] = dx.flavorPart(f) })
	}
	parallel(liveJobs)
	parallel(draftJobs)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sc.lf, sc.df = lf, df
	sc.sameTenancy = lx.tenantSig == dx.tenantSig
	// A server on a host not in changed keeps what it had (unless tenancy
	// changed, which is judged per project).
	sc.aligned = dx.base == lx
	if sc.aligned {
		sc.changed = placement.NewBitset(len(lx.names))
		for j := range flavors {
			if !same(lf[j], df[j]) {
				for w := range sc.changed {
					sc.changed[w] |= lf[j][w] ^ df[j][w]
				}
			}
		}
		dx.affected.Each(func(i int) {
			if lx.zones[i] != dx.zones[i] {
				sc.changed.Set(i)
			}
		})
	}
	return sc, nil
}

// partOf is project p's parts in both worlds, computed once.
func (sc *strandingScan) partOf(p string) (*projectParts, error) {
	if pp, ok := sc.parts[p]; ok {
		return pp, nil
	}
	l, err := sc.lx.projectPart(p)
	if err != nil {
		return nil, err
	}
	d, err := sc.dx.projectPart(p)
	if err != nil {
		return nil, err
	}
	pp := &projectParts{l, d}
	sc.parts[p] = pp
	return pp, nil
}

// fits names the flavors whose part in sets holds host h.
func (sc *strandingScan) fits(sets []placement.Bitset, h int) []string {
	var names []string
	for j, b := range sets {
		if b != nil && b.Has(h) {
			names = append(names, sc.flavors[j])
		}
	}
	return names
}

// judgeHost is what host name offers in both worlds; the flavors are
// named only when its offer or zone changed, or tenancy did.
func (sc *strandingScan) judgeHost(name string) *hostFits {
	if hf, ok := sc.byHost[name]; ok {
		return hf
	}
	lx, dx, lf, df := sc.lx, sc.dx, sc.lf, sc.df
	hf := &hostFits{}
	sc.byHost[name] = hf
	lh, dh := lx.position(name), dx.position(name)
	if lh < 0 || dh < 0 {
		return hf
	}
	hf.ok, hf.lh, hf.dh = true, lh, dh
	// Most hosts offer the same flavors in both worlds: compare bits
	// before naming anything.
	same := true
	for j := range sc.flavors {
		if lf[j].Has(lh) != df[j].Has(dh) {
			same = false
			break
		}
	}
	hf.zoneMoved = lx.zones[lh] != dx.zones[dh]
	for j := range sc.flavors {
		if lf[j].Has(lh) {
			hf.anyFlavor = true
			break
		}
	}
	if same && !hf.zoneMoved && sc.sameTenancy {
		return hf
	}
	sc.nameFlavors(hf)
	return hf
}

// nameFlavors names the flavors hf's host offers in both worlds and those
// it loses.
func (sc *strandingScan) nameFlavors(hf *hostFits) {
	hf.live, hf.draft = sc.fits(sc.lf, hf.lh), sc.fits(sc.df, hf.dh)
	for _, f := range hf.live {
		if !slices.Contains(hf.draft, f) {
			hf.lost = append(hf.lost, f)
		}
	}
}

// checkServer judges the draft's server srv (the si-th; serverPos, when
// set, holds each server's host position in live's index) and adds it to
// out when the draft strands it.
func (sc *strandingScan) checkServer(out *Stranding, srv *models.Server, si int, serverPos []int32) error {
	if srv.Host == "" {
		return nil
	}
	if sc.aligned && sc.sameTenancy {
		var h int
		if serverPos != nil {
			h = int(serverPos[si])
		} else {
			h = sc.lx.position(srv.Host)
		}
		if h < 0 {
			return nil
		}
		out.Checked++
		if !sc.changed.Has(h) {
			return nil // nothing about the host changed
		}
	}
	hf := sc.judgeHost(srv.Host)
	if !hf.ok {
		return nil
	}
	if !sc.aligned || !sc.sameTenancy {
		out.Checked++
	}
	if !hf.anyFlavor {
		return nil // no flavor fits the host on live data either
	}
	if sc.sameTenancy && hf.live == nil {
		return nil // nothing about the host changed
	}
	// When tenant isolation reads the same in both worlds, the
	// project may use the same hosts in both: its parts are not
	// needed (computing them for 2,000 projects is most of the work).
	pp := &projectParts{}
	if !sc.sameTenancy {
		var err error
		if pp, err = sc.partOf(srv.ProjectID); err != nil {
			return err
		}
		if !pp.live.Has(hf.lh) {
			return nil // not eligible on live data either: nothing the draft did
		}
	}
	if hf.live == nil {
		sc.nameFlavors(hf)
	}
	if reason, lost := sc.strandReason(srv, hf, pp); reason != "" {
		out.Servers = append(out.Servers, StrandedServer{UUID: srv.UUID, Name: srv.Name, Project: srv.ProjectID, Host: srv.Host, Reason: reason, Flavors: lost})
	}
	return nil
}

// strandReason says why the draft strands srv on hf's host ("" when it
// does not), and the flavors it is stranded with when only they are.
func (sc *strandingScan) strandReason(srv *models.Server, hf *hostFits, pp *projectParts) (reason string, lostFlavors []string) {
	lx, dx, lh, dh := sc.lx, sc.dx, hf.lh, hf.dh
	liveFits := hf.live
	lostFlavors = hf.lost
	draftFits := hf.draft
	switch {
	case !sc.sameTenancy && !pp.draft.Has(dh):
		reason = fmt.Sprintf("project %s may no longer use host %s (tenant isolation: the host's aggregates no longer admit it)", srv.ProjectID, srv.Host)
	case len(draftFits) == 0:
		reason = fmt.Sprintf("no flavor may land on host %s any more (extra specs or reservations); live data allowed %s", srv.Host, listNames(liveFits, 5))
	case hf.zoneMoved:
		reason = fmt.Sprintf("host %s moves from zone %s to zone %s; servers that asked for %s no longer fit it", srv.Host, lx.zones[lh], dx.zones[dh], lx.zones[lh])
	case len(lostFlavors) > 0:
		reason = fmt.Sprintf("if it runs %s: that flavor may no longer land on host %s (extra specs or reservations)", listNames(lostFlavors, 5), srv.Host)
	default:
		return "", nil
	}
	if len(draftFits) == 0 || !sc.sameTenancy && !pp.draft.Has(dh) {
		lostFlavors = nil
	}
	return reason, lostFlavors
}

// brokenGroups lists the hard-policy server groups the draft breaks. A
// draft moves no server, but it breaks a group in two ways:
//   - by changing the group (members, policy, rules) so that where its
//     members run breaks the policy;
//   - by changing what the group's project may use (any change kind:
//     aggregates, flavors' extra specs, settings, providers), so that the
//     policy can no longer be met: an affinity group's host is no longer
//     eligible, so a new or rebuilt member has nowhere to go; an
//     anti-affinity group is left no eligible host below
//     max_server_per_host.
//
// A host is eligible for a project when some flavor of the world may land
// there for it (a server does not record its flavor). Groups already
// broken on live data are not listed.
func brokenGroups(live, draft *Snapshot, lx, dx *impactIndex, lf, df []placement.Bitset, sameTenancy bool) ([]BrokenGroup, error) {
	out := []BrokenGroup{}
	hostOf := func(uuid string) string {
		if s, ok := draft.serverByUUID[uuid]; ok {
			return s.Host
		}
		return ""
	}
	members := func(g *models.ServerGroup) map[string]int {
		count := map[string]int{}
		for _, m := range g.Members {
			if h := hostOf(m); h != "" {
				count[h]++
			}
		}
		return count
	}
	// The hosts some flavor may use, per world: a host outside them is
	// eligible for no project. When they and tenancy are the same in both
	// worlds, every project may use the same hosts, and only changed
	// groups need a look.
	union := func(sets []placement.Bitset, n int) placement.Bitset {
		u := placement.NewBitset(n)
		for _, b := range sets {
			u.Or(b)
		}
		return u
	}
	ul, ud := union(lf, len(lx.names)), union(df, len(dx.names))
	eligibility := !sameTenancy || !slices.Equal(lx.names, dx.names) || !slices.Equal(ul, ud)
	liveGroups := make(map[string]*models.ServerGroup, len(live.world.ServerGroups))
	for i := range live.world.ServerGroups {
		liveGroups[live.world.ServerGroups[i].UUID] = &live.world.ServerGroups[i]
	}
	for i := range draft.world.ServerGroups {
		g := &draft.world.ServerGroups[i]
		if g.Policy != models.PolicyAffinity && g.Policy != models.PolicyAntiAffinity {
			continue
		}
		lg, ok := liveGroups[g.UUID]
		changedGroup := !ok || !slices.Equal(lg.Members, g.Members) || lg.Policy != g.Policy || !maps.Equal(lg.Rules, g.Rules)
		if !changedGroup && !eligibility {
			continue
		}
		if ok && groupBreak(members(lg), lg) != "" {
			continue // already broken on live data
		}
		count := members(g)
		if r := groupBreak(count, g); r != "" {
			out = append(out, BrokenGroup{UUID: g.UUID, Name: g.Name, Project: g.ProjectID, Policy: g.Policy, Reason: r})
			continue
		}
		if !eligibility || len(count) == 0 {
			continue
		}
		pl, err := lx.projectPart(g.ProjectID)
		if err != nil {
			return nil, err
		}
		pd, err := dx.projectPart(g.ProjectID)
		if err != nil {
			return nil, err
		}
		eligible := func(x *impactIndex, part, flavors placement.Bitset, host string) bool {
			h := x.position(host)
			return h >= 0 && part.Has(h) && flavors.Has(h)
		}
		hosts := slices.Sorted(maps.Keys(count))
		if g.Policy == models.PolicyAffinity {
			h := hosts[0]
			if eligible(lx, pl, ul, h) && !eligible(dx, pd, ud, h) {
				out = append(out, BrokenGroup{UUID: g.UUID, Name: g.Name, Project: g.ProjectID, Policy: g.Policy,
					Reason: fmt.Sprintf("affinity: its members run on host %s, which the draft makes ineligible for project %s; a new or rebuilt member must land there and cannot", h, g.ProjectID)})
			}
			continue
		}
		limit := g.MaxServerPerHost()
		room := func(x *impactIndex, part, flavors placement.Bitset) int {
			n := andCount(part, flavors)
			for _, h := range hosts {
				if count[h] >= limit && eligible(x, part, flavors, h) {
					n--
				}
			}
			return n
		}
		if room(lx, pl, ul) > 0 && room(dx, pd, ud) == 0 {
			out = append(out, BrokenGroup{UUID: g.UUID, Name: g.Name, Project: g.ProjectID, Policy: g.Policy,
				Reason: fmt.Sprintf("anti-affinity: the draft leaves project %s no eligible host with room for another member (max_server_per_host=%d); a new or evacuated member has nowhere to go", g.ProjectID, limit)})
		}
	}
	return out, nil
}

// sameSlice reports whether a and b are one slice (not merely equal ones).
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// groupBreak says how the members (count per host) break the group's hard policy,
// "" when they do not.
func groupBreak(count map[string]int, g *models.ServerGroup) string {
	if g.Policy != models.PolicyAffinity && g.Policy != models.PolicyAntiAffinity {
		return ""
	}
	hosts := slices.Sorted(maps.Keys(count))
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
