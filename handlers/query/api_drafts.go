package query

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
)

// The drafts API (docs/drafts.md): what the drafts pages do, as JSON, so a
// pipeline can stage a change, gate it on its preview, impact and
// strandings, and apply it. Reading is open to every signed-in user;
// writing needs the admin role, as on the pages.
func registerDraftsAPI(api *echo.Group, h *Handler, admin echo.MiddlewareFunc) {
	api.GET("/drafts", h.APIDrafts)
	handlers.Body(handlers.ConsoleJSON, api.POST("/drafts", h.APICreateDraft, admin))
	api.GET("/drafts/:id", h.APIDraft)
	api.DELETE("/drafts/:id", h.APIDiscardDraft, admin)
	handlers.Body(handlers.ConsoleJSON, api.POST("/drafts/:id/changes", h.APIAddChanges, admin))
	api.DELETE("/drafts/:id/changes/:n", h.APIRemoveChange, admin)
	handlers.Body(handlers.ConsoleJSON, api.POST("/drafts/:id/preview", h.APIDraftPreview))
	api.GET("/drafts/:id/impact", h.APIImpact)
	api.GET("/drafts/:id/stranded", h.APIStranded)
	handlers.Body(handlers.ConsoleJSON, api.POST("/drafts/:id/apply", h.APIApplyDraft, admin))
}

// draftDoc is a draft as the API shows it.
type draftDoc struct {
	ID           string              `json:"id"`
	Name         string              `json:"name"`
	Author       string              `json:"author"`
	CreatedAt    time.Time           `json:"created_at"`
	UpdatedAt    time.Time           `json:"updated_at"`
	BaseRevision int64               `json:"base_revision"`
	Version      int64               `json:"version"`
	Changes      []scheduling.Change `json:"changes"`
	// Described says each change in a sentence, in the same order.
	Described []string `json:"described"`
	// Conflicts lists the objects changed since the draft touched them;
	// applying fails while it is not empty.
	Conflicts []string `json:"conflicts"`
	// Drift is what the cloud had changed since the draft's base, field
	// by field, when its rollout was last refused for it (connected; as
	// on the rebase page); absent otherwise.
	Drift []models.Drift `json:"drift,omitempty"`
}

func (h *Handler) draftDoc(ctx context.Context, d *store.Draft) (*draftDoc, error) {
	changes, err := d.DraftChanges()
	if err != nil {
		return nil, err
	}
	conflicts, err := h.env.Store.DraftConflicts(ctx, d)
	if err != nil {
		return nil, err
	}
	drift, _, err := h.lastDrift(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	doc := &draftDoc{ID: d.ID, Name: d.Name, Author: d.Author, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
		BaseRevision: d.BaseRevision, Version: d.Version, Changes: changes, Described: []string{}, Conflicts: conflicts, Drift: drift}
	if doc.Changes == nil {
		doc.Changes = []scheduling.Change{}
	}
	if doc.Conflicts == nil {
		doc.Conflicts = []string{}
	}
	for _, c := range changes {
		doc.Described = append(doc.Described, scheduling.DescribeChange(c))
	}
	return doc, nil
}

// readBody reads a bounded JSON body into v, refusing unknown fields.
func readBody(c echo.Context, v any) error {
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxRequestBody+1))
	if err != nil {
		return models.E(models.Invalid, "", "cannot read the request body: %v", err)
	}
	if int64(len(body)) > maxRequestBody {
		return models.E(models.Invalid, "", "the request body is larger than %d bytes", maxRequestBody)
	}
	if len(body) == 0 {
		return models.E(models.Invalid, "", "the request needs a JSON body")
	}
	return models.DecodeStrict(body, "", v)
}

// APIDrafts is GET /api/drafts: every draft, newest first.
func (h *Handler) APIDrafts(c echo.Context) error {
	ctx := c.Request().Context()
	ds, err := h.env.Store.ListDrafts(ctx)
	if err != nil {
		return err
	}
	out := make([]*draftDoc, 0, len(ds))
	for i := range ds {
		doc, err := h.draftDoc(ctx, &ds[i])
		if err != nil {
			return err
		}
		out = append(out, doc)
	}
	return c.JSON(http.StatusOK, map[string]any{"drafts": out})
}

// createDraftBody is POST /api/drafts: a name and, optionally, the
// changes; or the audit event of an applied draft to revert.
type createDraftBody struct {
	Name    string              `json:"name"`
	Changes []scheduling.Change `json:"changes"`
	Revert  int64               `json:"revert"`
}

// APICreateDraft is POST /api/drafts: 201 with the draft.
func (h *Handler) APICreateDraft(c echo.Context) error {
	ctx := c.Request().Context()
	var body createDraftBody
	if err := readBody(c, &body); err != nil {
		return err
	}
	var d *store.Draft
	var err error
	if body.Revert != 0 {
		if body.Name != "" || body.Changes != nil {
			return models.E(models.Invalid, "revert", "a revert takes neither a name nor changes: they come from the audit event")
		}
		d, err = h.env.Store.RevertDraftApply(ctx, handlers.Actor(c), body.Revert)
	} else {
		if len(body.Changes) > 0 {
			if err = h.checkChanges(ctx, body.Changes); err != nil {
				return err
			}
		}
		d, err = h.env.Store.CreateDraft(ctx, handlers.Actor(c), body.Name)
		if err == nil && len(body.Changes) > 0 {
			d, err = h.env.Store.SetDraftChanges(ctx, handlers.Actor(c), d.ID, d.Version, body.Changes)
		}
	}
	if err != nil {
		return err
	}
	doc, err := h.draftDoc(ctx, d)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/api/drafts/"+d.ID)
	return c.JSON(http.StatusCreated, doc)
}

// checkChanges refuses a change list that does not apply to live data,
// naming the change and field ("changes[2].flavor").
func (h *Handler) checkChanges(ctx context.Context, changes []scheduling.Change) error {
	live, _, err := h.liveState(ctx)
	if err != nil {
		return err
	}
	_, err = scheduling.ApplyChanges(live.world, changes)
	return err
}

// APIDraft is GET /api/drafts/:id.
func (h *Handler) APIDraft(c echo.Context) error {
	ctx := c.Request().Context()
	d, err := h.env.Store.GetDraft(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	doc, err := h.draftDoc(ctx, d)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, doc)
}

// versionParam reads the draft version a write was made against: the
// confirmation that the caller saw what it changes.
func versionParam(raw, field string) (int64, error) {
	if raw == "" {
		return 0, models.E(models.Invalid, field, "give the draft's version (from GET /api/drafts/:id) to confirm what you reviewed")
	}
	v, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || v < 0 {
		return 0, models.E(models.Invalid, field, "%q is not a draft version", raw)
	}
	return v, nil
}

// APIDiscardDraft is DELETE /api/drafts/:id?version=N: 204.
func (h *Handler) APIDiscardDraft(c echo.Context) error {
	ctx := c.Request().Context()
	version, err := versionParam(c.QueryParam("version"), "version")
	if err != nil {
		return err
	}
	d, err := h.env.Store.GetDraft(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	if d.Version != version {
		return models.E(models.Conflict, "version", "draft %s is at version %d, not %d — review it again", d.Name, d.Version, version)
	}
	if err := h.env.Store.DiscardDraft(ctx, handlers.Actor(c), d.ID); err != nil {
		return err
	}
	h.forgetDraft(d.ID)
	return c.NoContent(http.StatusNoContent)
}

// changesBody is POST /api/drafts/:id/changes.
type changesBody struct {
	Version *int64              `json:"version"`
	Changes []scheduling.Change `json:"changes"`
}

// APIAddChanges is POST /api/drafts/:id/changes: appends the changes
// after checking the whole list against live data.
func (h *Handler) APIAddChanges(c echo.Context) error {
	ctx := c.Request().Context()
	var body changesBody
	if err := readBody(c, &body); err != nil {
		return err
	}
	if body.Version == nil {
		return models.E(models.Invalid, "version", "give the draft's version (from GET /api/drafts/:id)")
	}
	if len(body.Changes) == 0 {
		return models.E(models.Invalid, "changes", "give at least one change")
	}
	d, err := h.env.Store.GetDraft(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	changes, err := d.DraftChanges()
	if err != nil {
		return err
	}
	changes = append(changes, body.Changes...)
	if err = h.checkChanges(ctx, changes); err != nil {
		return err
	}
	if d, err = h.env.Store.SetDraftChanges(ctx, handlers.Actor(c), d.ID, *body.Version, changes); err != nil {
		return err
	}
	h.forgetDraft(d.ID)
	doc, err := h.draftDoc(ctx, d)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, doc)
}

// APIRemoveChange is DELETE /api/drafts/:id/changes/:n?version=N.
func (h *Handler) APIRemoveChange(c echo.Context) error {
	ctx := c.Request().Context()
	version, err := versionParam(c.QueryParam("version"), "version")
	if err != nil {
		return err
	}
	d, err := h.env.Store.GetDraft(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	changes, err := d.DraftChanges()
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(c.Param("n"))
	if err != nil || n < 0 || n >= len(changes) {
		return models.E(models.NotFound, "change", "draft %s has no change %s (it has %d, from 0)", d.Name, c.Param("n"), len(changes))
	}
	changes = slices.Delete(changes, n, n+1)
	if err = h.checkChanges(ctx, changes); err != nil {
		return err
	}
	if d, err = h.env.Store.SetDraftChanges(ctx, handlers.Actor(c), d.ID, version, changes); err != nil {
		return err
	}
	h.forgetDraft(d.ID)
	doc, err := h.draftDoc(ctx, d)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, doc)
}

// APIDraftPreview is POST /api/drafts/:id/preview: POST /api/preview
// against the draft.
func (h *Handler) APIDraftPreview(c echo.Context) error {
	q := c.Request().URL.Query()
	q.Set("draft", c.Param("id"))
	c.Request().URL.RawQuery = q.Encode()
	return h.APIPreview(c)
}

// APIStranded is GET /api/drafts/:id/stranded: the running servers and
// server groups the draft strands, each with the reason.
func (h *Handler) APIStranded(c echo.Context) error {
	st, _, err := h.strandings(c, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}

// strandings computes a draft's strandings, as much of them as the caller
// may see.
func (h *Handler) strandings(c echo.Context, id string) (*scheduling.Stranding, *store.Draft, error) {
	ctx := c.Request().Context()
	live, rev, err := h.liveState(ctx)
	if err != nil {
		return nil, nil, err
	}
	d, err := h.env.Store.GetDraft(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	ds, err := h.draftWorld(ctx, d, live, rev)
	if err != nil {
		return nil, nil, err
	}
	st, err := scheduling.Strandings(live.snap, ds.st.snap)
	return scopeStranding(c, st), d, err
}

// draftGate judges what applying a draft does to live data: the safety
// gate its apply passes (scheduling.GateBetween on the draft's world).
func (h *Handler) draftGate(ctx context.Context, d *store.Draft) (*scheduling.Gate, error) {
	live, rev, err := h.liveState(ctx)
	if err != nil {
		return nil, err
	}
	ds, err := h.draftWorld(ctx, d, live, rev)
	if err != nil {
		return nil, err
	}
	return scheduling.GateBetween(live.snap, ds.st.snap, ds.changes)
}

// applyGate is the gate of applying draft id at version; nil when the
// write path refuses the apply anyway (another version, a conflict), with
// its own message.
func (h *Handler) applyGate(ctx context.Context, id string, version int64) (*scheduling.Gate, error) {
	d, err := h.env.Store.GetDraft(ctx, id)
	if err != nil {
		return nil, err
	}
	conflicts, err := h.env.Store.DraftConflicts(ctx, d)
	if err != nil || version != d.Version || len(conflicts) > 0 {
		return nil, err
	}
	g, err := h.draftGate(ctx, d)
	if err != nil && models.KindOf(err) != models.Internal {
		return nil, nil
	}
	return g, err
}

// applyBody is POST /api/drafts/:id/apply. Confirm agrees to the
// consequences the draft has (servers stranded, groups broken, pairs
// left with no host); without it such a draft is not applied.
type applyBody struct {
	Version *int64 `json:"version"`
	Confirm bool   `json:"confirm"`
}

// gateAnswer is the 409 of an apply that needs "confirm": the API's
// error, and the consequences to agree to.
type gateAnswer struct {
	Error        gateError        `json:"error"`
	Consequences *scheduling.Gate `json:"consequences"`
}

type gateError struct {
	Status  int    `json:"status"`
	Kind    string `json:"kind"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

// applied is the answer to an apply: the audit event that records it,
// whose id POST /api/drafts {"revert": id} reverts.
type applied struct {
	Draft      string `json:"draft"`
	AuditEvent int64  `json:"audit_event"`
	// Cloud says what was rolled out when corral is connected to a cloud.
	Cloud *scheduling.CloudWrite `json:"cloud,omitempty"`
}

// APIApplyDraft is POST /api/drafts/:id/apply {"version": N}: every change
// or none; 409 naming the objects when live data moved on.
func (h *Handler) APIApplyDraft(c echo.Context) error {
	ctx := c.Request().Context()
	var body applyBody
	if err := readBody(c, &body); err != nil {
		return err
	}
	if body.Version == nil {
		return models.E(models.Invalid, "version", "give the draft's version (from GET /api/drafts/:id) to confirm what you reviewed")
	}
	id := c.Param("id")
	if !body.Confirm {
		g, err := h.applyGate(ctx, id, *body.Version)
		if err != nil {
			return err
		}
		if g != nil && g.NeedsConfirmation() {
			return c.JSON(http.StatusConflict, gateAnswer{Consequences: g, Error: gateError{Status: http.StatusConflict,
				Kind: strings.ReplaceAll(models.Conflict.String(), " ", "_"), Field: "confirm", Message: message(g.Refusal("confirm"))}})
		}
	}
	done, err := h.env.Writer.ApplyDraft(ctx, handlers.Actor(c), id, *body.Version)
	if err != nil {
		return err
	}
	h.forgetDraft(id)
	ev, err := h.applyEvent(ctx, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, applied{Draft: id, AuditEvent: ev, Cloud: done.Cloud})
}

// applyEvent finds the audit event of the draft's apply (0 if none).
func (h *Handler) applyEvent(ctx context.Context, draftID string) (int64, error) {
	evs, _, err := h.env.Store.ListAudit(ctx, store.AuditQuery{ObjectType: "draft", ObjectID: draftID})
	if err != nil {
		return 0, err
	}
	for _, e := range evs {
		if e.Action == "apply" {
			return e.ID, nil
		}
	}
	return 0, nil
}
