package web_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"corral/models/cloudgen"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/web/webtest"
)

// TestScreenshotsOfTheWritePages saves the pages whose writes go through
// the one write path (the settings table, the aggregate and flavor forms,
// quotas) and the Doctor, at 1280×900 and 1920×1080 on the demo (on the
// 100,000-provider cloud with CORRAL_SCREENSHOTS_CLOUD set), for a person
// to look at. It runs only when CORRAL_SCREENSHOTS names a directory.
func TestScreenshotsOfTheWritePages(t *testing.T) {
	dir := os.Getenv("CORRAL_SCREENSHOTS")
	if dir == "" {
		t.Skip("set CORRAL_SCREENSHOTS=DIR to save screenshots of the write pages")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	app := webtest.Start(t)
	if os.Getenv("CORRAL_SCREENSHOTS_CLOUD") != "" {
		// The 100,000-provider generated cloud instead of the demo.
		if err := app.Store.ImportWorld(context.Background(), store.Actor{Name: "test", Via: "cli"}, cloudgen.Generate(cloudgen.Default()), true); err != nil {
			t.Fatal(err)
		}
	}
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatal(err)
	}
	pages := []string{"/doctor", "/settings", "/aggregates/new", "/flavors", "/quotas", "/drafts", "/servers", "/", "/#host-map"}
	if aggs, _, err := app.Store.ListAggregates(b.Ctx, store.AggregateQuery{}); err == nil && len(aggs) > 0 {
		pages = append(pages, "/aggregates/"+aggs[0].UUID)
	}
	pages = append(pages, gatePages(t, app)...)
	shoot := func(name string, size [2]int64) {
		t.Helper()
		png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+strconv.FormatInt(size[0], 10)+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sizes := [][2]int64{{1280, 900}, {1920, 1080}}
	for _, page := range pages {
		for _, size := range sizes {
			b.Do(chromedp.EmulateViewport(size[0], size[1]), chromedp.Navigate(app.URL+page), chromedp.WaitVisible(`h1`))
			name := strings.Trim(strings.ReplaceAll(strings.NewReplacer("?", "-", "=", "-", "#", "").Replace(page), "/", "-"), "-")
			if name == "" || strings.HasPrefix(name, "host-map") {
				name = "dashboard" + strings.TrimPrefix("-"+name, "-")
			}
			if len(name) > 40 {
				name = name[:28] + name[len(name)-12:]
			}
			shoot(name, size)
		}
	}
	// The safety gate: a tag removal that strands servers asks first, and
	// a tenant typed into an aggregate's form shows its consequences above
	// the button.
	if acme, err := app.Store.GetAggregate(b.Ctx, "tenant-acme"); err == nil {
		for _, size := range sizes {
			b.Do(chromedp.EmulateViewport(size[0], size[1]), chromedp.Navigate(app.URL+"/aggregates/"+acme.UUID),
				chromedp.WaitVisible(webtest.TestID("tag-remove")), chromedp.Click(webtest.TestID("tag-remove")), chromedp.WaitVisible(webtest.TestID("review")))
			shoot("gate-review-remove-acme", size)
		}
	}
	if agg, err := app.Store.GetAggregate(b.Ctx, "aggA"); err == nil {
		for _, size := range sizes {
			b.Do(chromedp.EmulateViewport(size[0], size[1]), chromedp.Navigate(app.URL+"/aggregates/"+agg.UUID),
				chromedp.WaitVisible(`[data-testid="tags-tenants-add"] input[name="project"]`),
				chromedp.SendKeys(`[data-testid="tags-tenants-add"] input[name="project"]`, "initech"),
				chromedp.WaitVisible(`[data-testid="tags-tenants-add"] [data-testid="inline-impact-summary"]`),
				chromedp.ScrollIntoView(`[data-testid="tags-tenants-add"]`))
			shoot("gate-inline-tenant-add", size)
		}
	}
}

// gatePages are the pages the safety gate and the capacity bars changed:
// a provider with inventory in use, a flavor, a draft that takes a project
// off its tenant aggregate, its apply page and the query page against
// it. The demo's own names first; on a generated cloud, the first that
// fit.
func gatePages(t *testing.T, app *webtest.App) []string {
	t.Helper()
	ctx := context.Background()
	snap, _, err := app.Store.Live().Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := snap.World()
	var pages []string
	if p, ok := snap.Provider("numa3_1"); ok {
		pages = append(pages, "/providers/"+p.UUID)
	} else {
		for _, p := range w.Providers {
			if len(p.Usages) > 0 {
				pages = append(pages, "/providers/"+p.UUID)
				break
			}
		}
	}
	if f, ok := snap.Flavor("m1.ssd"); ok {
		pages = append(pages, "/flavors/"+f.ID)
	} else if len(w.Flavors) > 0 {
		pages = append(pages, "/flavors/"+w.Flavors[0].ID)
	}
	var untag *scheduling.Change
	for _, a := range w.Aggregates {
		if ps := scheduling.TenantTags(a.Metadata); len(ps) > 0 {
			untag = &scheduling.Change{Op: scheduling.OpRemoveTenant, Aggregate: a.Name, Project: ps[0]}
			if a.Name == "tenant-acme" {
				break
			}
		}
	}
	if untag == nil {
		return pages
	}
	admin := store.Actor{Name: app.AdminName}
	d, err := app.Store.CreateDraft(ctx, admin, "drop "+untag.Project)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Store.SetDraftChanges(ctx, admin, d.ID, d.Version, []scheduling.Change{*untag}); err != nil {
		t.Fatal(err)
	}
	return append(pages, "/drafts/"+d.ID, "/drafts/"+d.ID+"/apply", "/query?draft="+d.ID)
}
