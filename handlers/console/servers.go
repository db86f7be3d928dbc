package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/store"
	"corral/views"
	cv "corral/views/console"
)

// busiestHosts is how many hosts the page's summary lists; any other host
// is one click away through the host filter.
const busiestHosts = 12

// ServerList is GET /servers: the servers on each host, for every project
// (admins) or the viewer's own, with the groups they belong to and a link
// to the X-ray of their request.
func (h *Handler) ServerList(c echo.Context) error {
	ctx := c.Request().Context()
	offset, limit := handlers.Paging(c, handlers.DefaultPageSize)
	search, _, _ := queryList(c)
	props := cv.ServerListProps{
		AllProjects: isAdmin(c),
		Host:        strings.TrimSpace(c.QueryParam("host")),
		Search:      search,
	}
	project := currentProject(c)
	if props.AllProjects {
		project = strings.TrimSpace(c.QueryParam("project"))
		props.Project = project
	} else if project == "" {
		// A non-admin without a project owns no servers; "" would mean all.
		props.Pager = views.Pager{Path: "/servers"}
		return handlers.Render(c, http.StatusOK, cv.ServerList(layout.Page(c, "Servers", "servers"), props))
	}
	servers, total, err := h.store().ListServers(ctx, store.ServerQuery{
		ProjectID: project, Host: props.Host, Search: search, Offset: offset, Limit: limit})
	if err != nil {
		return err
	}
	hosts, hostCount, err := h.store().ServersPerHost(ctx, project, 0, busiestHosts)
	if err != nil {
		return err
	}
	props.HostCount = hostCount
	for _, hs := range hosts {
		props.Hosts = append(props.Hosts, cv.HostServersRow{Host: hs.Host, Servers: hs.Servers, Projects: hs.Projects})
	}
	groups, err := h.groupsOf(c, servers)
	if err != nil {
		return err
	}
	for _, s := range servers {
		props.Rows = append(props.Rows, cv.ServerRow{S: s, Groups: groups[s.UUID], XRay: xrayURL(s.ProjectID, s.UserID, groups[s.UUID], s.Host)})
	}
	props.Pager = views.Pager{Offset: offset, Limit: limit, Total: total, Path: "/servers", Query: c.QueryParams()}
	return handlers.Render(c, http.StatusOK, cv.ServerList(layout.Page(c, "Servers", "servers"), props))
}

// groupsOf finds, in the live snapshot, the server groups each of servers
// belongs to (a server is in at most one group in Nova; corral shows all
// it finds rather than hide a second one).
func (h *Handler) groupsOf(c echo.Context, servers []models.Server) (map[string][]cv.GroupRef, error) {
	out := map[string][]cv.GroupRef{}
	if len(servers) == 0 {
		return out, nil
	}
	want := make(map[string]bool, len(servers))
	for _, s := range servers {
		want[s.UUID] = true
	}
	snap, err := h.snapshot(c)
	if err != nil {
		return nil, err
	}
	for _, g := range snap.World().ServerGroups {
		for _, m := range g.Members {
			if want[m] {
				out[m] = append(out[m], cv.GroupRef{UUID: g.UUID, Name: g.Name, Policy: g.Policy})
			}
		}
	}
	return out, nil
}

// xrayURL is the query page for a server's request — its project, user and
// group — with the host matrix narrowed to the host it runs on: why it may
// be there, and where else it could go. The flavor is left to pick.
func xrayURL(project, user string, groups []cv.GroupRef, host string) string {
	q := url.Values{}
	q.Set("project", project)
	if user != "" {
		q.Set("user", user)
	}
	if len(groups) > 0 {
		q.Set("group", groups[0].UUID)
	}
	if host != "" {
		q.Set("hname", host)
	}
	return "/query?" + q.Encode()
}
