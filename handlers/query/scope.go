package query

import (
	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
	"corral/models/scheduling"
	"corral/views"
)

// Server groups belong to projects: a non-admin sees and names only their
// own project's, and another project's group is not found, as on the
// server-group pages and in the compute API.

// groupVisible reports whether the caller may see group g.
func groupVisible(c echo.Context, g *models.ServerGroup) bool {
	if handlers.HasRole(c, models.RoleAdmin) {
		return true
	}
	u := handlers.CurrentUser(c)
	return u != nil && u.ProjectID != "" && g.ProjectID == u.ProjectID
}

// checkGroupRef refuses a request naming (by uuid or name) a group the
// caller may not see, with the error a missing group gets. A name shared
// with another project's group must be given as the uuid.
func checkGroupRef(c echo.Context, live *state, ref string) error {
	if ref == "" || handlers.HasRole(c, models.RoleAdmin) {
		return nil
	}
	visible, hidden := 0, 0
	for i := range live.world.ServerGroups {
		g := &live.world.ServerGroups[i]
		if g.UUID != ref && g.Name != ref {
			continue
		}
		if groupVisible(c, g) {
			if g.UUID == ref {
				return nil
			}
			visible++
		} else {
			hidden++
		}
	}
	switch {
	case hidden > 0 && visible == 0:
		return models.E(models.NotFound, "server_group", "server group %s not found", ref)
	case hidden > 0:
		return models.E(models.Invalid, "server_group", "several server groups are named %q; use the uuid", ref)
	}
	return nil
}

// visibleOptions is the form's options with only the caller's groups.
func visibleOptions(c echo.Context, live *state) views.QueryOptions {
	opts := live.options()
	if handlers.HasRole(c, models.RoleAdmin) {
		return opts
	}
	opts.Groups = nil
	for i := range live.world.ServerGroups {
		g := &live.world.ServerGroups[i]
		if !groupVisible(c, g) {
			continue
		}
		for _, o := range live.options().Groups {
			if o.Value == g.UUID {
				opts.Groups = append(opts.Groups, o)
			}
		}
	}
	return opts
}

// scopeStranding keeps, for a non-admin, only the stranded servers and
// broken groups of their own project, as the compute API shows them only
// their own project's groups.
func scopeStranding(c echo.Context, st *scheduling.Stranding) *scheduling.Stranding {
	if st == nil || handlers.HasRole(c, models.RoleAdmin) {
		return st
	}
	u := handlers.CurrentUser(c)
	mine := func(project string) bool { return u != nil && u.ProjectID != "" && project == u.ProjectID }
	out := &scheduling.Stranding{Checked: st.Checked, Servers: []scheduling.StrandedServer{}, Groups: []scheduling.BrokenGroup{}}
	for _, s := range st.Servers {
		if mine(s.Project) {
			out.Servers = append(out.Servers, s)
		}
	}
	for _, g := range st.Groups {
		if mine(g.Project) {
			out.Groups = append(out.Groups, g)
		}
	}
	return out
}
