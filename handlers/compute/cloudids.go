package compute

import (
	"github.com/labstack/echo/v4"

	"corral/models"
)

// Connected to a cloud, the API answers with Nova's aggregate ids (what
// the last sync read), not corral's own, and finds aggregates by them:
// a client pointed at corral sees the ids Nova has.

// novaIDs is Nova's aggregate ids by uuid, nil when corral runs
// standalone.
func (api *API) novaIDs(c echo.Context) (map[string]int64, error) {
	ids := api.env.CloudIdentities()
	if ids == nil {
		return nil, nil
	}
	return ids.AggregateIDs(c.Request().Context())
}

// asNova gives a the id Nova knows it by; false when Nova does not know
// it (an aggregate Placement alone has). Standalone (nil ids) a keeps its
// own.
func asNova(ids map[string]int64, a *models.Aggregate) bool {
	if ids == nil {
		return true
	}
	id, ok := ids[a.UUID]
	if ok {
		a.ID = id
	}
	return ok
}

// uuidOfNovaID is the uuid of the aggregate Nova knows by id.
func uuidOfNovaID(ids map[string]int64, id int64) (string, bool) {
	for u, n := range ids {
		if n == id {
			return u, true
		}
	}
	return "", false
}
