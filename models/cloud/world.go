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
	m := &Mapped{World: &models.World{}}
	w := m.World
	provs := s.Placement.Providers
	uuids := slices.Sorted(maps.Keys(provs))
	byName := map[string]string{}
	for _, u := range uuids {
		p := provs[u]
		byName[p.Name] = u
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
		w.Providers = append(w.Providers, mp)
	}

	// Nova host → root providers. A compute node's uuid is its root
	// provider's; without hypervisor rows fall back to the provider named
	// like the host, as Nova's own aggregate mirroring does.
	hostProviders := map[string][]string{}
	hvProvider := map[string]string{} // hypervisor_hostname → provider uuid
	for _, h := range s.Hypervisors {
		if _, ok := provs[h.ID]; ok {
			hostProviders[h.ServiceHost] = append(hostProviders[h.ServiceHost], h.ID)
			hvProvider[h.Name] = h.ID
		}
	}
	providersOf := func(host string) []string {
		if ps := hostProviders[host]; len(ps) > 0 {
			return ps
		}
		if u, ok := byName[host]; ok && provs[u].ParentUUID == nil {
			return []string{u}
		}
		return nil
	}
	hostOfProvider := map[string]string{}
	for _, h := range s.ComputeHosts {
		for _, u := range providersOf(h) {
			hostOfProvider[u] = h
		}
	}
	for _, a := range s.Aggregates {
		for _, h := range a.Hosts {
			for _, u := range providersOf(h) {
				if _, ok := hostOfProvider[u]; !ok {
					hostOfProvider[u] = h
				}
			}
		}
	}

	// Placement's memberships, by aggregate uuid.
	placementMembers := map[string][]string{}
	for _, u := range uuids {
		for _, ag := range provs[u].Aggregates {
			placementMembers[ag] = append(placementMembers[ag], u)
		}
	}
	novaUUIDs := map[string]bool{}
	names := map[string]bool{}
	for _, a := range s.Aggregates {
		novaUUIDs[a.UUID] = true
		names[a.Name] = true
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
		for _, u := range placementMembers[a.UUID] {
			members[u] = true
			inPlacement[u] = true
		}
		novaRoots := map[string]bool{}
		for _, h := range a.Hosts {
			ps := providersOf(h)
			if len(ps) == 0 {
				m.Disagreements = append(m.Disagreements, Disagreement{Aggregate: a.Name, AggregateUUID: a.UUID, Host: h, InNova: true,
					Message: fmt.Sprintf("host %s is in nova aggregate %s but has no resource provider in placement: member_of will not see it", h, a.Name)})
				continue
			}
			for _, u := range ps {
				members[u] = true
				novaRoots[u] = true
				if !inPlacement[u] {
					m.Disagreements = append(m.Disagreements, Disagreement{Aggregate: a.Name, AggregateUUID: a.UUID, Host: h, Provider: u, InNova: true,
						Message: fmt.Sprintf("host %s is in nova aggregate %s but its provider %s is not in placement aggregate %s: member_of will not see it", h, a.Name, provs[u].Name, a.UUID)})
				}
			}
		}
		for _, u := range placementMembers[a.UUID] {
			p := provs[u]
			// Only compute hosts can disagree: a sharing provider or a
			// child in a Placement aggregate is Placement's business.
			h, isHost := hostOfProvider[u]
			if !isHost || p.ParentUUID != nil || novaRoots[u] {
				continue
			}
			m.Disagreements = append(m.Disagreements, Disagreement{Aggregate: a.Name, AggregateUUID: a.UUID, Host: h, Provider: u,
				Message: fmt.Sprintf("provider %s is in placement aggregate %s but host %s is not in nova aggregate %s: member_of sees it, nova's aggregate filters do not", p.Name, a.UUID, h, a.Name)})
		}
		ag.Members = append([]string{}, slices.Sorted(maps.Keys(members))...) // none is an empty list, not "keep"
		w.Aggregates = append(w.Aggregates, ag)
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
		w.Aggregates = append(w.Aggregates, models.Aggregate{UUID: ag, Name: name, Metadata: map[string]string{}, Members: slices.Clone(placementMembers[ag])})
	}

	for _, f := range s.Flavors {
		mf := models.Flavor{ID: f.ID, Name: f.Name, VCPUs: f.VCPUs, RAMMB: f.RAM, DiskGB: f.Disk, ExtraSpecs: maps.Clone(f.ExtraSpecs)}
		if !f.IsPublic {
			mf.Private, mf.Projects = true, slices.Clone(f.Projects)
		}
		w.Flavors = append(w.Flavors, mf)
	}

	servers := map[string]bool{}
	for _, sv := range s.Servers {
		host := ""
		if sv.Host != "" {
			if u, ok := hvProvider[sv.HypervisorHostname]; ok {
				host = provs[u].Name
			} else if ps := providersOf(sv.Host); len(ps) == 1 {
				host = provs[ps[0]].Name
			} else {
				m.Warnings = append(m.Warnings, fmt.Sprintf("server %s (%s) is on host %s, which has no resource provider: kept without a host", sv.Name, sv.ID, sv.Host))
			}
		}
		servers[sv.ID] = true
		w.Servers = append(w.Servers, models.Server{UUID: sv.ID, Name: sv.Name, ProjectID: sv.ProjectID, UserID: sv.UserID, Host: host})
	}
	for _, g := range s.ServerGroups {
		sg := models.ServerGroup{UUID: g.ID, Name: g.Name, ProjectID: g.ProjectID, UserID: g.UserID, Policy: g.Policy, Rules: maps.Clone(g.Rules)}
		if sg.Rules == nil {
			sg.Rules = map[string]int{}
		}
		for _, id := range g.Members {
			if servers[id] {
				sg.Members = append(sg.Members, id)
			} else {
				m.Warnings = append(m.Warnings, fmt.Sprintf("server group %s lists server %s, which nova did not list: left out", g.Name, id))
			}
		}
		if sg.Members == nil {
			sg.Members = []string{}
		}
		w.ServerGroups = append(w.ServerGroups, sg)
	}
	// Consumers: owner, generation and type as Placement tells them (read
	// per consumer from 1.28 on); below that, a server's project and user
	// come from Nova.
	owner := map[string]NovaServer{}
	for _, sv := range s.Servers {
		owner[sv.ID] = sv
	}
	consumers := map[string]*models.Consumer{}
	for _, u := range uuids {
		for cu, byRC := range provs[u].Allocations {
			c := consumers[cu]
			if c == nil {
				c = &models.Consumer{UUID: cu, Generation: provs[u].ConsumerGenerations[cu]}
				if sv, ok := owner[cu]; ok {
					c.ProjectID, c.UserID = sv.ProjectID, sv.UserID
				}
				if pc := s.Placement.Consumers[cu]; pc != nil && pc.ProjectID != "" {
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
		m.Consumers = append(m.Consumers, *consumers[cu])
	}
	for _, p := range slices.Sorted(maps.Keys(s.Quotas)) {
		for _, r := range []string{models.QuotaServerGroups, models.QuotaServerGroupMembers} {
			if n, ok := s.Quotas[p][r]; ok {
				m.Quotas = append(m.Quotas, models.Quota{ProjectID: p, Resource: r, Limit: n})
			}
		}
	}
	return m
}
