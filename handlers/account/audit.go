package account

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/store"
	"corral/views"
	av "corral/views/account"
)

// auditTimeLayouts are what a datetime-local input sends, with and without
// seconds, plus RFC 3339 for people typing URLs.
var auditTimeLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339}

func parseAuditTime(s string) (time.Time, bool) {
	for _, l := range auditTimeLayouts {
		if t, err := time.ParseInLocation(l, s, time.UTC); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// Audit shows the audit log, newest first, filtered by who, object type and
// id, and a time range (GET /audit).
func (h *Handler) Audit(c echo.Context) error {
	f := av.AuditFilter{
		Actor:      strings.TrimSpace(c.QueryParam("actor")),
		ObjectType: strings.TrimSpace(c.QueryParam("object_type")),
		ObjectID:   strings.TrimSpace(c.QueryParam("object_id")),
		Since:      strings.TrimSpace(c.QueryParam("since")),
		Until:      strings.TrimSpace(c.QueryParam("until")),
		Errors:     map[string]string{},
	}
	offset, limit := handlers.Paging(c, handlers.DefaultPageSize)
	q := store.AuditQuery{
		Actor:      f.Actor,
		ObjectType: f.ObjectType,
		ObjectID:   f.ObjectID,
		Offset:     offset,
		Limit:      limit,
	}
	if f.Since != "" {
		if t, ok := parseAuditTime(f.Since); ok {
			q.Since = t
		} else {
			f.Errors["since"] = "Use a date and time like 2026-01-31T14:00."
		}
	}
	if f.Until != "" {
		if t, ok := parseAuditTime(f.Until); ok {
			q.Until = t
		} else {
			f.Errors["until"] = "Use a date and time like 2026-01-31T14:00."
		}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && q.Until.Before(q.Since) {
		f.Errors["until"] = "The end of the range is before its start."
	}
	// A non-admin sees only the events of their project's objects, and
	// only their project's people in the actor list.
	me := handlers.CurrentUser(c)
	admin := handlers.HasRole(c, models.RoleAdmin)
	if !admin {
		q.OnlyProject, q.Project = true, me.ProjectID
	}
	if users, err := h.env.Store.ListUsers(c.Request().Context()); err == nil {
		for _, u := range users {
			if admin || (me.ProjectID != "" && u.ProjectID == me.ProjectID) || u.ID == me.ID {
				f.Actors = append(f.Actors, u.Name)
			}
		}
	}
	pager := views.Pager{Offset: offset, Limit: limit, Path: "/audit", Query: c.QueryParams()}
	page := layout.Page(c, "Audit log", "audit")
	if len(f.Errors) > 0 {
		return handlers.Render(c, http.StatusBadRequest, av.Audit(page, av.AuditProps{Filter: f, Pager: pager}))
	}
	events, total, err := h.env.Store.ListAudit(c.Request().Context(), q)
	if err != nil {
		return err
	}
	pager.Total = total
	return handlers.Render(c, http.StatusOK, av.Audit(page, av.AuditProps{Events: events, Filter: f, Pager: pager}))
}
