package query

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/forms"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/scheduling"
	"corral/views"
)

// Inline impact: every console form that changes where servers may land
// (an aggregate's metadata, tenant and reservation tags, members and zone;
// a flavor's extra specs; the settings) carries views.InlineImpact, which
// posts the form here as it is typed in. The form becomes the draft
// changes it would make, and the answer is what those do: hosts gained and
// lost per project × flavor, and the running servers and server groups
// they would strand. "Stage as draft" posts the same form to
// /drafts/stage, which saves those changes as a new draft instead.

// inlineSettings is the settings form's kind; every other form is read
// by package forms.
const inlineSettings = "settings"

// inlineRows and inlineNames cap what the fragment lists.
const (
	inlineRows  = 12
	inlineNames = 5
)

func registerInline(console *echo.Group, h *Handler, admin echo.MiddlewareFunc) {
	handlers.Body(handlers.ListForm, console.POST("/impact/inline", h.InlineImpact))
	handlers.Body(handlers.ListForm, console.POST("/drafts/stage", h.StageDraft, admin))
	console.GET("/drafts/open-options", h.OpenDraftOptions, admin)
}

// maxDraftChoices caps the open drafts "Stage as draft" offers.
const maxDraftChoices = 50

// OpenDraftOptions is GET /drafts/open-options: the open drafts a form's
// "Stage as draft" may add its changes to, newest first, as options.
func (h *Handler) OpenDraftOptions(c echo.Context) error {
	ds, err := h.env.Store.ListDrafts(c.Request().Context())
	if err != nil {
		return err
	}
	var open []views.Option
	for i := range ds[:min(len(ds), maxDraftChoices)] {
		d := &ds[i]
		cs, _ := d.DraftChanges()
		open = append(open, views.Option{Value: d.ID, Label: fmt.Sprintf("draft “%s” (%s)", d.Name, views.Plural(len(cs), "change", "changes"))})
	}
	return handlers.Render(c, http.StatusOK, views.DraftChoices(open))
}

// stageInto appends a form's changes to the open draft id, checked with
// the draft's own changes against live data, and sends the browser to
// the draft, whose page previews them together.
func (h *Handler) stageInto(c echo.Context, live *state, id string, changes []scheduling.Change, back string) error {
	ctx := c.Request().Context()
	fail := func(err error) error {
		if models.KindOf(err) == models.Internal {
			return err
		}
		handlers.AddFlash(c, views.FlashError, "Nothing was staged: "+message(err))
		return handlers.SeeOther(c, back)
	}
	d, err := h.env.Store.GetDraft(ctx, id)
	if err != nil {
		return fail(err)
	}
	existing, err := d.DraftChanges()
	if err != nil {
		return err
	}
	all := append(slices.Clone(existing), changes...)
	if _, err := scheduling.ApplyChanges(live.world, all); err != nil {
		return fail(err)
	}
	if _, err := h.env.Store.SetDraftChanges(ctx, handlers.Actor(c), d.ID, d.Version, all); err != nil {
		return fail(err)
	}
	h.forgetDraft(d.ID)
	handlers.AddFlash(c, views.FlashSuccess, fmt.Sprintf("Added %s to draft %q; nothing live changed. Its page previews all its changes together.",
		views.Plural(len(changes), "change", "changes"), d.Name))
	return handlers.SeeOther(c, "/drafts/"+d.ID)
}

// inlineChanges turns a submitted console form into the draft changes it
// would make to live data, and a name for them: the reader of package
// forms that the form's own save calls, so that the preview is what is
// saved. A form that its save would refuse is refused here too.
func inlineChanges(live *state, form url.Values, who forms.Who) (string, []scheduling.Change, error) {
	target := strings.TrimSpace(form.Get("impact_target"))
	kind := form.Get("impact_form")
	if kind != inlineSettings {
		read, err := forms.ForImpact(kind, target, form, live.snap, who)
		if err != nil {
			return "", nil, err
		}
		if err := read.Err(); err != nil {
			return "", nil, err
		}
		return read.Title, read.Changes, nil
	}
	changes, err := handlers.SettingsFormChanges(form, live.world.Settings)
	return "Settings", changes, err
}

// inlineImpactOn reads a console form against live and says what it does.
func inlineImpactOn(live *state, form url.Values, who forms.Who) (*views.InlineImpactProps, error) {
	_, changes, err := inlineChanges(live, form, who)
	if err != nil {
		return &views.InlineImpactProps{Error: message(err)}, nil
	}
	props, err := inlineImpact(live, changes, form.Get(layout.ConfirmField))
	if err != nil || who.Admin {
		return props, err
	}
	// A non-admin sees their own project's servers and groups only.
	props.Servers = slices.DeleteFunc(props.Servers, func(s views.StrandedServer) bool { return who.Project == "" || s.Project != who.Project })
	props.Groups = slices.DeleteFunc(props.Groups, func(g views.BrokenGroup) bool { return who.Project == "" || g.Project != who.Project })
	props.ServersStranded = len(props.Servers)
	return props, nil
}

// inlineImpact computes what changes do: the matrix over the first
// projects and flavors (and any other project), and the safety gate the
// save passes (the strandings, the pairs left with no host), with the
// confirmation confirm (the gate's token the form carries) kept ticked
// while the consequences stay the same.
func inlineImpact(live *state, changes []scheduling.Change, confirm string) (*views.InlineImpactProps, error) {
	props := &views.InlineImpactProps{Changes: len(changes)}
	for _, c := range changes {
		props.Described = append(props.Described, scheduling.DescribeChange(c))
	}
	if len(changes) == 0 {
		return props, nil
	}
	w, err := scheduling.ApplyChanges(live.world, changes)
	if err != nil {
		props.Error = message(err)
		return props, nil
	}
	ds, err := draftSnapshot(live, w, changes)
	if err != nil {
		props.Error = message(err)
		return props, nil
	}
	projects := slices.Clone(capList(live.options().Projects, defaultMatrixProjects))
	flavors := slices.Clone(capList(live.options().Flavors, defaultMatrixFlavors))
	// The flavors and projects the changes name are in the matrix even
	// beyond the first ones: a flavor's own edit must show.
	for _, c := range changes {
		if c.Flavor != "" && !slices.Contains(flavors, c.Flavor) {
			flavors = append(flavors, c.Flavor)
		}
		if c.Project != "" && !slices.Contains(projects, c.Project) {
			projects = append(projects, c.Project)
		}
	}
	// A flavor the changes delete or rename is not in the draft under its
	// live name: the matrix compares the flavors both sides have.
	flavors = slices.DeleteFunc(flavors, func(f string) bool {
		_, live := live.snap.Flavor(f)
		_, draft := ds.Flavor(f)
		return !live || !draft
	})
	projects = append(projects, scheduling.AnyOtherProject)
	m, err := scheduling.ComputeImpact(live.snap, ds, projects, flavors)
	if err != nil {
		return nil, err
	}
	st, err := scheduling.GateBetween(live.snap, ds, changes)
	if err != nil {
		return nil, err
	}
	gate := layout.GateProps(st, confirm)
	props.Gate = &gate
	props.Unknown = scheduling.UnknownProjects(live.world, changes)
	props.Pairs, props.Dropped, props.Stranded = len(projects)*len(flavors), m.Dropped, m.Stranded
	for i := range m.Cells {
		for _, c := range m.Cells[i] {
			if c.LostCount == 0 && c.GainedCount == 0 {
				continue
			}
			props.Gained += min(c.GainedCount, 1)
			if len(props.Rows) < inlineRows {
				props.Rows = append(props.Rows, views.InlineImpactRow{Project: c.Project, Flavor: c.Flavor,
					Live: c.Live, Draft: c.Draft, Lost: capList(c.Lost, inlineNames), Gained: capList(c.Gained, inlineNames),
					LostCount: c.LostCount, GainedCount: c.GainedCount})
			} else {
				props.More++
			}
		}
	}
	for i, s := range st.Servers {
		if i == inlineRows {
			break
		}
		props.Servers = append(props.Servers, views.StrandedServer{Name: s.Name, Project: s.Project, Host: s.Host, Reason: s.Reason})
	}
	props.ServersStranded = len(st.Servers)
	for _, g := range st.Groups {
		props.Groups = append(props.Groups, views.BrokenGroup{Name: g.Name, Project: g.Project, Policy: g.Policy, Reason: g.Reason})
	}
	return props, nil
}

// InlineImpact is POST /impact/inline: the fragment that shows, under a
// console form, what saving it would do. Bad input is a message in the
// fragment (htmx swaps only 2xx answers).
func (h *Handler) InlineImpact(c echo.Context) error {
	ctx := c.Request().Context()
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	live, _, err := h.liveState(ctx)
	if err != nil {
		return err
	}
	props, err := inlineImpactOn(live, form, formsWho(c))
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.InlineImpactResult(*props))
}

// StageDraft is POST /drafts/stage: the console form's changes saved as a
// new draft instead of applied, to preview, review and apply later.
func (h *Handler) StageDraft(c echo.Context) error {
	ctx := c.Request().Context()
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	back := c.Request().Referer()
	if u, perr := url.Parse(back); perr != nil || u.Path == "" || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		back = "/drafts"
	} else {
		back = u.Path
	}
	live, _, err := h.liveState(ctx)
	if err != nil {
		return err
	}
	title, changes, err := inlineChanges(live, form, formsWho(c))
	if err == nil && len(changes) == 0 {
		err = models.E(models.Invalid, "", "the form changes nothing yet")
	}
	if err == nil {
		_, err = scheduling.ApplyChanges(live.world, changes)
	}
	if err != nil {
		if models.KindOf(err) == models.Internal {
			return err
		}
		handlers.AddFlash(c, views.FlashError, "Nothing was staged: "+message(err))
		return handlers.SeeOther(c, back)
	}
	if into := strings.TrimSpace(form.Get("stage_draft")); into != "" {
		return h.stageInto(c, live, into, changes, back)
	}
	d, err := h.env.Store.CreateDraft(ctx, handlers.Actor(c), title+" (staged)")
	if err == nil {
		d, err = h.env.Store.SetDraftChanges(ctx, handlers.Actor(c), d.ID, d.Version, changes)
	}
	if err != nil {
		if models.KindOf(err) == models.Internal {
			return err
		}
		handlers.AddFlash(c, views.FlashError, "Nothing was staged: "+message(err))
		return handlers.SeeOther(c, back)
	}
	handlers.AddFlash(c, views.FlashSuccess, fmt.Sprintf("Staged as draft %q; nothing live changed. Preview it, then apply it.", d.Name))
	return handlers.SeeOther(c, "/drafts/"+d.ID)
}

// formsWho is the signed-in person a form is read for.
func formsWho(c echo.Context) forms.Who {
	who := forms.Who{Admin: handlers.HasRole(c, models.RoleAdmin)}
	if u := handlers.CurrentUser(c); u != nil {
		who.User, who.Project = u.Name, u.ProjectID
	}
	return who
}

// draftSnapshot indexes w, the live world with changes applied.
func draftSnapshot(live *state, w *models.World, changes []scheduling.Change) (*scheduling.Snapshot, error) {
	return scheduling.DraftSnapshot(live.snap, w, changes)
}
