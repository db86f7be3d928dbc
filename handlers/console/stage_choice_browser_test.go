package console_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"corral/web/webtest"
)

// TestBrowserDraftChoiceLoadsIntoItsOwnSelect: every "Stage as draft …
// into" choice on the aggregate page fills its own options, and nothing
// lands in the metadata editor's findings (whose form targets them).
func TestBrowserDraftChoiceLoadsIntoItsOwnSelect(t *testing.T) {
	a := newApp(t)
	b := webtest.NewBrowser(t, a.App)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	agg := a.aggregate("tenant-acme")
	b.Do(chromedp.Navigate(a.URL+"/aggregates/"+agg.UUID), chromedp.WaitVisible(`[data-testid="stage-draft-choice"]`))
	// The choices load once the page is in: give htmx its round trips.
	var stray string
	var empty int
	for i := 0; i < 20; i++ {
		time.Sleep(150 * time.Millisecond)
		var err error
		stray, err = chromedp.Run(b.Ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('.kv-editor [id$="-live"]')).map(e => e.textContent).join('|')`))
		if err != nil {
			t.Fatal(err)
		}
		empty, err = chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.querySelectorAll('select[name="stage_draft"]:not(:has(option))').length`))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stray, "a new draft") {
			break
		}
	}
	if strings.Contains(stray, "a new draft") {
		t.Errorf("the draft choice's options landed in the metadata findings: %q", stray)
	}
	if empty > 0 {
		t.Errorf("%d draft choices were left without options", empty)
	}
}
