package placementapi

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// Usages: GET /resource_providers/{uuid}/usages and GET /usages (a
// project's, by consumer type from 1.38).

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
