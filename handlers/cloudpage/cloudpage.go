// Package cloudpage serves the Cloud page: the connection to the real
// cloud, the last sync and what it changed, errors, and "Sync now".
package cloudpage

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/cloud"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/views/cloudview"
)

// Register mounts the page on the console group.
func Register(console *echo.Group, env *handlers.Env) {
	h := &page{env: env}
	console.GET("/cloud", h.show)
	handlers.Body(handlers.SmallForm, console.POST("/cloud/sync", h.syncNow, handlers.RequireRole(models.RoleAdmin)))
	console.GET("/cloud/sync/progress", h.progress)
	console.GET("/cloud/drafts/:id", h.plan)
	handlers.Body(handlers.SmallForm, console.POST("/cloud/drafts/:id/rollout", h.rollout, handlers.RequireRole(models.RoleAdmin)))
}

// syncer is what the page asks of the cloud link: the kernel's Cloud, and
// syncs and rollouts (a *cloud.Syncer, which web wires in).
type syncer interface {
	handlers.Cloud
	Running() bool
	Interval() time.Duration
	StartSync(actor models.Actor) error
	Progress() cloud.SyncProgress
	Rollout(ctx context.Context, actor models.Actor, p *cloud.Plan) (*cloud.RolloutReport, error)
}

// syncer is the connected cloud, or nil when corral runs standalone.
func (h *page) syncer() syncer {
	s, _ := h.env.Cloud.(syncer)
	return s
}

func isAdmin(c echo.Context) bool {
	u := handlers.CurrentUser(c)
	return u != nil && u.Role == models.RoleAdmin
}

func planProps(p *cloud.Plan) cloudview.PlanProps {
	pl := cloudview.PlanProps{DraftID: p.DraftID, DraftName: p.DraftName, NotRolledOut: p.NotRolledOut}
	for _, s := range p.Steps {
		pl.Calls = append(pl.Calls, cloudview.Call{Service: s.Service, Call: s.String(), Openstack: s.Openstack})
	}
	return pl
}

// errStandalone is the 404 of the rollout pages when no cloud is
// connected: there is nothing to roll out to, and the message says where
// the draft can be applied instead.
func errStandalone(draft string) error {
	return models.E(models.NotFound, "", "No cloud is connected: corral runs standalone, so a draft is not rolled out to a cloud "+
		"but applied to corral's own database, from its page (/drafts/%s). Start corral with --os-cloud NAME "+
		"(or --compute-url, --placement-url and --token) to roll drafts out to a real cloud.", draft)
}

// plan is GET /cloud/drafts/:id: the calls a rollout of the draft makes.
func (h *page) plan(c echo.Context) error {
	if h.syncer() == nil {
		return errStandalone(c.Param("id"))
	}
	p, err := cloud.PlanDraft(c.Request().Context(), h.env.Store, c.Param("id"))
	if err != nil {
		return err
	}
	pl := planProps(p)
	pl.CanRollout = isAdmin(c) && len(p.Steps) > 0
	g, err := h.rolloutGate(c.Request().Context(), p.DraftID)
	if err != nil {
		return err
	}
	if g != nil {
		gate := layout.GateProps(g, "")
		pl.Gate = &gate
	}
	return handlers.Render(c, http.StatusOK, cloudview.Plan(layout.Page(c, "Rollout", "cloud"), pl))
}

// rollout is POST /cloud/drafts/:id/rollout: the plan goes to the cloud;
// the page then shows what was done.
func (h *page) rollout(c echo.Context) error {
	s := h.syncer()
	if s == nil {
		return errStandalone(c.Param("id"))
	}
	ctx := c.Request().Context()
	p, err := cloud.PlanDraft(ctx, h.env.Store, c.Param("id"))
	if err != nil {
		return err
	}
	// The safety gate: a rollout that strands servers, breaks groups or
	// leaves a pair with no host needs the confirmation of exactly those.
	g, err := h.rolloutGate(ctx, p.DraftID)
	if err != nil {
		return err
	}
	if g != nil && !g.Confirmed(c.FormValue(layout.ConfirmField)) {
		handlers.AddFlash(c, handlers.FlashError, "Nothing was sent: this rollout "+strings.Join(g.Consequences(), "; ")+". Tick the box below to confirm these consequences.")
		return c.Redirect(http.StatusSeeOther, "/cloud/drafts/"+p.DraftID)
	}
	u := handlers.CurrentUser(c)
	rep, err := s.Rollout(ctx, models.Actor{Name: u.Name, Via: "console", Role: u.Role, ProjectID: u.ProjectID}, p)
	if errors.Is(err, cloud.ErrBusy) {
		handlers.AddFlash(c, handlers.FlashWarning, "A sync is running; roll out again when it ends.")
		return c.Redirect(http.StatusSeeOther, "/cloud/drafts/"+p.DraftID)
	}
	if rep == nil {
		return err
	}
	pl := planProps(p)
	pl.Calls, pl.Drift, pl.Mirrored, pl.UndoID, pl.NoUndo = nil, rep.Drift, rep.Mirrored, rep.UndoID, rep.NoUndo
	for _, st := range rep.Done {
		pl.Done = append(pl.Done, st.String())
	}
	for _, st := range rep.NotDone {
		pl.NotDone = append(pl.NotDone, st.String())
	}
	if rep.Failed != nil {
		pl.Failed, pl.Error = rep.Failed.String(), rep.Error
	}
	if len(rep.Drift) > 0 {
		pl.Calls = planProps(p).Calls
	}
	status := http.StatusOK
	if err != nil {
		pl.Error, status = err.Error(), http.StatusBadGateway
		if pl.Failed == "" {
			pl.Failed = "the re-sync"
		}
	}
	if len(rep.Drift) > 0 || rep.Failed != nil {
		status = http.StatusConflict
	}
	return handlers.Render(c, status, cloudview.Plan(layout.Page(c, "Rollout", "cloud"), pl))
}

type page struct{ env *handlers.Env }

// rolloutGate judges a draft's changes against live data (the synced
// mirror): nil when they do not apply, which the rollout reports itself.
func (h *page) rolloutGate(ctx context.Context, id string) (*scheduling.Gate, error) {
	d, err := h.env.Store.GetDraft(ctx, id)
	if err != nil {
		return nil, err
	}
	changes, err := d.DraftChanges()
	if err != nil || len(changes) == 0 {
		return nil, nil
	}
	snap, _, err := h.env.Store.Live().Get(ctx)
	if err != nil {
		return nil, err
	}
	g, err := scheduling.GateOf(snap, changes)
	if err != nil && models.KindOf(err) != models.Internal {
		return nil, nil
	}
	return g, err
}

func (h *page) show(c echo.Context) error {
	p := layout.Page(c, "Cloud", "cloud")
	props := cloudview.Props{}
	if s := h.syncer(); s != nil {
		ctx := c.Request().Context()
		props.Connected, props.Connection, props.Running = true, s.Connection(), s.Running()
		if every := s.Interval(); every > 0 {
			props.Every = every.String()
		}
		props.CanSync = isAdmin(c)
		if pr := s.Progress(); !pr.Started.IsZero() {
			v := progressView(pr)
			props.Progress = &v
		}
		last, err := h.env.Store.LastSuccessfulSync(ctx)
		if err != nil {
			return err
		}
		if last != nil {
			v := view(*last)
			props.Last = &v
		}
		recent, err := h.env.Store.RecentSyncs(ctx, 10)
		if err != nil {
			return err
		}
		for _, r := range recent {
			props.Recent = append(props.Recent, view(r))
		}
	}
	return handlers.Render(c, http.StatusOK, cloudview.Page(p, props))
}

func view(r store.SyncRecord) cloudview.Sync {
	v := cloudview.Sync{When: r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"), Duration: (time.Duration(r.DurationMS) * time.Millisecond).String(),
		Actor: r.Actor, Requests: r.Requests, ProvidersRead: r.ProvidersRead, Reused: r.ProvidersReused, Error: r.Error, Revision: r.Revision}
	var changes []cloud.Change
	if json.Unmarshal([]byte(r.Changes), &changes) == nil {
		for _, ch := range changes {
			v.Changes = append(v.Changes, ch.String())
		}
	}
	for _, d := range r.Disagreements {
		v.Disagreements = append(v.Disagreements, d.Message)
	}
	_ = json.Unmarshal([]byte(r.Warnings), &v.Warnings)
	return v
}

// syncNow is POST /cloud/sync: the sync runs in the background, one at a
// time, and the page shows its progress; the browser does not wait.
func (h *page) syncNow(c echo.Context) error {
	s := h.syncer()
	if s == nil {
		return models.E(models.Invalid, "", "corral runs standalone: there is no cloud to sync")
	}
	u := handlers.CurrentUser(c)
	actor := models.Actor{Name: u.Name, Via: "console", Role: u.Role, ProjectID: u.ProjectID}
	if err := s.StartSync(actor); errors.Is(err, cloud.ErrBusy) {
		handlers.AddFlash(c, handlers.FlashWarning, "A sync is already running; this page shows its outcome when it ends.")
	} else if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/cloud")
}

// progress is GET /cloud/sync/progress, the card the page polls while a
// sync runs; once it is done, htmx reloads the page to show what the sync
// stored.
func (h *page) progress(c echo.Context) error {
	s := h.syncer()
	if s == nil {
		return models.E(models.NotFound, "", "corral runs standalone: there is no cloud to sync")
	}
	pr := s.Progress()
	if !pr.Running && handlers.IsHTMX(c) {
		c.Response().Header().Set("HX-Refresh", "true")
	}
	return handlers.Render(c, http.StatusOK, cloudview.SyncProgress(progressView(pr)))
}

func progressView(pr cloud.SyncProgress) cloudview.Progress {
	v := cloudview.Progress{Running: pr.Running, Actor: pr.Actor, Done: pr.Done, Total: pr.Total}
	end := pr.Finished
	if pr.Running {
		end = time.Now().UTC()
	}
	v.Elapsed = end.Sub(pr.Started).Round(time.Second).String()
	switch {
	case pr.Running:
	case pr.Err != "":
		v.Failed, v.Outcome = true, "The sync started by "+pr.Actor+" failed after "+v.Elapsed+" and changed nothing: "+pr.Err
	case pr.Result != nil:
		v.Outcome = syncSummary(pr.Result) + " (started by " + pr.Actor + ", took " + v.Elapsed + ")"
	}
	return v
}

func syncSummary(r *cloud.SyncResult) string {
	msg := "Synced: "
	if len(r.Changes) == 0 {
		msg += "no changes"
	} else {
		msg += itoa(len(r.Changes)) + " change(s)"
	}
	if len(r.Disagreements) > 0 {
		msg += "; Nova and Placement disagree about " + itoa(len(r.Disagreements)) + " membership(s)"
	}
	return msg + "."
}

func itoa(n int) string { return strconv.Itoa(n) }
