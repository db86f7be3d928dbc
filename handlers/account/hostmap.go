package account

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"corral/models"
	"corral/models/scheduling"
	av "corral/views/account"
)

// The host × aggregate map: one page of hosts (rows) against the
// aggregates those hosts are in (columns), each cell coloured by what the
// aggregate does to its hosts — reserves them, isolates them for tenants,
// or puts them in a zone — and linking to the aggregate.
const (
	mapHostsPerPage = 40
	mapMaxColumns   = 40
	// zonePalette is how many zone colours the style sheet defines; zones
	// beyond it reuse them, and the legend still names each.
	zonePalette = 8
)

// hostMap builds the map's page of hosts starting at offset, hosts in name
// order.
func hostMap(snap *scheduling.Snapshot, offset int) av.HostMapProps {
	hosts := snap.Hosts()
	order := make([]int, len(hosts))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(hosts[a].Name(), hosts[b].Name()) })
	if offset < 0 || offset >= len(hosts) {
		offset = 0
	}
	end := min(offset+mapHostsPerPage, len(hosts))
	m := av.HostMapProps{Offset: offset, Total: len(hosts), PerPage: mapHostsPerPage}

	prefix := snap.World().Settings.RequiredMemberPrefix
	zones := zoneClasses(snap.World())
	cols := map[string]int{}
	var aggs []*models.Aggregate
	for _, i := range order[offset:end] {
		for _, a := range hosts[i].Aggregates {
			if _, ok := cols[a.UUID]; !ok {
				cols[a.UUID] = -1
				aggs = append(aggs, a)
			}
		}
	}
	slices.SortFunc(aggs, func(a, b *models.Aggregate) int {
		return cmp.Or(strings.Compare(zoneOf(a), zoneOf(b)), strings.Compare(a.Name, b.Name))
	})
	if len(aggs) > mapMaxColumns {
		m.MoreAggregates = len(aggs) - mapMaxColumns
		aggs = aggs[:mapMaxColumns]
	}
	for i, a := range aggs {
		cols[a.UUID] = i
		kind, class := cellKind(a, prefix, zones)
		m.Columns = append(m.Columns, av.MapColumn{UUID: a.UUID, Name: a.Name, Zone: zoneOf(a), Kind: kind, Class: class})
	}
	for _, i := range order[offset:end] {
		h := &hosts[i]
		row := av.MapRow{Host: h.Name(), ProviderUUID: h.Provider.UUID, Cells: make([]bool, len(aggs))}
		for _, a := range h.Aggregates {
			if c := cols[a.UUID]; c >= 0 {
				row.Cells[c] = true
			} else {
				row.Hidden++
			}
		}
		m.Rows = append(m.Rows, row)
	}
	for _, z := range slices.Sorted(maps.Keys(zones)) {
		m.Zones = append(m.Zones, av.MapZone{Name: z, Class: zones[z]})
	}
	return m
}

func zoneOf(a *models.Aggregate) string {
	if a.AvailabilityZone == nil {
		return ""
	}
	return *a.AvailabilityZone
}

// zoneClasses gives each zone a colour class, zones in name order.
func zoneClasses(w *models.World) map[string]string {
	seen := map[string]bool{}
	for i := range w.Aggregates {
		if z := zoneOf(&w.Aggregates[i]); z != "" {
			seen[z] = true
		}
	}
	out := map[string]string{}
	for i, z := range slices.Sorted(maps.Keys(seen)) {
		out[z] = "z" + string(rune('0'+i%zonePalette))
	}
	return out
}

// cellKind says what an aggregate does to its hosts, most restrictive
// first: a reservation tag keeps them for a reservation, a tenant tag for
// some projects, a zone only names where they are.
func cellKind(a *models.Aggregate, reservationPrefix string, zones map[string]string) (kind, class string) {
	var tenant bool
	for k := range a.Metadata {
		if scheduling.IsReservationKey(k, reservationPrefix) || k == "reservation" || k == "blazar:owner" {
			return "reservation", "cell-res"
		}
		tenant = tenant || scheduling.IsTenantKey(k)
	}
	switch {
	case tenant:
		return "tenant", "cell-tenant"
	case zoneOf(a) != "":
		return "zone " + zoneOf(a), "cell-zone " + zones[zoneOf(a)]
	}
	return "member", "cell-plain"
}
