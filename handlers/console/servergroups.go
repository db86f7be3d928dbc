package console

import (
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/forms"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/views"
	cv "corral/views/console"
)

// Server groups follow Nova's policy: admins see every project's groups;
// others see, and members change, only their own project's. Another
// project's group is a 404, not a 403, so its existence is not revealed.

func currentProject(c echo.Context) string {
	if u := handlers.CurrentUser(c); u != nil {
		return u.ProjectID
	}
	return ""
}

// loadGroup finds the group of :id if the caller may see it.
func (h *Handler) loadGroup(c echo.Context) (*models.ServerGroup, error) {
	id := c.Param("id")
	g, err := h.store().GetServerGroup(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	if !isAdmin(c) && g.ProjectID != currentProject(c) {
		return nil, models.E(models.NotFound, "server_group", "server group %s not found", id)
	}
	return g, nil
}

// canEditGroup: admins, and members of the group's project.
func canEditGroup(c echo.Context, g *models.ServerGroup) bool {
	return isAdmin(c) || (handlers.HasRole(c, models.RoleMember) && g.ProjectID == currentProject(c))
}

// GroupList lists the groups the caller may see (GET /server-groups).
func (h *Handler) GroupList(c echo.Context) error {
	ctx := c.Request().Context()
	offset, limit := handlers.Paging(c, handlers.DefaultPageSize)
	props := cv.GroupListProps{AllProjects: isAdmin(c), CanCreate: handlers.HasRole(c, models.RoleMember)}
	project := currentProject(c)
	if props.AllProjects {
		project = strings.TrimSpace(c.QueryParam("project"))
		props.Project = project
	} else if project == "" {
		// A non-admin without a project owns no groups; "" would mean all.
		props.Pager = views.Pager{Path: "/server-groups"}
		return handlers.Render(c, http.StatusOK, cv.GroupList(layout.Page(c, "Server groups", "server-groups"), props))
	}
	groups, err := h.store().ListServerGroups(ctx, store.ServerGroupQuery{ProjectID: project, Offset: offset, Limit: limit})
	if err != nil {
		return err
	}
	total, err := h.store().CountServerGroups(ctx, project)
	if err != nil {
		return err
	}
	sr := newServerResolver(h, c)
	for _, g := range groups {
		members, err := sr.members(g.Members)
		if err != nil {
			return err
		}
		_, violations := groupPlacement(&g, members)
		props.Rows = append(props.Rows, cv.GroupRow{G: g, Violations: len(violations)})
	}
	props.Pager = views.Pager{Offset: offset, Limit: limit, Total: total, Path: "/server-groups", Query: c.QueryParams()}
	return handlers.Render(c, http.StatusOK, cv.GroupList(layout.Page(c, "Server groups", "server-groups"), props))
}

// serverResolver looks servers up once per request.
type serverResolver struct {
	h     *Handler
	c     echo.Context
	cache map[string]*models.Server
}

func newServerResolver(h *Handler, c echo.Context) *serverResolver {
	return &serverResolver{h: h, c: c, cache: map[string]*models.Server{}}
}

func (r *serverResolver) members(ids []string) ([]cv.GroupMember, error) {
	out := make([]cv.GroupMember, 0, len(ids))
	for _, id := range ids {
		s, ok := r.cache[id]
		if !ok {
			var err error
			s, err = r.h.store().GetServer(r.c.Request().Context(), id)
			if err != nil && models.KindOf(err) != models.NotFound {
				return nil, err
			}
			r.cache[id] = s
		}
		if s == nil {
			out = append(out, cv.GroupMember{UUID: id, Name: id, Missing: true})
			continue
		}
		out = append(out, cv.GroupMember{UUID: s.UUID, Name: s.Name, Host: s.Host, Project: s.ProjectID})
	}
	return out, nil
}

// groupPlacement words the core's check of a group's placement
// (scheduling.CheckGroupPlacement) for the group page.
func groupPlacement(g *models.ServerGroup, members []cv.GroupMember) ([]cv.HostCount, []string) {
	memberHosts := make([]string, len(members))
	for i, m := range members {
		memberHosts[i] = m.Host
	}
	counts, found := scheduling.CheckGroupPlacement(g, memberHosts)
	hosts := make([]cv.HostCount, len(counts))
	for i, hc := range counts {
		hosts[i] = cv.HostCount{Host: hc.Host, Count: hc.Count, Limit: hc.Limit, Over: hc.Over}
	}
	var violations []string
	for _, v := range found {
		if v.Policy == models.PolicyAffinity {
			violations = append(violations, fmt.Sprintf("Affinity is already violated: members run on %d hosts (%s). New members can land on none of them.", len(v.Hosts), strings.Join(v.Hosts, ", ")))
			continue
		}
		violations = append(violations, fmt.Sprintf("Anti-affinity is already violated: %s runs %d members, more than max_server_per_host=%d. New members cannot land there, and the existing ones stay until moved.", v.Host, v.Count, v.Limit))
	}
	return hosts, violations
}

// GroupNew shows the create form (GET /server-groups/new).
func (h *Handler) GroupNew(c echo.Context) error {
	if again, kept := retrying(c, "group-new"); again {
		f, _ := readGroupForm(c)
		mergeErrors(f.Errors, kept)
		return h.renderGroupNew(c, http.StatusOK, f)
	}
	f := cv.GroupForm{Policy: models.PolicyAntiAffinity, AdminView: isAdmin(c), Project: currentProject(c), Errors: map[string]string{}}
	return h.renderGroupNew(c, http.StatusOK, f)
}

func (h *Handler) renderGroupNew(c echo.Context, status int, f cv.GroupForm) error {
	return handlers.Render(c, status, cv.GroupNew(layout.Page(c, "New server group", "server-groups"), f))
}

// GroupCreate creates a group (POST /server-groups), read by
// forms.GroupCreate: what Nova's API checks, the policy, and rules for
// anti-affinity only.
func (h *Handler) GroupCreate(c echo.Context) error {
	f, read := readGroupForm(c)
	// A refusal comes back to the form (post/redirect/get) with what was
	// typed; the page checks it again.
	if len(f.Errors) > 0 {
		return retryForm(c, "/server-groups/new", "group-new", f.Errors, "")
	}
	changes := read.Changes
	applied, err := h.apply(c, changes)
	if err != nil {
		if !userError(err) {
			return err
		}
		return retryForm(c, "/server-groups/new", "group-new",
			placeError(err, map[string]string{"name": "name", "server_group": "name", "policy": "policy", "rules": "max_server_per_host", "project": "project"}), "")
	}
	msg := fmt.Sprintf("Server group “%s” created with policy %s", f.Name, f.Policy)
	if n, ok := changes[0].Rules[models.RuleMaxServerPerHost]; ok {
		msg += fmt.Sprintf(" and max_server_per_host=%d", n)
	}
	// Connected, the group is Nova's, under the uuid Nova gave it.
	return redirectFlash(c, handlers.FlashSuccess, msg+".", "/server-groups/"+applied.IDOf(changes[0].UUID))
}

// readGroupForm reads the new-group form (forms.GroupCreate), as typed
// and with its refusals.
func readGroupForm(c echo.Context) (cv.GroupForm, forms.Read) {
	params, _ := c.FormParams()
	who := forms.Who{Admin: isAdmin(c), Project: currentProject(c)}
	if u := handlers.CurrentUser(c); u != nil {
		who.User = u.Name
	}
	read := forms.GroupCreate(params, who)
	f := cv.GroupForm{
		Name:       strings.TrimSpace(c.FormValue("name")),
		Policy:     c.FormValue("policy"),
		MaxPerHost: strings.TrimSpace(c.FormValue("max_server_per_host")),
		AdminView:  who.Admin,
		Project:    who.Project,
		Errors:     map[string]string{},
	}
	if f.AdminView {
		f.Project = strings.TrimSpace(c.FormValue("project"))
	}
	maps.Copy(f.Errors, read.Errors)
	return f, read
}

// GroupDetail shows a group (GET /server-groups/:id).
func (h *Handler) GroupDetail(c echo.Context) error {
	g, err := h.loadGroup(c)
	if err != nil {
		return err
	}
	if again, kept := retrying(c, "group-members"); again {
		return h.renderGroup(c, http.StatusOK, g, func(d *cv.GroupDetailProps) {
			d.AddValue, d.AddError = c.QueryParam("servers"), kept[""]
		})
	}
	return h.renderGroup(c, http.StatusOK, g, nil)
}

func (h *Handler) renderGroup(c echo.Context, status int, g *models.ServerGroup, opt func(*cv.GroupDetailProps)) error {
	members, err := newServerResolver(h, c).members(g.Members)
	if err != nil {
		return err
	}
	hosts, violations := groupPlacement(g, members)
	d := cv.GroupDetailProps{G: *g, Members: members, Hosts: hosts, Violations: violations, CanEdit: canEditGroup(c, g)}
	if opt != nil {
		opt(&d)
	}
	return handlers.Render(c, status, cv.GroupDetail(layout.Page(c, g.Name, "server-groups"), d))
}

// GroupMembersAdd adds servers (POST /server-groups/:id/members), read
// by forms.GroupMembersAdd.
func (h *Handler) GroupMembersAdd(c echo.Context) error {
	g, err := h.loadGroup(c)
	if err != nil {
		return err
	}
	if !canEditGroup(c, g) {
		return models.E(models.Forbidden, "", "only members of project %s and admins change this group", g.ProjectID)
	}
	// A refusal comes back to the group's page (post/redirect/get) with
	// the servers typed and the message beside them.
	fail := func(msg string) error {
		return retryForm(c, "/server-groups/"+g.UUID, "group-members", map[string]string{"": msg}, "#members")
	}
	gen, gerr := formGeneration(c)
	if gerr != nil {
		return fail(errMsg(gerr))
	}
	snap, err := h.snapshot(c)
	if err != nil {
		return err
	}
	params, _ := c.FormParams()
	read := forms.GroupMembersAdd(params, g, snap.World())
	if read.Refused() {
		return fail(read.FirstError())
	}
	err = forms.CheckGeneration("server group", g.Name, gen, g.Generation)
	if err == nil {
		_, err = h.apply(c, read.Changes)
	}
	if err != nil {
		if !userError(err) {
			return err
		}
		return fail(upperFirst(conflictMessage(err)))
	}
	next, err := h.loadGroup(c)
	if err != nil {
		return err
	}
	var names []string
	for _, ch := range read.Changes {
		for _, s := range snap.World().Servers {
			if s.UUID == ch.Server {
				names = append(names, s.Name)
			}
		}
	}
	msg := fmt.Sprintf("Added %s to “%s”: %s.", views.Plural(len(read.Changes), "server", "servers"), g.Name, strings.Join(names, ", "))
	members, err := newServerResolver(h, c).members(next.Members)
	if err != nil {
		return err
	}
	if _, v := groupPlacement(next, members); len(v) > 0 {
		handlers.AddFlash(c, handlers.FlashWarning, "The group's current placement breaks its policy; see below.")
	}
	return redirectFlash(c, handlers.FlashSuccess, msg, "/server-groups/"+g.UUID)
}

// GroupMembersRemove removes the ticked servers
// (POST /server-groups/:id/members/remove), read by forms.GroupMembersRemove.
func (h *Handler) GroupMembersRemove(c echo.Context) error {
	g, err := h.loadGroup(c)
	if err != nil {
		return err
	}
	if !canEditGroup(c, g) {
		return models.E(models.Forbidden, "", "only members of project %s and admins change this group", g.ProjectID)
	}
	back := "/server-groups/" + g.UUID
	gen, gerr := formGeneration(c)
	if gerr != nil {
		return redirectFlash(c, handlers.FlashError, errMsg(gerr), back)
	}
	params, _ := c.FormParams()
	read := forms.GroupMembersRemove(params, g)
	if read.Refused() {
		return redirectFlash(c, handlers.FlashError, read.FirstError(), back)
	}
	err = forms.CheckGeneration("server group", g.Name, gen, g.Generation)
	if err == nil {
		_, err = h.apply(c, read.Changes)
	}
	if err != nil {
		if !userError(err) {
			return err
		}
		return redirectFlash(c, handlers.FlashError, upperFirst(conflictMessage(err)), back)
	}
	n := len(read.Changes) + len(read.Skipped)
	return redirectFlash(c, handlers.FlashSuccess, fmt.Sprintf("Removed %s from “%s”.", views.Plural(n, "server", "servers"), g.Name), back)
}

// GroupConfirmDelete asks before deleting (GET /server-groups/:id/delete).
func (h *Handler) GroupConfirmDelete(c echo.Context) error {
	g, err := h.loadGroup(c)
	if err != nil {
		return err
	}
	if !canEditGroup(c, g) {
		return models.E(models.Forbidden, "", "only members of project %s and admins delete this group", g.ProjectID)
	}
	return handlers.Render(c, http.StatusOK, views.ConfirmPage(layout.Page(c, "Delete server group", "server-groups"), views.Confirm{
		Title:   "Delete server group “" + g.Name + "”?",
		Message: fmt.Sprintf("Its %s keep running but are no longer placed by the %s policy.", views.Plural(len(g.Members), "member", "members"), g.Policy),
		Action:  "/server-groups/" + g.UUID + "/delete",
		Cancel:  "/server-groups/" + g.UUID,
		Button:  "Delete server group",
	}))
}

// GroupDelete deletes (POST /server-groups/:id/delete).
func (h *Handler) GroupDelete(c echo.Context) error {
	g, err := h.loadGroup(c)
	if err != nil {
		return err
	}
	if !canEditGroup(c, g) {
		return models.E(models.Forbidden, "", "only members of project %s and admins delete this group", g.ProjectID)
	}
	if _, err := h.apply(c, forms.GroupDelete(g).Changes); err != nil {
		if !userError(err) {
			return err
		}
		return redirectFlash(c, handlers.FlashError, "Not deleted: "+errMsg(err)+".", "/server-groups/"+g.UUID)
	}
	return redirectFlash(c, handlers.FlashSuccess, fmt.Sprintf("Server group “%s” deleted.", g.Name), "/server-groups")
}
