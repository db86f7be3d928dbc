package query_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"corral/web/webtest"
)

// addChangeInBrowser picks a change kind on the draft page, fills the
// fields it shows, and submits.
func addChangeInBrowser(t *testing.T, b *webtest.Browser, kind string, fields map[string]string) {
	t.Helper()
	before, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="draft-change"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	b.Do(chromedp.WaitVisible(webtest.TestID("draft-add-change")))
	if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`(() => { const s = document.querySelector('#f-kind');
		s.value = '`+kind+`'; s.dispatchEvent(new Event('change', {bubbles: true})); return s.value === '`+kind+`'; })()`)); err != nil {
		t.Fatal(err)
	}
	for name, v := range fields {
		sel := `form.change-form [name="` + name + `"]`
		b.Do(
			chromedp.WaitVisible(sel),
			chromedp.Clear(sel),
			chromedp.SendKeys(sel, v),
		)
	}
	// The page reloads with one more change listed.
	b.Do(chromedp.Click(webtest.TestID("draft-add-change-submit")))
	// The poll fails while the page is being replaced; it is asked again
	// on the new page.
	var err2 error
	for range 20 {
		if _, err2 = chromedp.Run(b.Ctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelectorAll('[data-testid="draft-change"]').length > %d`, before))); err2 == nil {
			return
		}
		if b.Ctx.Err() != nil {
			break
		}
	}
	t.Fatalf("the %s change was not added: %v", kind, err2)
}

// tickGateIfAsked ticks the safety gate's confirmation when the page
// asks for one.
var tickGateIfAsked = chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
	_, err := chromedp.Evaluate[bool](`(() => { const c = document.querySelector('[data-testid="gate-confirm"]'); if (c && !c.checked) c.click(); return true; })()`)(ctx, tg)
	return chromedp.Void{}, err
})

// A whole change in real Chromium: a draft that reserves the GPU host
// changes a flavor's extra specs and an aggregate's metadata together,
// asks before applying, applies, and is reverted from the drafts list by a
// new draft that restores both.
func TestBrowserDraftWithFlavorChangeAppliedAndReverted(t *testing.T) {
	app := webtest.Start(t)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	b.Do(
		chromedp.Navigate(app.URL+"/drafts"),
		chromedp.WaitVisible(webtest.TestID("draft-create")),
		chromedp.SendKeys(`#f-name`, "reserve the gpu host"),
		chromedp.Click(webtest.TestID("draft-create-submit")),
	)
	addChangeInBrowser(t, b, "set_extra_spec", map[string]string{"flavor": "g1.gpu", "key": "reservation:gpu", "value": "true"})
	addChangeInBrowser(t, b, "set_metadata", map[string]string{"aggregate": "gpu", "key": "reservation:gpu", "value": "true"})
	if got := b.Text(webtest.TestID("draft-changes")); !strings.Contains(got, "set extra spec reservation:gpu=true on flavor g1.gpu") ||
		!strings.Contains(got, "set reservation:gpu=true on aggregate gpu") {
		t.Fatalf("draft changes = %q", got)
	}

	// Apply asks first, listing the changes.
	b.Do(
		chromedp.Click(webtest.TestID("draft-apply")),
		chromedp.WaitVisible(webtest.TestID("confirm-apply")),
	)
	if got := b.Text(webtest.TestID("confirm-changes")); !strings.Contains(got, "flavor g1.gpu") {
		t.Errorf("confirmation lists %q", got)
	}
	if got := b.Text(webtest.TestID("confirm-stranded")); got == "" {
		t.Error("the confirmation says nothing about stranded servers")
	}
	// Reserving the GPU host strands what runs there: applying needs the
	// safety gate's box ticked.
	b.Do(
		chromedp.Click(webtest.TestID("gate-confirm")),
		chromedp.Click(webtest.TestID("confirm-apply")),
		chromedp.WaitVisible(webtest.TestID("applied-drafts")),
	)
	ctx := context.Background()
	if f, err := app.Store.GetFlavor(ctx, "g1.gpu"); err != nil || f.ExtraSpecs["reservation:gpu"] != "true" {
		t.Fatalf("g1.gpu after apply: %+v %v", f, err)
	}

	// Revert: a new draft holding the values from before.
	b.Do(
		chromedp.Click(webtest.TestID("draft-revert")),
		chromedp.WaitVisible(webtest.TestID("draft-changes")),
	)
	if got := b.Text(`h1`); !strings.Contains(got, "Revert of reserve the gpu host") {
		t.Errorf("revert draft titled %q", got)
	}
	if got := b.Text(webtest.TestID("draft-changes")); !strings.Contains(got, "remove extra spec reservation:gpu from flavor") {
		t.Errorf("revert changes = %q", got)
	}
	b.Do(
		chromedp.Click(webtest.TestID("draft-apply")),
		chromedp.WaitVisible(webtest.TestID("confirm-apply")),
		tickGateIfAsked,
		chromedp.Click(webtest.TestID("confirm-apply")),
		chromedp.WaitVisible(webtest.TestID("drafts-table")),
	)
	f, _ := app.Store.GetFlavor(ctx, "g1.gpu")
	a, _ := app.Store.GetAggregate(ctx, "gpu")
	if _, ok := f.ExtraSpecs["reservation:gpu"]; ok {
		t.Errorf("g1.gpu keeps the reservation after the revert: %v", f.ExtraSpecs)
	}
	if _, ok := a.Metadata["reservation:gpu"]; ok {
		t.Errorf("aggregate gpu keeps the reservation after the revert: %v", a.Metadata)
	}

	// Discard asks first too, and Cancel leaves the draft alone.
	b.Do(
		chromedp.Navigate(app.URL+"/drafts"),
		chromedp.SendKeys(`#f-name`, "to be discarded"),
		chromedp.Click(webtest.TestID("draft-create-submit")),
		chromedp.WaitVisible(webtest.TestID("draft-discard")),
		chromedp.Click(webtest.TestID("draft-discard")),
		chromedp.WaitVisible(webtest.TestID("confirm-discard")),
		chromedp.Click(webtest.TestID("confirm-cancel")),
		chromedp.WaitVisible(webtest.TestID("draft-discard")),
		chromedp.Click(webtest.TestID("draft-discard")),
		chromedp.WaitVisible(webtest.TestID("confirm-discard")),
		chromedp.Click(webtest.TestID("confirm-discard")),
		chromedp.WaitVisible(webtest.TestID("drafts-table")),
	)
	ds, err := app.Store.ListDrafts(ctx)
	if err != nil || len(ds) != 0 {
		t.Errorf("drafts left: %v %v", ds, err)
	}
}

// The JSON drafts API from a signed-in browser page (a pipeline's view,
// through the session): create with a flavor change, read it back, and
// see the page list it.
func TestBrowserDraftsAPI(t *testing.T) {
	app := webtest.Start(t)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	b.Do(chromedp.Navigate(app.URL+"/drafts"), chromedp.WaitVisible(webtest.TestID("drafts-table")))
	type result struct {
		Status int    `json:"status"`
		ID     string `json:"id"`
		Text   string `json:"text"`
	}
	res, err := chromedp.Run(b.Ctx, chromedp.Evaluate[result](`(async () => {
		const r = await fetch('/api/drafts', {method: 'POST', headers: {'Content-Type': 'application/json'},
			body: JSON.stringify({name: 'from a pipeline', changes: [{op: 'set_extra_spec', flavor: 'm1.ssd', key: 'hw:cpu_policy', value: 'dedicated'}]})});
		const d = await r.json();
		const g = await fetch('/api/drafts/' + d.id);
		const doc = await g.json();
		return {status: r.status, id: d.id, text: doc.described.join('; ')};
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 201 || res.Text != "set extra spec hw:cpu_policy=dedicated on flavor m1.ssd" {
		t.Fatalf("API from the page: %+v", res)
	}
	b.Do(
		chromedp.Navigate(app.URL+"/drafts"),
		chromedp.WaitVisible(`[data-testid="draft-row"][data-draft="`+res.ID+`"]`),
	)
	// The impact page offers the CSV of the same matrix.
	b.Do(
		chromedp.Navigate(app.URL+"/drafts/"+res.ID+"/impact"),
		chromedp.WaitVisible(webtest.TestID("impact-csv")),
	)
	href, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="impact-csv"]').href`))
	if err != nil || !strings.Contains(href, "format=csv") {
		t.Errorf("CSV link %q %v", href, err)
	}
	csv, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`fetch(document.querySelector('[data-testid="impact-csv"]').href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil || !strings.HasPrefix(csv, "project,flavor,zone,live,draft") || !strings.Contains(csv, "(any other project)") {
		t.Errorf("CSV = %q %v", csv, err)
	}
}
