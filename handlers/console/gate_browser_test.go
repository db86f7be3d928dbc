package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"corral/models/scheduling"
	"corral/models/store"
	"corral/web/webtest"
)

// gateStep runs browser actions with a deadline of their own.
func gateStep(t *testing.T, b *webtest.Browser, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// unrequire drops the checkbox's "required", as a page posted by hand
// would: the server, not the browser, must refuse the write.
var unrequire = chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
	_, err := chromedp.Evaluate[bool](`(document.querySelectorAll('[data-testid="gate-confirm"]').forEach(c => c.required = false), true)`)(ctx, tg)
	return chromedp.Void{}, err
})

// markPage marks the document shown; newPage waits until another one
// replaced it (a form's answer).
var markPage = chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
	_, err := chromedp.Evaluate[bool](`(window.gateOldPage = true)`)(ctx, tg)
	return chromedp.Void{}, err
})

var newPage = chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
	for {
		if gone, err := chromedp.Evaluate[bool](`window.gateOldPage !== true && document.readyState === 'complete'`)(ctx, tg); err == nil && gone {
			return chromedp.Void{}, nil
		}
		select {
		case <-ctx.Done():
			return chromedp.Void{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
})

// TestBrowserGateStopsARemovalThatStrandsServers: a tenant's one-click
// "Remove" that strands acme's running servers is not committed: the
// answer is a page naming the stranded servers with a checkbox, and
// committing without ticking it (the "required" taken off) is refused
// again by the server; ticked, the removal is saved.
func TestBrowserGateStopsARemovalThatStrandsServers(t *testing.T) {
	a := newApp(t)
	b := webtest.NewBrowser(t, a.App)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	id := webtest.TestID
	agg := a.aggregate("tenant-acme")
	snap, _, err := a.Store.Live().Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, err := scheduling.GateOf(snap, []scheduling.Change{{Op: scheduling.OpRemoveTenant, Aggregate: agg.UUID, Project: "acme"}})
	if err != nil || len(want.Servers) == 0 {
		t.Fatalf("the demo's acme runs nothing on tenant-acme's hosts (%v): the test tests nothing", err)
	}
	acmeRemove := `[data-testid="tags-tenants"] li[data-testid="tag"]:first-child [data-testid="tag-remove"]`
	gateStep(t, b, chromedp.Navigate(a.URL+"/aggregates/"+agg.UUID), chromedp.WaitVisible(chromedp.CSS(acmeRemove)))
	if v := b.Text(chromedp.CSS(`[data-testid="tags-tenants"] li[data-testid="tag"]:first-child [data-testid="tag-value"]`)); v != "acme" {
		t.Fatalf("first tenant tag %q, want acme", v)
	}
	gateStep(t, b, chromedp.Click(chromedp.CSS(acmeRemove)), chromedp.WaitVisible(id("review")))
	listed := b.Text(id("review-stranded"))
	for _, s := range want.Servers {
		if !strings.Contains(listed, s.Name) {
			t.Errorf("the review page does not name stranded server %s: %q", s.Name, listed)
		}
	}
	if got := b.Text(id("gate-consequences")); !strings.Contains(got, "strands "+plural(len(want.Servers), "running server")) {
		t.Errorf("consequences %q", got)
	}
	if a.aggregate(agg.UUID).Metadata["filter_tenant_id"] != "acme" {
		t.Fatal("the removal was saved before it was confirmed")
	}
	// Committed without the box ticked: refused by the server, the same
	// page again, nothing saved.
	gateStep(t, b, unrequire, markPage, chromedp.Click(id("review-commit")), newPage, chromedp.WaitVisible(id("review")))
	if a.aggregate(agg.UUID).Metadata["filter_tenant_id"] != "acme" {
		t.Fatal("the server saved a removal whose consequences were not confirmed")
	}
	gateStep(t, b, chromedp.Click(id("gate-confirm")), markPage, chromedp.Click(id("review-commit")), newPage, chromedp.WaitVisible(id("flash-success")))
	if got := b.Text(id("flash-success")); !strings.Contains(got, "Project acme removed") {
		t.Errorf("flash %q", got)
	}
	if md := a.aggregate(agg.UUID).Metadata; md["filter_tenant_id"] == "acme" {
		t.Errorf("the confirmed removal was not saved: %v", md)
	}
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return strings.TrimSpace(strings.Join([]string{itoa(n), one + "s"}, " "))
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}

// TestBrowserGateOnTheInlineImpactAndTheDraftApply: a tenant added to an
// aggregate whose hosts run other projects' servers shows, above "Add
// project", the consequences and a required checkbox; the save goes
// through once it is ticked. A draft with the same kind of consequence
// is applied only with its box ticked; an empty draft's "Apply draft…"
// is disabled.
func TestBrowserGateOnTheInlineImpactAndTheDraftApply(t *testing.T) {
	a := newApp(t)
	b := webtest.NewBrowser(t, a.App)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	id := webtest.TestID
	ctx := context.Background()
	// An aggregate tagged for no project whose hosts run servers: tagging
	// it for a new project strands them.
	snap, _, err := a.Store.Live().Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var agg *modelsAggregate
	for _, cand := range snap.World().Aggregates {
		if len(scheduling.TenantTags(cand.Metadata)) > 0 {
			continue
		}
		g, err := scheduling.GateOf(snap, []scheduling.Change{{Op: scheduling.OpAddTenant, Aggregate: cand.UUID, Project: "initech"}})
		if err == nil && len(g.Servers) > 0 {
			agg = a.aggregate(cand.UUID)
			break
		}
	}
	if agg == nil {
		t.Fatal("no aggregate of the demo strands a server when tagged for a new project: the test tests nothing")
	}
	form := `[data-testid="tags-tenants-add"] `
	gateStep(t, b, chromedp.Navigate(a.URL+"/aggregates/"+agg.UUID), chromedp.WaitVisible(chromedp.CSS(form+`input[name="project"]`)),
		chromedp.SendKeys(chromedp.CSS(form+`input[name="project"]`), "initech"),
		chromedp.WaitVisible(chromedp.CSS(form+`[data-testid="gate-confirm"]`)))
	// Above the button: the checkbox's box ends before the button starts.
	above, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`(() => {
		const f = document.querySelector('[data-testid="tags-tenants-add"]');
		const box = f.querySelector('[data-testid="gate-confirm-box"]').getBoundingClientRect();
		const btn = f.querySelector('[data-testid="tenant-add"]').getBoundingClientRect();
		return box.bottom <= btn.top; })()`))
	if err != nil || !above {
		t.Errorf("the confirmation is not above the button (%v)", err)
	}
	// Enter does not commit while the box is unticked (the browser asks
	// for it); nothing is saved.
	gateStep(t, b, chromedp.Click(id("tenant-add")), chromedp.Sleep(300*time.Millisecond))
	if md := a.aggregate(agg.UUID).Metadata; len(md) != len(agg.Metadata) {
		t.Fatalf("saved without the confirmation: %v", md)
	}
	gateStep(t, b, chromedp.Click(chromedp.CSS(form+`[data-testid="gate-confirm"]`)), chromedp.Sleep(700*time.Millisecond),
		markPage, chromedp.Click(id("tenant-add")), newPage, chromedp.WaitVisible(id("flash-success")))
	if got := b.Text(id("flash-success")); !strings.Contains(got, "Project initech added") {
		t.Errorf("flash %q", got)
	}

	// A draft with consequences: its apply page names them; applying
	// without the box (required taken off) is refused by the server.
	admin := store.Actor{Name: a.AdminName}
	d, err := a.Store.CreateDraft(ctx, admin, "drop acme")
	if err != nil {
		t.Fatal(err)
	}
	d, err = a.Store.SetDraftChanges(ctx, admin, d.ID, d.Version, []scheduling.Change{{Op: scheduling.OpRemoveTenant, Aggregate: "tenant-acme", Project: "acme"}})
	if err != nil {
		t.Fatal(err)
	}
	gateStep(t, b, chromedp.Navigate(a.URL+"/drafts/"+d.ID), chromedp.WaitVisible(id("draft-gate")))
	if got := b.Text(id("draft-gate")); !strings.Contains(got, "strands") {
		t.Errorf("the draft page's impact %q names no stranded server", got)
	}
	gateStep(t, b, chromedp.Navigate(a.URL+"/drafts/"+d.ID+"/apply"), chromedp.WaitVisible(id("gate-confirm")),
		unrequire, markPage, chromedp.Click(id("confirm-apply")), newPage, chromedp.WaitVisible(id("flash-error")))
	if got := b.Text(id("flash-error")); !strings.Contains(got, "Nothing was applied") || !strings.Contains(got, "strands") {
		t.Errorf("flash %q", got)
	}
	if a.aggregate("tenant-acme").Metadata["filter_tenant_id"] != "acme" {
		t.Fatal("the draft was applied without its confirmation")
	}
	gateStep(t, b, chromedp.WaitVisible(id("gate-confirm")), chromedp.Click(id("gate-confirm")), markPage, chromedp.Click(id("confirm-apply")), newPage, chromedp.WaitVisible(id("flash-success")))
	if a.aggregate("tenant-acme").Metadata["filter_tenant_id"] == "acme" {
		t.Error("the confirmed apply did not apply")
	}

	// An empty draft cannot be applied from its page.
	e, err := a.Store.CreateDraft(ctx, admin, "empty")
	if err != nil {
		t.Fatal(err)
	}
	gateStep(t, b, chromedp.Navigate(a.URL+"/drafts/"+e.ID), chromedp.WaitVisible(id("draft-apply")))
	disabled, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="draft-apply"]').disabled === true`))
	if err != nil || !disabled {
		t.Errorf("an empty draft's Apply draft… is enabled (%v)", err)
	}
}
