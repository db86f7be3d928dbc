package query_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"

	"corral/web/webtest"
)

// inline posts a console form to /impact/inline and parses the fragment.
func (c *client) inline(v url.Values) *goquery.Document {
	c.t.Helper()
	status, doc := c.formPage("/impact/inline", v)
	if status != http.StatusOK {
		c.t.Fatalf("POST /impact/inline %v: %d", v, status)
	}
	return doc
}

// The walk's finding: adding two hosts to the reserved aggregate silently
// took them from every ordinary flavor of every project. The members form
// now says so before it is saved, and can stage the change as a draft.
func TestInlineImpactOfAddingHostsToAReservation(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	agg, err := c.app.Store.GetAggregate(ctx, "reservation-r42")
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"impact_form": {"members"}, "impact_target": {agg.UUID}, "bulk": {"cn1 cn6"}, "generation": {"0"}}
	doc := c.inline(form)
	if got := doc.Find(`[data-testid="inline-impact-summary"]`).Text(); !strings.Contains(got, "add cn1 to aggregate reservation-r42") {
		t.Errorf("summary %q does not say what the form changes", got)
	}
	lost := map[string]string{}
	doc.Find(`[data-testid="inline-impact-pair"]`).Each(func(_ int, s *goquery.Selection) {
		p, _ := s.Attr("data-project")
		f, _ := s.Attr("data-flavor")
		lost[p+"/"+f] = strings.TrimSpace(s.Find(".lost-cell").Text())
	})
	if lost["acme/m1.small"] != "cn1, cn6" || lost["globex/m1.large"] != "cn1, cn6" {
		t.Errorf("pairs losing hosts: %v; want acme's m1.small and globex's m1.large to lose cn1 and cn6", lost)
	}
	if got := doc.Find(`[data-testid="inline-impact-servers"]`).Text(); got == "" || got == "0" {
		t.Errorf("stranded servers = %q; cache-1 (acme on cn1) and batch-3 (globex on cn6) lose their hosts", got)
	}
	names := doc.Find(`[data-testid="inline-stranded-server"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-server", "") })
	if strings.Join(names, ",") != "cache-1,batch-3" {
		t.Errorf("stranded servers %v, want cache-1 and batch-3", names)
	}

	// Nothing changed yet, and harmless edits say so.
	if doc := c.inline(url.Values{"impact_form": {"metadata"}, "impact_target": {agg.UUID},
		"key": {"blazar:owner", "colour"}, "value": {"acme", "blue"}}); doc.Find(`[data-testid="inline-impact-harmless"]`).Length() != 1 {
		t.Errorf("a harmless metadata edit: %q", doc.Text())
	}
	if doc := c.inline(url.Values{"impact_form": {"nope"}}); doc.Find(`[data-testid="inline-impact-error"]`).Length() != 1 {
		t.Errorf("unknown form: %q", doc.Text())
	}

	// Stage as draft: the same form becomes a draft, live data untouched.
	r := c.form("/drafts/stage", form)
	loc := r.Header.Get("Location")
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/drafts/") {
		t.Fatalf("stage: %d → %q", r.StatusCode, loc)
	}
	d, err := c.app.Store.GetDraft(ctx, strings.TrimPrefix(loc, "/drafts/"))
	if err != nil {
		t.Fatal(err)
	}
	changes, _ := d.DraftChanges()
	if len(changes) != 2 || changes[0].Op != "add_member" || d.Name != "Members of reservation-r42 (staged)" {
		t.Errorf("staged draft %q: %+v", d.Name, changes)
	}
	if a, _ := c.app.Store.GetAggregate(ctx, "reservation-r42"); len(a.Members) != 1 {
		t.Errorf("staging changed live members: %v", a.Members)
	}
}

// In Chromium: typing a reservation tag into the aggregate page shows its
// impact before saving; "Stage as draft" turns it into a draft.
func TestBrowserInlineImpactOnAggregatePage(t *testing.T) {
	app := webtest.Start(t)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	agg, err := app.Store.GetAggregate(context.Background(), "ssd")
	if err != nil {
		t.Fatal(err)
	}
	form := `[data-testid="tags-reservations-add"]`
	b.Do(
		chromedp.Navigate(app.URL+"/aggregates/"+agg.UUID),
		chromedp.WaitVisible(form+` input[name="reservation"]`),
		chromedp.SendKeys(form+` input[name="reservation"]`, "r77"),
		chromedp.WaitVisible(form+` [data-testid="inline-impact-summary"]`),
	)
	if got := b.Text(chromedp.CSS(form + ` [data-testid="inline-impact-summary"]`)); !strings.Contains(got, "add reservation tag r77 to aggregate") ||
		!strings.Contains(got, "pairs lose hosts") {
		t.Errorf("inline impact = %q", got)
	}
	if got := b.Text(chromedp.CSS(form + ` [data-testid="inline-impact-pairs"]`)); !strings.Contains(got, "cn4") || !strings.Contains(got, "cn5") {
		t.Errorf("pairs = %q, want cn4 and cn5 lost", got)
	}
	b.Do(
		chromedp.Click(form+` [data-testid="stage-as-draft"]`),
		chromedp.WaitVisible(webtest.TestID("draft-changes")),
	)
	if got := b.Text(webtest.TestID("draft-changes")); !strings.Contains(got, "add reservation tag r77 to aggregate") {
		t.Errorf("staged draft changes = %q", got)
	}
}
