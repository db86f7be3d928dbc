package placementapi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	js "corral/handlers/jsonschema"
	"corral/models"
	"corral/models/placement"
	"corral/models/pycompat"
	"corral/models/scheduling"
)

// Resource classes: GET and POST /resource_classes, GET, PUT and DELETE
// /resource_classes/{name}.

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
