package placementapi

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/placement"
	"corral/models/pycompat"
	"corral/models/scheduling"
	"corral/models/store"
)

// Inventories: GET, PUT, POST and DELETE /resource_providers/{uuid}/inventories
// and /resource_providers/{uuid}/inventories/{resource_class}.

// Placement's error codes of the resource endpoints (placement/errors.py).
const (
	CodeInventoryInUse = "placement.inventory.inuse"
)

var rcPattern = regexp.MustCompile(`^[A-Z0-9_]+$`)

const maxInt = 2147483647

var concurrentProvider = &Error{Status: http.StatusConflict, Code: CodeConcurrentUpdate,
	Msg: "resource provider generation conflict"}

func asFloat(v any) (float64, bool) {
	switch t := v.(type) {
	case pycompat.Float:
		return float64(t), true
	case pycompat.Int:
		f, err := strconv.ParseFloat(t.Lit, 64)
		return f, err == nil
	}
	return 0, false
}

func inventoryFrom(obj map[string]any) models.Inventory {
	inv := models.Inventory{MinUnit: 1, MaxUnit: maxInt, StepSize: 1, AllocationRatio: 1}
	get := func(k string, dst *int64) {
		if v, ok := obj[k]; ok {
			*dst, _ = asInt(v)
		}
	}
	get("total", &inv.Total)
	get("reserved", &inv.Reserved)
	get("min_unit", &inv.MinUnit)
	get("max_unit", &inv.MaxUnit)
	get("step_size", &inv.StepSize)
	if v, ok := obj["allocation_ratio"]; ok {
		inv.AllocationRatio, _ = asFloat(v)
	}
	return inv
}

func inventoryJSON(inv models.Inventory) map[string]any {
	inv = placement.Normalized(inv)
	return map[string]any{
		"total": inv.Total, "reserved": inv.Reserved, "min_unit": inv.MinUnit,
		"max_unit": inv.MaxUnit, "step_size": inv.StepSize, "allocation_ratio": inv.AllocationRatio,
	}
}

// checkInventoryCapacity is _validate_inventory_capacity: reserved may not
// exceed total (nor equal it below 1.26).
func checkInventoryCapacity(v placement.Version, provUUID string, rc string, inv models.Inventory) *Error {
	return checkCapacity(v, "update", provUUID, rc, inv)
}

// checkCapacity words the refusal as the handler doing verb does
// ("Unable to create inventory …" when adding one class).
func checkCapacity(v placement.Version, verb, provUUID string, rc string, inv models.Inventory) *Error {
	capacity := placement.Capacity(inv)
	if v.AtLeast(26) {
		if capacity < 0 {
			return badRequest(fmt.Sprintf("Unable to %s inventory for resource provider %s: Invalid inventory for '%s' on resource provider '%s'. The reserved value is greater than total.", verb, provUUID, rc, provUUID))
		}
	} else if capacity <= 0 {
		return badRequest(fmt.Sprintf("Unable to %s inventory for resource provider %s: Invalid inventory for '%s' on resource provider '%s'. The reserved value is greater than or equal to total.", verb, provUUID, rc, provUUID))
	}
	return nil
}

func (api *API) sendInventories(c echo.Context, p *models.Provider) error {
	out := map[string]any{}
	for rc, inv := range p.Inventories {
		out[rc] = inventoryJSON(inv)
	}
	if version(c).AtLeast(15) {
		setLastModified(c, modified(p))
	}
	return c.JSON(http.StatusOK, map[string]any{"inventories": out, "resource_provider_generation": p.Generation})
}

// getInventories is GET /resource_providers/{uuid}/inventories.
func (api *API) getInventories(c echo.Context) error {
	id := c.Param("uuid")
	p, _, err := api.provider(c, id)
	if err != nil {
		return notFound("No resource provider with uuid " + id + " found : No resource provider with uuid " + id + " found")
	}
	return api.sendInventories(c, p)
}

// getInventory is GET /resource_providers/{uuid}/inventories/{rc}.
func (api *API) getInventory(c echo.Context) error {
	id, rc := c.Param("uuid"), c.Param("rc")
	p, _, err := api.provider(c, id)
	if err != nil {
		return notFound("No resource provider with uuid " + id + " found")
	}
	inv, ok := p.Inventories[rc]
	if !ok {
		return notFound("No inventory of class " + rc + " for " + id)
	}
	if version(c).AtLeast(15) {
		setLastModified(c, modified(p))
	}
	body := inventoryJSON(inv)
	body["resource_provider_generation"] = p.Generation
	return c.JSON(http.StatusOK, body)
}

// writeInventories replaces the whole inventory of a provider, mapping the
// store's refusals to Placement's answers.
func (api *API) writeInventories(c echo.Context, id string, gen int64, inv map[string]models.Inventory) (*models.Provider, error) {
	err := api.apply(c, scheduling.Change{Op: scheduling.OpSetInventories, Provider: id, Generation: generation(gen),
		PlacementFields: scheduling.PlacementFields{Inventories: inv}})
	if err != nil {
		var ce *models.Error
		switch {
		case errors.As(err, &ce) && stale(ce):
			return nil, concurrentProvider
		case errors.As(err, &ce) && ce.Kind == models.Conflict && strings.HasPrefix(ce.Msg, store.InventoryInUse):
			return nil, &Error{Status: http.StatusConflict, Code: CodeInventoryInUse,
				Msg: "update conflict: " + ce.Msg}
		case errors.As(err, &ce) && ce.Kind == models.NotFound:
			return nil, notFound("No resource provider with uuid " + id + " found")
		}
		return nil, err
	}
	return api.written(c, id)
}

func (api *API) knownClass(c echo.Context, ix *placement.Index, rc string) bool {
	return api.catalogFor(c, ix).HasClass(rc)
}

// setInventories is PUT /resource_providers/{uuid}/inventories.
func (api *API) setInventories(c echo.Context) error {
	v := version(c)
	id := c.Param("uuid")
	p, ix, err := api.provider(c, id)
	if err != nil {
		return err
	}
	obj, perr := readValidObject(c, inventoriesSchema)
	if perr != nil {
		return perr
	}
	gen, _ := asInt(obj["resource_provider_generation"])
	invs := obj["inventories"].(map[string]any)
	classes := make([]string, 0, len(invs))
	for rc := range invs {
		classes = append(classes, rc)
	}
	sort.Strings(classes)
	next := map[string]models.Inventory{}
	for _, rc := range classes {
		// The schema checks the records of well-formed class names only;
		// any other name is an unknown class, refused below.
		rec, _ := invs[rc].(map[string]any)
		next[rc] = inventoryFrom(rec)
	}
	if gen != p.Generation {
		return concurrentProvider
	}
	// As _validate_inventory_capacity runs before set_inventory looks
	// the classes up: every capacity first, then every class.
	for _, rc := range classes {
		if !rcPattern.MatchString(rc) {
			continue
		}
		if e := checkInventoryCapacity(v, id, rc, next[rc]); e != nil {
			return e
		}
	}
	for _, rc := range classes {
		if !rcPattern.MatchString(rc) || !api.knownClass(c, ix, rc) {
			return badRequest("Unknown resource class in inventory for resource provider " + id + ": No such resource class " + rc + ".")
		}
	}
	np, err := api.writeInventories(c, id, gen, next)
	if err != nil {
		return err
	}
	return api.sendInventories(c, np)
}

// createInventory is POST /resource_providers/{uuid}/inventories: one class.
func (api *API) createInventory(c echo.Context) error {
	v := version(c)
	id := c.Param("uuid")
	p, ix, err := api.provider(c, id)
	if err != nil {
		return err
	}
	obj, perr := readValidObject(c, postInventorySchema)
	if perr != nil {
		return perr
	}
	rc := obj["resource_class"].(string)
	inv := inventoryFrom(obj)
	if e := checkCapacity(v, "create", id, rc, inv); e != nil {
		return e
	}
	if !api.knownClass(c, ix, rc) {
		return badRequest("Unable to create inventory for resource provider " + id + ": No such resource class " + rc + ".")
	}
	if _, exists := p.Inventories[rc]; exists {
		return &Error{Status: http.StatusConflict, Code: CodeConcurrentUpdate,
			Msg: "Update conflict: Inventory for " + rc + " on resource provider " + id + " in use"}
	}
	next := maps.Clone(p.Inventories)
	if next == nil {
		next = map[string]models.Inventory{}
	}
	next[rc] = inv
	gen := p.Generation
	if g, ok := obj["resource_provider_generation"]; ok {
		gen, _ = asInt(g)
	}
	np, err := api.writeInventories(c, id, gen, next)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, c.Scheme()+"://"+c.Request().Host+providerURL(id)+"/inventories/"+rc)
	out := inventoryJSON(np.Inventories[rc])
	out["resource_provider_generation"] = np.Generation
	if v.AtLeast(15) {
		setLastModified(c, modified(np))
	}
	return c.JSON(http.StatusCreated, out)
}

// updateInventory is PUT /resource_providers/{uuid}/inventories/{rc}.
func (api *API) updateInventory(c echo.Context) error {
	v := version(c)
	id, rc := c.Param("uuid"), c.Param("rc")
	p, ix, err := api.provider(c, id)
	if err != nil {
		return err
	}
	obj, perr := readValidObject(c, inventorySchema)
	if perr != nil {
		return perr
	}
	gen, _ := asInt(obj["resource_provider_generation"])
	if gen != p.Generation {
		return concurrentProvider
	}
	inv := inventoryFrom(obj)
	if e := checkInventoryCapacity(v, id, rc, inv); e != nil {
		return e
	}
	if !api.knownClass(c, ix, rc) {
		// ResourceClassNotFound escapes update_inventory as a 404.
		return notFound("No such resource class " + rc + ".")
	}
	if _, ok := p.Inventories[rc]; !ok {
		return badRequest("No inventory record with resource class for resource provider " + id + ": No inventory of class " + rc + " found.")
	}
	next := maps.Clone(p.Inventories)
	next[rc] = inv
	np, err := api.writeInventories(c, id, gen, next)
	if err != nil {
		return err
	}
	out := inventoryJSON(np.Inventories[rc])
	out["resource_provider_generation"] = np.Generation
	if v.AtLeast(15) {
		setLastModified(c, modified(np))
	}
	return c.JSON(http.StatusOK, out)
}

// deleteInventory is DELETE /resource_providers/{uuid}/inventories/{rc}.
func (api *API) deleteInventory(c echo.Context) error {
	id, rc := c.Param("uuid"), c.Param("rc")
	p, _, err := api.provider(c, id)
	if err != nil {
		return err
	}
	if _, ok := p.Inventories[rc]; !ok {
		return notFound("No inventory of class " + rc + " found for delete: No inventory of class " + rc + " found.")
	}
	next := maps.Clone(p.Inventories)
	delete(next, rc)
	if err := api.apply(c, scheduling.Change{Op: scheduling.OpSetInventories, Provider: id, Generation: generation(p.Generation),
		PlacementFields: scheduling.PlacementFields{Inventories: next}}); err != nil {
		var ce *models.Error
		switch {
		case errors.As(err, &ce) && ce.Kind == models.Conflict && strings.HasPrefix(ce.Msg, store.InventoryInUse):
			return &Error{Status: http.StatusConflict, Code: CodeConcurrentUpdate,
				Msg: "Unable to delete inventory of class " + rc + ": Inventory for '" + rc + "' on resource provider '" + id + "' in use."}
		case errors.As(err, &ce) && ce.Kind == models.Conflict:
			return &Error{Status: http.StatusConflict, Code: CodeConcurrentUpdate,
				Msg: "Unable to delete inventory of class " + rc + ": Another thread concurrently updated the data. Please retry your update"}
		}
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// deleteInventories is DELETE /resource_providers/{uuid}/inventories (1.5+).
func (api *API) deleteInventories(c echo.Context) error {
	if !version(c).AtLeast(5) {
		return &Error{Status: http.StatusMethodNotAllowed, Allow: "GET, POST, PUT",
			Msg: "The method specified is not allowed for this resource."}
	}
	id := c.Param("uuid")
	p, _, err := api.provider(c, id)
	if err != nil {
		return err
	}
	if err := api.apply(c, scheduling.Change{Op: scheduling.OpSetInventories, Provider: id, Generation: generation(p.Generation),
		PlacementFields: scheduling.PlacementFields{Inventories: map[string]models.Inventory{}}}); err != nil {
		var ce *models.Error
		switch {
		case errors.As(err, &ce) && ce.Kind == models.Conflict && strings.HasPrefix(ce.Msg, store.InventoryInUse):
			var classes []string
			for rc := range p.Inventories {
				if p.Usages[rc] > 0 {
					classes = append(classes, rc)
				}
			}
			sort.Strings(classes)
			return &Error{Status: http.StatusConflict, Code: CodeInventoryInUse,
				Msg: "Inventory for '" + strings.Join(classes, ", ") + "' on resource provider '" + id + "' in use."}
		case errors.As(err, &ce) && ce.Kind == models.Conflict:
			return &Error{Status: http.StatusConflict, Code: CodeConcurrentUpdate,
				Msg: "Unable to delete inventory for resource provider " + id + " because the inventory was updated by another process. Please retry your request."}
		}
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
