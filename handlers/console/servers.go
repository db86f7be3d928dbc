package console

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/scheduling"
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
	snap, err := h.snapshot(c)
	if err != nil {
		return err
	}
	props.Hosts, props.HostCount = h.busiest.get(snap, project)
	groups := groupsOf(snap.World().ServerGroups, servers)
	for _, s := range servers {
		props.Rows = append(props.Rows, cv.ServerRow{S: s, Groups: groups[s.UUID], XRay: xrayURL(s.ProjectID, s.UserID, groups[s.UUID], s.Host)})
	}
	props.Pager = views.Pager{Offset: offset, Limit: limit, Total: total, Path: "/servers", Query: c.QueryParams()}
	return handlers.Render(c, http.StatusOK, cv.ServerList(layout.Page(c, "Servers", "servers"), props))
}

// busiest counts servers per host (project "" = every project) from the
// live snapshot — a GROUP BY over 50,000 servers costs the database a third
// of a second, the snapshot a few milliseconds — and returns the n busiest
// hosts, then by name, and how many hosts run any. Servers not scheduled
// count under "".
func busiest(servers []models.Server, project string, n int) ([]cv.HostServersRow, int) {
	type tally struct {
		servers  int
		projects map[string]bool
	}
	per := map[string]*tally{}
	for i := range servers {
		s := &servers[i]
		if project != "" && s.ProjectID != project {
			continue
		}
		t := per[s.Host]
		if t == nil {
			t = &tally{projects: map[string]bool{}}
			per[s.Host] = t
		}
		t.servers++
		t.projects[s.ProjectID] = true
	}
	rows := make([]cv.HostServersRow, 0, len(per))
	for h, t := range per {
		rows = append(rows, cv.HostServersRow{Host: h, Servers: t.servers, Projects: len(t.projects)})
	}
	slices.SortFunc(rows, func(a, b cv.HostServersRow) int {
		return cmp.Or(cmp.Compare(b.Servers, a.Servers), strings.Compare(a.Host, b.Host))
	})
	return rows[:min(n, len(rows))], len(rows)
}

// busiestCache keeps the busiest hosts per project for the live snapshot
// they were counted on: counting 50,000 servers takes tens of
// milliseconds, and the answer only changes with the snapshot.
type busiestCache struct {
	mu      sync.Mutex
	snap    *scheduling.Snapshot
	answers map[string]busiestAnswer
}

type busiestAnswer struct {
	rows  []cv.HostServersRow
	hosts int
}

// maxBusiestAnswers bounds the projects remembered for one snapshot.
const maxBusiestAnswers = 64

func (bc *busiestCache) get(snap *scheduling.Snapshot, project string) ([]cv.HostServersRow, int) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if bc.snap != snap || len(bc.answers) >= maxBusiestAnswers {
		bc.snap, bc.answers = snap, map[string]busiestAnswer{}
	}
	a, ok := bc.answers[project]
	if !ok {
		a.rows, a.hosts = busiest(snap.World().Servers, project, busiestHosts)
		bc.answers[project] = a
	}
	return a.rows, a.hosts
}

// groupsOf finds the server groups each of servers belongs to (a server is
// in at most one group in Nova; corral shows every one it finds rather
// than hide a second).
func groupsOf(groups []models.ServerGroup, servers []models.Server) map[string][]cv.GroupRef {
	out := map[string][]cv.GroupRef{}
	want := make(map[string]bool, len(servers))
	for _, s := range servers {
		want[s.UUID] = true
	}
	for _, g := range groups {
		for _, m := range g.Members {
			if want[m] {
				out[m] = append(out[m], cv.GroupRef{UUID: g.UUID, Name: g.Name, Policy: g.Policy})
			}
		}
	}
	return out
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
