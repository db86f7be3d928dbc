package doctor

import (
	"cmp"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	core "corral/models/doctor"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/views"
	"corral/views/doctorview"
)

// Register mounts the Doctor page on the console group and its report,
// as `corral doctor --format json` prints it, at /api/doctor.
func Register(console, api *echo.Group, env *handlers.Env) {
	h := &page{env: env}
	admin := handlers.RequireRole(models.RoleAdmin)
	api.GET("/doctor", h.report)
	console.GET("/doctor", h.show)
	handlers.Body(handlers.SmallForm,
		console.POST("/doctor/fix", h.fix, admin),
		console.POST("/doctor/ack", h.ack, admin),
		console.POST("/doctor/unack", h.unack, admin))
}

type page struct{ env *handlers.Env }

// severityTitles are the page's section headings.
var severityTitles = map[core.Severity]string{
	core.SeverityError: "Errors", core.SeverityWarning: "Warnings", core.SeverityInfo: "Notes",
}

// report is GET /api/doctor: the report as JSON (docs/formats.md).
func (h *page) report(c echo.Context) error {
	r, err := Build(c.Request().Context(), h.env.Store)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

// doctorPageSize is how many findings a page of /doctor shows: a cloud
// with thousands of traps is read through the counts by code first.
const doctorPageSize = 50

// show is GET /doctor[?code=C][&page=N]: the counts by code, then one
// page of the findings (of code C only, when given), loudest first, the
// acknowledged ones last.
func (h *page) show(c echo.Context) error {
	r, err := Build(c.Request().Context(), h.env.Store)
	if err != nil {
		return err
	}
	u := handlers.CurrentUser(c)
	p := doctorview.Props{Revision: r.Revision, IsAdmin: u != nil && u.Role == models.RoleAdmin,
		Code: c.QueryParam("code"), Codes: codeCounts(r)}
	var open, acked []*Entry
	for i := range r.Findings {
		e := &r.Findings[i]
		switch {
		case p.Code != "" && e.Code != p.Code:
		case e.Acknowledged != nil:
			acked = append(acked, e)
		default:
			open = append(open, e)
		}
	}
	all := slices.Concat(open, acked)
	p.Total, p.PageSize = len(all), doctorPageSize
	p.Pages = max(1, (len(all)+doctorPageSize-1)/doctorPageSize)
	p.Page, _ = strconv.Atoi(c.QueryParam("page"))
	p.Page = min(max(p.Page, 1), p.Pages)
	bySeverity := map[core.Severity]int{}
	for _, s := range core.Severities {
		bySeverity[s] = len(p.Groups)
		p.Groups = append(p.Groups, doctorview.Group{Severity: string(s), Title: severityTitles[s]})
	}
	for _, e := range open {
		p.Groups[bySeverity[e.Severity]].Total++
	}
	p.AckedTotal = len(acked)
	for i, e := range all[(p.Page-1)*doctorPageSize : min(p.Page*doctorPageSize, len(all))] {
		f := viewFinding(e)
		if (p.Page-1)*doctorPageSize+i >= len(open) {
			p.Acked = append(p.Acked, f)
			continue
		}
		g := &p.Groups[bySeverity[e.Severity]]
		g.Findings = append(g.Findings, f)
	}
	return handlers.Render(c, http.StatusOK, doctorview.Page(layout.Page(c, "Doctor", "doctor"), p))
}

// codeCounts is the report's findings by code, loudest code first: the
// open and acknowledged ones of each.
func codeCounts(r *Report) []doctorview.CodeCount {
	idx := map[string]int{}
	var out []doctorview.CodeCount
	rank := map[string]int{}
	for i := range r.Findings {
		e := &r.Findings[i]
		j, ok := idx[e.Code]
		if !ok {
			j = len(out)
			idx[e.Code] = j
			out = append(out, doctorview.CodeCount{Code: e.Code, Severity: string(e.Severity)})
			rank[e.Code] = slices.Index(core.Severities, e.Severity)
		}
		if k := slices.Index(core.Severities, e.Severity); k < rank[e.Code] {
			rank[e.Code], out[j].Severity = k, string(e.Severity) // a code's loudest finding names it
		}
		if e.Acknowledged != nil {
			out[j].Acked++
		} else {
			out[j].Open++
		}
	}
	slices.SortStableFunc(out, func(a, b doctorview.CodeCount) int {
		return cmp.Or(rank[a.Code]-rank[b.Code], strings.Compare(a.Code, b.Code))
	})
	return out
}

func viewFinding(e *Entry) doctorview.Finding {
	f := doctorview.Finding{Code: e.Code, Severity: string(e.Severity), Why: e.Why, Detail: e.Detail,
		Key: e.Key, Fingerprint: e.Fingerprint}
	for _, o := range e.Objects {
		f.Objects = append(f.Objects, doctorview.Object{Kind: strings.ReplaceAll(o.Kind, "_", " "), Name: o.Name, Href: objectHref(o)})
	}
	for _, c := range e.Fix {
		f.Fix = append(f.Fix, scheduling.DescribeChange(c))
	}
	if e.Acknowledged != nil {
		f.Ack = &doctorview.Ack{By: e.Acknowledged.By, Reason: e.Acknowledged.Reason, When: views.When(e.Acknowledged.At)}
	}
	return f
}

// objectHref is the console page of an object, "" when it has none.
func objectHref(o core.Object) string {
	if o.UUID == "" {
		return ""
	}
	id := url.PathEscape(o.UUID)
	switch o.Kind {
	case core.KindAggregate:
		return "/aggregates/" + id
	case core.KindProvider:
		return "/providers/" + id
	case core.KindFlavor:
		return "/flavors/" + id
	case core.KindServerGroup:
		return "/server-groups/" + id
	}
	return ""
}

// current finds the finding a form names as it reads now; a finding gone
// or changed since the page was shown is a flash and false.
func (h *page) current(c echo.Context) (*Entry, bool, error) {
	r, err := Build(c.Request().Context(), h.env.Store)
	if err != nil {
		return nil, false, err
	}
	e := r.Find(c.FormValue("key"))
	switch {
	case e == nil:
		handlers.AddFlash(c, views.FlashWarning, "That finding is gone: the world changed since the page was shown.")
		return nil, false, nil
	case c.FormValue("fingerprint") != "" && e.Fingerprint != c.FormValue("fingerprint"):
		handlers.AddFlash(c, views.FlashWarning, "That finding changed since the page was shown; review it again.")
		return nil, false, nil
	}
	return e, true, nil
}

// fix is POST /doctor/fix: a new draft holding the finding's fix; its page
// shows the impact before anything is applied.
func (h *page) fix(c echo.Context) error {
	e, ok, err := h.current(c)
	if err != nil || !ok {
		return orBack(c, err)
	}
	if len(e.Fix) == 0 {
		return models.E(models.Invalid, "key", "finding %s has no fix", e.Code)
	}
	ctx := c.Request().Context()
	name := "Doctor: " + e.Detail
	if len(name) > 240 { // a draft name holds 255 bytes
		cut := 240
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut] + "…"
	}
	d, err := h.env.Store.CreateDraft(ctx, handlers.Actor(c), name)
	if err == nil {
		d, err = h.env.Store.SetDraftChanges(ctx, handlers.Actor(c), d.ID, d.Version, e.Fix)
	}
	if err != nil {
		return err
	}
	handlers.AddFlash(c, views.FlashSuccess, "The fix is draft \""+d.Name+"\"; nothing live changed. Check its impact, then apply it.")
	return handlers.SeeOther(c, "/drafts/"+d.ID)
}

// ack is POST /doctor/ack: the finding, as it reads now, is known.
func (h *page) ack(c echo.Context) error {
	e, ok, err := h.current(c)
	if err != nil || !ok {
		return orBack(c, err)
	}
	_, err = h.env.Store.AckFinding(c.Request().Context(), handlers.Actor(c),
		store.FindingAck{Key: e.Key, Code: e.Code, Fingerprint: e.Fingerprint, Reason: c.FormValue("reason")})
	if models.KindOf(err) == models.Invalid {
		handlers.AddFlash(c, views.FlashError, "Not acknowledged: "+message(err))
		return handlers.SeeOther(c, "/doctor")
	}
	if err != nil {
		return err
	}
	handlers.AddFlash(c, views.FlashSuccess, "Acknowledged: "+e.Code+" stops shouting until it changes.")
	return handlers.SeeOther(c, "/doctor")
}

// unack is POST /doctor/unack.
func (h *page) unack(c echo.Context) error {
	if c.FormValue("key") == "" {
		return models.E(models.Invalid, "key", "which finding?")
	}
	if err := h.env.Store.UnackFinding(c.Request().Context(), handlers.Actor(c), c.FormValue("key")); err != nil {
		return err
	}
	handlers.AddFlash(c, views.FlashSuccess, "No longer acknowledged.")
	return handlers.SeeOther(c, "/doctor")
}

// orBack returns err, or sends the browser back to the page (whose flash
// says why nothing was done).
func orBack(c echo.Context, err error) error {
	if err != nil {
		return err
	}
	return handlers.SeeOther(c, "/doctor")
}

// message is an error's text without the field prefix.
func message(err error) string {
	var ce *models.Error
	if errors.As(err, &ce) && ce.Msg != "" {
		return ce.Msg
	}
	return err.Error()
}
