package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/views"
	cv "corral/views/console"
)

// Quotas: the server_groups and server_group_members limits of each
// project, as the compute API enforces them. Admins see and change every
// project's; others see their own project's only, read-only, and another
// project's page is a 404 as for server groups.

// registerQuotas mounts the quota pages.
func (h *Handler) registerQuotas(g *echo.Group) {
	admin := handlers.RequireRole(models.RoleAdmin)
	g.GET("/quotas", h.QuotaList)
	g.GET("/quotas/:project", h.QuotaDetail)
	handlers.Body(handlers.SmallForm, g.POST("/quotas/:project", h.QuotaSave, admin))
	handlers.Body(handlers.SmallForm, g.POST("/quotas/:project/reset", h.QuotaReset, admin))
}

// quotaRow turns the store's view of a project into the page's.
func quotaRow(u store.ProjectUsage) cv.QuotaRow {
	r := cv.QuotaRow{Project: u.ProjectID, Servers: u.Servers, Users: u.Users, Groups: u.Groups}
	for _, res := range store.QuotaResources {
		limit, set := u.Limit(res)
		c := cv.QuotaCell{Resource: res, Limit: limit, Set: set, Used: u.Used(res)}
		if res == models.QuotaServerGroupMembers && u.LargestGroup != "" {
			c.UsedBy, c.UsedByHref = u.LargestGroupName, "/server-groups/"+u.LargestGroup
		}
		r.Cells = append(r.Cells, c)
	}
	return r
}

// QuotaList lists projects with their quotas and usage (GET /quotas).
func (h *Handler) QuotaList(c echo.Context) error {
	page := layout.Page(c, "Quotas", "quotas")
	l := cv.QuotaListProps{AllProjects: isAdmin(c)}
	project := ""
	if l.AllProjects {
		l.Search = strings.TrimSpace(c.QueryParam("q"))
	} else if project = currentProject(c); project == "" {
		// "" would mean every project to the store.
		l.NoProject = true
		return handlers.Render(c, http.StatusOK, cv.QuotaList(page, l))
	}
	us, err := h.store().ListProjectUsage(c.Request().Context(), project)
	if err != nil {
		return err
	}
	var rows []cv.QuotaRow
	needle := strings.ToLower(l.Search)
	for _, u := range us {
		if needle == "" || strings.Contains(strings.ToLower(u.ProjectID), needle) {
			rows = append(rows, quotaRow(u))
		}
	}
	offset, limit := handlers.Paging(c, handlers.DefaultPageSize)
	l.Pager = views.Pager{Offset: offset, Limit: limit, Total: len(rows), Path: "/quotas", Query: c.QueryParams()}
	if offset < len(rows) {
		l.Rows = rows[offset:min(len(rows), offset+limit)]
	}
	return handlers.Render(c, http.StatusOK, cv.QuotaList(page, l))
}

// quotaProject reads :project and checks the caller may see it.
func quotaProject(c echo.Context) (string, error) {
	p := c.Param("project")
	// Echo routes on the raw path when it has escapes (a "/" in a project
	// id, say), and then leaves the parameter escaped.
	if c.Request().URL.RawPath != "" {
		if u, err := url.PathUnescape(p); err == nil {
			p = u
		}
	}
	if !isAdmin(c) && p != currentProject(c) {
		return "", models.E(models.NotFound, "project", "no quotas of project %s to show", p)
	}
	return p, nil
}

// quotaForm is the page of project u as stored.
func (h *Handler) quotaForm(c echo.Context, u store.ProjectUsage) (cv.QuotaForm, error) {
	f := cv.QuotaForm{Row: quotaRow(u), Values: map[string]string{}, Expect: map[string]string{},
		Errors: map[string]string{}, CanEdit: isAdmin(c)}
	for _, cell := range f.Row.Cells {
		f.Values[cell.Resource] = limitInput(cell.Limit)
		f.Expect[cell.Resource] = strconv.Itoa(cell.Limit)
	}
	groups, err := h.store().ListServerGroups(c.Request().Context(), store.ServerGroupQuery{ProjectID: u.ProjectID})
	if err != nil {
		return f, err
	}
	for _, g := range groups {
		f.Groups = append(f.Groups, cv.QuotaGroup{UUID: g.UUID, Name: g.Name, Policy: g.Policy, Members: len(g.Members)})
	}
	return f, nil
}

// followsDefault reports whether resource res of the row is not set
// explicitly and n is the default it shows.
func followsDefault(r cv.QuotaRow, res string, n int) bool {
	for _, c := range r.Cells {
		if c.Resource == res {
			return !c.Set && c.Limit == n
		}
	}
	return false
}

// limitInput is a limit as the form shows it.
func limitInput(n int) string {
	if n < 0 {
		return "unlimited"
	}
	return strconv.Itoa(n)
}

// parseLimit reads a limit as typed: a whole number of 0 or more,
// "unlimited", or Nova's -1 for unlimited.
func parseLimit(s string) (int, string) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "":
		return 0, "Give a limit: a whole number of 0 or more, or “unlimited”."
	case "unlimited", "-1":
		return -1, ""
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Sprintf("“%s” is not a limit: use a whole number of 0 or more, or “unlimited”.", s)
	}
	return n, ""
}

func (h *Handler) renderQuota(c echo.Context, status int, f cv.QuotaForm) error {
	return handlers.Render(c, status, cv.QuotaDetail(layout.Page(c, "Quotas of "+f.Row.Project, "quotas"), f))
}

// QuotaDetail shows a project's quotas (GET /quotas/:project).
func (h *Handler) QuotaDetail(c echo.Context) error {
	project, err := quotaProject(c)
	if err != nil {
		return err
	}
	u, err := h.store().GetProjectUsage(c.Request().Context(), project)
	if err != nil {
		return err
	}
	f, err := h.quotaForm(c, u)
	if err != nil {
		return err
	}
	if again, kept := retrying(c, "quota"); again && isAdmin(c) {
		readQuotaForm(c, &f)
		mergeErrors(f.Errors, kept)
	}
	return h.renderQuota(c, http.StatusOK, f)
}

// QuotaSave sets a project's limits (POST /quotas/:project) in one audited
// write. Every field is checked before anything is saved, so a refused
// submission changes nothing.
func (h *Handler) QuotaSave(c echo.Context) error {
	project, err := quotaProject(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	u, err := h.store().GetProjectUsage(ctx, project)
	if err != nil {
		return err
	}
	f, err := h.quotaForm(c, u)
	if err != nil {
		return err
	}
	upd := readQuotaForm(c, &f)
	back := cv.QuotaPath(project)
	// A refusal comes back to the project's quotas (post/redirect/get)
	// with what was typed; the page checks it again.
	if len(f.Errors) > 0 {
		return retryForm(c, back, "quota", f.Errors, "")
	}
	changed, err := h.setQuotas(c, project, upd)
	if err != nil {
		if !userError(err) {
			return err
		}
		field := models.FieldOf(err)
		if isStale(err) || (field != models.QuotaServerGroups && field != models.QuotaServerGroupMembers) {
			field = ""
		}
		msg := errMsg(err)
		if field == "" {
			msg = upperFirst(conflictMessage(err))
		} else if !f.Force {
			msg += " Tick “Allow a limit below current usage” to set it anyway."
		}
		return retryForm(c, back, "quota", map[string]string{field: msg}, "")
	}
	if len(changed) == 0 {
		return redirectFlash(c, handlers.FlashWarning, "Nothing changed: the limits of project "+project+" were already these.", back)
	}
	parts := make([]string, 0, len(changed))
	for _, res := range changed {
		parts = append(parts, res+" = "+limitInput(upd.Set[res]))
	}
	return redirectFlash(c, handlers.FlashSuccess, fmt.Sprintf("Quotas of project %s saved: %s.", project, strings.Join(parts, ", ")), back)
}

// QuotaReset puts a project's limits back to the default
// (POST /quotas/:project/reset); a "resource" field limits it to one.
func (h *Handler) QuotaReset(c echo.Context) error {
	project, err := quotaProject(c)
	if err != nil {
		return err
	}
	back := cv.QuotaPath(project)
	reset := store.QuotaResources
	if r := strings.TrimSpace(c.FormValue("resource")); r != "" {
		reset = []string{r}
	}
	changed, err := h.setQuotas(c, project, store.QuotaUpdate{Reset: reset})
	if err != nil {
		if !userError(err) {
			return err
		}
		return redirectFlash(c, handlers.FlashError, "Not reset: "+errMsg(err)+".", back)
	}
	if len(changed) == 0 {
		return redirectFlash(c, handlers.FlashWarning, "Nothing to reset: project "+project+" already uses the default limits.", back)
	}
	return redirectFlash(c, handlers.FlashSuccess, fmt.Sprintf("Quotas of project %s reset to the default (%d): %s.",
		project, models.DefaultQuota, strings.Join(changed, ", ")), back)
}

// readQuotaForm reads and checks the quota form (posted, or in the URL of a
// refused post shown again) into f, and the update it asks for.
func readQuotaForm(c echo.Context, f *cv.QuotaForm) store.QuotaUpdate {
	f.Force = c.FormValue("force") != ""
	upd := store.QuotaUpdate{Set: map[string]int{}, Expect: map[string]int{}, Force: f.Force}
	for _, res := range store.QuotaResources {
		f.Values[res] = c.FormValue(res)
		n, msg := parseLimit(f.Values[res])
		switch {
		case msg != "":
			f.Errors[res] = msg
		case followsDefault(f.Row, res, n):
			// Left at the default it shows: saving the other limit must
			// not pin this one to today's default.
		default:
			upd.Set[res] = n
		}
		// The limit the form was rendered from; without it (a hand-made
		// request) the save simply does not check for a concurrent change.
		if e := strings.TrimSpace(c.FormValue("expect_" + res)); e != "" {
			x, xerr := strconv.Atoi(e)
			if xerr != nil {
				f.Errors[""] = "The form is damaged; reload the page and try again."
				continue
			}
			upd.Expect[res] = x
			f.Expect[res] = e
		}
	}
	return upd
}

// setQuotas hands a quota update to the write path as one set_quotas
// change and returns the resources it changed, in QuotaResources' order
// (what its undo restores).
func (h *Handler) setQuotas(c echo.Context, project string, u store.QuotaUpdate) ([]string, error) {
	applied, err := h.apply(c, []scheduling.Change{{Op: scheduling.OpSetQuotas, Project: project,
		QuotaFields: scheduling.QuotaFields{Quotas: u.Set, Reset: u.Reset, Expect: u.Expect, Force: u.Force}}})
	if err != nil {
		return nil, err
	}
	touched := map[string]bool{}
	for _, undo := range applied.Revert {
		for r := range undo.Quotas {
			touched[r] = true
		}
		for _, r := range undo.Reset {
			touched[r] = true
		}
	}
	var changed []string
	for _, r := range store.QuotaResources {
		if touched[r] {
			changed = append(changed, r)
		}
	}
	return changed, nil
}
