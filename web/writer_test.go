package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/web/webtest"
)

// refusingWriter is a write path that refuses everything, as a cloud
// that is down would, and remembers what it was handed.
type refusingWriter struct {
	mu    sync.Mutex
	calls []string
}

func (w *refusingWriter) record(what string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, what)
	return models.E(models.Unavailable, "", "the write path is down")
}

func (w *refusingWriter) Apply(_ context.Context, _ store.Actor, changes []scheduling.Change) (*scheduling.Applied, error) {
	ops := make([]string, len(changes))
	for i, c := range changes {
		ops[i] = c.Op
	}
	return nil, w.record(strings.Join(ops, "+"))
}

func (w *refusingWriter) ApplyDraft(_ context.Context, _ store.Actor, id string, _ int64) (*scheduling.Applied, error) {
	return nil, w.record("draft " + id)
}

func (w *refusingWriter) ImportWorldAt(context.Context, store.Actor, *models.World, bool, int64) error {
	return w.record("import")
}

func (w *refusingWriter) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.calls
	w.calls = nil
	return out
}

// Every write door — a console form, the Nova and Placement APIs, a
// draft applied through the API and through its page — hands its changes
// to the Writer and writes nothing itself: with a Writer that refuses,
// each door fails and live data stays where it was.
func TestEveryWriteDoorGoesThroughTheWriter(t *testing.T) {
	w := &refusingWriter{}
	a := webtest.StartWith(t, webtest.Options{Demo: true, Tokens: true, Writer: w,
		Users: []webtest.User{{Name: "root", Role: models.RoleAdmin}}})
	ctx := context.Background()
	before, err := a.Store.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	api := a.TokenClient(t, "root")
	page := a.SignIn(t, "root")

	d, err := a.Store.CreateDraft(ctx, store.Actor{Name: "root", Via: "cli"}, "refused")
	if err != nil {
		t.Fatal(err)
	}
	if d, err = a.Store.SetDraftChanges(ctx, store.Actor{Name: "root", Via: "cli"}, d.ID, d.Version,
		[]scheduling.Change{{Op: scheduling.OpCreateAggregate, Aggregate: "never-made"}}); err != nil {
		t.Fatal(err)
	}
	doors := []struct {
		name string
		send func() *webtest.Response
		want string // what the writer must have been handed
		ok   func(*webtest.Response) bool
	}{
		{"console aggregate form", func() *webtest.Response {
			return page.Submit("/aggregates/new", "/aggregates", url.Values{"name": {"never-made"}})
		}, "create_aggregate", func(r *webtest.Response) bool {
			return r.StatusCode == http.StatusSeeOther && strings.HasPrefix(r.Header.Get("Location"), "/aggregates/new")
		}},
		{"Nova API aggregate", func() *webtest.Response {
			return api.JSON(http.MethodPost, "/compute/v2.1/os-aggregates", `{"aggregate": {"name": "never-made"}}`)
		}, "create_aggregate", func(r *webtest.Response) bool { return r.StatusCode == http.StatusServiceUnavailable }},
		{"Placement API provider", func() *webtest.Response {
			return api.JSON(http.MethodPost, "/placement/resource_providers", `{"name": "never-made"}`)
		}, "create_provider", func(r *webtest.Response) bool { return r.StatusCode == http.StatusServiceUnavailable }},
		{"draft API apply", func() *webtest.Response {
			return api.JSON(http.MethodPost, "/api/drafts/"+d.ID+"/apply", map[string]any{"version": d.Version})
		}, "draft " + d.ID, func(r *webtest.Response) bool { return r.StatusCode == http.StatusServiceUnavailable }},
		{"draft page apply", func() *webtest.Response {
			return page.Submit("/drafts/"+d.ID, "/drafts/"+d.ID+"/apply", url.Values{"version": {"1"}})
		}, "draft " + d.ID, func(r *webtest.Response) bool { return r.StatusCode >= 300 }},
	}
	for _, door := range doors {
		r := door.send()
		calls := w.take()
		if len(calls) != 1 || !strings.HasPrefix(calls[0], door.want) {
			t.Errorf("%s: the writer was handed %q, want one call of %s (status %d: %.200s)", door.name, calls, door.want, r.StatusCode, r.Body)
		}
		if !door.ok(r) {
			t.Errorf("%s: status %d (Location %q) for a refused write: %.300s", door.name, r.StatusCode, r.Header.Get("Location"), r.Body)
		}
		if rev, err := a.Store.Revision(ctx); err != nil || rev != before {
			t.Fatalf("%s: live data moved (revision %d → %d, %v) although the writer refused", door.name, before, rev, err)
		}
	}
	if got, err := a.Store.GetDraft(ctx, d.ID); err != nil || got.ID != d.ID {
		t.Errorf("the refused draft was consumed: %v", err)
	}
}
