package placementapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	js "corral/handlers/jsonschema"
	"corral/models/pycompat"
)

// The resource endpoints' route table (registerResources) and the JSON
// body readers their writes share. Each resource has a file of its own:
// inventories.go, usages.go, allocations.go, resource_classes.go,
// traits.go, candidates.go.

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
