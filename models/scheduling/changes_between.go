package scheduling

import (
	"maps"
	"slices"

	"corral/models"
)

// ChangesBetween returns the changes that turn world a into world b for
// what drafts can change: aggregates, flavor extra specs, server groups,
// providers (with their traits and inventories), consumers' allocations
// and the settings. Objects are named by
// UUID (flavors by id) so that the list applies whatever they are called.
// Reverting an applied draft is ChangesBetween(after, before).
func ChangesBetween(a, b *models.World) []Change {
	provsA := make(map[string]*models.Provider, len(a.Providers))
	for i := range a.Providers {
		provsA[a.Providers[i].UUID] = &a.Providers[i]
	}
	// New providers first (aggregates may take them in), deleted ones last.
	out, lastChanges := providerChangesBetween(a, b, provsA)
	out = append(out, aggregateChangesBetween(a, b)...)
	out = append(out, flavorChangesBetween(a, b)...)
	out = append(out, serverGroupChangesBetween(a, b)...)
	out = append(out, providerContentChangesBetween(b, provsA)...)
	if o := SettingsOverrideBetween(a.Settings, b.Settings); o != nil {
		out = append(out, Change{Op: OpSetSettings, Settings: o})
	}
	out = append(out, consumerChangesBetween(a, b)...)
	return append(out, lastChanges...)
}

// aggregateChangesBetween: deleted aggregates lose their members first, new
// ones are created with their zone and metadata and then get their members.
func aggregateChangesBetween(a, b *models.World) []Change {
	var out []Change
	inB := map[string]*models.Aggregate{}
	for i := range b.Aggregates {
		inB[b.Aggregates[i].UUID] = &b.Aggregates[i]
	}
	inA := map[string]*models.Aggregate{}
	for i := range a.Aggregates {
		x := &a.Aggregates[i]
		inA[x.UUID] = x
		if _, ok := inB[x.UUID]; !ok {
			for _, m := range x.Members {
				out = append(out, Change{Op: OpRemoveMember, Aggregate: x.UUID, Provider: m})
			}
			out = append(out, Change{Op: OpDeleteAggregate, Aggregate: x.UUID})
		}
	}
	for i := range b.Aggregates {
		y := &b.Aggregates[i]
		x, ok := inA[y.UUID]
		if !ok {
			out = append(out, createdAggregate(y)...)
			continue
		}
		out = append(out, aggregateUpdate(x, y)...)
	}
	return out
}

// createdAggregate creates y with its zone and metadata, then adds its members.
func createdAggregate(y *models.Aggregate) []Change {
	var az *string
	if y.AvailabilityZone != nil {
		v := *y.AvailabilityZone
		az = &v
	}
	out := []Change{{Op: OpCreateAggregate, Aggregate: y.Name, UUID: y.UUID, AvailabilityZone: az, Metadata: maps.Clone(y.Metadata)}}
	for _, m := range y.Members {
		out = append(out, Change{Op: OpAddMember, Aggregate: y.UUID, Provider: m})
	}
	return out
}

// aggregateUpdate turns aggregate x into y: name, zone, metadata, members.
func aggregateUpdate(x, y *models.Aggregate) []Change {
	var out []Change
	if x.Name != y.Name {
		out = append(out, Change{Op: OpRenameAggregate, Aggregate: y.UUID, Value: y.Name})
	}
	if az := zoneOf(y); zoneOf(x) != az {
		out = append(out, Change{Op: OpSetZone, Aggregate: y.UUID, AvailabilityZone: &az})
	}
	// Nova's availability_zone key follows the zone (set_zone above).
	for _, k := range slices.Sorted(maps.Keys(x.Metadata)) {
		if _, ok := y.Metadata[k]; !ok && k != zoneKey {
			out = append(out, Change{Op: OpUnsetMetadata, Aggregate: y.UUID, Key: k})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(y.Metadata)) {
		if v, ok := x.Metadata[k]; (!ok || v != y.Metadata[k]) && k != zoneKey {
			out = append(out, Change{Op: OpSetMetadata, Aggregate: y.UUID, Key: k, Value: y.Metadata[k]})
		}
	}
	for _, m := range x.Members {
		if !slices.Contains(y.Members, m) {
			out = append(out, Change{Op: OpRemoveMember, Aggregate: y.UUID, Provider: m})
		}
	}
	for _, m := range y.Members {
		if !slices.Contains(x.Members, m) {
			out = append(out, Change{Op: OpAddMember, Aggregate: y.UUID, Provider: m})
		}
	}
	return out
}

// flavorChangesBetween: deleted flavors first (their names are free then),
// then renames, sizes and extra specs, then new ones.
func flavorChangesBetween(a, b *models.World) []Change {
	flavorsA := map[string]*models.Flavor{}
	for i := range a.Flavors {
		flavorsA[a.Flavors[i].ID] = &a.Flavors[i]
	}
	out := deletedFlavors(a, b)
	var created []Change
	for i := range b.Flavors {
		y := &b.Flavors[i]
		x, ok := flavorsA[y.ID]
		if !ok {
			created = append(created, Change{Op: OpCreateFlavor, Flavor: y.Name, UUID: y.ID,
				Size: &FlavorSize{VCPUs: y.VCPUs, RAMMB: y.RAMMB, DiskGB: y.DiskGB}, Metadata: maps.Clone(y.ExtraSpecs)})
			continue
		}
		if up := flavorUpdate(x, y); up != nil {
			out = append(out, *up)
		}
		for _, k := range slices.Sorted(maps.Keys(x.ExtraSpecs)) {
			if _, ok := y.ExtraSpecs[k]; !ok {
				out = append(out, Change{Op: OpUnsetExtraSpec, Flavor: y.ID, Key: k})
			}
		}
		for _, k := range slices.Sorted(maps.Keys(y.ExtraSpecs)) {
			if v, ok := x.ExtraSpecs[k]; !ok || v != y.ExtraSpecs[k] {
				out = append(out, Change{Op: OpSetExtraSpec, Flavor: y.ID, Key: k, Value: y.ExtraSpecs[k]})
			}
		}
	}
	return append(out, created...)
}

// serverGroupChangesBetween: deleted groups first, then members leave, then
// join, then new groups (with their members): a server is in one group at a
// time, so one moving between groups must leave before it joins.
func serverGroupChangesBetween(a, b *models.World) []Change {
	var out []Change
	groupsB := map[string]*models.ServerGroup{}
	for i := range b.ServerGroups {
		groupsB[b.ServerGroups[i].UUID] = &b.ServerGroups[i]
	}
	groupsA := map[string]*models.ServerGroup{}
	for i := range a.ServerGroups {
		x := &a.ServerGroups[i]
		groupsA[x.UUID] = x
		if _, ok := groupsB[x.UUID]; !ok {
			out = append(out, Change{Op: OpDeleteServerGroup, ServerGroup: x.UUID})
		}
	}
	for i := range a.ServerGroups {
		x := &a.ServerGroups[i]
		if y, ok := groupsB[x.UUID]; ok {
			for _, m := range x.Members {
				if !slices.Contains(y.Members, m) {
					out = append(out, Change{Op: OpRemoveGroupMember, ServerGroup: x.UUID, Server: m})
				}
			}
		}
	}
	for i := range a.ServerGroups {
		x := &a.ServerGroups[i]
		if y, ok := groupsB[x.UUID]; ok {
			for _, m := range y.Members {
				if !slices.Contains(x.Members, m) {
					out = append(out, Change{Op: OpAddGroupMember, ServerGroup: x.UUID, Server: m})
				}
			}
		}
	}
	for i := range b.ServerGroups {
		y := &b.ServerGroups[i]
		if _, ok := groupsA[y.UUID]; !ok {
			out = append(out, Change{Op: OpCreateServerGroup, ServerGroup: y.Name, UUID: y.UUID, Project: y.ProjectID, User: y.UserID,
				Policy: y.Policy, Rules: maps.Clone(y.Rules), Members: slices.Clone(y.Members)})
		}
	}
	return out
}

// providerContentChangesBetween: traits and inventories of the providers
// both worlds have (provsA indexes world a's providers by UUID).
func providerContentChangesBetween(b *models.World, provsA map[string]*models.Provider) []Change {
	var out []Change
	for i := range b.Providers {
		y := &b.Providers[i]
		x, ok := provsA[y.UUID]
		if !ok || x == y {
			continue
		}
		for _, t := range x.Traits {
			if !slices.Contains(y.Traits, t) {
				out = append(out, Change{Op: OpRemoveTrait, Provider: y.UUID, Trait: t})
			}
		}
		for _, t := range y.Traits {
			if !slices.Contains(x.Traits, t) {
				out = append(out, Change{Op: OpAddTrait, Provider: y.UUID, Trait: t})
			}
		}
		for _, rc := range slices.Sorted(maps.Keys(x.Inventories)) {
			if _, ok := y.Inventories[rc]; !ok {
				out = append(out, Change{Op: OpDeleteInventory, Provider: y.UUID, ResourceClass: rc})
			}
		}
		for _, rc := range slices.Sorted(maps.Keys(y.Inventories)) {
			if v, ok := x.Inventories[rc]; !ok || v != y.Inventories[rc] {
				inv := y.Inventories[rc]
				out = append(out, Change{Op: OpSetInventory, Provider: y.UUID, ResourceClass: rc, Inventory: &inv})
			}
		}
	}
	return out
}

func zoneOf(a *models.Aggregate) string {
	if a.AvailabilityZone == nil {
		return ""
	}
	return *a.AvailabilityZone
}
