package console_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"corral/web/webtest"
)

// barTitles reads each inventory row's class and its capacity bar's
// "N% used" from the page in the browser.
const barTitles = `Object.fromEntries(Array.from(document.querySelectorAll('[data-testid="inventory-row"]')).map(r =>
	[r.querySelector('td').textContent.trim(), r.querySelector('[data-testid="usage-bar"]').title]))`

const traitBadges = `Array.from(document.querySelectorAll('[data-testid="provider-facts"] [data-testid="trait"]')).map(t => t.textContent.trim())`

// TestBrowserProviderInventoryAndTraits drives the provider page's forms in
// Chromium: an admin sets an inventory and sees the capacity bar move,
// replaces the traits, and is told when another admin changed the
// provider since the page was loaded; a reader sees the bars, not the forms.
func TestBrowserProviderInventoryAndTraits(t *testing.T) {
	a := newApp(t)
	b := webtest.NewBrowser(t, a.App)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	ctx := context.Background()
	p, err := a.Store.GetProvider(ctx, "numa3_1")
	if err != nil {
		t.Fatal(err)
	}
	// A class in use: its bar must show the change.
	rc := ""
	for class, used := range p.Usages {
		if used > 0 && p.Inventories[class].Total > 0 && (rc == "" || class < rc) {
			rc = class
		}
	}
	if rc == "" {
		t.Fatalf("numa3_1 has no used inventory in the demo: %v", p.Usages)
	}
	used := p.Usages[rc]
	page := a.URL + "/providers/" + p.UUID
	id := webtest.TestID
	step := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			t.Fatalf("browser: %v", err)
		}
	}
	// Each save redirects to the page with a flash; the last page's
	// flash goes first, so that waiting for one waits for the new page.
	clearFlash := chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[bool](`(document.querySelectorAll('[data-testid^="flash-"]').forEach(f => f.remove()), true)`)(ctx, tg)
		return chromedp.Void{}, err
	})
	bars := func() map[string]string {
		t.Helper()
		m, err := chromedp.Run(b.Ctx, chromedp.Evaluate[map[string]string](barTitles))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	step(chromedp.Navigate(page), chromedp.WaitVisible(id("inventory-form")))
	before := bars()[rc]
	// Capacity exactly what is used: the bar is full.
	form := `[data-testid="inventory-form"] `
	step(
		chromedp.SetValue(id("inventory-class"), rc),
		chromedp.SetValue(id("inventory-total"), fmt.Sprint(used)),
		chromedp.SetValue(chromedp.CSS(form+`input[name="reserved"]`), "0"),
		chromedp.SetValue(chromedp.CSS(form+`input[name="allocation_ratio"]`), "1.0"),
		clearFlash,
		chromedp.Click(id("inventory-save")),
		chromedp.WaitVisible(id("flash-success")),
	)
	if got := b.Text(id("flash-success")); !strings.Contains(got, fmt.Sprintf("%s inventory set: %d total, 0 reserved, ratio 1", rc, used)) {
		t.Errorf("flash %q", got)
	}
	if after := bars()[rc]; after != "100% used" || after == before {
		t.Errorf("%s bar: %q before, %q after; want 100%% used", rc, before, after)
	}
	// Four times the capacity: a quarter full.
	step(
		chromedp.SetValue(id("inventory-class"), rc),
		chromedp.SetValue(id("inventory-total"), fmt.Sprint(4*used)),
		clearFlash,
		chromedp.Click(id("inventory-save")),
		chromedp.WaitVisible(id("flash-success")),
	)
	if after := bars()[rc]; after != "25% used" {
		t.Errorf("%s bar after total %d: %q, want 25%% used", rc, 4*used, after)
	}
	if got, _ := a.Store.GetProvider(ctx, p.UUID); got.Inventories[rc].Total != 4*used {
		t.Errorf("stored total %d, want %d", got.Inventories[rc].Total, 4*used)
	}

	// Traits, one per line.
	step(
		chromedp.SetValue(id("traits-input"), "HW_CPU_X86_AVX2\nCUSTOM_GOLD"),
		clearFlash,
		chromedp.Click(id("traits-save")),
		chromedp.WaitVisible(id("flash-success")),
	)
	traits, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]string](traitBadges))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(traits, ",") != "CUSTOM_GOLD,HW_CPU_X86_AVX2" {
		t.Errorf("traits shown %v", traits)
	}

	// Another admin saves while this page is open: both forms say so and
	// change nothing.
	edit := func(other func(gen int64)) {
		t.Helper()
		cur, err := a.Store.GetProvider(ctx, p.UUID)
		if err != nil {
			t.Fatal(err)
		}
		other(cur.Generation)
	}
	otherAdmin := a.as(a.AdminName)
	step(chromedp.Navigate(page), chromedp.WaitVisible(id("inventory-form")))
	edit(func(g int64) {
		otherAdmin.Follow(page[len(a.URL):], page[len(a.URL):]+"/traits", url.Values{"generation": {gen(g)}, "traits": {"CUSTOM_SILVER"}})
	})
	step(
		chromedp.SetValue(id("inventory-class"), rc),
		chromedp.SetValue(id("inventory-total"), fmt.Sprint(used)),
		clearFlash,
		chromedp.Click(id("inventory-save")),
		chromedp.WaitVisible(id("flash-error")),
	)
	if got := b.Text(id("flash-error")); !strings.Contains(got, "changed by someone else") {
		t.Errorf("stale inventory form: %q", got)
	}
	if got, _ := a.Store.GetProvider(ctx, p.UUID); got.Inventories[rc].Total != 4*used {
		t.Errorf("a stale form changed the total to %d", got.Inventories[rc].Total)
	}
	// The reloaded page carries the new generation; the other admin moves
	// it again before the traits are saved.
	edit(func(g int64) {
		otherAdmin.Follow(page[len(a.URL):], page[len(a.URL):]+"/inventory", url.Values{"generation": {gen(g)}, "class": {rc}, "total": {fmt.Sprint(2 * used)}})
	})
	step(
		chromedp.SetValue(id("traits-input"), "CUSTOM_GOLD"),
		clearFlash,
		chromedp.Click(id("traits-save")),
		chromedp.WaitVisible(id("flash-error")),
	)
	if got := b.Text(id("flash-error")); !strings.Contains(got, "changed by someone else") {
		t.Errorf("stale traits form: %q", got)
	}
	if got, _ := a.Store.GetProvider(ctx, p.UUID); strings.Join(got.Traits, ",") != "CUSTOM_SILVER" || got.Inventories[rc].Total != 2*used {
		t.Errorf("after the refused save: traits %v, %s total %d; want the other admin's", got.Traits, rc, got.Inventories[rc].Total)
	}
	// The page after the refusal shows the other admin's state.
	if after := bars()[rc]; after != "50% used" {
		t.Errorf("%s bar after the other admin's edit: %q, want 50%% used", rc, after)
	}

	// A reader sees capacity but no forms.
	r := webtest.NewBrowser(t, a.App)
	if err := r.LoginAs(r.Ctx, "rita", memberPassword); err != nil {
		t.Fatalf("reader login: %v", err)
	}
	if err := chromedp.Do(r.Ctx, chromedp.Navigate(page), chromedp.WaitVisible(id("inventory-table"))); err != nil {
		t.Fatalf("reader: %v", err)
	}
	forms, err := chromedp.Run(r.Ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="inventory-form"], [data-testid="traits-form"], [data-testid="inventory-delete"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	n, err := chromedp.Run(r.Ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="usage-bar"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if forms != 0 || n == 0 {
		t.Errorf("reader sees %d forms and %d capacity bars; want none and some", forms, n)
	}
}
