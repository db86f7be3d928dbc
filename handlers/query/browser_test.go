package query_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"corral/web/webtest"
)

// TestBrowserTypingAForbiddenTermUpdatesThePreview types `!aggA` into the
// live query page in real Chromium and watches the excluded providers
// change, without the page reloading.
func TestBrowserTypingAForbiddenTermUpdatesThePreview(t *testing.T) {
	app := webtest.Start(t)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	b.Do(
		chromedp.Navigate(app.URL+"/query"),
		chromedp.WaitVisible(webtest.TestID("page-query")),
		chromedp.WaitVisible(`#preview [data-testid="trace"]`),
	)
	before := excludedInBrowser(t, b)
	if slices.Contains(before, "numa1_1") {
		t.Fatalf("numa1_1 excluded before any term: %v", before)
	}
	// A marker on the window survives htmx swaps but not a page load.
	if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`window.corralMarker = true`)); err != nil {
		t.Fatal(err)
	}
	b.Do(
		chromedp.Click(`[data-testid="member-of-input"]`, chromedp.NodeVisible),
		chromedp.SendKeys(`[data-testid="member-of-input"]`, "!aggA"),
		chromedp.WaitVisible(`#preview [data-testid="excluded-row"][data-provider="numa1_1"]`),
	)
	after := excludedInBrowser(t, b)
	for _, p := range []string{"cn1", "numa1_1", "numa1_2"} {
		if !slices.Contains(after, p) {
			t.Errorf("%s not excluded after typing !aggA; excluded: %v", p, after)
		}
	}
	for _, p := range before {
		if !slices.Contains(after, p) {
			t.Errorf("%s was excluded before and is not after adding a term", p)
		}
	}
	reason := b.Text(`#preview [data-testid="excluded-row"][data-provider="numa1_1"] [data-testid="provider-reason"]`)
	if !strings.Contains(reason, "root cn1 is in forbidden aggregate aggA") {
		t.Errorf("numa1_1's reason = %q", reason)
	}
	marker, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`window.corralMarker === true`))
	if err != nil {
		t.Fatal(err)
	}
	if !marker {
		t.Errorf("the page reloaded; the preview must update in place")
	}
	// The address bar holds the query, so the preview can be shared. htmx
	// sets it after the swap.
	if _, err := chromedp.Run(b.Ctx, chromedp.Poll[bool](`location.search.includes("member_of=%21aggA")`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		loc, _ := chromedp.Run(b.Ctx, chromedp.Location())
		t.Errorf("location = %q, want the query in the URL (%v)", loc, err)
	}
}

func excludedInBrowser(t *testing.T, b *webtest.Browser) []string {
	t.Helper()
	names, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('#preview [data-testid="excluded-row"]')).map(e => e.dataset.provider)`))
	if err != nil {
		t.Fatalf("read excluded rows: %v", err)
	}
	return names
}
