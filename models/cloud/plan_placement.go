package cloud

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"corral/models"
	"corral/models/scheduling"
)

// catalog plans the traits and resource classes the changes create or
// delete by name (a world does not hold the catalog): creates first,
// deletes last.
func (pl *planner) catalog(changes []scheduling.Change) {
	for _, c := range changes {
		switch c.Op {
		case scheduling.OpCreateTrait:
			pl.catalogCreates = append(pl.catalogCreates, Step{Kind: "trait_create", Object: "trait", Aggregate: c.Trait, Service: "placement",
				Method: "PUT", Path: "/traits/" + c.Trait, ensure: []string{c.Trait}, Openstack: "openstack --os-placement-api-version 1.6 trait create " + c.Trait})
		case scheduling.OpCreateResourceClass:
			pl.catalogCreates = append(pl.catalogCreates, Step{Kind: "resource_class_create", Object: "resource_class", Aggregate: c.ResourceClass, Service: "placement",
				Method: "PUT", Path: "/resource_classes/" + c.ResourceClass, ensure: []string{c.ResourceClass},
				Openstack: "openstack --os-placement-api-version 1.7 resource class create " + c.ResourceClass})
		case scheduling.OpDeleteTrait:
			pl.catalogDeletes = append(pl.catalogDeletes, Step{Kind: "trait_delete", Object: "trait", Aggregate: c.Trait, Service: "placement",
				Method: "DELETE", Path: "/traits/" + c.Trait, Openstack: "openstack --os-placement-api-version 1.6 trait delete " + c.Trait,
				undo: []scheduling.Change{{Op: scheduling.OpCreateTrait, Trait: c.Trait}}})
		case scheduling.OpDeleteResourceClass:
			pl.catalogDeletes = append(pl.catalogDeletes, Step{Kind: "resource_class_delete", Object: "resource_class", Aggregate: c.ResourceClass, Service: "placement",
				Method: "DELETE", Path: "/resource_classes/" + c.ResourceClass, Openstack: "openstack resource class delete " + c.ResourceClass,
				undo: []scheduling.Change{{Op: scheduling.OpCreateResourceClass, ResourceClass: c.ResourceClass}}})
		}
	}
}

// providers plans Placement's provider calls: creates (parents first),
// renames and moves, traits, inventories, deletes (children first). A
// compute host's provider is nova-compute's: it is neither created,
// renamed, moved nor deleted here.
func (pl *planner) providers(live, next *models.World) error {
	old := map[string]*models.Provider{}
	for i := range live.Providers {
		old[live.Providers[i].UUID] = &live.Providers[i]
	}
	var created []models.Provider
	for _, p := range next.Providers {
		o := old[p.UUID]
		if o == nil {
			created = append(created, p)
			o = &models.Provider{UUID: p.UUID, Name: p.Name}
		} else if err := pl.providerUpdate(o, p); err != nil {
			return err
		}
		pl.traitSteps(o, p)
		pl.inventorySteps(o, p)
	}
	depth := func(w *models.World, u string) int {
		n := 0
		for p := findProv(w, u); p != nil && p.ParentUUID != nil && n < 64; p = findProv(w, *p.ParentUUID) {
			n++
		}
		return n
	}
	slices.SortStableFunc(created, func(a, b models.Provider) int { return depth(next, a.UUID) - depth(next, b.UUID) })
	for _, p := range created {
		pl.creates = append(pl.creates, providerCreateStep(p))
	}
	var deleted []models.Provider
	for _, p := range live.Providers {
		if pl.gone[p.UUID] {
			if h, ok := pl.hostOf[p.UUID]; ok {
				return models.E(models.Invalid, "provider", "provider %s is compute host %s's: nova-compute keeps it — delete the compute service instead (openstack compute service delete)", p.Name, h)
			}
			deleted = append(deleted, p)
		}
	}
	slices.SortStableFunc(deleted, func(a, b models.Provider) int { return depth(live, b.UUID) - depth(live, a.UUID) })
	for _, p := range deleted {
		pl.deletes = append(pl.deletes, pl.providerDeleteStep(p))
	}
	return nil
}

func findProv(w *models.World, u string) *models.Provider {
	for i := range w.Providers {
		if w.Providers[i].UUID == u {
			return &w.Providers[i]
		}
	}
	return nil
}

func providerCreateStep(p models.Provider) Step {
	body := map[string]any{"name": p.Name, "uuid": p.UUID}
	cmd := "openstack --os-placement-api-version 1.20 resource provider create --uuid " + p.UUID
	if p.ParentUUID != nil {
		body["parent_provider_uuid"] = *p.ParentUUID
		cmd += " --parent-provider " + *p.ParentUUID
	}
	return Step{Kind: "provider_create", Object: "provider", Aggregate: p.Name, Provider: p.UUID, ProviderName: p.Name, id: p.UUID,
		Service: "placement", Method: "POST", Path: "/resource_providers", Body: body, Openstack: cmd + " " + shq(p.Name),
		undo: []scheduling.Change{{Op: scheduling.OpDeleteProvider, Provider: p.UUID}}}
}

// providerUpdate plans a provider's new name (with the renames) or parent
// (after the creates: the parent may be new).
func (pl *planner) providerUpdate(o *models.Provider, p models.Provider) error {
	rename, move := o.Name != p.Name, ptrStr(o.ParentUUID) != ptrStr(p.ParentUUID)
	if !rename && !move {
		return nil
	}
	if h, ok := pl.hostOf[p.UUID]; ok {
		return models.E(models.Invalid, "provider", "provider %s is compute host %s's: nova-compute names and places it — corral does not rename or move it", o.Name, h)
	}
	step := func(name string, parent *string, undo scheduling.Change) Step {
		body := map[string]any{"name": name, "parent_provider_uuid": nil}
		cmd := "openstack --os-placement-api-version 1.37 resource provider set --name " + shq(name)
		if parent != nil {
			body["parent_provider_uuid"] = *parent
			cmd += " --parent-provider " + *parent
		}
		return Step{Kind: "provider_update", Object: "provider", Aggregate: name, Provider: p.UUID, ProviderName: name, id: p.UUID,
			Service: "placement", Method: "PUT", Path: "/resource_providers/" + p.UUID, Body: body, Openstack: cmd + " " + p.UUID,
			undo: []scheduling.Change{undo}}
	}
	if rename {
		pl.renames = append(pl.renames, step(p.Name, o.ParentUUID,
			scheduling.Change{Op: scheduling.OpRenameProvider, Provider: p.UUID, PlacementFields: scheduling.PlacementFields{NewName: o.Name}}))
	}
	if move {
		was := ptrStr(o.ParentUUID)
		pl.reparents = append(pl.reparents, step(p.Name, p.ParentUUID,
			scheduling.Change{Op: scheduling.OpSetProviderParent, Provider: p.UUID, PlacementFields: scheduling.PlacementFields{Parent: &was}}))
	}
	return nil
}

// providerDeleteStep deletes provider p (Placement drops its inventories,
// traits and memberships with it); the undo makes it again with them.
func (pl *planner) providerDeleteStep(p models.Provider) Step {
	undo := []scheduling.Change{{Op: scheduling.OpCreateProvider, Provider: p.Name, UUID: p.UUID, PlacementFields: scheduling.PlacementFields{Parent: p.ParentUUID}}}
	if len(p.Inventories) > 0 {
		undo = append(undo, scheduling.Change{Op: scheduling.OpSetInventories, Provider: p.UUID, PlacementFields: scheduling.PlacementFields{Inventories: maps.Clone(p.Inventories)}})
	}
	if len(p.Traits) > 0 {
		undo = append(undo, scheduling.Change{Op: scheduling.OpSetTraits, Provider: p.UUID, PlacementFields: scheduling.PlacementFields{Traits: slices.Clone(p.Traits)}})
	}
	if kp := pl.kept.Placement.Providers[p.UUID]; kp != nil && len(kp.Aggregates) > 0 {
		undo = append(undo, scheduling.Change{Op: scheduling.OpSetProviderAggregates, Provider: p.UUID, PlacementFields: scheduling.PlacementFields{Aggregates: slices.Clone(kp.Aggregates)}})
	}
	return Step{Kind: "provider_delete", Object: "provider", Aggregate: p.Name, Provider: p.UUID, ProviderName: p.Name, id: p.UUID,
		Service: "placement", Method: "DELETE", Path: "/resource_providers/" + p.UUID, Openstack: "openstack resource provider delete " + p.UUID, undo: undo}
}

// traitSteps adds and removes a provider's traits in Placement, guarded by
// its generation (re-read when the call is made): additions with the
// sets, removals with the unsets. A custom trait no provider carried is
// created first when Placement does not know it.
func (pl *planner) traitSteps(o *models.Provider, pr models.Provider) {
	a, b := setOf(o.Traits), setOf(pr.Traits)
	var add, remove []string
	for _, t := range slices.Sorted(maps.Keys(b)) {
		if !a[t] {
			add = append(add, t)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(a)) {
		if !b[t] {
			remove = append(remove, t)
		}
	}
	var gen int64
	if kp := pl.kept.Placement.Providers[pr.UUID]; kp != nil {
		gen = kp.Generation
	}
	known := pl.knownTraits()
	step := func(traits, add, remove []string) Step {
		var flags []string
		for _, t := range traits {
			flags = append(flags, "--trait "+t)
		}
		var undo []scheduling.Change
		var ensure []string
		for _, t := range add {
			undo = append(undo, scheduling.Change{Op: scheduling.OpRemoveTrait, Provider: pr.UUID, Trait: t})
			if strings.HasPrefix(t, "CUSTOM_") && !known[t] {
				ensure = append(ensure, t)
			}
		}
		for _, t := range remove {
			undo = append(undo, scheduling.Change{Op: scheduling.OpAddTrait, Provider: pr.UUID, Trait: t})
		}
		return Step{Kind: "provider_traits", Object: "provider", Aggregate: pr.Name, Provider: pr.UUID, ProviderName: pr.Name, Service: "placement",
			Method: "PUT", Path: "/resource_providers/" + pr.UUID + "/traits",
			Body:      map[string]any{"traits": traits, "resource_provider_generation": gen},
			Openstack: "openstack --os-placement-api-version 1.6 resource provider trait set " + strings.Join(flags, " ") + " " + pr.UUID,
			traitsAdd: add, traitsRemove: remove, ensure: ensure, undo: undo}
	}
	if len(add) > 0 {
		// The set once the additions are made (removals come later).
		pl.traitSets = append(pl.traitSets, step(sorted(append(slices.Clone(o.Traits), add...)), add, nil))
	}
	if len(remove) > 0 {
		pl.unsets = append(pl.unsets, step(sorted(pr.Traits), nil, remove))
	}
}

// knownTraits are the traits some provider carried at the last sync.
func (pl *planner) knownTraits() map[string]bool {
	if pl.traits == nil {
		pl.traits = map[string]bool{}
		for _, kp := range pl.kept.Placement.Providers {
			for _, t := range kp.Traits {
				pl.traits[t] = true
			}
		}
	}
	return pl.traits
}

// inventorySteps sets and removes a provider's inventories: classes set
// with the sets, classes removed with the unsets, each a PUT of the whole
// inventory at the generation read when the call is made. A custom class
// Placement did not list is created first.
func (pl *planner) inventorySteps(o *models.Provider, pr models.Provider) {
	set, removed := map[string]*models.Inventory{}, map[string]*models.Inventory{}
	var setUndo, removeUndo []scheduling.Change
	for _, rc := range slices.Sorted(maps.Keys(pr.Inventories)) {
		inv := pr.Inventories[rc]
		ov, ok := o.Inventories[rc]
		if ok && ov == inv {
			continue
		}
		set[rc] = &inv
		if ok {
			setUndo = append(setUndo, scheduling.Change{Op: scheduling.OpSetInventory, Provider: pr.UUID, ResourceClass: rc, Inventory: &ov})
		} else {
			setUndo = append(setUndo, scheduling.Change{Op: scheduling.OpDeleteInventory, Provider: pr.UUID, ResourceClass: rc})
		}
	}
	for _, rc := range slices.Sorted(maps.Keys(o.Inventories)) {
		if _, ok := pr.Inventories[rc]; !ok {
			removed[rc] = nil
			ov := o.Inventories[rc]
			removeUndo = append(removeUndo, scheduling.Change{Op: scheduling.OpSetInventory, Provider: pr.UUID, ResourceClass: rc, Inventory: &ov})
		}
	}
	classes := setOf(pl.kept.Placement.ResourceClasses)
	step := func(inv map[string]*models.Inventory, undo []scheduling.Change) Step {
		var ensure, parts []string
		for _, rc := range slices.Sorted(maps.Keys(inv)) {
			if i := inv[rc]; i != nil {
				parts = append(parts, fmt.Sprintf("--resource %s:total=%d", rc, i.Total))
				if strings.HasPrefix(rc, "CUSTOM_") && !classes[rc] {
					ensure = append(ensure, rc)
				}
			} else {
				parts = append(parts, "--resource-class "+rc)
			}
		}
		cmd := "openstack resource provider inventory set --amend " + strings.Join(parts, " ") + " " + pr.UUID
		if len(inv) > 0 && slices.ContainsFunc(slices.Collect(maps.Values(inv)), func(i *models.Inventory) bool { return i == nil }) {
			cmd = "openstack resource provider inventory delete " + strings.Join(parts, " ") + " " + pr.UUID
		}
		return Step{Kind: "provider_inventories", Object: "provider", Aggregate: pr.Name, Provider: pr.UUID, ProviderName: pr.Name, Service: "placement",
			Method: "PUT", Path: "/resource_providers/" + pr.UUID + "/inventories", Openstack: cmd, inv: inv, ensure: ensure, undo: undo}
	}
	if len(set) > 0 {
		pl.sets = append(pl.sets, step(set, setUndo))
	}
	if len(removed) > 0 {
		pl.unsets = append(pl.unsets, step(removed, removeUndo))
	}
}

func ptrStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
