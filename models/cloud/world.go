package cloud

import (
	"fmt"
	"maps"
	"slices"

	"corral/models"
)

// Disagreement is a host whose aggregate membership Nova and Placement see
// differently (models.Disagreement).
type Disagreement = models.Disagreement

// Mapped is a snapshot in corral's terms.
type Mapped struct {
	World         *models.World
	Quotas        []models.Quota
	Consumers     []models.Consumer // Placement's, with their allocations
	Disagreements []Disagreement
	Warnings      []string // what could not be mapped, one line each
}

// Map turns a snapshot into corral's world. Nova's host aggregate and
// Placement's aggregate of the same uuid become one aggregate whose members
// are the root providers of Nova's hosts plus the providers Placement puts
// in it; where the two differ, a Disagreement says so.
func Map(s *Snapshot) *Mapped {
	mp := newMapper(s)
	mp.providers()
	mp.indexHosts()
	mp.services()
	mp.aggregates()
	mp.flavors()
	mp.servers()
	mp.serverGroups()
	mp.consumers()
	mp.quotas()
	return mp.m
}

// mapper holds a snapshot being mapped and the indexes its steps share.
type mapper struct {
	s      *Snapshot
	m      *Mapped
	provs  map[string]*PlacementProvider
	uuids  []string          // the providers' uuids, sorted
	byName map[string]string // provider name → uuid
	// hostProviders maps a Nova host to its root providers; hvProvider a
	// hypervisor_hostname to its provider; hostOfProvider the reverse.
	hostProviders  map[string][]string
	hvProvider     map[string]string
	hostOfProvider map[string]string
}

func newMapper(s *Snapshot) *mapper {
	provs := s.Placement.Providers
	return &mapper{s: s, m: &Mapped{World: &models.World{}, Warnings: slices.Clone(s.Warnings)}, provs: provs, uuids: slices.Sorted(maps.Keys(provs)),
		byName: map[string]string{}, hostProviders: map[string][]string{}, hvProvider: map[string]string{}, hostOfProvider: map[string]string{}}
}

func (mp *mapper) providers() {
	for _, u := range mp.uuids {
		p := mp.provs[u]
		mp.byName[p.Name] = u
		mp.m.World.Providers = append(mp.m.World.Providers, providerFrom(p))
	}
}

// providerFrom is Placement's provider in corral's terms; usages of zero
// are left out.
func providerFrom(p *PlacementProvider) models.Provider {
	mp := models.Provider{UUID: p.UUID, Name: p.Name, Traits: slices.Clone(p.Traits), Usages: maps.Clone(p.Usages)}
	if p.ParentUUID != nil && *p.ParentUUID != "" {
		parent := *p.ParentUUID
		mp.ParentUUID = &parent
	}
	if len(p.Inventories) > 0 {
		mp.Inventories = map[string]models.Inventory{}
		for rc, inv := range p.Inventories {
			mp.Inventories[rc] = models.Inventory{Total: inv.Total, Reserved: inv.Reserved, MinUnit: inv.MinUnit,
				MaxUnit: inv.MaxUnit, StepSize: inv.StepSize, AllocationRatio: inv.AllocationRatio}
		}
	}
	for rc, n := range mp.Usages {
		if n == 0 {
			delete(mp.Usages, rc)
		}
	}
	if len(mp.Usages) == 0 {
		mp.Usages = nil
	}
	return mp
}

// indexHosts maps Nova hosts to root providers. A compute node's uuid is
// its root provider's; without hypervisor rows fall back to the provider
// named like the host, as Nova's own aggregate mirroring does.
func (mp *mapper) indexHosts() {
	for _, h := range mp.s.Hypervisors {
		if _, ok := mp.provs[h.ID]; ok {
			mp.hostProviders[h.ServiceHost] = append(mp.hostProviders[h.ServiceHost], h.ID)
			mp.hvProvider[h.Name] = h.ID
		}
	}
	for _, h := range mp.s.ComputeHosts {
		for _, u := range mp.providersOf(h) {
			mp.hostOfProvider[u] = h
		}
	}
	for _, a := range mp.s.Aggregates {
		for _, h := range a.Hosts {
			for _, u := range mp.providersOf(h) {
				if _, ok := mp.hostOfProvider[u]; !ok {
					mp.hostOfProvider[u] = h
				}
			}
		}
	}
}

// services gives each host's root providers its nova-compute service and
// its compute node's hypervisor. A heartbeat is kept only while the
// service is down and not forced down (ComputeHost.LastSeen): a service
// forced down still heartbeats.
func (mp *mapper) services() {
	at := make(map[string]int, len(mp.m.World.Providers))
	for i, p := range mp.m.World.Providers {
		at[p.UUID] = i
	}
	hypervisors := map[string]NovaHypervisor{}
	for _, h := range mp.s.Hypervisors {
		hypervisors[h.ID] = h
	}
	for _, sv := range mp.s.Services {
		cs := models.ComputeHost{Host: sv.Host, Status: sv.Status, State: sv.State, ForcedDown: sv.ForcedDown}
		if sv.DisabledReason != nil && cs.Status == models.ServiceDisabled {
			cs.DisabledReason = *sv.DisabledReason
		}
		if sv.UpdatedAt != nil && cs.State == models.ServiceDown && !cs.ForcedDown {
			cs.LastSeen = *sv.UpdatedAt
		}
		for _, u := range mp.providersOf(sv.Host) {
			if i, ok := at[u]; ok {
				c := cs
				if h, ok := hypervisors[u]; ok {
					c.HypervisorType, c.HypervisorVersion, c.HostIP = h.Type, h.Version, h.HostIP
				}
				mp.m.World.Providers[i].Compute = &c
			}
		}
	}
}

// providersOf is the root providers of a Nova host.
func (mp *mapper) providersOf(host string) []string {
	if ps := mp.hostProviders[host]; len(ps) > 0 {
		return ps
	}
	if u, ok := mp.byName[host]; ok && mp.provs[u].ParentUUID == nil {
		return []string{u}
	}
	return nil
}

// aggregates maps Nova's aggregates (with Placement's members of the same
// uuid), then the aggregates only Placement knows.
func (mp *mapper) aggregates() {
	// Placement's memberships, by aggregate uuid.
	placementMembers := map[string][]string{}
	for _, u := range mp.uuids {
		for _, ag := range mp.provs[u].Aggregates {
			placementMembers[ag] = append(placementMembers[ag], u)
		}
	}
	novaUUIDs := map[string]bool{}
	names := map[string]bool{}
	for _, a := range mp.s.Aggregates {
		novaUUIDs[a.UUID] = true
		names[a.Name] = true
		mp.m.World.Aggregates = append(mp.m.World.Aggregates, mp.novaAggregate(a, placementMembers[a.UUID]))
	}
	// Aggregates only Placement knows (sharing providers' usually) keep
	// their uuid as their name.
	for _, ag := range slices.Sorted(maps.Keys(placementMembers)) {
		if novaUUIDs[ag] {
			continue
		}
		name := ag
		for names[name] {
			name += "+"
		}
		names[name] = true
		mp.m.World.Aggregates = append(mp.m.World.Aggregates, models.Aggregate{UUID: ag, Name: name, Metadata: map[string]string{}, Members: slices.Clone(placementMembers[ag])})
	}
}

// novaAggregate maps one Nova aggregate whose Placement members are
// inPlacementList, noting where the two disagree.
func (mp *mapper) novaAggregate(a NovaAggregate, inPlacementList []string) models.Aggregate {
	ag := models.Aggregate{ID: a.ID, UUID: a.UUID, Name: a.Name, Metadata: maps.Clone(a.Metadata)}
	if a.AvailabilityZone != nil && *a.AvailabilityZone != "" {
		z := *a.AvailabilityZone
		ag.AvailabilityZone = &z
	}
	if ag.Metadata == nil {
		ag.Metadata = map[string]string{}
	}
	members := map[string]bool{}
	inPlacement := map[string]bool{}
	for _, u := range inPlacementList {
		members[u] = true
		inPlacement[u] = true
	}
	novaRoots := map[string]bool{}
	for _, h := range a.Hosts {
		ps := mp.providersOf(h)
		if len(ps) == 0 {
			mp.m.Disagreements = append(mp.m.Disagreements, Disagreement{Aggregate: a.Name, AggregateUUID: a.UUID, Host: h, InNova: true,
				Message: fmt.Sprintf("host %s is in nova aggregate %s but has no resource provider in placement: member_of will not see it", h, a.Name)})
			continue
		}
		for _, u := range ps {
			members[u] = true
			novaRoots[u] = true
			if !inPlacement[u] {
				ag.NotInPlacement = append(ag.NotInPlacement, u)
				mp.m.Disagreements = append(mp.m.Disagreements, Disagreement{Aggregate: a.Name, AggregateUUID: a.UUID, Host: h, Provider: u, InNova: true,
					Message: fmt.Sprintf("host %s is in nova aggregate %s but its provider %s is not in placement aggregate %s: member_of will not see it", h, a.Name, mp.provs[u].Name, a.UUID)})
			}
		}
	}
	for _, u := range inPlacementList {
		p := mp.provs[u]
		// Only compute hosts can disagree: a sharing provider or a
		// child in a Placement aggregate is Placement's business.
		h, isHost := mp.hostOfProvider[u]
		if !isHost || p.ParentUUID != nil || novaRoots[u] {
			continue
		}
		ag.NotInNova = append(ag.NotInNova, u)
		mp.m.Disagreements = append(mp.m.Disagreements, Disagreement{Aggregate: a.Name, AggregateUUID: a.UUID, Host: h, Provider: u,
			Message: fmt.Sprintf("provider %s is in placement aggregate %s but host %s is not in nova aggregate %s: member_of sees it, nova's aggregate filters do not", p.Name, a.UUID, h, a.Name)})
	}
	ag.Members = append([]string{}, slices.Sorted(maps.Keys(members))...) // none is an empty list, not "keep"
	// Each side's own members, so that member_of reads Placement's and the
	// host filters Nova's.
	slices.Sort(ag.NotInPlacement)
	ag.NotInPlacement = slices.Compact(ag.NotInPlacement)
	slices.Sort(ag.NotInNova)
	return ag
}

func (mp *mapper) flavors() {
	for _, f := range mp.s.Flavors {
		mf := models.Flavor{ID: f.ID, Name: f.Name, VCPUs: f.VCPUs, RAMMB: f.RAM, DiskGB: f.Disk, EphemeralGB: f.Ephemeral, SwapMB: f.Swap,
			ExtraSpecs: maps.Clone(f.ExtraSpecs)}
		if !f.IsPublic {
			mf.Private, mf.Projects = true, slices.Clone(f.Projects)
		}
		mp.m.World.Flavors = append(mp.m.World.Flavors, mf)
	}
}

// servers maps Nova's servers, each on the host of its hypervisor.
func (mp *mapper) servers() {
	for _, sv := range mp.s.Servers {
		host := ""
		if sv.Host != "" {
			if u, ok := mp.hvProvider[sv.HypervisorHostname]; ok {
				host = mp.provs[u].Name
			} else if ps := mp.providersOf(sv.Host); len(ps) == 1 {
				host = mp.provs[ps[0]].Name
			} else {
				mp.m.Warnings = append(mp.m.Warnings, fmt.Sprintf("server %s (%s) is on host %s, which has no resource provider: kept without a host", sv.Name, sv.ID, sv.Host))
			}
		}
		mp.m.World.Servers = append(mp.m.World.Servers, models.Server{UUID: sv.ID, Name: sv.Name, ProjectID: sv.ProjectID, UserID: sv.UserID, Host: host})
	}
}

// serverGroups maps Nova's server groups; members Nova did not list as
// servers are left out with a warning.
func (mp *mapper) serverGroups() {
	servers := map[string]bool{}
	for _, sv := range mp.s.Servers {
		servers[sv.ID] = true
	}
	for _, g := range mp.s.ServerGroups {
		sg := models.ServerGroup{UUID: g.ID, Name: g.Name, ProjectID: g.ProjectID, UserID: g.UserID, Policy: g.Policy, Rules: maps.Clone(g.Rules)}
		if sg.Rules == nil {
			sg.Rules = map[string]int{}
		}
		for _, id := range g.Members {
			if servers[id] {
				sg.Members = append(sg.Members, id)
			} else {
				mp.m.Warnings = append(mp.m.Warnings, fmt.Sprintf("server group %s lists server %s, which nova did not list: left out", g.Name, id))
			}
		}
		if sg.Members == nil {
			sg.Members = []string{}
		}
		mp.m.World.ServerGroups = append(mp.m.World.ServerGroups, sg)
	}
}

// consumers: owner, generation and type as Placement tells them (read per
// consumer from 1.28 on); below that, a server's project and user come
// from Nova.
func (mp *mapper) consumers() {
	owner := map[string]NovaServer{}
	for _, sv := range mp.s.Servers {
		owner[sv.ID] = sv
	}
	consumers := map[string]*models.Consumer{}
	for _, u := range mp.uuids {
		for cu, byRC := range mp.provs[u].Allocations {
			c := consumers[cu]
			if c == nil {
				c = &models.Consumer{UUID: cu, Generation: mp.provs[u].ConsumerGenerations[cu]}
				if sv, ok := owner[cu]; ok {
					c.ProjectID, c.UserID = sv.ProjectID, sv.UserID
				}
				if pc := mp.s.Placement.Consumers[cu]; pc != nil && pc.ProjectID != "" {
					c.ProjectID, c.UserID, c.Generation, c.ConsumerType = pc.ProjectID, pc.UserID, pc.Generation, pc.Type
				}
				consumers[cu] = c
			}
			for _, rc := range slices.Sorted(maps.Keys(byRC)) {
				c.Allocations = append(c.Allocations, models.Allocation{ConsumerUUID: cu, ProviderUUID: u, ResourceClass: rc, Used: byRC[rc]})
			}
		}
	}
	for _, cu := range slices.Sorted(maps.Keys(consumers)) {
		mp.m.Consumers = append(mp.m.Consumers, *consumers[cu])
	}
}

func (mp *mapper) quotas() {
	for _, p := range slices.Sorted(maps.Keys(mp.s.Quotas)) {
		for _, r := range []string{models.QuotaServerGroups, models.QuotaServerGroupMembers} {
			if n, ok := mp.s.Quotas[p][r]; ok {
				mp.m.Quotas = append(mp.m.Quotas, models.Quota{ProjectID: p, Resource: r, Limit: n})
			}
		}
	}
}
