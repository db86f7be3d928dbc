package placementapi

import (
	"slices"

	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/scheduling"
)

// Connected to a cloud, the API answers with Placement's provider
// generations (what the last sync read), not corral's own, and checks a
// client's generation-guarded writes against them: a client pointed at
// corral sees the generations Placement has, and a stale one gets
// Placement's 409.

// cloudSnapshot is a live snapshot (base) with the cloud's generations.
type cloudSnapshot struct {
	base, snap *scheduling.Snapshot
}

// withCloudGenerations is base with every provider carrying Placement's
// generation, built once per live snapshot; base itself standalone.
func (api *API) withCloudGenerations(c echo.Context, base *scheduling.Snapshot) (*scheduling.Snapshot, error) {
	ids := api.env.CloudIdentities()
	if ids == nil {
		return base, nil
	}
	if cs := api.cloudSnap.Load(); cs != nil && cs.base == base {
		return cs.snap, nil
	}
	gens, _, err := ids.ProviderGenerations(c.Request().Context())
	if err != nil {
		return nil, err
	}
	w := *base.World()
	w.Providers = slices.Clone(w.Providers)
	for i := range w.Providers {
		if g, ok := gens[w.Providers[i].UUID]; ok {
			w.Providers[i].Generation = g
		}
	}
	snap, err := scheduling.NewSnapshot(&w)
	if err != nil {
		return nil, err
	}
	api.cloudSnap.Store(&cloudSnapshot{base: base, snap: snap})
	return snap, nil
}

// cloudGeneration is provider uuid's generation as a client of the API
// sees it: Placement's when connected, own (corral's) standalone.
func (api *API) cloudGeneration(c echo.Context, uuid string, own int64) (int64, error) {
	ids := api.env.CloudIdentities()
	if ids == nil {
		return own, nil
	}
	gens, _, err := ids.ProviderGenerations(c.Request().Context())
	if err != nil {
		return 0, err
	}
	if g, ok := gens[uuid]; ok {
		return g, nil
	}
	return own, nil
}

// checkCloudGenerations refuses, connected, a change whose provider
// generation is not Placement's (as last synced): the generations a
// client of this API holds are Placement's, and the cloud write path
// checks the cloud itself, not corral's own generations.
func (api *API) checkCloudGenerations(c echo.Context, changes []scheduling.Change) error {
	if api.env.CloudIdentities() == nil {
		return nil
	}
	for i, ch := range changes {
		if ch.Provider == "" || ch.Generation == nil {
			continue
		}
		g, err := api.cloudGeneration(c, ch.Provider, -1)
		if err != nil {
			return err
		}
		if g != *ch.Generation {
			return models.E(models.Conflict, "generation", "resource provider %s is at generation %d in placement, not %d", ch.Provider, g, *ch.Generation)
		}
		// Checked: the write path reads a change's generation as
		// corral's own, which this one is not.
		changes[i].Generation = nil
	}
	return nil
}
