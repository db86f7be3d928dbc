package store

import (
	"fmt"
	"slices"

	"gorm.io/gorm"

	"corral/models"
)

// The world's consumers: an export carries Placement's consumers with
// their allocations, and an import writes them back, so that export →
// import keeps inventories, usages and allocations exactly.

// loadConsumers reads every consumer with its allocations, ordered by
// consumer, then provider and class.
func loadConsumers(tx *gorm.DB) ([]models.Consumer, error) {
	var cs []models.Consumer
	if err := tx.Order("uuid").Find(&cs).Error; err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, nil
	}
	idx := make(map[string]int, len(cs))
	for i := range cs {
		idx[cs[i].UUID] = i
	}
	rows, err := tx.Model(&models.Allocation{}).Select("consumer_uuid, provider_uuid, resource_class, used").
		Order("consumer_uuid, provider_uuid, resource_class").Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var a models.Allocation
		if err := rows.Scan(&a.ConsumerUUID, &a.ProviderUUID, &a.ResourceClass, &a.Used); err != nil {
			return nil, err
		}
		if i, ok := idx[a.ConsumerUUID]; ok {
			cs[i].Allocations = append(cs[i].Allocations, a)
		}
	}
	return cs, rows.Err()
}

// mergeConsumers is the consumers after an import: with replace, the
// world's; otherwise the current ones with the world's replacing those of
// the same uuid. Allocations on providers the import removed go; a
// consumer left without allocations goes. A consumer without a generation
// in the world gets the next one (1 when new), as a write would.
func mergeConsumers(cur, in []models.Consumer, replace bool, merged *models.World) ([]models.Consumer, error) {
	old := make(map[string]models.Consumer, len(cur))
	for _, c := range cur {
		old[c.UUID] = c
	}
	byUUID := map[string]models.Consumer{}
	if !replace {
		for _, c := range cur {
			byUUID[c.UUID] = c
		}
	}
	provs := make(map[string]bool, len(merged.Providers))
	for _, p := range merged.Providers {
		provs[p.UUID] = true
	}
	for i, c := range in {
		for _, a := range c.Allocations {
			if !provs[a.ProviderUUID] {
				return nil, models.E(models.Invalid, fmt.Sprintf("allocations[%d].resources", i), "no provider %q", a.ProviderUUID)
			}
		}
		if c.Generation == 0 {
			c.Generation = 1
			if o, ok := old[c.UUID]; ok {
				c.Generation = o.Generation + 1
			}
		}
		byUUID[c.UUID] = c
	}
	out := make([]models.Consumer, 0, len(byUUID))
	for _, c := range byUUID {
		var keep []models.Allocation
		for _, a := range c.Allocations {
			if provs[a.ProviderUUID] {
				a.ConsumerUUID = c.UUID
				keep = append(keep, a)
			}
		}
		if len(keep) == 0 {
			continue
		}
		c.Allocations = keep
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b models.Consumer) int {
		switch {
		case a.UUID < b.UUID:
			return -1
		case a.UUID > b.UUID:
			return 1
		}
		return 0
	})
	return out, nil
}

func cloneConsumers(cs []models.Consumer) []models.Consumer {
	out := slices.Clone(cs)
	for i := range out {
		out[i].Allocations = slices.Clone(out[i].Allocations)
	}
	return out
}
