package doctor

import (
	"fmt"
	"slices"
	"strings"

	"corral/models"
	"corral/models/scheduling"
)

// serverGroupsViolated: hard-policy server groups whose members already
// run against the policy (affinity over several hosts, anti-affinity over
// max_server_per_host).
func serverGroupsViolated(in *Input) ([]Finding, error) {
	w := in.Snapshot.World()
	if len(w.ServerGroups) == 0 {
		return nil, nil
	}
	hostOf := make(map[string]string, len(w.Servers))
	for i := range w.Servers {
		hostOf[w.Servers[i].UUID] = w.Servers[i].Host
	}
	var out []Finding
	for i := range w.ServerGroups {
		g := &w.ServerGroups[i]
		if g.Policy != models.PolicyAffinity && g.Policy != models.PolicyAntiAffinity {
			continue
		}
		hosts := make([]string, len(g.Members))
		for j, m := range g.Members {
			hosts[j] = hostOf[m]
		}
		_, violations := scheduling.CheckGroupPlacement(g, hosts)
		if len(violations) == 0 {
			continue
		}
		var parts []string
		for _, v := range violations {
			if v.Policy == models.PolicyAffinity {
				parts = append(parts, "members on "+strings.Join(v.Hosts, ", "))
			} else {
				parts = append(parts, fmt.Sprintf("%d members on %s (limit %d)", v.Count, v.Host, v.Limit))
			}
		}
		out = append(out, Finding{Code: "server_group_violated", Severity: SeverityError,
			Objects: []Object{{Kind: KindServerGroup, UUID: g.UUID, Name: g.Name}},
			Why:     "The group already breaks its " + g.Policy + " policy: its servers do not have the failure isolation or locality it promises, and moves of its members may be refused.",
			Detail:  fmt.Sprintf("server group %s (%s): %s", g.Name, g.Policy, strings.Join(parts, "; "))})
	}
	return out, nil
}

// orphanedAllocations: Placement consumers of instances corral knows no
// server for (what nova-manage placement audit reports). Their usage
// holds capacity nobody uses. Only checked when the world has servers.
func orphanedAllocations(in *Input) ([]Finding, error) {
	w := in.Snapshot.World()
	consumers := in.Consumers
	if consumers == nil {
		consumers = w.Consumers
	}
	if len(consumers) == 0 || len(w.Servers) == 0 {
		return nil, nil
	}
	servers := make(map[string]bool, len(w.Servers))
	for i := range w.Servers {
		servers[w.Servers[i].UUID] = true
	}
	var out []Finding
	for i := range consumers {
		c := &consumers[i]
		if servers[c.UUID] || (c.ConsumerType != "" && c.ConsumerType != "INSTANCE") || len(c.Allocations) == 0 {
			continue
		}
		f := Finding{Code: "orphaned_allocation", Severity: SeverityWarning,
			Objects: []Object{{Kind: KindConsumer, UUID: c.UUID, Name: c.UUID}},
			Why:     "Placement holds resources for a consumer that is no known server, so that capacity is lost to scheduling (nova-manage placement audit --delete frees it)."}
		var names []string
		for _, a := range c.Allocations {
			if p, ok := in.Snapshot.Provider(a.ProviderUUID); ok && !slices.Contains(names, p.Name) {
				names = append(names, p.Name)
				f.Objects = append(f.Objects, providerObject(p))
			}
		}
		f.Detail = fmt.Sprintf("consumer %s of project %s holds allocations on %s", c.UUID, c.ProjectID, strings.Join(names, ", "))
		out = append(out, f)
	}
	return out, nil
}

// membershipDrift: hosts whose aggregate membership Nova and Placement
// disagree on (nova-manage placement sync_aggregates repairs one
// direction). member_of reads Placement's copy, the host filters and zones
// Nova's, so the host is scheduled as if it were in two places. The world
// holds each aggregate's drift (synced); the last sync's report adds the
// hosts Placement has no provider for at all.
func membershipDrift(in *Input) ([]Finding, error) {
	var out []Finding
	w := in.Snapshot.World()
	for i := range w.Aggregates {
		a := &w.Aggregates[i]
		for _, side := range []struct {
			list   []string
			detail string
		}{{a.NotInPlacement, "host %s is in Nova's aggregate %s but not in Placement's: member_of does not see it there"},
			{a.NotInNova, "host %s is in Placement's aggregate %s but not in Nova's: member_of sees it there, Nova's filters and zones do not"}} {
			for _, u := range side.list {
				p, ok := in.Snapshot.Provider(u)
				if !ok {
					continue
				}
				f := Finding{Code: "membership_drift", Severity: SeverityError,
					Objects: []Object{{Kind: KindAggregate, UUID: a.UUID, Name: a.Name}, providerObject(p)},
					Why:     "Nova and Placement disagree on the aggregate's hosts; member_of acts on Placement's copy, the host filters and zones on Nova's, so the host is scheduled as if it were in two places.",
					Detail:  fmt.Sprintf(side.detail, p.Name, a.Name),
					Fix:     []scheduling.Change{placementFix(in.Snapshot, p, a)}}
				out = append(out, f)
			}
		}
	}
	for _, d := range in.Drift {
		if d.Provider != "" {
			continue // in the world's aggregates, above
		}
		f := Finding{Code: "membership_drift", Severity: SeverityError,
			Objects: []Object{{Kind: KindAggregate, UUID: d.AggregateUUID, Name: d.Aggregate}, {Kind: KindProvider, Name: d.Host}},
			Why:     "Nova's aggregate names a host Placement has no resource provider for: member_of cannot see it.",
			Detail:  fmt.Sprintf("host %s is in Nova's aggregate %s but has no resource provider in Placement", d.Host, d.Aggregate)}
		if p, ok := in.Snapshot.Provider(d.Host); ok {
			// A report that names the host only: the provider exists.
			f.Objects[1] = providerObject(p)
			f.Why = "Nova and Placement disagree on the aggregate's hosts; member_of acts on Placement's copy, the host filters and zones on Nova's."
			f.Detail = fmt.Sprintf("the last sync found host %s in one of the two copies of aggregate %s only", d.Host, d.Aggregate)
		}
		out = append(out, f)
	}
	return out, nil
}

// placementFix makes Placement's aggregates of p follow Nova's for a: add
// it where only Nova has it (as nova-manage placement sync_aggregates
// does), take it out where only Placement has it.
func placementFix(s *scheduling.Snapshot, p *models.Provider, a *models.Aggregate) scheduling.Change {
	var aggs []string
	for _, x := range s.AggregatesOf(p.UUID) {
		if x.UUID != a.UUID {
			aggs = append(aggs, x.UUID)
		}
	}
	if slices.Contains(a.NotInPlacement, p.UUID) {
		aggs = append(aggs, a.UUID)
	}
	slices.Sort(aggs)
	gen := p.Generation
	return scheduling.Change{Op: scheduling.OpSetProviderAggregates, Provider: p.UUID, Generation: &gen,
		PlacementFields: scheduling.PlacementFields{Aggregates: append([]string{}, aggs...)}}
}
