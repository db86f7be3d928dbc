package store

import (
	"maps"

	"corral/models"
)

// writeFlavors writes the flavors that differ between cur and next, each
// through the checks of a direct edit: deleted ones first (their names
// are free then), then changed ones, then new ones.
func (t *txn) writeFlavors(cur, next *models.World) error {
	curFlavors := make(map[string]*models.Flavor, len(cur.Flavors))
	for i := range cur.Flavors {
		curFlavors[cur.Flavors[i].ID] = &cur.Flavors[i]
	}
	nextFlavors := make(map[string]*models.Flavor, len(next.Flavors))
	for i := range next.Flavors {
		nextFlavors[next.Flavors[i].ID] = &next.Flavors[i]
	}
	for i := range cur.Flavors {
		if c := &cur.Flavors[i]; nextFlavors[c.ID] == nil {
			if err := t.deleteFlavor(c); err != nil {
				return err
			}
		}
	}
	for i := range next.Flavors {
		n := &next.Flavors[i]
		c, ok := curFlavors[n.ID]
		if !ok || maps.Equal(c.ExtraSpecs, n.ExtraSpecs) && c.Name == n.Name && c.VCPUs == n.VCPUs && c.RAMMB == n.RAMMB && c.DiskGB == n.DiskGB &&
			c.EphemeralGB == n.EphemeralGB && c.SwapMB == n.SwapMB {
			continue
		}
		if _, err := t.updateFlavor(c.ID, c.Generation, func(f *models.Flavor) error {
			f.Name, f.VCPUs, f.RAMMB, f.DiskGB = n.Name, n.VCPUs, n.RAMMB, n.DiskGB
			f.EphemeralGB, f.SwapMB = n.EphemeralGB, n.SwapMB
			f.ExtraSpecs = maps.Clone(n.ExtraSpecs)
			return nil
		}); err != nil {
			return err
		}
	}
	for i := range next.Flavors {
		if n := next.Flavors[i]; curFlavors[n.ID] == nil {
			n.ExtraSpecs = maps.Clone(n.ExtraSpecs)
			if err := t.createFlavor(&n); err != nil {
				return err
			}
		}
	}
	return nil
}
