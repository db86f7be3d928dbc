package query

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/scheduling"
	"corral/views"
)

// smallWorld is the size up to which the page lists every provider, so that
// whole trees show; above it lists are capped at previewLimit.
const smallWorld = 2000

// Page is GET /query: the form and, when the URL holds a query, its result.
// A request from htmx gets the preview fragment only.
func (h *Handler) Page(c echo.Context) error {
	if handlers.IsHTMX(c) && c.Request().Header.Get("HX-Target") == "preview" {
		return h.Preview(c)
	}
	ctx := c.Request().Context()
	f := parseForm(c.QueryParams())
	live, rev, err := h.liveState(ctx)
	if err != nil {
		return err
	}
	if err = checkGroupRef(c, live, f.Group); err != nil {
		return err
	}
	res, err := h.evaluate(ctx, &f, live, rev)
	if err != nil {
		return err
	}
	res.Warnings = h.cloudWarnings(ctx)
	opts := visibleOptions(c, live)
	if opts.Drafts, err = h.draftOptions(ctx); err != nil {
		return err
	}
	// The form is shown without the blank rows that were submitted (it
	// adds its own); the terms keep the errors found on them.
	return handlers.Render(c, http.StatusOK, views.QueryPage(layout.Page(c, "Live query", "query"), compact(f), opts, res))
}

// Preview is GET /query/preview: the result fragment htmx swaps in, with
// the form's error slots refreshed out of band and the address bar set to
// the shareable URL of the query.
func (h *Handler) Preview(c echo.Context) error {
	ctx := c.Request().Context()
	f := parseForm(c.QueryParams())
	live, rev, err := h.liveState(ctx)
	if err != nil {
		return err
	}
	if err = checkGroupRef(c, live, f.Group); err != nil {
		return err
	}
	res, err := h.evaluate(ctx, &f, live, rev)
	if err != nil {
		return err
	}
	res.Warnings = h.cloudWarnings(ctx)
	if handlers.IsHTMX(c) {
		c.Response().Header().Set("HX-Replace-Url", res.ShareURL)
	}
	return handlers.Render(c, http.StatusOK, views.QueryPreviewResponse(f, res))
}

// evaluate runs the form's query against live data (and the chosen draft)
// and returns what the preview shows. Bad input is reported on the form
// and in the result, never as a failed request: htmx swaps only 2xx.
func (h *Handler) evaluate(ctx context.Context, f *views.QueryForm, live *state, rev int64) (views.QueryResult, error) {
	res := views.QueryResult{ShareURL: compact(*f).QueryURL()}
	if f.Draft != "" {
		d, ds, err := h.loadDraft(ctx, f.Draft, "draft", live, rev)
		if err != nil {
			if models.KindOf(err) == models.Internal {
				return res, err
			}
			f.Errors["draft"] = message(err)
			res.Error, res.ErrorField = message(err), "draft"
			return res, nil
		}
		res.DraftID, res.DraftName = d.ID, d.Name
		return h.evaluateOn(f, live, ds.st, res)
	}
	return h.evaluateOn(f, live, nil, res)
}

// evaluateOn runs the query on live and, when draft is set, on the draft.
func (h *Handler) evaluateOn(f *views.QueryForm, live, draft *state, res views.QueryResult) (views.QueryResult, error) {
	main := live
	if draft != nil {
		main = draft
	}
	// Each term is checked on its own first, so that an error shows next
	// to the term at fault rather than somewhere in the request.
	bad := false
	for i := range f.MemberOf {
		t := &f.MemberOf[i]
		if t.Value == "" {
			continue
		}
		if _, err := main.snap.ResolveMemberOf("member_of", "member_of", []string{t.Value}); err != nil {
			t.Error, bad = message(err), true
		}
	}
	for i := range f.Numbered {
		t := &f.Numbered[i]
		if t.Value == "" {
			continue
		}
		if n, err := strconv.Atoi(t.Group); err == nil && n > 0 {
			if _, err := main.snap.ResolveMemberOf("member_of"+t.Group, "member_of"+t.Group, []string{t.Value}); err != nil {
				t.Error, bad = message(err), true
			}
		}
	}
	limit := previewLimit
	if main.snap.Index().Len() <= smallWorld {
		limit = 0
	}
	spec, ferr := buildRequest(f, lookups{flavor: main.snap.Flavor, servers: main.snap.ServerUUIDs}, limit)
	if bad || ferr != nil {
		res.Error = "Fix the marked fields and terms to see the result."
		if ferr != nil && !bad {
			res.Error, res.ErrorField = message(ferr), models.FieldOf(ferr)
		}
		return res, nil
	}
	spec.Hosts = &scheduling.HostSelect{Limit: hostsPerPage, FailedOnly: f.HostsFailed, Stage: f.HostsStage, Name: f.HostsName}
	if f.HostsPage > 1 {
		spec.Hosts.Offset = (f.HostsPage - 1) * hostsPerPage
	}
	var draftSnap *scheduling.Snapshot
	if draft != nil {
		draftSnap = draft.snap
	}
	p, err := scheduling.RunPreview(live.snap, draftSnap, spec)
	if err != nil {
		if models.KindOf(err) == models.Internal {
			return res, err
		}
		field := formField(models.FieldOf(err))
		f.Errors[field] = message(err)
		res.Error, res.ErrorField = message(err), field
		return res, nil
	}
	res.Trace = presentTrace(p.Trace, main.snap)
	res.Trace.Matrix = presentMatrix(p.Trace, *f, nil).WithFilter(*f)
	if len(spec.Placement.MemberOf) > 0 {
		rows, err := modeRows(main.snap, spec.Placement.MemberOf)
		if err == nil {
			res.Trace.Modes, res.Trace.ModesShown = rows, true
		}
	}
	if p.Live != nil {
		res.Live = presentTrace(p.Live, live.snap)
		res.Diff = presentDiff(*p.Diff, p.Live, p.Trace)
		res.DraftOnly = p.DraftOnly
	}
	return res, nil
}

// formField maps a request field named by the core to the form's field.
func formField(field string) string {
	switch {
	case field == "flavor" || strings.HasPrefix(field, "flavor."):
		return "flavor"
	case field == "server_group":
		return "group"
	case field == "num_instances":
		return "num"
	case strings.HasPrefix(field, "image"):
		return "image"
	case field == "scheduler_hints.same_host":
		return "same_host"
	case field == "scheduler_hints.different_host":
		return "different_host"
	case field == "availability_zone":
		return "az"
	case field == "project_id":
		return "project"
	case field == "user_id":
		return "user"
	}
	return field
}
