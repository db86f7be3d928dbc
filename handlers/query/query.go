// Package query serves corral's reason to exist: the live query page, which
// shows for any request which providers and hosts are excluded, at which
// stage and why, as the admin types; drafts of pending changes that any
// query can run against, with the difference to live data; the impact
// matrix of a draft over every project × flavor pair; and POST /api/preview,
// the same preview for scripts and pipelines.
//
// Everything runs on immutable snapshots of the filtering core: the live
// one is cached until the next write, a draft's until the draft or live
// data change.
package query

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/views"
)

// Handler holds the snapshot caches the pages and the API share.
type Handler struct {
	env *handlers.Env
	// cur is the state of the store's live snapshot last seen.
	cur atomic.Pointer[state]

	mu     sync.Mutex
	drafts map[string]*draftState // by draft id

	answers *responseCache // POST /api/preview answers
}

// state is one world ready to answer requests: the snapshot, and what the
// query form offers, computed once per world.
type state struct {
	world *models.World
	snap  *scheduling.Snapshot

	optsOnce sync.Once
	formOpts views.QueryOptions
}

// draftState is a draft's world, valid for one version of the draft on one
// live revision.
type draftState struct {
	version int64
	liveRev int64
	st      *state
	changes []scheduling.Change
}

// maxDraftStates bounds the draft snapshots kept; each is a whole world.
const maxDraftStates = 3

// New returns a Handler on env's store.
func New(env *handlers.Env) *Handler {
	return &Handler{
		env:     env,
		drafts:  map[string]*draftState{},
		answers: newResponseCache(maxAnswers, maxAnswerBytes),
	}
}

// Register mounts the live query page, the drafts pages and the preview
// API. Reading is open to every signed-in user; drafts are changed only by
// admins, as the aggregates they touch are.
func Register(console, api *echo.Group, env *handlers.Env) *Handler {
	h := New(env)
	admin := handlers.RequireRole(models.RoleAdmin)
	console.GET("/query", h.Page)
	console.GET("/query/preview", h.Preview)
	registerDrafts(console, h, admin)
	registerInline(console, h, admin)
	console.GET("/drafts/:id/impact", h.Impact)
	handlers.Body(handlers.ConsoleJSON, api.POST("/preview", h.APIPreview))
	registerDraftsAPI(api, h, admin)
	return h
}

func newState(w *models.World) (*state, error) {
	snap, err := scheduling.NewSnapshot(w)
	if err != nil {
		return nil, err
	}
	return stateOf(snap), nil
}

func stateOf(snap *scheduling.Snapshot) *state {
	return &state{world: snap.World(), snap: snap}
}

// options is what the query form offers, worked out on first use: a
// preview needs none of it.
func (st *state) options() views.QueryOptions {
	st.optsOnce.Do(func() { st.formOpts = formOptions(st.world) })
	return st.formOpts
}

// maxAggregateOptions caps the aggregate names the form suggests; a
// datalist of 10,000 entries helps nobody and weighs down every page.
const maxAggregateOptions = 1000

// formOptions lists what the query form offers for world w.
func formOptions(w *models.World) views.QueryOptions {
	var o views.QueryOptions
	projects := map[string]bool{}
	for _, s := range w.Servers {
		projects[s.ProjectID] = true
	}
	for _, g := range w.ServerGroups {
		projects[g.ProjectID] = true
	}
	zones := map[string]bool{}
	for _, a := range w.Aggregates {
		for k, v := range a.Metadata {
			if scheduling.IsTenantKey(k) {
				for _, p := range strings.Split(v, ",") {
					projects[strings.TrimSpace(p)] = true
				}
			}
		}
		if a.AvailabilityZone != nil && *a.AvailabilityZone != "" {
			zones[*a.AvailabilityZone] = true
		}
		if len(o.Aggregates) < maxAggregateOptions {
			o.Aggregates = append(o.Aggregates, a.Name)
		}
	}
	delete(projects, "")
	o.Projects = sortedSet(projects)
	o.AZs = sortedSet(zones)
	for _, f := range w.Flavors {
		o.Flavors = append(o.Flavors, f.Name)
	}
	sort.Strings(o.Flavors)
	sort.Strings(o.Aggregates)
	for _, g := range w.ServerGroups {
		o.Groups = append(o.Groups, views.Option{Value: g.UUID, Label: g.Name + " (" + g.Policy + ", " + g.ProjectID + ")"})
	}
	sort.Slice(o.Groups, func(i, j int) bool { return o.Groups[i].Label < o.Groups[j].Label })
	return o
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// liveState returns the live world's state and its revision.
func (h *Handler) liveState(ctx context.Context) (*state, int64, error) {
	snap, rev, err := h.env.Store.Live().Get(ctx)
	if err != nil {
		return nil, 0, err
	}
	if st := h.cur.Load(); st != nil && st.snap == snap {
		return st, rev, nil
	}
	st := stateOf(snap)
	h.cur.Store(st)
	return st, rev, nil
}

// draftWorld returns a draft's state, building it from the live world and
// the draft's changes when the draft or live data moved on.
func (h *Handler) draftWorld(ctx context.Context, d *store.Draft, live *state, rev int64) (*draftState, error) {
	h.mu.Lock()
	ds, ok := h.drafts[d.ID]
	h.mu.Unlock()
	if ok && ds.version == d.Version && ds.liveRev == rev {
		return ds, nil
	}
	changes, err := decodeChanges(d.Changes)
	if err != nil {
		return nil, err
	}
	w, err := scheduling.ApplyChanges(live.world, changes)
	if err != nil {
		return nil, err
	}
	st, err := newState(w)
	if err != nil {
		return nil, err
	}
	ds = &draftState{version: d.Version, liveRev: rev, st: st, changes: changes}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.drafts[d.ID]; !ok && len(h.drafts) >= maxDraftStates {
		// Evict an arbitrary other draft: a handful of drafts are open at
		// once, and rebuilding one costs a snapshot build.
		for id := range h.drafts {
			delete(h.drafts, id)
			break
		}
	}
	h.drafts[d.ID] = ds
	return ds, nil
}

// forgetDraft drops a draft's cached world (after apply or discard).
func (h *Handler) forgetDraft(id string) {
	h.mu.Lock()
	delete(h.drafts, id)
	h.mu.Unlock()
}

// decodeChanges reads a stored draft's change list.
func decodeChanges(raw string) ([]scheduling.Change, error) {
	var cs []scheduling.Change
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	if err := json.Unmarshal([]byte(raw), &cs); err != nil {
		return nil, models.Wrap("decode draft changes", err)
	}
	return cs, nil
}

// loadDraft finds a draft and builds its world. A missing draft is an
// Invalid error on field, so that pages show it next to the draft picker.
func (h *Handler) loadDraft(ctx context.Context, id, field string, live *state, rev int64) (*store.Draft, *draftState, error) {
	d, err := h.env.Store.GetDraft(ctx, id)
	if err != nil {
		if models.KindOf(err) == models.NotFound {
			return nil, nil, models.E(models.Invalid, field, "no draft %q (it may have been applied or discarded)", id)
		}
		return nil, nil, err
	}
	ds, err := h.draftWorld(ctx, d, live, rev)
	if err != nil {
		return nil, nil, err
	}
	return d, ds, nil
}

// draftOptions lists the drafts for the query form's picker.
func (h *Handler) draftOptions(ctx context.Context) ([]views.Option, error) {
	ds, err := h.env.Store.ListDrafts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]views.Option, 0, len(ds))
	for _, d := range ds {
		out = append(out, views.Option{Value: d.ID, Label: d.Name})
	}
	return out, nil
}
