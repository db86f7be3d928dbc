package console_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/web/webtest"
)

// racingWriter is the store's write path with another admin's save landing
// just before each of the console's, after the handler read the object:
// the window a check in the handler alone leaves open.
type racingWriter struct {
	app  *webtest.App
	race []scheduling.Change
}

func (w *racingWriter) Apply(ctx context.Context, a store.Actor, changes []scheduling.Change) (*scheduling.Applied, error) {
	if w.race != nil {
		other := store.Actor{Name: "other-admin", Via: "console", Role: models.RoleAdmin}
		if _, err := w.app.Store.Apply(ctx, other, w.race); err != nil {
			return nil, err
		}
		w.race = nil
	}
	return w.app.Store.Apply(ctx, a, changes)
}

func (w *racingWriter) ApplyDraft(ctx context.Context, a store.Actor, id string, version int64) (*scheduling.Applied, error) {
	return w.app.Store.ApplyDraft(ctx, a, id, version)
}

func (w *racingWriter) ImportWorldAt(ctx context.Context, a store.Actor, world *models.World, replace bool, expect int64) error {
	return w.app.Store.ImportWorldAt(ctx, a, world, replace, expect)
}

// A save whose generation went stale between the handler's read and the
// write is refused by the write, as "changed by someone else", and
// nothing of it is written.
func TestStaleSaveIsRefusedAtTheWrite(t *testing.T) {
	w := &racingWriter{}
	wa := webtest.StartWith(t, webtest.Options{Demo: true, Writer: w,
		Users: []webtest.User{{Name: webtest.AdminName, Role: models.RoleAdmin, Password: webtest.AdminPassword}}})
	wa.AdminName, wa.AdminPassword = webtest.AdminName, webtest.AdminPassword
	w.app = wa
	a := &app{t: t, App: wa}
	c := a.as(a.AdminName)
	agg := a.aggregate("aggC")
	path := "/aggregates/" + agg.UUID

	w.race = []scheduling.Change{{Op: scheduling.OpSetMetadata, Aggregate: agg.UUID, Key: "colour", Value: "red"}}
	r := refused(t, c, path, path+"/members", url.Values{"bulk": {"cn3"}, "generation": {gen(agg.Generation)}})
	if !strings.Contains(r.Body, "Not saved: aggregate aggC was changed by someone else — reload.") {
		t.Errorf("the refusal does not say the aggregate changed: %s", r.Body)
	}
	after := a.aggregate(agg.UUID)
	if slices.Contains(after.Members, a.providerUUID("cn3")) {
		t.Error("a stale save added cn3")
	}
	if after.Metadata["colour"] != "red" {
		t.Error("the other admin's save is lost")
	}

	// The metadata editor, whose refusal is shown on the page.
	agg = after
	w.race = []scheduling.Change{{Op: scheduling.OpSetMetadata, Aggregate: agg.UUID, Key: "colour", Value: "green"}}
	c.Submit(path, path+"/metadata", url.Values{"key": {"size"}, "value": {"xl"}, "generation": {gen(agg.Generation)}})
	after = a.aggregate(agg.UUID)
	if _, ok := after.Metadata["size"]; ok || after.Metadata["colour"] != "green" {
		t.Errorf("metadata after a stale save: %v", after.Metadata)
	}
}
