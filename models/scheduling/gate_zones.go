package scheduling

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"corral/models"
)

// The zone traps: changes that move hosts running servers out of their
// availability zone. Nova records each instance's availability_zone when
// it lands and schedules the moves of a server that asked for a zone
// (live migration, evacuation, resize, unshelve) back into that zone, so
// once the zone is renamed or its hosts leave it those moves find no host;
// and Nova refuses outright to change the zone of an aggregate whose hosts
// run instances ("One or more hosts contain instances in this zone"). A
// snapshot cannot show a rename: only a comparison of live data with the
// changes can, so this is part of the gate, not of the Doctor.

// Codes of the zone traps (docs/drafts.md, "The safety gate").
const (
	// ZoneRenamedUnderServers: an aggregate keeps its hosts and its zone
	// changes (renamed or cleared) while they run servers.
	ZoneRenamedUnderServers = "zone_renamed_under_servers"
	// ZoneDeletedUnderServers: an aggregate carrying a zone is deleted
	// (its hosts taken out first) while they run servers.
	ZoneDeletedUnderServers = "zone_deleted_under_servers"
	// ZoneLeftUnderServers: hosts running servers are taken out of the
	// aggregate that puts them in their zone.
	ZoneLeftUnderServers = "zone_left_under_servers"
)

// ZoneMove is one aggregate's zone trap: the hosts running servers that
// the changes move from zone From to zone To.
type ZoneMove struct {
	Code          string   `json:"code"`
	Aggregate     string   `json:"aggregate"`
	AggregateUUID string   `json:"aggregate_uuid"`
	From          string   `json:"from"`
	To            string   `json:"to"` // DefaultZone when the hosts end in none
	Hosts         []string `json:"hosts"`
	Servers       int      `json:"servers"`
	// Reason is the consequence as a person reads it.
	Reason string `json:"reason"`
}

// ZoneMoves lists the zone traps of going from live to draft: each host
// running servers whose availability zone differs between the two, by
// the live aggregate that put it in its zone (and how the draft undoes
// that). A host that joins a zone from none is not one: its servers asked
// for no zone, or for the default one, and Nova lets them move anywhere.
func ZoneMoves(live, draft *Snapshot) []ZoneMove {
	servers := zoneCandidates(live, draft)
	if len(servers) == 0 {
		return []ZoneMove{}
	}
	byKey := map[[4]string]*ZoneMove{}
	for _, host := range slices.Sorted(maps.Keys(servers)) {
		lh, ok := live.Host(host)
		if !ok {
			continue
		}
		dh, ok := draft.Host(host)
		if !ok {
			continue // the draft deletes the host; the write path refuses that while it runs servers
		}
		from, to := hostZone(lh), hostZone(dh)
		if from == to || from == DefaultZone {
			continue
		}
		var cause *ZoneMove
		for _, a := range lh.Aggregates {
			if aggregateAZ(a) != from {
				continue
			}
			code := ZoneLeftUnderServers
			if d, ok := draft.Aggregate(a.UUID); !ok {
				code = ZoneDeletedUnderServers
			} else if slices.ContainsFunc(dh.Aggregates, func(x *models.Aggregate) bool { return x.UUID == d.UUID }) {
				code = ZoneRenamedUnderServers
			}
			key := [4]string{code, a.UUID, from, to}
			if byKey[key] == nil {
				byKey[key] = &ZoneMove{Code: code, Aggregate: a.Name, AggregateUUID: a.UUID, From: from, To: to}
			}
			cause = byKey[key]
			break // the host's first aggregate in the zone names the move
		}
		if cause != nil {
			cause.Hosts = append(cause.Hosts, host)
			cause.Servers += servers[host]
		}
	}
	out := make([]ZoneMove, 0, len(byKey))
	for _, m := range byKey {
		m.Reason = zoneReason(m)
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b ZoneMove) int {
		return cmp.Or(strings.Compare(a.Aggregate, b.Aggregate), strings.Compare(a.Code, b.Code), strings.Compare(a.To, b.To))
	})
	return out
}

// zoneCandidates counts the servers on each host that may leave its zone:
// a member of a live aggregate with a zone that the draft deletes, moves
// to another zone or takes members from. Only those hosts are judged, so
// that a gate on 50,000 servers costs little when no zone changes.
func zoneCandidates(live, draft *Snapshot) map[string]int {
	hosts := map[string]int{}
	for i := range live.world.Aggregates {
		a := &live.world.Aggregates[i]
		if aggregateAZ(a) == "" {
			continue
		}
		if d, ok := draft.Aggregate(a.UUID); ok && aggregateAZ(d) == aggregateAZ(a) && slices.Equal(d.Members, a.Members) {
			continue
		}
		for _, m := range a.Members {
			if p, ok := live.Provider(m); ok && p.IsHost() {
				hosts[p.Name] = 0
			}
		}
	}
	if len(hosts) == 0 {
		return nil
	}
	for i := range live.world.Servers {
		if n, ok := hosts[live.world.Servers[i].Host]; ok {
			hosts[live.world.Servers[i].Host] = n + 1
		}
	}
	maps.DeleteFunc(hosts, func(_ string, n int) bool { return n == 0 })
	return hosts
}

// zoneReason is a zone trap as a consequence line (it follows "this
// change …", as the gate's other lines do).
func zoneReason(m *ZoneMove) string {
	under := fmt.Sprintf("under %s on %s", countOf(m.Servers, "running server", "running servers"), listNames(m.Hosts, gateNames))
	to := "zone " + m.To
	if m.To == DefaultZone {
		to = "the default zone " + DefaultZone
	}
	kept := fmt.Sprintf("Nova keeps %s recorded on those servers: moves of those that asked for it find no host", m.From)
	switch m.Code {
	case ZoneRenamedUnderServers:
		return fmt.Sprintf("moves aggregate %s from zone %s to %s %s (Nova refuses to change the zone of an aggregate whose hosts run servers)", m.Aggregate, m.From, to, under)
	case ZoneDeletedUnderServers:
		return fmt.Sprintf("deletes aggregate %s, which puts its hosts in zone %s, %s: they move to %s (%s)", m.Aggregate, m.From, under, to, kept)
	}
	return fmt.Sprintf("takes hosts out of aggregate %s, zone %s, %s: they move to %s (%s)", m.Aggregate, m.From, under, to, kept)
}
