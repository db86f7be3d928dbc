package store

import (
	"fmt"
	"maps"
	"slices"

	"corral/models"
	"corral/models/scheduling"
)

// applyPlacementChanges writes changes of Placement's resources
// (scheduling.PlacementOps) through the checks of the direct edits they
// replace, and returns what undoes them. changes is one change, or a run
// of set_allocations written as one; offset is the first one's place in
// the whole list.
func (t *txn) applyPlacementChanges(changes []scheduling.Change, offset int) ([]scheduling.Change, error) {
	c := changes[0]
	at := fmt.Sprintf("changes[%d]", offset)
	switch c.Op {
	case scheduling.OpSetAllocations:
		return t.applyAllocationChanges(changes, offset)
	case scheduling.OpCreateProvider:
		return t.applyCreateProvider(c, at)
	case scheduling.OpCreateResourceClass:
		if err := t.createResourceClass(c.ResourceClass); err != nil {
			return nil, err
		}
		return []scheduling.Change{{Op: scheduling.OpDeleteResourceClass, ResourceClass: c.ResourceClass}}, nil
	case scheduling.OpDeleteResourceClass:
		inUse, err := t.classInInventory(c.ResourceClass)
		if err != nil {
			return nil, err
		}
		if err := t.deleteResourceClass(c.ResourceClass, inUse); err != nil {
			return nil, err
		}
		return []scheduling.Change{{Op: scheduling.OpCreateResourceClass, ResourceClass: c.ResourceClass}}, nil
	case scheduling.OpCreateTrait:
		created, err := t.ensureTrait(c.Trait)
		if err != nil || !created {
			return nil, err
		}
		return []scheduling.Change{{Op: scheduling.OpDeleteTrait, Trait: c.Trait}}, nil
	case scheduling.OpDeleteTrait:
		if err := t.deleteTrait(c.Trait); err != nil {
			return nil, err
		}
		return []scheduling.Change{{Op: scheduling.OpCreateTrait, Trait: c.Trait}}, nil
	}
	if c.Provider == "" {
		return nil, models.E(models.Invalid, at+".provider", "%s needs a provider", c.Op)
	}
	cur, err := findProvider(t.tx, c.Provider)
	if err != nil {
		return nil, err
	}
	return t.applyProviderChange(cur, c, at)
}

// applyProviderChange writes one change of an existing provider, cur.
func (t *txn) applyProviderChange(cur *models.Provider, c scheduling.Change, at string) ([]scheduling.Change, error) {
	undo := func(f scheduling.PlacementFields) []scheduling.Change {
		return []scheduling.Change{{Op: c.Op, Provider: cur.UUID, PlacementFields: f}}
	}
	switch c.Op {
	case scheduling.OpDeleteProvider:
		aggs, err := t.deleteProvider(cur)
		if err != nil {
			return nil, err
		}
		return recreateProvider(cur, aggs), nil
	case scheduling.OpRenameProvider:
		// Placement saves a rename without moving the generation.
		if err := t.editProvider(cur, func(p *models.Provider) { p.Name = c.NewName }, KeepGeneration()); err != nil {
			return nil, err
		}
		return undo(scheduling.PlacementFields{NewName: cur.Name}), nil
	case scheduling.OpSetProviderParent:
		// Nor a move.
		if err := t.editProvider(cur, func(p *models.Provider) { p.ParentUUID = c.Parent }, KeepGeneration()); err != nil {
			return nil, err
		}
		parent := ptrStr(cur.ParentUUID)
		return undo(scheduling.PlacementFields{Parent: &parent}), nil
	case scheduling.OpSetInventories:
		if _, err := t.replaceInventories(cur.UUID, AnyGeneration, c.Inventories); err != nil {
			return nil, err
		}
		t.touchProviders(cur.UUID)
		return undo(scheduling.PlacementFields{Inventories: orEmpty(cur.Inventories)}), nil
	case scheduling.OpSetTraits:
		if err := t.editProvider(cur, func(p *models.Provider) { p.Traits = slices.Clone(c.Traits) }); err != nil {
			return nil, err
		}
		return undo(scheduling.PlacementFields{Traits: slices.Clone(cur.Traits)}), nil
	case scheduling.OpSetProviderAggregates:
		// Placement moves the generation only when the writer names it
		// (from microversion 1.19).
		var o writeOptions
		o.keepGeneration = c.Generation == nil
		var existing []string
		if len(c.Aggregates) > 0 {
			if err := t.tx.Model(&models.Aggregate{}).Where("uuid IN ?", c.Aggregates).Pluck("uuid", &existing).Error; err != nil {
				return nil, err
			}
		}
		had, _, err := t.setProviderAggregates(cur, c.Aggregates, o)
		if err != nil {
			return nil, err
		}
		// The aggregates made on demand go again with the undo.
		out := undo(scheduling.PlacementFields{Aggregates: had})
		for _, u := range uniqueSorted(c.Aggregates) {
			if !slices.Contains(existing, u) {
				out = append(out, scheduling.Change{Op: scheduling.OpDeleteAggregate, Aggregate: u})
			}
		}
		return out, nil
	}
	return nil, models.E(models.Invalid, at+".op", "unknown change %q", c.Op)
}

// editProvider changes provider cur with fn (any generation: the change's
// generation was checked before).
func (t *txn) editProvider(cur *models.Provider, fn func(*models.Provider), opts ...WriteOption) error {
	_, err := t.updateProvider(cur.UUID, AnyGeneration, func(p *models.Provider) error {
		fn(p)
		return nil
	}, opts...)
	if err == nil {
		t.touchProviders(cur.UUID)
	}
	return err
}

func (t *txn) applyCreateProvider(c scheduling.Change, at string) ([]scheduling.Change, error) {
	p := &models.Provider{Name: c.Provider, UUID: c.UUID}
	if c.Parent != nil && *c.Parent != "" {
		parent := *c.Parent
		p.ParentUUID = &parent
	}
	if err := t.createProvider(p); err != nil {
		return nil, err
	}
	t.touchProviders(p.UUID)
	return []scheduling.Change{{Op: scheduling.OpDeleteProvider, Provider: p.UUID}}, nil
}

// recreateProvider is what undoes deleting provider p, which was in aggs.
func recreateProvider(p *models.Provider, aggs []string) []scheduling.Change {
	var parent *string
	if p.ParentUUID != nil {
		v := *p.ParentUUID
		parent = &v
	}
	out := []scheduling.Change{{Op: scheduling.OpCreateProvider, Provider: p.Name, UUID: p.UUID,
		PlacementFields: scheduling.PlacementFields{Parent: parent}}}
	if len(p.Inventories) > 0 {
		out = append(out, scheduling.Change{Op: scheduling.OpSetInventories, Provider: p.UUID,
			PlacementFields: scheduling.PlacementFields{Inventories: maps.Clone(p.Inventories)}})
	}
	if len(p.Traits) > 0 {
		out = append(out, scheduling.Change{Op: scheduling.OpSetTraits, Provider: p.UUID,
			PlacementFields: scheduling.PlacementFields{Traits: slices.Clone(p.Traits)}})
	}
	if len(aggs) > 0 {
		out = append(out, scheduling.Change{Op: scheduling.OpSetProviderAggregates, Provider: p.UUID,
			PlacementFields: scheduling.PlacementFields{Aggregates: slices.Clone(aggs)}})
	}
	return out
}

func orEmpty(m map[string]models.Inventory) map[string]models.Inventory {
	if m == nil {
		return map[string]models.Inventory{}
	}
	return maps.Clone(m)
}

// applyAllocationChanges replaces the allocations of the consumers a run
// of set_allocations names, as one write: usages and capacity are counted
// once, and each provider's generation moves once.
func (t *txn) applyAllocationChanges(changes []scheduling.Change, offset int) ([]scheduling.Change, error) {
	writes := make([]ConsumerAllocations, len(changes))
	var revert []scheduling.Change
	for i, c := range changes {
		if !models.ValidUUID(c.Consumer) {
			return nil, models.E(models.Invalid, fmt.Sprintf("changes[%d].consumer", offset+i), "%q is not a consumer UUID", c.Consumer)
		}
		w := ConsumerAllocations{ConsumerUUID: c.Consumer, ProjectID: c.Project, UserID: c.User, ConsumerType: c.ConsumerType}
		if c.Generation != nil {
			w.CheckGeneration = true
			if *c.Generation != scheduling.NoGeneration {
				g := *c.Generation
				w.Generation = &g
			}
		}
		for _, a := range c.Allocations {
			w.Allocations = append(w.Allocations, models.Allocation{ProviderUUID: a.Provider, ResourceClass: a.ResourceClass, Used: a.Used})
		}
		writes[i] = w
		before, err := t.consumerBefore(c.Consumer)
		if err != nil {
			return nil, err
		}
		revert = append(revert, before)
	}
	if err := t.setAllocations(writes); err != nil {
		return nil, err
	}
	slices.Reverse(revert)
	return revert, nil
}

// consumerBefore is the set_allocations that restores a consumer as it is
// now (no allocations when there is none).
func (t *txn) consumerBefore(id string) (scheduling.Change, error) {
	var c models.Consumer
	res := t.tx.Where("uuid = ?", id).Limit(1).Find(&c)
	if res.Error != nil {
		return scheduling.Change{}, res.Error
	}
	if res.RowsAffected == 0 {
		return scheduling.Change{Op: scheduling.OpSetAllocations, PlacementFields: scheduling.PlacementFields{Consumer: id}}, nil
	}
	if err := t.tx.Where("consumer_uuid = ?", id).Order("provider_uuid, resource_class").Find(&c.Allocations).Error; err != nil {
		return scheduling.Change{}, err
	}
	return scheduling.AllocationsChange(&c), nil
}
