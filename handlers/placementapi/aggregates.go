package placementapi

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/scheduling"
)

// concurrentUpdate is Placement's 409 for a stale provider generation.
var concurrentUpdate = &Error{Status: http.StatusConflict, Code: CodeConcurrentUpdate,
	Msg: "Resource provider's generation already changed. Please update the generation and try again."}

// sendAggregates writes {"aggregates": […]} plus, from 1.19, the provider's
// generation. Placement records no time for memberships, so from 1.15
// Last-Modified is now.
func (api *API) sendAggregates(c echo.Context, aggs []string, gen int64) error {
	v := version(c)
	if aggs == nil {
		aggs = []string{}
	}
	body := map[string]any{"aggregates": aggs}
	if v.AtLeast(19) {
		body["resource_provider_generation"] = gen
	}
	if v.AtLeast(15) {
		setLastModified(c, api.now())
	}
	return c.JSON(http.StatusOK, body)
}

// getAggregates is GET /resource_providers/{uuid}/aggregates (1.1+; the
// route does not exist at 1.0).
func (api *API) getAggregates(c echo.Context) error {
	if !version(c).AtLeast(1) {
		return &Error{Status: http.StatusNotFound}
	}
	id := c.Param("uuid")
	aggs, gen, err := api.env.Store.ProviderAggregates(c.Request().Context(), id)
	if err == nil {
		gen, err = api.cloudGeneration(c, id, gen)
	}
	if err != nil {
		if models.KindOf(err) == models.NotFound {
			return notFound("No resource provider with uuid " + id + " found")
		}
		return err
	}
	return api.sendAggregates(c, aggs, gen)
}

// setAggregates is PUT /resource_providers/{uuid}/aggregates: a bare list
// below 1.19, which leaves the provider generation alone; from 1.19 an
// object with the provider generation, checked (409
// placement.concurrent_update) and incremented. Unknown aggregate uuids are
// created on demand, as Placement does.
func (api *API) setAggregates(c echo.Context) error {
	v := version(c)
	if !v.AtLeast(1) {
		return &Error{Status: http.StatusNotFound}
	}
	id := c.Param("uuid")
	if _, _, err := api.provider(c, id); err != nil {
		return err
	}
	body, perr := readJSON(c)
	if perr != nil {
		return perr
	}
	ch := scheduling.Change{Op: scheduling.OpSetProviderAggregates, Provider: id}
	var aggs []string
	if v.AtLeast(19) {
		obj, verr := validateObject(body, aggregatesSchema119)
		if verr != nil {
			return verr
		}
		aggs, _ = validateStrings(obj.Vals["aggregates"], aggregateList)
		gen, ok := asInt(obj.Vals["resource_provider_generation"])
		if !ok {
			// An integer beyond int64 is no generation a provider has.
			return concurrentUpdate
		}
		if gen < 0 {
			// No provider generation is negative.
			return concurrentUpdate
		}
		// Placement moves the generation only from 1.19, where the
		// writer names it and the answer carries it.
		ch.Generation = generation(gen)
	} else {
		if aggs, perr = validateStrings(body, aggregateList); perr != nil {
			return perr
		}
	}
	ch.Aggregates = aggs
	if err := api.apply(c, ch); err != nil {
		var ce *models.Error
		switch {
		case errors.As(err, &ce) && stale(ce):
			return concurrentUpdate
		case errors.As(err, &ce) && ce.Kind == models.Conflict:
			return &Error{Status: http.StatusConflict, Code: CodeConcurrentUpdate, Msg: "Update conflict: " + ce.Msg}
		case errors.As(err, &ce) && ce.Kind == models.NotFound:
			return notFound("No resource provider with uuid " + id + " found")
		case errors.As(err, &ce) && ce.Kind == models.Invalid:
			return invalid("%s", ce.Msg)
		}
		return err
	}
	_, newGen, err := api.env.Store.ProviderAggregates(c.Request().Context(), id)
	if err == nil {
		newGen, err = api.cloudGeneration(c, id, newGen)
	}
	if err != nil {
		return err
	}
	return api.sendAggregates(c, aggs, newGen)
}

// getTraits is GET /resource_providers/{uuid}/traits (1.6+).
func (api *API) getTraits(c echo.Context) error {
	v := version(c)
	if !v.AtLeast(6) {
		return &Error{Status: http.StatusNotFound}
	}
	p, _, err := api.provider(c, c.Param("uuid"))
	if err != nil {
		return err
	}
	traits := p.Traits
	if traits == nil {
		traits = []string{}
	}
	if v.AtLeast(15) {
		setLastModified(c, modified(p))
	}
	return c.JSON(http.StatusOK, map[string]any{"traits": traits, "resource_provider_generation": p.Generation})
}
