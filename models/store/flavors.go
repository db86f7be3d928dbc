package store

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"corral/models"
)

// FlavorQuery selects a page of flavors, ordered by name.
type FlavorQuery struct {
	Search string // substring of id, name or extra specs
	Offset int
	Limit  int // <= 0: all
}

// ListFlavors returns one page of flavors and the total matching.
func (s *Store) ListFlavors(ctx context.Context, q FlavorQuery) ([]models.Flavor, int, error) {
	if err := checkSearch(q.Search); err != nil {
		return nil, 0, err
	}
	var out []models.Flavor
	var total int64
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		base := tx.Model(&models.Flavor{})
		if q.Search != "" {
			p := likePattern(q.Search)
			base = base.Where(`LOWER(id) LIKE ? ESCAPE '\' OR LOWER(name) LIKE ? ESCAPE '\' OR LOWER(COALESCE(extra_specs, '')) LIKE ? ESCAPE '\'`, p, p, p)
		}
		if err := base.Session(&gorm.Session{}).Count(&total).Error; err != nil {
			return err
		}
		return page(base.Order("name"), q.Offset, q.Limit).Find(&out).Error
	})
	if err != nil {
		return nil, 0, mapErr("store.ListFlavors", err)
	}
	for i := range out {
		normaliseFlavor(&out[i])
	}
	return out, int(total), nil
}

func normaliseFlavor(f *models.Flavor) {
	if f.ExtraSpecs == nil {
		f.ExtraSpecs = map[string]string{}
	}
	if len(f.Projects) == 0 {
		f.Projects = nil
	} else {
		slices.Sort(f.Projects)
	}
}

// GetFlavor finds a flavor by id or name.
func (s *Store) GetFlavor(ctx context.Context, ref string) (*models.Flavor, error) {
	var f *models.Flavor
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		f, err = findFlavor(tx, ref, true)
		return err
	})
	return f, mapErr("store.GetFlavor", err)
}

func findFlavor(tx *gorm.DB, ref string, byName bool) (*models.Flavor, error) {
	var f models.Flavor
	res := tx.Where("id = ?", ref).Limit(1).Find(&f)
	if byName && res.Error == nil && res.RowsAffected == 0 {
		res = tx.Where("name = ?", ref).Limit(1).Find(&f)
	}
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, models.E(models.NotFound, "flavor", "flavor %s not found", ref)
	}
	normaliseFlavor(&f)
	return &f, nil
}

func validateFlavor(f *models.Flavor) error {
	f.Name = strings.TrimSpace(f.Name)
	return models.CheckFlavor(f)
}

// CreateFlavor inserts f; an empty ID becomes a new uuid.
func (s *Store) CreateFlavor(ctx context.Context, a Actor, f *models.Flavor) error {
	if f == nil {
		return models.E(models.Invalid, "flavor", "no flavor given")
	}
	return s.write(ctx, a, "store.CreateFlavor", func(t *txn) error {
		t.touchFlavors()
		return t.createFlavor(f)
	})
}

// createFlavor is CreateFlavor inside a write.
func (t *txn) createFlavor(f *models.Flavor) error {
	return func() error {
		if f.ID == "" {
			f.ID = uuid.NewString()
		}
		f.ExtraSpecs = maps.Clone(f.ExtraSpecs)
		normaliseFlavor(f)
		if err := validateFlavor(f); err != nil {
			return err
		}
		if err := t.unique(&models.Flavor{}, "id", f.ID, "", "a flavor with id %q already exists"); err != nil {
			return err
		}
		if err := t.unique(&models.Flavor{}, "name", f.Name, "", "a flavor named %q already exists"); err != nil {
			return err
		}
		f.Generation = 0
		f.CreatedAt, f.UpdatedAt = t.now, t.now
		if err := t.tx.Create(f).Error; err != nil {
			return err
		}
		return t.audit("create", "flavor", f.ID, f.Name, nil, f)
	}()
}

// unique reports a Conflict naming field when another row (whose primary key
// is not except) already has value in column field.
func (t *txn) unique(model any, field, value, except, format string) error {
	var n int64
	q := t.tx.Model(model).Where(field+" = ?", value)
	if except != "" {
		q = q.Where("id <> ?", except)
	}
	if err := q.Count(&n).Error; err != nil {
		return err
	}
	if n > 0 {
		return models.E(models.Conflict, field, format, value)
	}
	return nil
}

// UpdateFlavor lets fn change a flavor's name, sizes and extra specs.
func (s *Store) UpdateFlavor(ctx context.Context, a Actor, id string, generation int64, fn func(*models.Flavor) error) (*models.Flavor, error) {
	var out *models.Flavor
	err := s.write(ctx, a, "store.UpdateFlavor", func(t *txn) (err error) {
		t.touchFlavors()
		out, err = t.updateFlavor(id, generation, fn)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// updateFlavor is UpdateFlavor inside a write (a draft applies several).
func (t *txn) updateFlavor(id string, generation int64, fn func(*models.Flavor) error) (*models.Flavor, error) {
	var out *models.Flavor
	err := func() error {
		cur, err := findFlavor(t.tx, id, false)
		if err != nil {
			return err
		}
		if generation != AnyGeneration && cur.Generation != generation {
			return staleErr("flavor", cur.Name)
		}
		before := *cur
		next := *cur
		next.ExtraSpecs = maps.Clone(cur.ExtraSpecs)
		if fn != nil {
			if err := fn(&next); err != nil {
				return err
			}
		}
		next.ID, next.CreatedAt = cur.ID, cur.CreatedAt
		normaliseFlavor(&next)
		if err := validateFlavor(&next); err != nil {
			return err
		}
		if next.Name != cur.Name {
			if err := t.unique(&models.Flavor{}, "name", next.Name, cur.ID, "a flavor named %q already exists"); err != nil {
				return err
			}
		}
		next.Generation = cur.Generation + 1
		next.UpdatedAt = t.now
		res := t.tx.Model(&models.Flavor{ID: cur.ID}).Where("generation = ?", cur.Generation).
			Select("Name", "VCPUs", "RAMMB", "DiskGB", "EphemeralGB", "SwapMB", "ExtraSpecs", "Generation", "UpdatedAt").Updates(&next)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return staleErr("flavor", cur.Name)
		}
		out = &next
		return t.audit("update", "flavor", cur.ID, next.Name, &before, &next)
	}()
	return out, err
}

// DeleteFlavor removes a flavor.
func (s *Store) DeleteFlavor(ctx context.Context, a Actor, id string, generation int64) error {
	return s.write(ctx, a, "store.DeleteFlavor", func(t *txn) error {
		t.touchFlavors()
		cur, err := findFlavor(t.tx, id, false)
		if err != nil {
			return err
		}
		if generation != AnyGeneration && cur.Generation != generation {
			return staleErr("flavor", cur.Name)
		}
		return t.deleteFlavor(cur)
	})
}

// deleteFlavor is DeleteFlavor inside a write, of the flavor as read.
func (t *txn) deleteFlavor(cur *models.Flavor) error {
	return func() error {
		res := t.tx.Where("id = ? AND generation = ?", cur.ID, cur.Generation).Delete(&models.Flavor{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return staleErr("flavor", cur.Name)
		}
		return t.audit("delete", "flavor", cur.ID, cur.Name, cur, nil)
	}()
}
