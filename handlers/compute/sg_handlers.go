package compute

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
)

// GET /os-server-groups
func (api *API) listServerGroups(c echo.Context) error {
	v, who := version(c), caller(c)
	p, f := ParseServerGroupList(v, c.QueryParams())
	if f != nil {
		return f
	}
	if f := serverGroupPolicy(sgIndex, who, who.ProjectID); f != nil {
		return f
	}
	q := store.ServerGroupQuery{ProjectID: who.ProjectID, Offset: p.Offset, Limit: p.Limit}
	// all_projects counts only for admins; others are silently scoped.
	if p.AllProjects && who.IsAdmin() {
		if f := serverGroupPolicy(sgIndexAllProjects, who, who.ProjectID); f != nil {
			return f
		}
		q.ProjectID = ""
	} else if who.ProjectID == "" {
		// A caller without a project has no groups of its own; an empty
		// ProjectID would mean "all projects" to the store.
		return writeJSON(c, http.StatusOK, doc{{"server_groups", []any{}}})
	}
	groups, err := api.env.Store.ListServerGroups(c.Request().Context(), q)
	if err != nil {
		return err
	}
	out := make([]any, len(groups))
	for i := range groups {
		out[i] = FormatServerGroup(v, &groups[i])
	}
	return writeJSON(c, http.StatusOK, doc{{"server_groups", out}})
}

// POST /os-server-groups
func (api *API) createServerGroup(c echo.Context) error {
	v, who := version(c), caller(c)
	if f := checkContentType(c); f != nil {
		return f
	}
	raw, f := readBody(c)
	if f != nil {
		return f
	}
	spec, f := ParseServerGroupCreate(v, raw)
	if f != nil {
		return f
	}
	if f := serverGroupPolicy(sgCreate, who, who.ProjectID); f != nil {
		return f
	}
	create := scheduling.Change{Op: scheduling.OpCreateServerGroup, ServerGroup: spec.Name, UUID: models.NewUUID(),
		Project: who.ProjectID, User: who.UserID, Policy: spec.Policy, Rules: spec.Rules}
	applied, err := api.env.Writer.Apply(c.Request().Context(), handlers.Actor(c), []scheduling.Change{create})
	if err != nil {
		if models.KindOf(err) == models.OverQuota {
			return faultf(http.StatusForbidden, "Quota exceeded, too many server groups.")
		}
		return err
	}
	// Connected, Nova chose the group's uuid, and the re-sync stored it
	// under that one: the answer is the group as Nova has it.
	g, err := api.env.Store.GetServerGroup(c.Request().Context(), applied.IDOf(create.UUID))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, doc{{"server_group", FormatServerGroup(v, g)}})
}

// visibleGroup loads a group the way Nova's DB query does: non-admins only
// see their own project's groups, everything else is "not found".
func (api *API) visibleGroup(c echo.Context, id string, who Caller) (*models.ServerGroup, error) {
	g, err := api.env.Store.GetServerGroup(c.Request().Context(), id)
	if err != nil {
		return nil, storeFault(err, func() error { return groupNotFound(id) })
	}
	if !who.IsAdmin() && (who.ProjectID == "" || g.ProjectID != who.ProjectID) {
		return nil, groupNotFound(id)
	}
	return g, nil
}

// GET /os-server-groups/{id}
func (api *API) showServerGroup(c echo.Context) error {
	v, who := version(c), caller(c)
	if f := ParseServerGroupShowQuery(v, c.QueryParams()); f != nil {
		return f
	}
	id := c.Param("id")
	g, f := api.visibleGroup(c, id, who)
	if f != nil {
		return f
	}
	if f := serverGroupPolicy(sgShow, who, g.ProjectID); f != nil {
		return f
	}
	return writeJSON(c, http.StatusOK, doc{{"server_group", FormatServerGroup(v, g)}})
}

// DELETE /os-server-groups/{id}
func (api *API) deleteServerGroup(c echo.Context) error {
	who := caller(c)
	id := c.Param("id")
	g, f := api.visibleGroup(c, id, who)
	if f != nil {
		return f
	}
	if f := serverGroupPolicy(sgDelete, who, g.ProjectID); f != nil {
		return f
	}
	_, err := api.env.Writer.Apply(c.Request().Context(), handlers.Actor(c), []scheduling.Change{{Op: scheduling.OpDeleteServerGroup, ServerGroup: g.UUID}})
	if err != nil {
		return storeFault(err, func() error { return groupNotFound(id) })
	}
	c.Response().Header().Set("Content-Type", "application/json")
	return c.NoContent(http.StatusNoContent)
}
