package placementapi

import (
	"errors"
	"net/http"
	"sort"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/placement"
	"corral/models/scheduling"
	"corral/models/store"
)

// Allocations: a consumer's (GET, PUT, DELETE /allocations/{consumer}),
// several consumers' at once (POST /allocations) and a provider's (GET
// /resource_providers/{uuid}/allocations).

// consumerAllocations is GET /allocations/{consumer_uuid}.
func (api *API) consumerAllocations(c echo.Context) error {
	v := version(c)
	id := c.Param("consumer")
	cons, err := api.env.Store.ConsumerAllocationsOf(c.Request().Context(), id)
	var ce *models.Error
	if err != nil && !(errors.As(err, &ce) && ce.Kind == models.NotFound) {
		return err
	}
	snap, serr := api.snapshot(c)
	if serr != nil {
		return serr
	}
	ix := snap.Index()
	allocs := map[string]any{}
	body := map[string]any{"allocations": allocs}
	if cons != nil && len(cons.Allocations) > 0 {
		for _, a := range cons.Allocations {
			entry, ok := allocs[a.ProviderUUID].(map[string]any)
			if !ok {
				gen := int64(0)
				if i, found := ix.ProviderByUUID(a.ProviderUUID); found {
					gen = ix.Provider(i).Generation
				}
				entry = map[string]any{"resources": map[string]int64{}, "generation": gen}
				allocs[a.ProviderUUID] = entry
			}
			entry["resources"].(map[string]int64)[a.ResourceClass] = a.Used
		}
		if v.AtLeast(12) {
			body["project_id"] = cons.ProjectID
			body["user_id"] = cons.UserID
		}
		if v.AtLeast(28) {
			body["consumer_generation"] = cons.Generation
		}
		if v.AtLeast(38) {
			t := cons.ConsumerType
			if t == "" {
				t = "unknown"
			}
			body["consumer_type"] = t
		}
	}
	if v.AtLeast(15) {
		setLastModified(c, api.now())
	}
	return c.JSON(http.StatusOK, body)
}

// providerAllocations is GET /resource_providers/{uuid}/allocations.
func (api *API) providerAllocations(c echo.Context) error {
	v := version(c)
	id := c.Param("uuid")
	p, _, err := api.provider(c, id)
	if err != nil {
		return notFound("Resource provider '" + id + "' not found: No resource provider with uuid " + id + " found")
	}
	cons, err := api.env.Store.ProviderAllocations(c.Request().Context(), id)
	if err != nil {
		return err
	}
	allocs := map[string]any{}
	for _, cn := range cons {
		res := map[string]int64{}
		for _, a := range cn.Allocations {
			res[a.ResourceClass] = a.Used
		}
		entry := map[string]any{"resources": res}
		if v.AtLeast(28) {
			entry["consumer_generation"] = cn.Generation
		}
		allocs[cn.UUID] = entry
	}
	if v.AtLeast(15) {
		setLastModified(c, api.now())
	}
	return c.JSON(http.StatusOK, map[string]any{"allocations": allocs, "resource_provider_generation": p.Generation})
}

// allocationsFrom reads one consumer's schema-checked allocations body at
// microversion v (PUT /allocations/{c}, or one entry of POST /allocations)
// as a set_allocations change: the list form below 1.12, the dict form
// after; project/user from 1.8; consumer_generation from 1.28 (null: a new
// consumer); consumer_type from 1.38.
func allocationsFrom(consumer string, obj map[string]any, v placement.Version) scheduling.Change {
	w := scheduling.Change{Op: scheduling.OpSetAllocations, PlacementFields: scheduling.PlacementFields{Consumer: consumer}}
	w.Project, _ = obj["project_id"].(string)
	w.User, _ = obj["user_id"].(string)
	w.ConsumerType, _ = obj["consumer_type"].(string)
	if v.AtLeast(28) {
		w.Generation = generation(scheduling.NoGeneration)
		if g := obj["consumer_generation"]; g != nil {
			n, _ := asInt(g)
			w.Generation = generation(n)
		}
	}
	add := func(rp string, resources any) {
		res := resources.(map[string]any)
		classes := make([]string, 0, len(res))
		for rc := range res {
			classes = append(classes, rc)
		}
		sort.Strings(classes)
		for _, rc := range classes {
			n, _ := asInt(res[rc])
			w.Allocations = append(w.Allocations, scheduling.ChangeAllocation{Provider: rp, ResourceClass: rc, Used: n})
		}
	}
	if !v.AtLeast(12) {
		for _, item := range obj["allocations"].([]any) {
			m := item.(map[string]any)
			add(m["resource_provider"].(map[string]any)["uuid"].(string), m["resources"])
		}
		return w
	}
	allocs := obj["allocations"].(map[string]any)
	rps := make([]string, 0, len(allocs))
	for rp := range allocs {
		rps = append(rps, rp)
	}
	sort.Strings(rps)
	for _, rp := range rps {
		add(rp, allocs[rp].(map[string]any)["resources"])
	}
	return w
}

// allocationWriteError maps the store's refusals to Placement's answers.
func allocationWriteError(err error, consumer string) error {
	var ge *store.ConsumerGenerationError
	if errors.As(err, &ge) {
		return &Error{Status: http.StatusConflict, Code: CodeConcurrentUpdate, Msg: ge.Error()}
	}
	var ae *store.AllocationError
	if errors.As(err, &ae) {
		if ae.Kind == "no provider" {
			return badRequest("Allocation for resource provider '" + ae.Provider + "' that does not exist.")
		}
		return &Error{Status: http.StatusConflict, Msg: "Unable to allocate inventory: " + ae.Error()}
	}
	var ce *models.Error
	if errors.As(err, &ce) && ce.Kind == models.Conflict {
		return &Error{Status: http.StatusConflict, Code: CodeConcurrentUpdate,
			Msg: "Inventory and/or allocations changed while attempting to allocate: Another thread concurrently updated the data. Please retry your update"}
	}
	return err
}

// checkProvidersExist refuses allocations against unknown providers as
// Placement's _resource_providers_by_uuid does.
func checkProvidersExist(ix *placement.Index, w scheduling.Change) *Error {
	for _, a := range w.Allocations {
		if _, ok := ix.ProviderByUUID(a.Provider); !ok {
			return badRequest("Allocation for resource provider '" + a.Provider + "' that does not exist.")
		}
	}
	return nil
}

// setConsumerAllocations is PUT /allocations/{consumer_uuid}.
func (api *API) setConsumerAllocations(c echo.Context) error {
	v := version(c)
	id := c.Param("consumer")
	if !placement.IsUUIDLike(id) {
		return badRequest("Malformed consumer_uuid: " + id)
	}
	u, _ := uuid.Parse(id)
	id = u.String()
	obj, perr := readValidObject(c, schemaAt(allocationSchemas, v))
	if perr != nil {
		return perr
	}
	w := allocationsFrom(id, obj, v)
	if w.Project == "" {
		w.Project, w.User = "00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"
	}
	snap, err := api.snapshot(c)
	if err != nil {
		return err
	}
	if e := checkProvidersExist(snap.Index(), w); e != nil {
		return e
	}
	if err := api.apply(c, w); err != nil {
		return allocationWriteError(err, id)
	}
	return c.NoContent(http.StatusNoContent)
}

// postAllocations is POST /allocations (1.13+): many consumers at once.
func (api *API) postAllocations(c echo.Context) error {
	v := version(c)
	if !v.AtLeast(13) {
		return &Error{Status: http.StatusNotFound}
	}
	obj, perr := readValidObject(c, schemaAt(postAllocationSchemas, v))
	if perr != nil {
		return perr
	}
	ids := make([]string, 0, len(obj))
	for k := range obj {
		ids = append(ids, k)
	}
	sort.Strings(ids)
	snap, err := api.snapshot(c)
	if err != nil {
		return err
	}
	var writes []scheduling.Change
	for _, id := range ids {
		w := allocationsFrom(id, obj[id].(map[string]any), v)
		if e := checkProvidersExist(snap.Index(), w); e != nil {
			return e
		}
		writes = append(writes, w)
	}
	if len(writes) == 0 {
		return c.NoContent(http.StatusNoContent)
	}
	if err := api.apply(c, writes...); err != nil {
		return allocationWriteError(err, "")
	}
	return c.NoContent(http.StatusNoContent)
}

// deleteConsumerAllocations is DELETE /allocations/{consumer_uuid}.
func (api *API) deleteConsumerAllocations(c echo.Context) error {
	id := c.Param("consumer")
	cons, err := api.env.Store.ConsumerAllocationsOf(c.Request().Context(), id)
	if err != nil || len(cons.Allocations) == 0 {
		return notFound("No allocations for consumer '" + id + "'")
	}
	w := scheduling.Change{Op: scheduling.OpSetAllocations, Project: cons.ProjectID, User: cons.UserID,
		PlacementFields: scheduling.PlacementFields{Consumer: id}}
	if err := api.apply(c, w); err != nil {
		return allocationWriteError(err, id)
	}
	return c.NoContent(http.StatusNoContent)
}
