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
	for _, page := range pages {
		for _, size := range [][2]int64{{1280, 900}, {1920, 1080}} {
			b.Do(chromedp.EmulateViewport(size[0], size[1]), chromedp.Navigate(app.URL+page), chromedp.WaitVisible(`h1`))
			png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			name := strings.Trim(strings.NewReplacer("/", "-", "#", "").Replace(page), "-")
			if name == "" || strings.HasPrefix(name, "host-map") {
				name = "dashboard" + strings.TrimPrefix("-"+name, "-")
			}
			if len(name) > 40 {
				name = name[:40]
			}
			if err := os.WriteFile(filepath.Join(dir, name+"-"+strconv.FormatInt(size[0], 10)+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
