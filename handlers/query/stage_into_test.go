package query_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/models/scheduling"
	"corral/models/store"
)

// "Stage as draft" into an open draft: the form's changes are appended to
// that draft (one draft for related changes), which the form's choice
// lists; a change that does not apply with the draft's own is refused
// and the draft is left as it was.
func TestStageIntoAnOpenDraft(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	admin := store.Actor{Name: c.app.AdminName}
	d, err := c.app.Store.CreateDraft(ctx, admin, "reserve cn6")
	if err != nil {
		t.Fatal(err)
	}
	d, err = c.app.Store.SetDraftChanges(ctx, admin, d.ID, d.Version, []scheduling.Change{{Op: scheduling.OpCreateAggregate, Aggregate: "globex-only"}})
	if err != nil {
		t.Fatal(err)
	}
	resp := c.do("GET", "/drafts/open-options", nil, nil)
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("options: %d %v", resp.StatusCode, err)
	}
	if opt := doc.Find(`option[value="` + d.ID + `"]`).Text(); !strings.Contains(opt, "reserve cn6") || !strings.Contains(opt, "1 change") {
		t.Errorf("the open draft's option reads %q", opt)
	}
	agg, err := c.app.Store.GetAggregate(ctx, "tenant-globex")
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"impact_form": {"tenants"}, "impact_target": {agg.UUID}, "project": {"initech"}, "stage_draft": {d.ID}}
	r := c.form("/drafts/stage", form)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/drafts/"+d.ID {
		t.Fatalf("stage into: %d → %s", r.StatusCode, r.Header.Get("Location"))
	}
	got, err := c.app.Store.GetDraft(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := got.DraftChanges()
	if len(cs) != 2 || cs[0].Op != scheduling.OpCreateAggregate || cs[1].Op != scheduling.OpAddTenant || cs[1].Project != "initech" {
		t.Errorf("draft changes %+v, want the create and then the tenant", cs)
	}
	// A draft that does not exist: refused, back to the form.
	form = url.Values{"impact_form": {"tenants"}, "impact_target": {agg.UUID}, "project": {"initech"}, "stage_draft": {"no-such-draft"}}
	if r := c.form("/drafts/stage", form); r.StatusCode != http.StatusSeeOther || strings.HasPrefix(r.Header.Get("Location"), "/drafts/") {
		t.Errorf("stage into an unknown draft: %d → %s, want back to the form", r.StatusCode, r.Header.Get("Location"))
	}
	if again, _ := c.app.Store.GetDraft(ctx, d.ID); again.Version != got.Version {
		t.Error("a refused staging changed the draft")
	}
}
