package web_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"corral/models/store"
	"corral/web/webtest"
)

// TestScreenshotsOfTheWritePages saves the pages whose writes go through
// the one write path (the settings table, the aggregate and flavor forms,
// quotas) and the Doctor, at 1280×900 and 1920×1080 on the demo, for a
// person to look at. It runs only when CORRAL_SCREENSHOTS names a
// directory.
func TestScreenshotsOfTheWritePages(t *testing.T) {
	dir := os.Getenv("CORRAL_SCREENSHOTS")
	if dir == "" {
		t.Skip("set CORRAL_SCREENSHOTS=DIR to save screenshots of the write pages")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	app := webtest.Start(t)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatal(err)
	}
	pages := []string{"/doctor", "/settings", "/aggregates/new", "/flavors", "/quotas", "/drafts"}
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
			name := strings.Trim(strings.ReplaceAll(page, "/", "-"), "-")
			if len(name) > 40 {
				name = name[:40]
			}
			if err := os.WriteFile(filepath.Join(dir, name+"-"+strconv.FormatInt(size[0], 10)+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
