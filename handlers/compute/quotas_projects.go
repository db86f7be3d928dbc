package compute

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"corral/models/store"
)

// OpenStackClient resolves the <project> of "quota show/set" and "limits
// show --project" through Keystone's GET /v3/projects/{id} (then
// ?name=). corral has no Keystone, and with keystoneauth's admin_token
// plugin every service's requests go to the one endpoint given, so the
// compute API answers these two lookups itself, Keystone-shaped, for the
// projects corral knows (those owning users, servers, server groups or
// quota limits). A project's name is its id.

// projectDoc is a Keystone v3 project.
func projectDoc(c echo.Context, id string) doc {
	return doc{
		{"id", id}, {"name", id}, {"domain_id", "default"}, {"description", ""},
		{"enabled", true}, {"parent_id", "default"}, {"is_domain", false},
		{"tags", []any{}}, {"options", doc{}},
		{"links", doc{{"self", baseURL(c) + "/v2.1/projects/" + id}}},
	}
}

// keystoneError answers in Keystone's error shape, which keystoneclient
// parses (it reports a Nova fault body as an unrecognized schema).
func keystoneError(c echo.Context, status int, title, msg string) error {
	return writeJSON(c, status, doc{{"error", doc{{"code", status}, {"message", msg}, {"title", title}}}})
}

// knownProject reports whether corral has anything of project p.
func knownProject(us []store.ProjectUsage, p string) bool {
	for _, u := range us {
		if u.ProjectID == p {
			return true
		}
	}
	return false
}

// GET /projects/{id}: admins see any known project, others their own
// (Keystone's identity:get_project default).
func (api *API) showProject(c echo.Context) error {
	who, id := caller(c), c.Param("id")
	notFound := func() error {
		return keystoneError(c, http.StatusNotFound, "Not Found", "Could not find project: "+id+".")
	}
	if !who.IsAdmin() && (who.ProjectID == "" || who.ProjectID != id) {
		return notFound()
	}
	us, err := api.env.Store.ListProjectUsage(c.Request().Context(), "")
	if err != nil {
		return err
	}
	if !knownProject(us, id) {
		return notFound()
	}
	return writeJSON(c, http.StatusOK, doc{{"project", projectDoc(c, id)}})
}

// GET /projects[?name=N]: admin only, as Keystone's identity:list_projects.
func (api *API) listProjects(c echo.Context) error {
	if !caller(c).IsAdmin() {
		return keystoneError(c, http.StatusForbidden, "Forbidden",
			"You are not authorized to perform the requested action: identity:list_projects.")
	}
	us, err := api.env.Store.ListProjectUsage(c.Request().Context(), "")
	if err != nil {
		return err
	}
	q := c.QueryParams()
	name, byName := q["name"]
	out := []any{}
	for _, u := range us {
		if byName && u.ProjectID != name[len(name)-1] {
			continue
		}
		out = append(out, projectDoc(c, u.ProjectID))
	}
	links := doc{{"self", baseURL(c) + "/v2.1/projects"}, {"previous", nil}, {"next", nil}}
	return writeJSON(c, http.StatusOK, doc{{"projects", out}, {"links", links}})
}

// GET /v2.0/quotas/{id}: "openstack quota show" also asks Neutron, at the
// same endpoint (see above), and fails on a 404. corral has no networks,
// so the network quota set it answers is empty.
func (api *API) showNetworkQuota(c echo.Context) error {
	id := c.Param("id")
	if f := quotaSetPolicy(qsShow, caller(c), id); f != nil {
		return f
	}
	return writeJSON(c, http.StatusOK, doc{{"quota", doc{}}})
}
