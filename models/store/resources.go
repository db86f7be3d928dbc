package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"gorm.io/gorm"

	"corral/models"
)

// This file holds the resource side of Placement: inventories, consumers
// and their allocations, and the custom resource classes and traits.
//
// A provider's Usages column is kept as the sum of its allocations: every
// allocation write recomputes it for the providers it touches, in the same
// transaction, and bumps their generations as Placement does. A provider no
// allocation ever touched keeps the usages it was imported with (the world
// format may carry usages without allocations).

// InventoryInUse is the Conflict returned when an inventory change would
// remove a class that still has allocations.
const InventoryInUse = "inventory in use"

// ReplaceInventories sets a provider's whole inventory (generation-checked;
// AnyGeneration skips the check). Removing a class that has allocations is
// a Conflict whose message starts with InventoryInUse and names the classes.
func (s *Store) ReplaceInventories(ctx context.Context, a Actor, provUUID string, generation int64, inv map[string]models.Inventory) (*models.Provider, error) {
	var out *models.Provider
	err := s.write(ctx, a, "store.ReplaceInventories", func(t *txn) (err error) {
		if out, err = t.replaceInventories(provUUID, generation, inv); err != nil {
			return err
		}
		t.touchProviders(out.UUID)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// replaceInventories is ReplaceInventories inside a write.
func (t *txn) replaceInventories(provUUID string, generation int64, inv map[string]models.Inventory) (*models.Provider, error) {
	var inUse []string
	return t.updateProvider(provUUID, generation, func(p *models.Provider) error {
		for rc := range p.Inventories {
			if _, keep := inv[rc]; keep {
				continue
			}
			if p.Usages[rc] > 0 {
				inUse = append(inUse, rc)
			}
		}
		if len(inUse) > 0 {
			sort.Strings(inUse)
			return models.E(models.Conflict, "inventories", "%s: %v", InventoryInUse, inUse)
		}
		p.Inventories = maps.Clone(inv)
		if p.Inventories == nil {
			p.Inventories = map[string]models.Inventory{}
		}
		for rc := range p.Usages {
			if _, ok := p.Inventories[rc]; !ok && p.Usages[rc] == 0 {
				delete(p.Usages, rc)
			}
		}
		return nil
	})
}

// SetTraits replaces a provider's traits (generation-checked).
func (s *Store) SetTraits(ctx context.Context, a Actor, provUUID string, generation int64, traits []string) (*models.Provider, error) {
	return s.UpdateProvider(ctx, a, provUUID, generation, func(p *models.Provider) error {
		p.Traits = slices.Clone(traits)
		return nil
	})
}

// ConsumerAllocations replaces one consumer's allocations. An empty
// Allocations list deletes them (and the consumer, as Placement does).
type ConsumerAllocations struct {
	ConsumerUUID string
	ProjectID    string
	UserID       string
	ConsumerType string
	// CheckGeneration asks for Placement's consumer-generation check
	// (microversion 1.28): Generation nil means "a new consumer".
	CheckGeneration bool
	Generation      *int64
	Allocations     []models.Allocation
}

// ConsumerGenerationError is the Conflict of a consumer-generation check:
// Current is the stored generation (nil: no such consumer), Got what the
// caller sent.
type ConsumerGenerationError struct {
	Current, Got *int64
}

func (e *ConsumerGenerationError) Error() string {
	show := func(p *int64, none string) string {
		if p == nil {
			return none
		}
		return fmt.Sprint(*p)
	}
	if e.Current == nil {
		return "consumer generation conflict - expected null but got " + show(e.Got, "None")
	}
	return "consumer generation conflict - expected " + show(e.Current, "None") + " but got " + show(e.Got, "None")
}

// AllocationError is a refused allocation: Kind is "no provider",
// "invalid inventory", "capacity" or "constraints".
type AllocationError struct {
	Kind     string
	Provider string
	Class    string
}

func (e *AllocationError) Error() string {
	switch e.Kind {
	case "no provider":
		return "No such resource provider(s): " + e.Provider
	case "capacity":
		return "Unable to create allocation for '" + e.Class + "' on resource provider '" + e.Provider + "'. The requested amount would exceed the capacity."
	case "constraints":
		return "Unable to create allocation for '" + e.Class + "' on resource provider '" + e.Provider + "'. The requested amount would violate inventory constraints."
	}
	return "Inventory for '" + e.Class + "' on resource provider '" + e.Provider + "' invalid."
}

// SetAllocations replaces the allocations of every consumer in writes, all
// in one transaction (POST /allocations, or a bulk import from a cloud):
// all of them apply or none.
func (s *Store) SetAllocations(ctx context.Context, a Actor, writes []ConsumerAllocations) error {
	if len(writes) == 0 {
		return models.E(models.Invalid, "allocations", "no allocations given")
	}
	return s.write(ctx, a, "store.SetAllocations", func(t *txn) error { return t.setAllocations(writes) })
}

// setAllocations is SetAllocations inside a write.
func (t *txn) setAllocations(writes []ConsumerAllocations) error {
	want := map[string]bool{}
	for _, w := range writes {
		for _, al := range w.Allocations {
			want[al.ProviderUUID] = true
		}
	}
	if len(want) > 0 {
		ids := make([]string, 0, len(want))
		for u := range want {
			ids = append(ids, u)
		}
		sort.Strings(ids)
		var found []string
		if err := t.tx.Model(&models.Provider{}).Where("uuid IN ?", ids).Pluck("uuid", &found).Error; err != nil {
			return err
		}
		have := map[string]bool{}
		for _, u := range found {
			have[u] = true
		}
		for _, u := range ids {
			if !have[u] {
				e := &AllocationError{Kind: "no provider", Provider: u}
				return &models.Error{Kind: models.NotFound, Field: "resource_provider", Err: e, Msg: e.Error()}
			}
		}
	}
	touched := map[string]bool{}
	for i := range writes {
		if err := t.setConsumerAllocations(&writes[i], touched); err != nil {
			return err
		}
	}
	// Consumers are not part of the world; the providers' usages are.
	t.keepsWorld()
	for u := range touched {
		t.touchProviders(u)
	}
	return t.recomputeUsages(touched, writes)
}

func (t *txn) setConsumerAllocations(w *ConsumerAllocations, touched map[string]bool) error {
	var cur models.Consumer
	res := t.tx.Where("uuid = ?", w.ConsumerUUID).Limit(1).Find(&cur)
	if res.Error != nil {
		return res.Error
	}
	exists := res.RowsAffected == 1
	if w.CheckGeneration {
		switch {
		case exists && (w.Generation == nil || *w.Generation != cur.Generation):
			g := cur.Generation
			e := &ConsumerGenerationError{Current: &g, Got: w.Generation}
			return &models.Error{Kind: models.Conflict, Field: "consumer_generation", Err: e, Msg: e.Error()}
		case !exists && w.Generation != nil:
			e := &ConsumerGenerationError{Got: w.Generation}
			return &models.Error{Kind: models.Conflict, Field: "consumer_generation", Err: e, Msg: e.Error()}
		}
	}
	var old []models.Allocation
	if err := t.tx.Where("consumer_uuid = ?", w.ConsumerUUID).Find(&old).Error; err != nil {
		return err
	}
	for _, al := range old {
		touched[al.ProviderUUID] = true
	}
	if err := t.tx.Where("consumer_uuid = ?", w.ConsumerUUID).Delete(&models.Allocation{}).Error; err != nil {
		return err
	}
	var rows []models.Allocation
	for _, al := range w.Allocations {
		if al.Used == 0 {
			continue
		}
		al.ConsumerUUID = w.ConsumerUUID
		rows = append(rows, al)
		touched[al.ProviderUUID] = true
	}
	before := &models.Consumer{UUID: cur.UUID, ProjectID: cur.ProjectID, UserID: cur.UserID, ConsumerType: cur.ConsumerType, Generation: cur.Generation, Allocations: old}
	if !exists {
		before = nil
	}
	if len(rows) == 0 {
		if exists {
			if err := t.tx.Delete(&models.Consumer{UUID: w.ConsumerUUID}).Error; err != nil {
				return err
			}
		}
		return t.audit("delete", "allocations", w.ConsumerUUID, w.ConsumerUUID, before, nil)
	}
	next := models.Consumer{UUID: w.ConsumerUUID, ProjectID: w.ProjectID, UserID: w.UserID, ConsumerType: w.ConsumerType}
	if exists {
		next.Generation = cur.Generation + 1
		if err := t.tx.Model(&models.Consumer{UUID: cur.UUID}).Where("generation = ?", cur.Generation).
			Select("project_id", "user_id", "consumer_type", "generation").Updates(&next); err.Error != nil {
			return err.Error
		} else if err.RowsAffected != 1 {
			e := &ConsumerGenerationError{Current: &cur.Generation, Got: w.Generation}
			return &models.Error{Kind: models.Conflict, Field: "consumer_generation", Err: e, Msg: e.Error()}
		}
	} else {
		// Placement creates the consumer at 0 and increments it with the
		// write, so a new consumer answers generation 1.
		next.Generation = 1
		if err := t.tx.Create(&next).Error; err != nil {
			return err
		}
	}
	// The consumer row first: an allocation references its consumer.
	if err := t.tx.Create(&rows).Error; err != nil {
		return err
	}
	next.Allocations = rows
	action := "update"
	if !exists {
		action = "create"
	}
	return t.audit(action, "allocations", w.ConsumerUUID, w.ConsumerUUID, before, &next)
}

// recomputeUsages sets each touched provider's usages to the sum of its
// allocations, checks the new allocations against capacity and bumps the
// providers' generations.
func (t *txn) recomputeUsages(touched map[string]bool, writes []ConsumerAllocations) error {
	ids := make([]string, 0, len(touched))
	for u := range touched {
		ids = append(ids, u)
	}
	sort.Strings(ids)
	var provs []models.Provider
	if err := t.tx.Where("uuid IN ?", ids).Find(&provs).Error; err != nil {
		return err
	}
	byID := map[string]*models.Provider{}
	for i := range provs {
		byID[provs[i].UUID] = &provs[i]
	}
	for _, u := range ids {
		if byID[u] == nil {
			return &models.Error{Kind: models.NotFound, Field: "resource_provider", Err: &AllocationError{Kind: "no provider", Provider: u}, Msg: "No such resource provider(s): " + u}
		}
	}
	type sum struct {
		ProviderUUID  string
		ResourceClass string
		Total         int64
	}
	var sums []sum
	if err := t.tx.Model(&models.Allocation{}).Select("provider_uuid, resource_class, SUM(used) AS total").
		Where("provider_uuid IN ?", ids).Group("provider_uuid, resource_class").Scan(&sums).Error; err != nil {
		return err
	}
	usage := map[string]map[string]int64{}
	for _, s := range sums {
		if usage[s.ProviderUUID] == nil {
			usage[s.ProviderUUID] = map[string]int64{}
		}
		usage[s.ProviderUUID][s.ResourceClass] = s.Total
	}
	// Check what the writes ask for against the new totals, in the order
	// Placement checks them (provider, then class, as sent).
	for _, w := range writes {
		for _, al := range w.Allocations {
			if al.Used == 0 {
				continue
			}
			p := byID[al.ProviderUUID]
			raw, ok := p.Inventories[al.ResourceClass]
			if !ok {
				return allocErr("invalid inventory", p.UUID, al.ResourceClass)
			}
			inv := normalizedInventory(raw)
			if al.Used < inv.MinUnit || al.Used > inv.MaxUnit || al.Used%inv.StepSize != 0 {
				return allocErr("constraints", p.UUID, al.ResourceClass)
			}
			if float64(usage[p.UUID][al.ResourceClass]) > float64(inv.Total-inv.Reserved)*inv.AllocationRatio {
				return allocErr("capacity", p.UUID, al.ResourceClass)
			}
		}
	}
	for _, u := range ids {
		p := byID[u]
		next := usage[u]
		if next == nil {
			next = map[string]int64{}
		}
		res := t.tx.Model(&models.Provider{UUID: u}).Where("generation = ?", p.Generation).
			Select("usages", "generation", "updated_at").
			Updates(&models.Provider{Usages: next, Generation: p.Generation + 1, UpdatedAt: t.now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return staleErr("resource provider", p.Name)
		}
	}
	return nil
}

func allocErr(kind, prov, class string) error {
	e := &AllocationError{Kind: kind, Provider: prov, Class: class}
	return &models.Error{Kind: models.Conflict, Field: "allocations", Err: e, Msg: e.Error()}
}

// normalizedInventory fills Placement's defaults (min_unit 1, max_unit
// 2147483647, step_size 1, allocation_ratio 1.0) into zero fields.
func normalizedInventory(inv models.Inventory) models.Inventory {
	if inv.MinUnit == 0 {
		inv.MinUnit = 1
	}
	if inv.MaxUnit == 0 {
		inv.MaxUnit = 2147483647
	}
	if inv.StepSize == 0 {
		inv.StepSize = 1
	}
	if inv.AllocationRatio == 0 {
		inv.AllocationRatio = 1
	}
	return inv
}

// ConsumerAllocationsOf returns a consumer and its allocations; NotFound
// when it has none.
func (s *Store) ConsumerAllocationsOf(ctx context.Context, consumerUUID string) (*models.Consumer, error) {
	var c models.Consumer
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		res := tx.Where("uuid = ?", consumerUUID).Limit(1).Find(&c)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return models.E(models.NotFound, "consumer", "consumer %s not found", consumerUUID)
		}
		return tx.Where("consumer_uuid = ?", consumerUUID).Order("provider_uuid, resource_class").Find(&c.Allocations).Error
	})
	if err != nil {
		return nil, mapErr("store.ConsumerAllocationsOf", err)
	}
	return &c, nil
}

// ProviderAllocations returns every allocation against a provider with
// its consumer.
func (s *Store) ProviderAllocations(ctx context.Context, provUUID string) ([]models.Consumer, error) {
	var out []models.Consumer
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var rows []models.Allocation
		if err := tx.Where("provider_uuid = ?", provUUID).Order("consumer_uuid, resource_class").Find(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		var ids []string
		by := map[string][]models.Allocation{}
		for _, r := range rows {
			if by[r.ConsumerUUID] == nil {
				ids = append(ids, r.ConsumerUUID)
			}
			by[r.ConsumerUUID] = append(by[r.ConsumerUUID], r)
		}
		if err := tx.Where("uuid IN ?", ids).Order("uuid").Find(&out).Error; err != nil {
			return err
		}
		for i := range out {
			out[i].Allocations = by[out[i].UUID]
		}
		return nil
	})
	return out, mapErr("store.ProviderAllocations", err)
}

// ProjectUsages sums the allocations of a project's consumers (and a
// user's, when userID is not empty) per consumer type and class.
func (s *Store) ProjectUsages(ctx context.Context, projectID, userID string) (map[string]map[string]int64, map[string]int, error) {
	usages := map[string]map[string]int64{}
	counts := map[string]int{}
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		q := tx.Model(&models.Consumer{}).Where("project_id = ?", projectID)
		if userID != "" {
			q = q.Where("user_id = ?", userID)
		}
		var cons []models.Consumer
		if err := q.Find(&cons).Error; err != nil {
			return err
		}
		if len(cons) == 0 {
			return nil
		}
		typ := map[string]string{}
		var ids []string
		for _, c := range cons {
			t := c.ConsumerType
			if t == "" {
				t = "unknown"
			}
			typ[c.UUID] = t
			ids = append(ids, c.UUID)
			counts[t]++
		}
		var rows []models.Allocation
		if err := tx.Where("consumer_uuid IN ?", ids).Find(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			t := typ[r.ConsumerUUID]
			if usages[t] == nil {
				usages[t] = map[string]int64{}
			}
			usages[t][r.ResourceClass] += r.Used
		}
		return nil
	})
	return usages, counts, mapErr("store.ProjectUsages", err)
}

// CustomResourceClasses lists the custom resource classes, sorted.
func (s *Store) CustomResourceClasses(ctx context.Context) ([]string, error) {
	var rows []models.ResourceClass
	err := s.readTx(ctx, func(tx *gorm.DB) error { return tx.Order("name").Find(&rows).Error })
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Name
	}
	return out, mapErr("store.CustomResourceClasses", err)
}

// CustomTraits lists the custom traits, sorted.
func (s *Store) CustomTraits(ctx context.Context) ([]string, error) {
	var rows []models.Trait
	err := s.readTx(ctx, func(tx *gorm.DB) error { return tx.Order("name").Find(&rows).Error })
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Name
	}
	return out, mapErr("store.CustomTraits", err)
}

// CreateResourceClass adds a custom class; an existing one is a Conflict.
func (s *Store) CreateResourceClass(ctx context.Context, a Actor, name string) error {
	return s.write(ctx, a, "store.CreateResourceClass", func(t *txn) error { return t.createResourceClass(name) })
}

func (t *txn) createResourceClass(name string) error {
	t.keepsWorld() // the catalog, not the world
	var n int64
	if err := t.tx.Model(&models.ResourceClass{}).Where("name = ?", name).Count(&n).Error; err != nil {
		return err
	}
	if n > 0 {
		return models.E(models.Conflict, "name", "Resource class %s already exists.", name)
	}
	if err := t.tx.Create(&models.ResourceClass{Name: name, CreatedAt: t.now}).Error; err != nil {
		return err
	}
	return t.audit("create", "resource_class", name, name, nil, map[string]string{"name": name})
}

// DeleteResourceClass removes a custom class; one used by an inventory is
// a Conflict, a missing one NotFound.
func (s *Store) DeleteResourceClass(ctx context.Context, a Actor, name string, inUse bool) error {
	return s.write(ctx, a, "store.DeleteResourceClass", func(t *txn) error { return t.deleteResourceClass(name, inUse) })
}

func (t *txn) deleteResourceClass(name string, inUse bool) error {
	t.keepsWorld() // the catalog, not the world
	if inUse {
		return models.E(models.Conflict, "name", "Cannot delete resource class %s. Class is in use in inventory.", name)
	}
	res := t.tx.Where("name = ?", name).Delete(&models.ResourceClass{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return models.E(models.NotFound, "name", "No such resource class %s.", name)
	}
	return t.audit("delete", "resource_class", name, name, map[string]string{"name": name}, nil)
}

// classInInventory reports whether some provider has an inventory of
// class name. The inventories column is a JSON object keyed by class, so
// the key with its quotes and colon is looked for, then confirmed.
func (t *txn) classInInventory(name string) (bool, error) {
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(name)
	var cands []models.Provider
	if err := t.tx.Select("uuid", "inventories").Where(`inventories LIKE ? ESCAPE '\'`, `%"`+esc+`":%`).Find(&cands).Error; err != nil {
		return false, err
	}
	for _, p := range cands {
		if _, ok := p.Inventories[name]; ok {
			return true, nil
		}
	}
	return false, nil
}

// EnsureTrait adds a custom trait; created is false when it existed.
func (s *Store) EnsureTrait(ctx context.Context, a Actor, name string) (created bool, err error) {
	err = s.write(ctx, a, "store.EnsureTrait", func(t *txn) (err error) {
		created, err = t.ensureTrait(name)
		return err
	})
	return created, err
}

func (t *txn) ensureTrait(name string) (created bool, err error) {
	t.keepsWorld() // the catalog, not the world
	var n int64
	if cerr := t.tx.Model(&models.Trait{}).Where("name = ?", name).Count(&n).Error; cerr != nil {
		return false, cerr
	}
	if n == 0 {
		created = true
		if cerr := t.tx.Create(&models.Trait{Name: name, CreatedAt: t.now}).Error; cerr != nil {
			return false, cerr
		}
	}
	return created, t.audit("ensure", "trait", name, name, nil, map[string]string{"name": name})
}

// DeleteTrait removes a custom trait (the caller has checked it is unused).
func (s *Store) DeleteTrait(ctx context.Context, a Actor, name string) error {
	return s.write(ctx, a, "store.DeleteTrait", func(t *txn) error { return t.deleteTrait(name) })
}

func (t *txn) deleteTrait(name string) error {
	t.keepsWorld() // the catalog, not the world
	res := t.tx.Where("name = ?", name).Delete(&models.Trait{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return models.E(models.NotFound, "name", "No such trait(s): %s.", name)
	}
	return t.audit("delete", "trait", name, name, map[string]string{"name": name}, nil)
}
