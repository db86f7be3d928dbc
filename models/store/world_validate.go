package store

import (
	"fmt"
	"slices"
	"strings"

	"corral/models"
)

// checkWorldZones is the zone rule (a host in at most one availability
// zone) over a whole imported world. A sync from a real cloud does not run
// it: it mirrors what the cloud holds.
func checkWorldZones(w *models.World) error {
	provs := make(map[string]*models.Provider, len(w.Providers))
	for i := range w.Providers {
		provs[w.Providers[i].UUID] = &w.Providers[i]
	}
	var zoned []models.ZoneMembership
	for _, ag := range w.Aggregates {
		if ag.AvailabilityZone == nil {
			continue
		}
		for _, m := range ag.Members {
			if p := provs[m]; p != nil && p.IsHost() {
				zoned = append(zoned, models.ZoneMembership{Provider: m, Name: p.Name, Zone: *ag.AvailabilityZone})
			}
		}
	}
	if err := models.CheckZones(zoned, ""); err != nil {
		if ce, ok := err.(*models.Error); ok {
			c := *ce
			c.Field = "aggregates[].availability_zone"
			return &c
		}
		return err
	}
	return nil
}

// validateWorld checks a complete world: every field, every uniqueness and
// every reference. It normalises in place (roots, sorted members, zones).
func validateWorld(w *models.World) error {
	provs, err := validateWorldProviders(w)
	if err != nil {
		return err
	}
	if err = validateWorldAggregates(w, provs); err != nil {
		return err
	}
	if err = validateWorldFlavors(w); err != nil {
		return err
	}
	servers, err := validateWorldServers(w)
	if err != nil {
		return err
	}
	if err := validateWorldGroups(w, servers); err != nil {
		return err
	}
	if err := ValidateSettings(&w.Settings); err != nil {
		return wrapWorldField(err, "settings", "")
	}
	return nil
}

// worldField is the field path of an object's field in an imported world.
func worldField(kind, name, field string) string { return fmt.Sprintf("%s[%s].%s", kind, name, field) }

// wrapWorldField puts an object's error under the object's path.
func wrapWorldField(err error, kind, name string) error {
	if ce, ok := err.(*models.Error); ok {
		c := *ce
		c.Field = worldField(kind, name, ce.Field)
		return &c
	}
	return err
}

// validateWorldProviders checks the providers and fills their roots; it
// returns them by uuid.
func validateWorldProviders(w *models.World) (map[string]*models.Provider, error) {
	provs := make(map[string]*models.Provider, len(w.Providers))
	names := map[string]bool{}
	for i := range w.Providers {
		p := &w.Providers[i]
		if err := validateProvider(p); err != nil {
			return nil, wrapWorldField(err, "providers", p.Name)
		}
		if provs[p.UUID] != nil {
			return nil, models.E(models.Conflict, worldField("providers", p.Name, "uuid"), "resource provider uuid %s is used twice", p.UUID)
		}
		if names[p.Name] {
			return nil, models.E(models.Conflict, worldField("providers", p.Name, "name"), "a resource provider named %q already exists", p.Name)
		}
		provs[p.UUID], names[p.Name] = p, true
	}
	// Roots: walk up each chain; a chain longer than the world is a cycle.
	for i := range w.Providers {
		p := &w.Providers[i]
		cur := p
		for steps := 0; cur.ParentUUID != nil; steps++ {
			par := provs[*cur.ParentUUID]
			if par == nil {
				return nil, models.E(models.NotFound, worldField("providers", cur.Name, "parent"), "no such parent provider %s", *cur.ParentUUID)
			}
			if steps > len(w.Providers) {
				return nil, models.E(models.Invalid, worldField("providers", p.Name, "parent"), "provider parents form a cycle through %s", p.Name)
			}
			cur = par
		}
		p.RootUUID = cur.UUID
	}
	return provs, nil
}

func validateWorldAggregates(w *models.World, provs map[string]*models.Provider) error {
	aggIDs, aggNames := map[string]bool{}, map[string]bool{}
	for i := range w.Aggregates {
		ag := &w.Aggregates[i]
		if ag.Metadata == nil {
			ag.Metadata = map[string]string{}
		}
		if err := validateAggregate(ag); err != nil {
			return wrapWorldField(err, "aggregates", ag.Name)
		}
		syncAZ(nil, ag)
		if aggIDs[ag.UUID] {
			return models.E(models.Conflict, worldField("aggregates", ag.Name, "uuid"), "aggregate uuid %s is used twice", ag.UUID)
		}
		if aggNames[ag.Name] {
			return models.E(models.Conflict, worldField("aggregates", ag.Name, "name"), "an aggregate named %q already exists", ag.Name)
		}
		aggIDs[ag.UUID], aggNames[ag.Name] = true, true
		slices.Sort(ag.Members)
		ag.Members = slices.Compact(ag.Members)
		if ag.Members == nil {
			ag.Members = []string{}
		}
		for _, m := range ag.Members {
			if provs[m] == nil {
				return models.E(models.NotFound, worldField("aggregates", ag.Name, "members"), "no such provider %s", m)
			}
		}
	}
	return nil
}

func validateWorldFlavors(w *models.World) error {
	flvIDs, flvNames := map[string]bool{}, map[string]bool{}
	for i := range w.Flavors {
		f := &w.Flavors[i]
		normaliseFlavor(f)
		if err := validateFlavor(f); err != nil {
			return wrapWorldField(err, "flavors", f.Name)
		}
		if flvIDs[f.ID] {
			return models.E(models.Conflict, worldField("flavors", f.Name, "id"), "flavor id %q is used twice", f.ID)
		}
		if flvNames[f.Name] {
			return models.E(models.Conflict, worldField("flavors", f.Name, "name"), "a flavor named %q already exists", f.Name)
		}
		flvIDs[f.ID], flvNames[f.Name] = true, true
	}
	return nil
}

// validateWorldServers checks the servers and returns their uuids.
func validateWorldServers(w *models.World) (map[string]bool, error) {
	hosts := map[string]bool{}
	for _, p := range w.Providers {
		if p.IsHost() {
			hosts[p.Name] = true
		}
	}
	servers := map[string]bool{}
	for i := range w.Servers {
		sv := &w.Servers[i]
		sv.Name = strings.TrimSpace(sv.Name)
		if servers[sv.UUID] {
			return nil, models.E(models.Conflict, worldField("servers", sv.UUID, "uuid"), "server uuid %s is used twice", sv.UUID)
		}
		servers[sv.UUID] = true
		if sv.Host != "" && !hosts[sv.Host] {
			return nil, models.E(models.NotFound, worldField("servers", sv.Name, "host"), "no host named %q", sv.Host)
		}
	}
	return servers, nil
}

// validateWorldGroups checks the server groups; a server is in one group
// at most.
func validateWorldGroups(w *models.World, servers map[string]bool) error {
	inGroup := map[string]string{}
	groupIDs := map[string]bool{}
	for i := range w.ServerGroups {
		g := &w.ServerGroups[i]
		normaliseGroup(g)
		if err := validateGroup(g); err != nil {
			return wrapWorldField(err, "server_groups", g.Name)
		}
		if groupIDs[g.UUID] {
			return models.E(models.Conflict, worldField("server_groups", g.Name, "uuid"), "server group uuid %s is used twice", g.UUID)
		}
		groupIDs[g.UUID] = true
		seen := map[string]bool{}
		members := g.Members[:0:0]
		for _, m := range g.Members {
			if !servers[m] {
				return models.E(models.NotFound, worldField("server_groups", g.Name, "members"), "no such server %s", m)
			}
			if other, ok := inGroup[m]; ok && other != g.Name {
				return models.E(models.Conflict, worldField("server_groups", g.Name, "members"), "server %s is already in server group %s", m, other)
			}
			inGroup[m] = g.Name
			if !seen[m] {
				seen[m] = true
				members = append(members, m)
			}
		}
		g.Members = members
	}
	return nil
}
