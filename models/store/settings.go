package store

import (
	"context"
	"encoding/json"

	"gorm.io/gorm"

	"corral/models"
)

// ValidateSettings checks settings the way the console saves them.
func ValidateSettings(st *models.Settings) error { return st.Validate() }

// GetSettings returns the settings and their generation (0 and the defaults
// when never saved).
func (s *Store) GetSettings(ctx context.Context) (models.Settings, int64, error) {
	st, gen, err := loadSettings(s.rdb.WithContext(ctx))
	return st, gen, mapErr("store.GetSettings", err)
}

func loadSettings(tx *gorm.DB) (models.Settings, int64, error) {
	var row settingsRow
	res := tx.Where("id = 1").Limit(1).Find(&row)
	if res.Error != nil {
		return models.Settings{}, 0, res.Error
	}
	if res.RowsAffected == 0 {
		return models.DefaultSettings(), 0, nil
	}
	st := models.DefaultSettings()
	if err := json.Unmarshal([]byte(row.Data), &st); err != nil {
		return models.Settings{}, 0, err
	}
	return st, row.Generation, nil
}

// UpdateSettings saves st if generation is current (or AnyGeneration).
func (s *Store) UpdateSettings(ctx context.Context, a Actor, generation int64, st models.Settings) error {
	if err := ValidateSettings(&st); err != nil {
		return err
	}
	return s.write(ctx, a, "store.UpdateSettings", func(t *txn) error {
		t.touchSettings()
		return t.saveSettings(generation, st)
	})
}

func (t *txn) saveSettings(generation int64, st models.Settings) error {
	before, gen, err := loadSettings(t.tx)
	if err != nil {
		return err
	}
	if generation != AnyGeneration && generation != gen {
		return models.E(models.Conflict, "generation", "settings were changed by someone else — reload")
	}
	if st.EnabledFilters == nil {
		st.EnabledFilters = []string{}
	}
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	var res *gorm.DB
	if gen == 0 {
		// First save: the insert itself is the guard (a second inserter
		// hits the primary key and gets a conflict).
		res = t.tx.Create(&settingsRow{ID: 1, Data: string(data), Generation: 1, UpdatedAt: t.now})
	} else {
		res = t.tx.Model(&settingsRow{}).Where("id = 1 AND generation = ?", gen).
			UpdateColumns(map[string]any{"data": string(data), "generation": gen + 1, "updated_at": t.now})
	}
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return models.E(models.Conflict, "generation", "settings were changed by someone else — reload")
	}
	return t.audit("update", "settings", "settings", "settings", before, st)
}
