package placementapi

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/placement"
	"corral/models/scheduling"
)

// Traits: the trait list (GET /traits, GET, PUT and DELETE /traits/{name})
// and a provider's traits (PUT and DELETE /resource_providers/{uuid}/traits).

var customPattern = regexp.MustCompile(`^CUSTOM_[A-Z0-9_]+$`)

var traitsConflict = &Error{Status: http.StatusConflict, Code: CodeConcurrentUpdate,
	Msg: "Resource provider's generation already changed. Please update the generation and try again."}

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
