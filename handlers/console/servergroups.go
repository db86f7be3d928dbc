package console

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"corral/handlers"
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

// GroupCreate creates a group (POST /server-groups), checking what Nova's
// API checks: the policy, and rules for anti-affinity only.
func (h *Handler) GroupCreate(c echo.Context) error {
	f, rules := readGroupForm(c)
	// A refusal comes back to the form (post/redirect/get) with what was
	// typed; the page checks it again.
	if len(f.Errors) > 0 {
		return retryForm(c, "/server-groups/new", "group-new", f.Errors, "")
	}
	g := &models.ServerGroup{Name: f.Name, Policy: f.Policy, Rules: rules, ProjectID: f.Project, UserID: handlers.CurrentUser(c).Name}
	if err := h.store().CreateServerGroup(c.Request().Context(), handlers.Actor(c), g); err != nil {
		if !userError(err) {
			return err
		}
		return retryForm(c, "/server-groups/new", "group-new",
			placeError(err, map[string]string{"name": "name", "policy": "policy", "rules": "max_server_per_host"}), "")
	}
	msg := fmt.Sprintf("Server group “%s” created with policy %s", g.Name, g.Policy)
	if n, ok := g.Rules[models.RuleMaxServerPerHost]; ok {
		msg += fmt.Sprintf(" and max_server_per_host=%d", n)
	}
	return redirectFlash(c, handlers.FlashSuccess, msg+".", "/server-groups/"+g.UUID)
}

// readGroupForm reads and checks the new-group form, with the rules it
// sets.
func readGroupForm(c echo.Context) (cv.GroupForm, map[string]int) {
	f := cv.GroupForm{
		Name:       strings.TrimSpace(c.FormValue("name")),
		Policy:     c.FormValue("policy"),
		MaxPerHost: strings.TrimSpace(c.FormValue("max_server_per_host")),
		AdminView:  isAdmin(c),
		Project:    currentProject(c),
		Errors:     map[string]string{},
	}
	if f.AdminView {
		f.Project = strings.TrimSpace(c.FormValue("project"))
	}
	if f.Name == "" {
		f.Errors["name"] = "A server group needs a name."
	} else if len(f.Name) > 255 {
		f.Errors["name"] = "Use at most 255 characters."
	}
	if !slices.ContainsFunc(cv.Policies, func(o views.Option) bool { return o.Value == f.Policy }) {
		f.Errors["policy"] = "Choose one of the four policies."
	}
	rules := map[string]int{}
	if f.MaxPerHost != "" {
		n, err := strconv.Atoi(f.MaxPerHost)
		if err != nil {
			n = 0
		}
		rules[models.RuleMaxServerPerHost] = n
		if e := models.CheckGroupRules(f.Policy, rules); e != nil {
			if f.Policy != models.PolicyAntiAffinity {
				f.Errors["max_server_per_host"] = "Only anti-affinity policy supports rules; leave this empty for " + f.Policy + "."
			} else {
				f.Errors["max_server_per_host"] = "A whole number of at least 1."
			}
		}
	}
	if f.Project == "" {
		if f.AdminView {
			f.Errors["project"] = "Name the project that owns the group."
		} else {
			f.Errors[""] = "You belong to no project, so you cannot own a server group."
		}
	}
	return f, rules
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

// findServer resolves a server by uuid, or by name within project.
func (h *Handler) findServer(c echo.Context, ref, project string) (*models.Server, error) {
	ctx := c.Request().Context()
	if _, err := uuid.Parse(ref); err == nil {
		s, err := h.store().GetServer(ctx, ref)
		if err == nil || models.KindOf(err) != models.NotFound {
			return s, err
		}
	}
	list, _, err := h.store().ListServers(ctx, store.ServerQuery{ProjectID: project, Search: ref, Limit: 100})
	if err != nil {
		return nil, err
	}
	var hits []models.Server
	for _, s := range list {
		if s.Name == ref {
			hits = append(hits, s)
		}
	}
	switch len(hits) {
	case 0:
		return nil, models.E(models.NotFound, "servers", "no server %q in project %s", ref, project)
	case 1:
		return &hits[0], nil
	}
	return nil, models.E(models.Invalid, "servers", "%d servers are named %q; use the uuid", len(hits), ref)
}

// GroupMembersAdd adds servers (POST /server-groups/:id/members).
func (h *Handler) GroupMembersAdd(c echo.Context) error {
	g, err := h.loadGroup(c)
	if err != nil {
		return err
	}
	if !canEditGroup(c, g) {
		return models.E(models.Forbidden, "", "only members of project %s and admins change this group", g.ProjectID)
	}
	raw := c.FormValue("servers")
	// A refusal comes back to the group's page (post/redirect/get) with
	// the servers typed and the message beside them.
	fail := func(_ int, msg string) error {
		return retryForm(c, "/server-groups/"+g.UUID, "group-members", map[string]string{"": msg}, "#members")
	}
	gen, gerr := formGeneration(c)
	if gerr != nil {
		return fail(http.StatusBadRequest, errMsg(gerr))
	}
	refs := splitList(raw)
	if len(refs) == 0 {
		return fail(http.StatusBadRequest, "Name at least one server.")
	}
	var add, names []string
	for _, ref := range refs {
		var s *models.Server
		s, err = h.findServer(c, ref, g.ProjectID)
		if err != nil {
			if !userError(err) {
				return err
			}
			return fail(handlers.StatusOf(err), upperFirst(errMsg(err))+". Nothing was added.")
		}
		if s.ProjectID != g.ProjectID {
			return fail(http.StatusBadRequest, fmt.Sprintf("Server %s belongs to project %s, not %s. Nothing was added.", s.Name, s.ProjectID, g.ProjectID))
		}
		if slices.Contains(g.Members, s.UUID) {
			return fail(http.StatusBadRequest, fmt.Sprintf("Server %s is already a member. Nothing was added.", s.Name))
		}
		add = append(add, s.UUID)
		names = append(names, s.Name)
	}
	next, err := h.store().UpdateServerGroup(c.Request().Context(), handlers.Actor(c), g.UUID, gen, func(x *models.ServerGroup) error {
		x.Members = append(x.Members, add...)
		return nil
	})
	if err != nil {
		if !userError(err) {
			return err
		}
		return fail(handlers.StatusOf(err), upperFirst(conflictMessage(err)))
	}
	msg := fmt.Sprintf("Added %s to “%s”: %s.", views.Plural(len(add), "server", "servers"), g.Name, strings.Join(names, ", "))
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
// (POST /server-groups/:id/members/remove).
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
	sel := dedupe(params["server"])
	if len(sel) == 0 {
		return redirectFlash(c, handlers.FlashError, "Nothing removed: tick the servers to remove.", back)
	}
	_, err = h.store().UpdateServerGroup(c.Request().Context(), handlers.Actor(c), g.UUID, gen, func(x *models.ServerGroup) error {
		x.Members = slices.DeleteFunc(x.Members, func(m string) bool { return slices.Contains(sel, m) })
		return nil
	})
	if err != nil {
		if !userError(err) {
			return err
		}
		return redirectFlash(c, handlers.FlashError, upperFirst(conflictMessage(err)), back)
	}
	return redirectFlash(c, handlers.FlashSuccess, fmt.Sprintf("Removed %s from “%s”.", views.Plural(len(sel), "server", "servers"), g.Name), back)
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
	if err := h.store().DeleteServerGroup(c.Request().Context(), handlers.Actor(c), g.UUID, store.AnyGeneration); err != nil {
		if !userError(err) {
			return err
		}
		return redirectFlash(c, handlers.FlashError, "Not deleted: "+errMsg(err)+".", "/server-groups/"+g.UUID)
	}
	return redirectFlash(c, handlers.FlashSuccess, fmt.Sprintf("Server group “%s” deleted.", g.Name), "/server-groups")
}
