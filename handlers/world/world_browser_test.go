package world_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"corral/models"
	"corral/web/webtest"
)

// TestBrowserWorldImport uploads a world file through Chromium's own file
// input and multipart encoding, previews it and applies it.
func TestBrowserWorldImport(t *testing.T) {
	app := webtest.Start(t)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	w, err := app.Store.ExportWorld(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w.Aggregates = append(w.Aggregates, models.Aggregate{Name: "from-the-browser", Metadata: map[string]string{"ssd": "true"}})
	file := filepath.Join(t.TempDir(), "world.json")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := models.EncodeWorld(f, w); err != nil {
		t.Fatal(err)
	}
	f.Close()

	id := webtest.TestID
	step := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("browser: %v", err)
		}
	}
	step(
		chromedp.Navigate(app.URL+"/world"),
		chromedp.WaitVisible(id("world-form")),
		chromedp.SetUploadFiles(chromedp.ID("f-file"), []string{file}),
		chromedp.Click(id("world-check")),
		chromedp.WaitVisible(id("world-preview")),
	)
	added := b.Text(chromedp.CSS(`[data-testid="world-diff-row"][data-kind="aggregates"] [data-testid="diff-added"]`))
	if !strings.HasPrefix(strings.TrimSpace(added), "1") || !strings.Contains(added, "from-the-browser") {
		t.Errorf("aggregates added: %q, want 1 naming from-the-browser", added)
	}
	if _, err := app.Store.GetAggregate(context.Background(), "from-the-browser"); models.KindOf(err) != models.NotFound {
		t.Fatalf("the preview wrote: %v", err)
	}
	step(
		chromedp.Click(id("world-apply")),
		chromedp.WaitVisible(id("flash-success")),
	)
	if got := b.Text(id("flash-success")); !strings.Contains(got, "1 added") {
		t.Errorf("flash: %q", got)
	}
	if agg, err := app.Store.GetAggregate(context.Background(), "from-the-browser"); err != nil || agg.Metadata["ssd"] != "true" {
		t.Errorf("after apply: %v, %v", agg, err)
	}
}
