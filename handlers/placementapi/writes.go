package placementapi

import (
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
	"corral/models/scheduling"
)

// apply hands a request's changes to the one write path.
func (api *API) apply(c echo.Context, changes ...scheduling.Change) error {
	if err := api.checkCloudGenerations(c, changes); err != nil {
		return err
	}
	_, err := api.env.Writer.Apply(c.Request().Context(), handlers.Actor(c), changes)
	return err
}

// stale reports whether err refuses a change whose generation is not the
// object's any more.
func stale(ce *models.Error) bool {
	return ce.Kind == models.Conflict && (ce.Field == "generation" || strings.HasSuffix(ce.Field, ".generation"))
}

// written reads a provider back after a write, for the answer.
func (api *API) written(c echo.Context, id string) (*models.Provider, error) {
	p, err := api.env.Store.GetProvider(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	p.Generation, err = api.cloudGeneration(c, id, p.Generation)
	return p, err
}

// generation returns a pointer to gen, for a change's generation.
func generation(gen int64) *int64 { return &gen }
