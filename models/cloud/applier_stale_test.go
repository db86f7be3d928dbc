package cloud_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/scheduling"
	"corral/models/store/storetest"
	"corral/web"
	"corral/web/webtest"
)

// racingApplier is the cloud write path with another admin's save landing
// just before the next write, after the console's handler read the
// object: the window a check in the handler alone leaves open.
type racingApplier struct {
	*cloud.Applier
	race []scheduling.Change
}

func (w *racingApplier) Apply(ctx context.Context, a models.Actor, changes []scheduling.Change) (*scheduling.Applied, error) {
	if w.race != nil {
		other := models.Actor{Name: "other-admin", Via: "console", Role: models.RoleAdmin}
		if _, err := w.Applier.Apply(ctx, other, w.race); err != nil {
			return nil, err
		}
		w.race = nil
	}
	return w.Applier.Apply(ctx, a, changes)
}

// TestConnectedStaleFormRefused: served connected, a console form saved
// after another admin's save of the same aggregate (rolled out and
// re-synced, so corral's generation moved) is refused as in standalone
// mode, "changed by someone else — reload", and nothing of it reaches
// Nova — also when that save lands between the form's handler and the
// cloud write; reloaded, the same save goes through. Before, the cloud
// write path ignored the form's generation, and a save in that window
// landed on top of the other one.
func TestConnectedStaleFormRefused(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "cst-")
	st := storetest.Open(t)
	s := &cloud.Syncer{Store: st, Options: cloud.Options{ComputeURL: c.ComputeURL, PlacementURL: c.PlacementURL, Token: cloudtest.Token}}
	w := &racingApplier{Applier: &cloud.Applier{Syncer: s, Store: st}}
	app := webtest.StartWith(t, webtest.Options{Store: st, Config: web.Config{Cloud: s}, Writer: w,
		Users: []webtest.User{{Name: webtest.AdminName, Role: models.RoleAdmin, Project: "admin", Password: webtest.AdminPassword}}})
	if _, err := s.SyncNow(context.Background(), actor); err != nil {
		t.Fatal(err)
	}
	a := &connectedApp{App: app, c: c, syncer: s, admin: app.SignIn(t, webtest.AdminName)}
	page := "/aggregates/" + f.aggB
	form := formOf(t, a.admin.Get(page).Doc(t), page+"/metadata")
	if form.Get("generation") == "" {
		t.Fatal("the metadata form carries no generation")
	}

	other := models.Actor{Name: "other-admin", Via: "console", Role: models.RoleAdmin}
	if _, err := a.Env.Writer.Apply(context.Background(), other, []scheduling.Change{
		{Op: scheduling.OpSetMetadata, Aggregate: "cst-aggB", Key: "cst-colour", Value: "red"}}); err != nil {
		t.Fatal(err)
	}

	form.Add("key", "cst-size")
	form.Add("value", "xl")
	r := a.admin.Submit(page, page+"/metadata", form)
	if r.StatusCode == http.StatusSeeOther {
		r = a.admin.Get(r.Header.Get("Location"))
	}
	if !strings.Contains(r.Body, "aggregate cst-aggB was changed by someone else — reload") {
		t.Errorf("a stale save while connected: %d %q", r.StatusCode, flashes(t, r))
	}
	props := showAggregate(t, c, "cst-aggB").Properties
	if props["cst-size"] != "" || props["cst-colour"] != "red" {
		t.Errorf("after a stale save nova has %v", props)
	}

	// The other admin's save lands after the handler read the aggregate.
	form = formOf(t, a.admin.Get(page).Doc(t), page+"/metadata")
	form.Add("key", "cst-size")
	form.Add("value", "xl")
	w.race = []scheduling.Change{{Op: scheduling.OpSetMetadata, Aggregate: "cst-aggB", Key: "cst-colour", Value: "green"}}
	r = a.admin.Submit(page, page+"/metadata", form)
	if r.StatusCode == http.StatusSeeOther {
		r = a.admin.Get(r.Header.Get("Location"))
	}
	if !strings.Contains(r.Body, "aggregate cst-aggB was changed by someone else — reload") {
		t.Errorf("a save raced by another while connected: %d %q", r.StatusCode, flashes(t, r))
	}
	props = showAggregate(t, c, "cst-aggB").Properties
	if props["cst-size"] != "" || props["cst-colour"] != "green" {
		t.Errorf("after a raced save nova has %v", props)
	}

	form = formOf(t, a.admin.Get(page).Doc(t), page+"/metadata")
	form.Add("key", "cst-size")
	form.Add("value", "xl")
	if msg := flashes(t, a.admin.Follow(page, page+"/metadata", form)); !strings.Contains(msg, "Rolled out to the cloud: 1 call") {
		t.Errorf("the reloaded save says %q", msg)
	}
	if props := showAggregate(t, c, "cst-aggB").Properties; props["cst-size"] != "xl" || props["cst-colour"] != "green" {
		t.Errorf("after the reloaded save nova has %v", props)
	}
	a.inSync(t, "cst-")
}
