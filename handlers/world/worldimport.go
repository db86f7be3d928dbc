package world

import (
	"context"
	"reflect"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
)

// ImportSettings are the settings the database will have after importing
// w, as store.ImportWorld decides them: w's with replace or when w carries
// settings other than the defaults (the decoder fills in the defaults when
// a file has none), the database's otherwise.
func ImportSettings(ctx context.Context, st *store.Store, w *models.World, replace bool) (models.Settings, error) {
	given := !reflect.DeepEqual(w.Settings, models.Settings{}) && !reflect.DeepEqual(w.Settings, models.DefaultSettings())
	if replace || given {
		return w.Settings, nil
	}
	cur, _, err := st.GetSettings(ctx)
	return cur, err
}

// PrepareWorldImport is what both `corral import` and the console's world
// page do to a decoded world before store.ImportWorld: with blazar, Blazar's
// conventions are restated as corral's reservation and tenant tags, using
// the reservation prefixes that will be in force after the import. It
// returns the world to import (w itself is not modified) and one line per
// translation for a person to read.
func PrepareWorldImport(ctx context.Context, st *store.Store, w *models.World, replace, blazar bool) (*models.World, []string, error) {
	if w == nil {
		return nil, nil, models.E(models.Invalid, "world", "no world given")
	}
	if !blazar {
		return w, nil, nil
	}
	settings, err := ImportSettings(ctx, st, w, replace)
	if err != nil {
		return nil, nil, models.Wrap("handlers.PrepareWorldImport", err)
	}
	out, lines := scheduling.TranslateBlazar(w, settings)
	return out, lines, nil
}
