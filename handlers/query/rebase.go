package query

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/store"
	"corral/views"
)

// RebaseForm is GET /drafts/:id/rebase: each change of the draft checked
// against live data, with a keep box per change.
func (h *Handler) RebaseForm(c echo.Context) error {
	return h.renderRebase(c, http.StatusOK, "")
}

func (h *Handler) renderRebase(c echo.Context, status int, msg string) error {
	ctx := c.Request().Context()
	d, err := h.env.Store.GetDraft(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	checks, err := h.env.Store.CheckDraft(ctx, d)
	if err != nil {
		return err
	}
	props := views.DraftRebaseProps{ID: d.ID, Name: d.Name, Version: d.Version, Error: msg}
	drift, at, err := h.lastDrift(ctx, d.ID)
	if err != nil {
		return err
	}
	for _, dr := range drift {
		props.Drift = append(props.Drift, views.DraftDriftRow{Object: dr.Object, Field: dr.Field, Base: dr.Base, Cloud: dr.Cloud})
	}
	if len(drift) > 0 {
		props.DriftAt = views.When(at)
	}
	for _, ck := range checks {
		props.Rows = append(props.Rows, views.DraftRebaseRow{Index: ck.Index, Text: describe(ck.Change), Stale: ck.Stale, Problem: ck.Problem})
	}
	return handlers.Render(c, status, views.DraftRebase(layout.Page(c, "Rebase draft "+d.Name, "drafts"), props))
}

// lastDrift is what the cloud had changed, field by field, when the
// draft's rollout was last refused for drift (corral connected), unless
// the draft was rebased since: the cloud's value beside the draft's base,
// which a sync then overwrites in corral's live data.
func (h *Handler) lastDrift(ctx context.Context, id string) ([]models.Drift, time.Time, error) {
	events, _, err := h.env.Store.ListAudit(ctx, store.AuditQuery{ObjectType: "draft", ObjectID: id, Limit: 50})
	if err != nil {
		return nil, time.Time{}, err
	}
	for _, ev := range events {
		switch ev.Action {
		case "rebase":
			return nil, time.Time{}, nil
		case models.AuditRolloutDrift:
			var after struct {
				Drift []models.Drift `json:"drift"`
			}
			if err := json.Unmarshal([]byte(ev.After), &after); err != nil {
				return nil, time.Time{}, fmt.Errorf("audit event %d: %w", ev.ID, err)
			}
			return after.Drift, ev.At, nil
		}
	}
	return nil, time.Time{}, nil
}

// Rebase is POST /drafts/:id/rebase: keep the ticked changes, check them
// against live data and record it as the draft's base.
func (h *Handler) Rebase(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	d, err := h.env.Store.GetDraft(ctx, id)
	if err != nil {
		return err
	}
	changes, err := d.DraftChanges()
	if err != nil {
		return err
	}
	version, err := strconv.ParseInt(c.FormValue("version"), 10, 64)
	if err != nil {
		return h.renderRebase(c, http.StatusBadRequest, "The form is missing the draft's version; reload the page.")
	}
	keep := make([]bool, len(changes))
	params, _ := c.FormParams()
	for _, v := range params["keep"] {
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 || i >= len(keep) {
			return h.renderRebase(c, http.StatusBadRequest, "The draft changed since this page was loaded; review it again.")
		}
		keep[i] = true
	}
	if _, err := h.env.Store.RebaseDraft(ctx, handlers.Actor(c), id, version, keep); err != nil {
		if models.KindOf(err) == models.Internal {
			return err
		}
		return h.renderRebase(c, handlers.StatusOf(err), message(err))
	}
	h.forgetDraft(id)
	handlers.AddFlash(c, views.FlashSuccess, "Draft “"+d.Name+"” rebased on live data.")
	return handlers.SeeOther(c, "/drafts/"+id)
}
