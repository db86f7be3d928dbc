package cloud_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/models/cloud/cloudtest"
	"corral/models/scheduling"
	"corral/web/webtest"
)

// TestConnectedDriftOnTheRebasePage: a draft's apply refused because the
// cloud changed since the draft's base names the draft's rebase page,
// which shows each drifted field with the base value and the value the
// cloud holds now — still after a sync has brought the cloud's value in
// (corral's live data then has only the new one). Rebasing clears it, and
// the draft then reaches the cloud.
func TestConnectedDriftOnTheRebasePage(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "crb-")
	a := startConnected(t, c)
	ctx := context.Background()
	d := draft(t, a.Store, "crb owner", scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "crb-aggA", Key: "crb-owner", Value: "ops"})
	// Behind corral's back, someone changes the aggregate the draft touches.
	must(t, c.Call("compute", "POST", fmt.Sprintf("os-aggregates/%d/action", f.aggAID),
		map[string]any{"set_metadata": map[string]any{"metadata": map[string]any{"ssd": "false"}}}, nil, 200))

	api := a.TokenClient(t, webtest.AdminName)
	r := api.JSON("POST", "/api/drafts/"+d.ID+"/apply", map[string]any{"version": d.Version})
	if r.StatusCode != http.StatusConflict || !strings.Contains(r.Body, `metadata ssd \"true\" → \"false\"`) || !strings.Contains(r.Body, "/drafts/"+d.ID+"/rebase") {
		t.Fatalf("apply after drift: %d %s", r.StatusCode, r.Body)
	}
	if got := showAggregate(t, c, "crb-aggA").Properties["crb-owner"]; got != "" {
		t.Errorf("a draft refused for drift reached nova: crb-owner=%q", got)
	}
	// A sync brings the cloud's value in; the base is only in the record
	// of the refusal now.
	if _, err := a.syncer.SyncNow(ctx, actor); err != nil {
		t.Fatal(err)
	}

	var doc0 struct {
		Drift []struct{ Object, Field, Base, Cloud string } `json:"drift"`
	}
	r = api.Get("/api/drafts/" + d.ID)
	must(t, json.Unmarshal([]byte(r.Body), &doc0))
	if len(doc0.Drift) != 1 || doc0.Drift[0].Field != "metadata ssd" || doc0.Drift[0].Base != "true" || doc0.Drift[0].Cloud != "false" {
		t.Errorf("the draft's JSON: drift %+v, want metadata ssd true → false", doc0.Drift)
	}

	page := "/drafts/" + d.ID + "/rebase"
	doc := a.admin.Get(page).Doc(t)
	type row struct{ object, field, base, cloud string }
	var rows []row
	doc.Find(`[data-testid="rebase-drift-row"]`).Each(func(_ int, s *goquery.Selection) {
		cell := func(id string) string { return strings.TrimSpace(s.Find(`[data-testid="` + id + `"]`).Text()) }
		rows = append(rows, row{cell("rebase-drift-object"), cell("rebase-drift-field"), cell("rebase-drift-base"), cell("rebase-drift-cloud")})
	})
	if want := (row{"aggregate crb-aggA", "metadata ssd", "true", "false"}); len(rows) != 1 || rows[0] != want {
		t.Errorf("the rebase page's drift: %+v, want [%+v]", rows, want)
	}

	// Rebased, the drift is dealt with: no longer shown; the draft rolls out.
	form := formOf(t, doc, page)
	form.Set("keep", "0")
	a.admin.Follow(page, page, form)
	if n := a.admin.Get(page).Doc(t).Find(`[data-testid="rebase-drift"]`).Length(); n != 0 {
		t.Errorf("after the rebase the page still shows the drift")
	}
	if r := api.Get("/api/drafts/" + d.ID); strings.Contains(r.Body, `"drift"`) {
		t.Errorf("after the rebase the draft's JSON still has the drift: %s", r.Body)
	}
	d, err := a.Store.GetDraft(ctx, d.ID)
	must(t, err)
	if r := api.JSON("POST", "/api/drafts/"+d.ID+"/apply", map[string]any{"version": d.Version}); r.StatusCode != http.StatusOK {
		t.Fatalf("apply after the rebase: %d %s", r.StatusCode, r.Body)
	}
	props := showAggregate(t, c, "crb-aggA").Properties
	if props["crb-owner"] != "ops" || props["ssd"] != "false" {
		t.Errorf("after the rebased draft's rollout nova has %v", props)
	}
	a.inSync(t, "crb-")
}
