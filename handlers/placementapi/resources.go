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

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	js "corral/handlers/jsonschema"
	"corral/models"
	"corral/models/placement"
	"corral/models/pycompat"
	"corral/models/scheduling"
	"corral/models/store"
)

// Placement's error codes of the resource endpoints (placement/errors.py).
const (
	CodeInventoryInUse = "placement.inventory.inuse"
)

var (
	rcPattern     = regexp.MustCompile(`^[A-Z0-9_]+$`)
	customPattern = regexp.MustCompile(`^CUSTOM_[A-Z0-9_]+$`)
)

const maxInt = 2147483647

var traitsConflict = &Error{Status: http.StatusConflict, Code: CodeConcurrentUpdate,
	Msg: "Resource provider's generation already changed. Please update the generation and try again."}

var concurrentProvider = &Error{Status: http.StatusConflict, Code: CodeConcurrentUpdate,
	Msg: "resource provider generation conflict"}

// readValid reads a JSON body and checks it against schema s, as
// placement.util.extract_json does, returning it as plain Go values:
// objects as maps (their key order matters to the schema's message only),
// numbers as pycompat's.
func readValid(c echo.Context, s js.Schema) (any, *Error) {
	v, e := readJSON(c)
	if e != nil {
		return nil, e
	}
	if err := js.Placement.Validate(s, v); err != nil {
		return nil, invalid("%s", err.Msg)
	}
	return plainJSON(v), nil
}

// readValidObject is readValid for a schema that requires an object.
func readValidObject(c echo.Context, s js.Schema) (map[string]any, *Error) {
	v, e := readValid(c, s)
	if e != nil {
		return nil, e
	}
	return v.(map[string]any), nil
}

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

func plainJSON(v any) any {
	switch t := v.(type) {
	case *pycompat.Object:
		m := make(map[string]any, len(t.Keys))
		for _, k := range t.Keys {
			m[k] = plainJSON(t.Vals[k])
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = plainJSON(x)
		}
		return out
	}
	return v
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

// --- inventories ---

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

// --- usages ---

// providerUsages is GET /resource_providers/{uuid}/usages: one entry per
// inventory class (0 when unused).
func (api *API) providerUsages(c echo.Context) error {
	id := c.Param("uuid")
	p, _, err := api.provider(c, id)
	if err != nil {
		return notFound("No resource provider with uuid " + id + " found")
	}
	usages := map[string]int64{}
	for rc := range p.Inventories {
		usages[rc] = p.Usages[rc]
	}
	if version(c).AtLeast(15) {
		setLastModified(c, api.now())
	}
	return c.JSON(http.StatusOK, map[string]any{"usages": usages, "resource_provider_generation": p.Generation})
}

// totalUsages is GET /usages?project_id=&user_id= (1.9+); from 1.38 the
// usages are grouped by consumer type with consumer counts.
func (api *API) totalUsages(c echo.Context) error {
	v := version(c)
	if !v.AtLeast(9) {
		return &Error{Status: http.StatusNotFound}
	}
	params, vals, perr := orderedQuery(c.Request().URL.RawQuery)
	if perr != nil {
		return perr
	}
	allowed := map[string]bool{"project_id": true, "user_id": true}
	if v.AtLeast(38) {
		allowed["consumer_type"] = true
	}
	if _, ok := vals["project_id"]; !ok {
		return badRequest("Invalid query string parameters: 'project_id' is a required property")
	}
	for _, p := range params {
		if !allowed[p.key] {
			return badRequest(fmt.Sprintf("Invalid query string parameters: Additional properties are not allowed (%s was unexpected)", pyRepr(p.key)))
		}
	}
	last := func(k string) string {
		if vs := vals[k]; len(vs) > 0 {
			return vs[len(vs)-1]
		}
		return ""
	}
	byType, counts, err := api.env.Store.ProjectUsages(c.Request().Context(), last("project_id"), last("user_id"))
	if err != nil {
		return err
	}
	if v.AtLeast(15) {
		setLastModified(c, api.now())
	}
	if !v.AtLeast(38) {
		total := map[string]int64{}
		for _, m := range byType {
			for rc, n := range m {
				total[rc] += n
			}
		}
		return c.JSON(http.StatusOK, map[string]any{"usages": total})
	}
	want := last("consumer_type")
	out := map[string]any{}
	all := map[string]int64{}
	allCount := 0
	for t, m := range byType {
		entry := map[string]any{"consumer_count": counts[t]}
		for rc, n := range m {
			entry[rc] = n
			all[rc] += n
		}
		allCount += counts[t]
		if want == "" || want == "all" || want == t {
			out[t] = entry
		}
	}
	if want == "all" {
		entry := map[string]any{"consumer_count": allCount}
		for rc, n := range all {
			entry[rc] = n
		}
		out = map[string]any{"all": entry}
	}
	return c.JSON(http.StatusOK, map[string]any{"usages": out})
}

// --- allocations ---

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

// --- resource classes ---

func resourceClassJSON(name string, v placement.Version) map[string]any {
	return map[string]any{"name": name, "links": []link{{"self", mount + "/resource_classes/" + name}}}
}

func (api *API) allClasses(c echo.Context) ([]string, error) {
	custom, err := api.env.Store.CustomResourceClasses(c.Request().Context())
	if err != nil {
		return nil, err
	}
	return append(append([]string(nil), placement.StandardResourceClasses...), custom...), nil
}

// listResourceClasses is GET /resource_classes (1.2+).
func (api *API) listResourceClasses(c echo.Context) error {
	v := version(c)
	if !v.AtLeast(2) {
		return &Error{Status: http.StatusNotFound}
	}
	names, err := api.allClasses(c)
	if err != nil {
		return err
	}
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = resourceClassJSON(n, v)
	}
	if v.AtLeast(15) {
		setLastModified(c, api.now())
	}
	return c.JSON(http.StatusOK, map[string]any{"resource_classes": out})
}

// showResourceClass is GET /resource_classes/{name}.
func (api *API) showResourceClass(c echo.Context) error {
	v := version(c)
	if !v.AtLeast(2) {
		return &Error{Status: http.StatusNotFound}
	}
	name := c.Param("name")
	names, err := api.allClasses(c)
	if err != nil {
		return err
	}
	for _, n := range names {
		if n == name {
			if v.AtLeast(15) {
				setLastModified(c, api.now())
			}
			return c.JSON(http.StatusOK, resourceClassJSON(n, v))
		}
	}
	return notFound("No such resource class " + name + ".")
}

// createResourceClass is POST /resource_classes (1.2+).
func (api *API) createResourceClass(c echo.Context) error {
	v := version(c)
	if !v.AtLeast(2) {
		return &Error{Status: http.StatusNotFound}
	}
	obj, perr := readValidObject(c, resourceClassSchema)
	if perr != nil {
		return perr
	}
	name := obj["name"].(string)
	if err := api.apply(c, scheduling.Change{Op: scheduling.OpCreateResourceClass, ResourceClass: name}); err != nil {
		var ce *models.Error
		if errors.As(err, &ce) && ce.Kind == models.Conflict {
			return &Error{Status: http.StatusConflict, Code: CodeDuplicateName,
				Msg: "Conflicting resource class already exists: " + name}
		}
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, c.Scheme()+"://"+c.Request().Host+mount+"/resource_classes/"+name)
	return c.NoContent(http.StatusCreated)
}

// putResourceClass is PUT /resource_classes/{name} (1.7+: create if missing).
func (api *API) putResourceClass(c echo.Context) error {
	v := version(c)
	if !v.AtLeast(7) {
		return &Error{Status: http.StatusNotFound}
	}
	name := c.Param("name")
	// Placement validates the name as the body {"name": "<name>"} that
	// it pastes together; a quote or backslash breaks that JSON.
	if strings.ContainsAny(name, "\"\\") || strings.IndexFunc(name, func(r rune) bool { return r < 0x20 }) >= 0 {
		return badRequest("Malformed JSON: invalid resource class name " + pyRepr(name))
	}
	body := &pycompat.Object{Keys: []string{"name"}, Vals: map[string]any{"name": name}}
	if err := js.Placement.Validate(resourceClassSchema, body); err != nil {
		return invalid("%s", err.Msg)
	}
	err := api.apply(c, scheduling.Change{Op: scheduling.OpCreateResourceClass, ResourceClass: name})
	var ce *models.Error
	if err != nil && errors.As(err, &ce) && ce.Kind == models.Conflict {
		return c.NoContent(http.StatusNoContent)
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, c.Scheme()+"://"+c.Request().Host+mount+"/resource_classes/"+name)
	return c.NoContent(http.StatusCreated)
}

// deleteResourceClass is DELETE /resource_classes/{name}.
func (api *API) deleteResourceClass(c echo.Context) error {
	v := version(c)
	if !v.AtLeast(2) {
		return &Error{Status: http.StatusNotFound}
	}
	name := c.Param("name")
	if standardClassSet[name] {
		return badRequest("Cannot delete standard resource class " + name + ": Cannot delete standard resource class " + name + ".")
	}
	if err := api.apply(c, scheduling.Change{Op: scheduling.OpDeleteResourceClass, ResourceClass: name}); err != nil {
		var ce *models.Error
		switch {
		case errors.As(err, &ce) && ce.Kind == models.Conflict:
			return &Error{Status: http.StatusConflict, Msg: "Unable to delete resource class " + name + ": " + ce.Msg}
		case errors.As(err, &ce) && ce.Kind == models.NotFound:
			return notFound("No such resource class " + name + ".")
		}
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// --- traits ---

// listTraits is GET /traits (1.6+) with name=in:/startswith: and associated.
func (api *API) listTraits(c echo.Context) error {
	v := version(c)
	if !v.AtLeast(6) {
		return &Error{Status: http.StatusNotFound}
	}
	params, vals, perr := orderedQuery(c.Request().URL.RawQuery)
	if perr != nil {
		return perr
	}
	for _, p := range params {
		if p.key != "name" && p.key != "associated" {
			return badRequest(fmt.Sprintf("Invalid query string parameters: Additional properties are not allowed (%s was unexpected)", pyRepr(p.key)))
		}
	}
	custom, err := api.env.Store.CustomTraits(c.Request().Context())
	if err != nil {
		return err
	}
	snap, err := api.snapshot(c)
	if err != nil {
		return err
	}
	ix := snap.Index()
	used := map[string]bool{}
	for i := 0; i < ix.Len(); i++ {
		for _, t := range ix.Provider(i).Traits {
			used[t] = true
		}
	}
	all := setOf(placement.StandardTraits)
	for _, t := range custom {
		all[t] = true
	}
	for t := range used {
		all[t] = true
	}
	names := make([]string, 0, len(all))
	for t := range all {
		names = append(names, t)
	}
	sort.Strings(names)
	if nv := vals["name"]; len(nv) > 0 {
		val := nv[len(nv)-1]
		var keep func(string) bool
		switch {
		case strings.HasPrefix(val, "in:"):
			set := setOf(strings.Split(val[3:], ","))
			keep = func(t string) bool { return set[t] }
		case strings.HasPrefix(val, "startswith:"):
			pre := val[len("startswith:"):]
			keep = func(t string) bool { return strings.HasPrefix(t, pre) }
		default:
			return badRequest("Badly formatted name parameter. Expected name query string parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. Got: \"" + val + "\"")
		}
		names = filterStrings(names, keep)
	}
	if av := vals["associated"]; len(av) > 0 {
		switch strings.ToLower(av[len(av)-1]) {
		case "true":
			names = filterStrings(names, func(t string) bool { return used[t] })
		case "false":
			names = filterStrings(names, func(t string) bool { return !used[t] })
		default:
			return badRequest("The query parameter \"associated\" only accepts \"true\" or \"false\"")
		}
	}
	if v.AtLeast(15) {
		setLastModified(c, api.now())
	}
	return c.JSON(http.StatusOK, map[string]any{"traits": names})
}

func filterStrings(s []string, keep func(string) bool) []string {
	out := s[:0]
	for _, x := range s {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func (api *API) traitExists(c echo.Context, name string) (bool, error) {
	if standardTraitSet[name] {
		return true, nil
	}
	custom, err := api.env.Store.CustomTraits(c.Request().Context())
	if err != nil {
		return false, err
	}
	for _, t := range custom {
		if t == name {
			return true, nil
		}
	}
	snap, err := api.snapshot(c)
	if err != nil {
		return false, err
	}
	return !snap.Index().WithTrait(name).IsEmpty(), nil
}

// showTrait is GET /traits/{name}: 204 when it exists.
func (api *API) showTrait(c echo.Context) error {
	if !version(c).AtLeast(6) {
		return &Error{Status: http.StatusNotFound}
	}
	name := c.Param("name")
	ok, err := api.traitExists(c, name)
	if err != nil {
		return err
	}
	if !ok {
		return notFound("No such trait(s): " + name + ".")
	}
	if version(c).AtLeast(15) {
		setLastModified(c, api.now())
	}
	return c.NoContent(http.StatusNoContent)
}

// putTrait is PUT /traits/{name}: 201 created, 204 existing.
func (api *API) putTrait(c echo.Context) error {
	if !version(c).AtLeast(6) {
		return &Error{Status: http.StatusNotFound}
	}
	name := c.Param("name")
	if !customPattern.MatchString(name) {
		return badRequest("The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix \"CUSTOM_\" and use following characters: \"A\"-\"Z\", \"0\"-\"9\" and \"_\"")
	}
	exists, err := api.traitExists(c, name)
	if err != nil {
		return err
	}
	if err := api.apply(c, scheduling.Change{Op: scheduling.OpCreateTrait, Trait: name}); err != nil {
		return err
	}
	if version(c).AtLeast(15) {
		setLastModified(c, api.now())
	}
	c.Response().Header().Set(echo.HeaderLocation, c.Scheme()+"://"+c.Request().Host+mount+"/traits/"+name)
	if !exists {
		return c.NoContent(http.StatusCreated)
	}
	return c.NoContent(http.StatusNoContent)
}

// deleteTrait is DELETE /traits/{name}.
func (api *API) deleteTrait(c echo.Context) error {
	if !version(c).AtLeast(6) {
		return &Error{Status: http.StatusNotFound}
	}
	name := c.Param("name")
	if standardTraitSet[name] {
		return badRequest("Cannot delete standard trait " + name + ".")
	}
	snap, err := api.snapshot(c)
	if err != nil {
		return err
	}
	if !snap.Index().WithTrait(name).IsEmpty() {
		return &Error{Status: http.StatusConflict, Msg: "The trait " + name + " is in use by a resource provider."}
	}
	if err := api.apply(c, scheduling.Change{Op: scheduling.OpDeleteTrait, Trait: name}); err != nil {
		var ce *models.Error
		if errors.As(err, &ce) && ce.Kind == models.NotFound {
			return notFound("No such trait(s): " + name + ".")
		}
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// setProviderTraits is PUT /resource_providers/{uuid}/traits (1.6+).
func (api *API) setProviderTraits(c echo.Context) error {
	v := version(c)
	if !v.AtLeast(6) {
		return &Error{Status: http.StatusNotFound}
	}
	id := c.Param("uuid")
	p, _, err := api.provider(c, id)
	if err != nil {
		return err
	}
	obj, perr := readValidObject(c, traitsSchema)
	if perr != nil {
		return perr
	}
	gen, _ := asInt(obj["resource_provider_generation"])
	if gen != p.Generation {
		return traitsConflict
	}
	// Placement takes the list as a set: repeats are fine, and a name
	// that is not a trait's is simply not found.
	var traits, missing []string
	seen := map[string]bool{}
	for _, t := range obj["traits"].([]any) {
		name := t.(string)
		if seen[name] {
			continue
		}
		seen[name] = true
		exists, terr := api.traitExists(c, name)
		if terr != nil {
			return terr
		}
		if exists {
			traits = append(traits, name)
		} else {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing) // Placement joins a set, in hash order
		return badRequest("No such trait " + strings.Join(missing, ", "))
	}
	err = api.apply(c, scheduling.Change{Op: scheduling.OpSetTraits, Provider: id, Generation: generation(gen),
		PlacementFields: scheduling.PlacementFields{Traits: traits}})
	if err != nil {
		var ce *models.Error
		if errors.As(err, &ce) && ce.Kind == models.Conflict {
			return traitsConflict
		}
		return err
	}
	if p, err = api.written(c, id); err != nil {
		return err
	}
	if v.AtLeast(15) {
		setLastModified(c, modified(p))
	}
	return c.JSON(http.StatusOK, map[string]any{"traits": p.Traits, "resource_provider_generation": p.Generation})
}

// deleteProviderTraits is DELETE /resource_providers/{uuid}/traits (1.6+).
func (api *API) deleteProviderTraits(c echo.Context) error {
	if !version(c).AtLeast(6) {
		return &Error{Status: http.StatusNotFound}
	}
	id := c.Param("uuid")
	p, _, err := api.provider(c, id)
	if err != nil {
		return err
	}
	if err := api.apply(c, scheduling.Change{Op: scheduling.OpSetTraits, Provider: id, Generation: generation(p.Generation)}); err != nil {
		var ce *models.Error
		if errors.As(err, &ce) && ce.Kind == models.Conflict {
			return traitsConflict
		}
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// registerResources mounts inventories, usages, allocations, resource
// classes, traits and allocation candidates.
func (api *API) registerResources(g *echo.Group, read echo.MiddlewareFunc, admin func(string) echo.MiddlewareFunc) {
	route(g, "/resource_providers/:uuid/inventories", []method{
		{http.MethodGet, api.getInventories, read},
		{http.MethodPost, api.createInventory, admin("resource_providers:inventories:create")},
		{http.MethodPut, api.setInventories, admin("resource_providers:inventories:update")},
		{http.MethodDelete, api.deleteInventories, admin("resource_providers:inventories:delete")},
	})
	route(g, "/resource_providers/:uuid/inventories/:rc", []method{
		{http.MethodGet, api.getInventory, read},
		{http.MethodPut, api.updateInventory, admin("resource_providers:inventories:update")},
		{http.MethodDelete, api.deleteInventory, admin("resource_providers:inventories:delete")},
	})
	route(g, "/resource_providers/:uuid/usages", []method{
		{http.MethodGet, api.providerUsages, read},
	})
	route(g, "/resource_providers/:uuid/allocations", []method{
		{http.MethodGet, api.providerAllocations, read},
	})
	route(g, "/usages", []method{
		{http.MethodGet, api.totalUsages, read},
	})
	route(g, "/allocations", []method{
		{http.MethodPost, api.postAllocations, admin("allocations:manage")},
	})
	route(g, "/allocations/:consumer", []method{
		{http.MethodGet, api.consumerAllocations, read},
		{http.MethodPut, api.setConsumerAllocations, admin("allocations:update")},
		{http.MethodDelete, api.deleteConsumerAllocations, admin("allocations:delete")},
	})
	route(g, "/resource_classes", []method{
		{http.MethodGet, api.listResourceClasses, read},
		{http.MethodPost, api.createResourceClass, admin("resource_classes:create")},
	})
	route(g, "/resource_classes/:name", []method{
		{http.MethodGet, api.showResourceClass, read},
		{http.MethodPut, api.putResourceClass, admin("resource_classes:update")},
		{http.MethodDelete, api.deleteResourceClass, admin("resource_classes:delete")},
	})
	route(g, "/traits", []method{
		{http.MethodGet, api.listTraits, read},
	})
	route(g, "/traits/:name", []method{
		{http.MethodGet, api.showTrait, read},
		{http.MethodPut, api.putTrait, admin("traits:update")},
		{http.MethodDelete, api.deleteTrait, admin("traits:delete")},
	})
	route(g, "/allocation_candidates", []method{
		{http.MethodGet, api.listCandidates, read},
	})
}
