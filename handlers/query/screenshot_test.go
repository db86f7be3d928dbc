package query_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"corral/models"
	"corral/models/cloudgen"
	"corral/models/store"
	"corral/web/webtest"
)

// TestScreenshotsOfTheQueryPage saves /query at 1280×900 and 1920×1080 on
// the demo and on the 100,000-provider cloud, for a person to look at. It
// runs only when CORRAL_SCREENSHOTS names a directory.
func TestScreenshotsOfTheQueryPage(t *testing.T) {
	dir := os.Getenv("CORRAL_SCREENSHOTS")
	if dir == "" {
		t.Skip("set CORRAL_SCREENSHOTS=DIR to save screenshots of /query")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	worlds := []struct {
		name, query string
		big         bool
	}{
		{"demo", "/query?project=acme&flavor=m1.small&num=3&group=web&member_of=%21aggB", false},
		{"cloud", "/query?project=project-1&flavor=" + cloudgen.FlavorSSD + "&member_of=%21" + cloudgen.FreePool, true},
	}
	for _, w := range worlds {
		t.Run(w.name, func(t *testing.T) {
			app := webtest.Start(t)
			if w.big {
				if err := app.Store.ImportWorld(context.Background(), store.Actor{Name: "test", Via: "cli"}, cloudgen.Generate(cloudgen.Default()), true); err != nil {
					t.Fatal(err)
				}
			}
			if !w.big {
				long := &models.Aggregate{Name: strings.Repeat("a-very-long-aggregate-name", 8), Metadata: map[string]string{}}
				if err := app.Store.CreateAggregate(context.Background(), store.Actor{Name: "test", Via: "cli"}, long); err != nil {
					t.Fatal(err)
				}
			}
			b := webtest.NewBrowser(t, app)
			if err := b.Login(b.Ctx); err != nil {
				t.Fatal(err)
			}
			if !w.big {
				for _, page := range []string{"/aggregates", "/quotas"} {
					b.Do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(app.URL+page), chromedp.WaitVisible(`h1`))
					png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(dir, w.name+strings.ReplaceAll(page, "/", "-")+"-1280.png"), png, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			// Each size shows the matrix as it opens, and the excluded
			// hosts alone (whose reasons a wide window shows inline).
			for _, shot := range []struct {
				size   [2]int64
				suffix string
			}{{[2]int64{1280, 900}, ""}, {[2]int64{1920, 1080}, ""}, {[2]int64{1280, 900}, "&hfail=1"}, {[2]int64{1920, 1080}, "&hfail=1"}} {
				size := shot.size
				b.Do(
					chromedp.EmulateViewport(size[0], size[1]),
					chromedp.Navigate(app.URL+w.query+shot.suffix),
					chromedp.WaitVisible(webtest.TestID("host-matrix")),
				)
				png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				failed := ""
				if shot.suffix != "" {
					failed = "-failed"
				}
				name := filepath.Join(dir, w.name+failed+"-"+itoa(int(size[0]))+".png")
				if err := os.WriteFile(name, png, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("saved %s", name)
			}
		})
	}
}
