package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"corral/web/webtest"
)

// stepTimeout bounds one group of browser actions.
const stepTimeout = 30 * time.Second

// TestBrowserAggregateAndGroup drives Debian's Chromium through the real
// app with htmx running: create an aggregate, tag it for a tenant, add a
// host found with the live picker, watch the metadata editor flag a bad
// value as it is typed, then create an anti-affinity group with a
// per-host limit. webtest saves a screenshot when it fails.
func TestBrowserAggregateAndGroup(t *testing.T) {
	app := webtest.Start(t)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	id := webtest.TestID
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	// Each step gets its own deadline, shorter than the test's: when a
	// wait times out the tab is still open, so the failure screenshot can
	// be taken.
	step := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(b.Ctx, stepTimeout)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("browser: %v", err)
		}
	}

	// Create the aggregate.
	step(
		chromedp.Navigate(app.URL+"/aggregates"),
		chromedp.Click(id("aggregate-new")),
		chromedp.WaitVisible(id("aggregate-form")),
		chromedp.SendKeys(chromedp.ID("f-name"), "browser-agg"),
		chromedp.Click(id("aggregate-submit")),
		chromedp.WaitVisible(id("aggregate-members-section")),
	)
	if got := b.Text(id("page-title")); got != "browser-agg" {
		t.Fatalf("after create the page is %q", got)
	}
	if got := b.Text(id("flash-success")); !strings.Contains(got, "browser-agg") {
		t.Errorf("create flash %q", got)
	}

	// A tenant tag.
	step(
		chromedp.SendKeys(css(`[data-testid="tags-tenants-add"] input[name="project"]`), "acme"),
		chromedp.Click(id("tenant-add")),
		chromedp.WaitVisible(css(`[data-testid="tags-tenants"] [data-testid="tag-value"]`)),
	)
	if got := b.Text(css(`[data-testid="tags-tenants"] [data-testid="tag-value"]`)); got != "acme" {
		t.Errorf("tenant shown %q", got)
	}

	// A host, found with the picker's live search (htmx swaps the results
	// in as the name is typed).
	step(
		chromedp.SendKeys(chromedp.ID("f-pq"), "cn5"),
		chromedp.WaitVisible(id("picker-row")),
	)
	if got := b.Text(id("picker-name")); got != "cn5" {
		t.Fatalf("picker found %q", got)
	}
	// The tick updates the impact above the button (htmx swaps it in):
	// click once it is there, not into the swap.
	step(
		chromedp.Click(id("picker-select")),
		chromedp.WaitVisible(css(`[data-testid="member-add-form"] [data-testid="inline-impact-summary"]`)),
		chromedp.Click(id("member-add")),
		chromedp.WaitVisible(id("member-row")),
	)
	if got := b.Text(id("member-name")); got != "cn5" {
		t.Errorf("member listed %q", got)
	}
	if got := b.Text(id("flash-success")); !strings.Contains(got, "cn5") {
		t.Errorf("add flash %q", got)
	}
	// Both are there after a reload, too.
	step(chromedp.Reload(), chromedp.WaitVisible(id("member-row")))
	if got := b.Text(css(`[data-testid="tags-tenants"] [data-testid="tag-value"]`)); got != "acme" {
		t.Errorf("tenant after reload %q", got)
	}
	// The delete button stays, disabled with the reason.
	if got := b.Text(id("delete-reason")); !strings.Contains(got, "cn5") {
		t.Errorf("delete reason %q", got)
	}

	// Live validation: an invalid force_metadata_check value is flagged
	// while typing, before anything is saved.
	step(
		chromedp.SendKeys(css(`[data-testid="metadata-editor"] input[name="key"]`), "force_metadata_check"),
		chromedp.SendKeys(css(`[data-testid="metadata-editor"] input[name="value"]`), "maybe"),
		chromedp.WaitVisible(css(`[data-testid="metadata-editor-problems"] [data-testid="kv-error"]`)),
	)
	if got := b.Text(css(`[data-testid="metadata-editor-problems"] [data-testid="kv-error"]`)); !strings.Contains(got, "True or False") {
		t.Errorf("live problem %q", got)
	}

	// The aggregate list narrows as a search is typed (htmx swaps the
	// table), and the new aggregate is found with its tag.
	step(
		chromedp.Navigate(app.URL+"/aggregates"),
		chromedp.WaitVisible(id("aggregate-table")),
		chromedp.SendKeys(chromedp.ID("f-q"), "browser-"),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('[data-testid="aggregate-row"]').length === 1`),
	)
	if got := b.Text(id("aggregate-name")); got != "browser-agg" {
		t.Errorf("search found %q", got)
	}
	if got := b.Text(id("tag-tenants")); got != "1 tenant" {
		t.Errorf("tenant badge %q", got)
	}

	// The flavor editor checks extra specs the same way.
	step(
		chromedp.Navigate(app.URL+"/flavors/new"),
		chromedp.WaitVisible(id("flavor-form")),
		chromedp.SendKeys(css(`[data-testid="specs-editor"] input[name="key"]`), "aggregate_instance_extra_specs:ram"),
		chromedp.SendKeys(css(`[data-testid="specs-editor"] input[name="value"]`), ">= lots"),
		chromedp.WaitVisible(css(`[data-testid="specs-editor-problems"] [data-testid="kv-error"]`)),
	)
	if got := b.Text(css(`[data-testid="specs-editor-problems"] [data-testid="kv-error"]`)); !strings.Contains(got, "not a number") {
		t.Errorf("live extra-spec problem %q", got)
	}

	// An anti-affinity group with max_server_per_host.
	step(
		chromedp.Navigate(app.URL+"/server-groups/new"),
		chromedp.WaitVisible(id("group-form")),
		chromedp.SendKeys(chromedp.ID("f-name"), "browser-spread"),
		chromedp.SetValue(chromedp.ID("f-policy"), "anti-affinity"),
		chromedp.SendKeys(chromedp.ID("f-max_server_per_host"), "3"),
		chromedp.SendKeys(chromedp.ID("f-project"), "acme"),
		chromedp.Click(id("group-submit")),
		chromedp.WaitVisible(id("group-facts")),
	)
	if got := b.Text(id("group-max")); got != "3" {
		t.Errorf("group max_server_per_host %q", got)
	}
	step(chromedp.Navigate(app.URL+"/server-groups"), chromedp.WaitVisible(id("group-table")))
	if rows := b.Text(id("group-table")); !strings.Contains(rows, "browser-spread") {
		t.Errorf("group list lacks the new group: %q", rows)
	}
}

// TestBrowserProviderKindFilter: choosing a kind swaps the provider list
// in place (htmx) and puts the filter in the address; typing a search then
// keeps the filter, because the live search sends the whole form.
func TestBrowserProviderKindFilter(t *testing.T) {
	app := webtest.Start(t)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	step := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(b.Ctx, stepTimeout)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("browser: %v", err)
		}
	}
	count := func(id string) string {
		return `document.querySelectorAll('[data-testid="` + id + `"]').length`
	}
	step(
		chromedp.Navigate(app.URL+"/providers"),
		chromedp.WaitVisible(webtest.TestID("provider-tree")),
		// A page load marker: a full navigation would drop it, an htmx swap
		// keeps it.
		chromedp.Evaluate[chromedp.Void](`window.stayed = true`),
		chromedp.SetValue(chromedp.ID("f-kind"), "sharing"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('f-kind').dispatchEvent(new Event('change', {bubbles: true}))`),
		chromedp.Poll[chromedp.Void](count("node-sharing")+` === 2 && `+count("node-host")+` === 0`),
	)
	loc, err := chromedp.Run(b.Ctx, chromedp.Location())
	if err != nil || !strings.Contains(loc, "kind=sharing") {
		t.Errorf("address after choosing a kind: %q, %v", loc, err)
	}
	step(
		chromedp.SendKeys(chromedp.ID("f-q"), "ss1"),
		chromedp.Poll[chromedp.Void](count("provider-match")+` === 1`),
	)
	if got := b.Text(webtest.TestID("provider-name")); got != "ss1" {
		t.Errorf("search with the filter found %q", got)
	}
	loc, err = chromedp.Run(b.Ctx, chromedp.Location())
	if err != nil || !strings.Contains(loc, "kind=sharing") || !strings.Contains(loc, "q=ss1") {
		t.Errorf("address after the search: %q, %v", loc, err)
	}
	if stayed, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`window.stayed === true`)); err != nil || !stayed {
		t.Errorf("the page reloaded instead of swapping the list (%v)", err)
	}
}
