package world

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/store"
	wv "corral/views/world"
)

// The world page downloads the world and imports one in two steps: the
// upload is checked and previewed (store.PlanImport), and only a second
// submission applies it. Between the two the checked world waits on the
// server under a random token, bound to the user who uploaded it.

// MaxWorldUpload bounds an uploaded world file; a 100,000-provider cloud
// exports to well under this.
const MaxWorldUpload = 256 << 20

// Pending previews: how long one is kept, and how many at most (each holds
// a whole world in memory).
const (
	worldPendingTTL = 30 * time.Minute
	worldPendingMax = 8
)

type worldPending struct {
	user    string
	created time.Time
	plan    *store.ImportPlan
	view    wv.WorldPreview
}

// worldPages serves the world page; it keeps the previews waiting to be
// applied.
type worldPages struct {
	env *handlers.Env

	mu      sync.Mutex
	pending map[string]*worldPending
}

// Register mounts the world page (admins only) on console and the
// world download on api as GET /api/world.
func Register(console, api *echo.Group, env *handlers.Env) {
	h := &worldPages{env: env, pending: map[string]*worldPending{}}
	admin := handlers.RequireRole(models.RoleAdmin)
	console.GET("/world", h.page, admin)
	console.GET("/world/export", h.export, admin)
	handlers.Body(MaxWorldUpload+1<<20, console.POST("/world/preview", h.preview, admin))
	handlers.Body(handlers.SmallForm, console.POST("/world/apply", h.apply, admin))
	api.GET("/world", h.export, admin)
}

func (h *worldPages) render(c echo.Context, status int, props wv.WorldProps) error {
	return handlers.Render(c, status, wv.World(layout.Page(c, "World", "world"), props))
}

// page shows the download and the upload form (GET /world).
func (h *worldPages) page(c echo.Context) error {
	return h.render(c, http.StatusOK, wv.WorldProps{Form: wv.WorldForm{Blazar: true}})
}

// export sends the world as a JSON attachment (GET /world/export, and
// GET /api/world for scripts).
func (h *worldPages) export(c echo.Context) error {
	w, err := h.env.Store.ExportWorld(c.Request().Context())
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := models.EncodeWorld(&buf, w); err != nil {
		return models.Wrap("handlers.export", err)
	}
	name := "corral-world-" + h.env.CurrentTime().UTC().Format("2006-01-02") + ".json"
	hdr := c.Response().Header()
	hdr.Set(echo.HeaderContentDisposition, fmt.Sprintf("attachment; filename=%q", name))
	hdr.Set(echo.HeaderCacheControl, "no-store")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, buf.Bytes())
}

// preview checks an uploaded world and shows what applying it would
// change (POST /world/preview). Nothing is written.
func (h *worldPages) preview(c echo.Context) error {
	form := wv.WorldForm{
		Replace: c.FormValue("mode") == "replace",
		Blazar:  c.FormValue("blazar") != "",
		Errors:  map[string]string{},
	}
	if m := c.FormValue("mode"); m != "" && m != "merge" && m != "replace" {
		form.Errors["mode"] = "Choose merge or replace."
		return h.render(c, http.StatusBadRequest, wv.WorldProps{Form: form})
	}
	fh, err := c.FormFile("file")
	if err != nil {
		form.Errors["file"] = "Choose a world file to import."
		return h.render(c, http.StatusBadRequest, wv.WorldProps{Form: form})
	}
	if fh.Size > MaxWorldUpload {
		form.Errors["file"] = fmt.Sprintf("The file is %d MiB; the limit is %d MiB.", fh.Size>>20, MaxWorldUpload>>20)
		return h.render(c, http.StatusRequestEntityTooLarge, wv.WorldProps{Form: form})
	}
	f, err := fh.Open()
	if err != nil {
		return models.Wrap("handlers.preview", err)
	}
	defer f.Close()
	ctx := c.Request().Context()
	w, err := models.DecodeWorld(f)
	if err == nil {
		var plan *store.ImportPlan
		plan, err = h.env.Store.PlanImport(ctx, w, form.Replace, form.Blazar)
		if err == nil {
			v := wv.WorldPreview{
				FileName: fh.Filename, Replace: plan.Replace, Blazar: form.Blazar, Revision: plan.Revision,
				Kinds: kindDiffs(plan.Kinds), SettingsChanged: plan.SettingsChanged, BlazarLines: plan.BlazarLines,
			}
			v.Token = h.keep(handlers.CurrentUser(c).Name, plan, v)
			return h.render(c, http.StatusOK, wv.WorldProps{Form: form, Preview: &v})
		}
	}
	if models.KindOf(err) == models.Internal {
		return err
	}
	// The message names the field of the file at fault ("aggregates[x].members: …").
	form.Errors["file"] = fh.Filename + " was not imported — " + err.Error()
	return h.render(c, handlers.StatusOf(err), wv.WorldProps{Form: form})
}

// apply imports a previewed world in one transaction (POST /world/apply),
// unless the world changed since the preview.
func (h *worldPages) apply(c echo.Context) error {
	form := wv.WorldForm{Blazar: true, Errors: map[string]string{}}
	p := h.take(c.FormValue("preview"), handlers.CurrentUser(c).Name)
	if p == nil {
		form.Errors[""] = "This preview has expired or was already applied — upload the file again."
		return h.render(c, http.StatusConflict, wv.WorldProps{Form: form})
	}
	form.Replace, form.Blazar = p.plan.Replace, p.view.Blazar
	ctx := c.Request().Context()
	rev, err := h.env.Store.Revision(ctx)
	if err != nil {
		return err
	}
	if rev != p.plan.Revision {
		// The preview no longer says what the import would do. (A write
		// landing after this check is caught inside the import's own
		// transaction by ImportWorldAt.)
		form.Errors[""] = fmt.Sprintf("The world was changed by someone else — reload: it moved on since this preview (revision %d, now %d); upload the file again to see what it would change now.", p.plan.Revision, rev)
		return h.render(c, http.StatusConflict, wv.WorldProps{Form: form})
	}
	if err := h.env.Writer.ImportWorldAt(ctx, handlers.Actor(c), p.plan.World, p.plan.Replace, p.plan.Revision); err != nil {
		if models.KindOf(err) == models.Internal {
			return err
		}
		form.Errors["file"] = p.view.FileName + " was not imported — " + err.Error()
		return h.render(c, handlers.StatusOf(err), wv.WorldProps{Form: form})
	}
	var added, changed, removed int
	for _, k := range p.plan.Kinds {
		added, changed, removed = added+len(k.Added), changed+len(k.Changed), removed+len(k.Removed)
	}
	msg := fmt.Sprintf("Imported %s: %d added, %d changed, %d removed", p.view.FileName, added, changed, removed)
	if p.plan.SettingsChanged {
		msg += "; settings changed"
	}
	if h.env.Cloud != nil {
		msg += " — rolled out to the cloud (" + h.env.Cloud.Connection() + ") and synced back"
	}
	handlers.AddFlash(c, handlers.FlashSuccess, msg+".")
	return handlers.SeeOther(c, "/world")
}

// keep stores a checked plan until it is applied and returns its token.
func (h *worldPages) keep(user string, plan *store.ImportPlan, v wv.WorldPreview) string {
	b := make([]byte, 18)
	_, _ = rand.Read(b) // crypto/rand does not fail on supported platforms
	tok := base64.RawURLEncoding.EncodeToString(b)
	now := h.env.CurrentTime()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.expire(now)
	for len(h.pending) >= worldPendingMax {
		var oldest string
		for k, p := range h.pending {
			if oldest == "" || p.created.Before(h.pending[oldest].created) {
				oldest = k
			}
		}
		delete(h.pending, oldest)
	}
	v.Token = tok
	h.pending[tok] = &worldPending{user: user, created: now, plan: plan, view: v}
	return tok
}

// take removes and returns the plan under tok if user made it.
func (h *worldPages) take(tok, user string) *worldPending {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.expire(h.env.CurrentTime())
	p := h.pending[tok]
	if p == nil || p.user != user {
		return nil
	}
	delete(h.pending, tok)
	return p
}

func (h *worldPages) expire(now time.Time) {
	for k, p := range h.pending {
		if now.Sub(p.created) > worldPendingTTL {
			delete(h.pending, k)
		}
	}
}

func kindDiffs(ks []store.KindDiff) []wv.WorldKindDiff {
	out := make([]wv.WorldKindDiff, len(ks))
	for i, k := range ks {
		out[i] = wv.WorldKindDiff{Kind: k.Kind, Label: k.Label, Added: k.Added, Changed: k.Changed, Removed: k.Removed}
	}
	return out
}
