package doctor_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"corral/web/webtest"
)

// TestBrowserDoctorFixAsDraft drives Chromium through the demo world with
// one trap: the Doctor page lists it, and "Fix as draft" makes a draft
// whose changes are the fix, shown on the draft's page.
func TestBrowserDoctorFixAsDraft(t *testing.T) {
	app := webtest.Start(t)
	withTrap(t, app)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
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
		chromedp.Navigate(app.URL+"/"),
		chromedp.Click(`nav a[href="/doctor"]`),
		chromedp.WaitVisible(id("doctor-finding")),
	)
	if got := b.Text(id("doctor-code")); got != "isolation_trait_missing" {
		t.Fatalf("the page lists %q", got)
	}
	if got := b.Text(id("doctor-detail")); !strings.Contains(got, "cn1") || !strings.Contains(got, "CUSTOM_LICENSED_WINDOWS") {
		t.Errorf("detail %q", got)
	}
	step(
		chromedp.Click(id("doctor-fix-draft")),
		chromedp.WaitVisible(id("flash-success")),
	)
	loc, err := chromedp.Run(b.Ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	draftID, ok := strings.CutPrefix(loc, app.URL+"/drafts/")
	if !ok {
		t.Fatalf("after Fix as draft the browser is at %s", loc)
	}
	d, err := app.Store.GetDraft(context.Background(), draftID)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := d.DraftChanges()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(changes, wantFix) {
		t.Errorf("the draft holds %+v, want %+v", changes, wantFix)
	}
	if got := b.Text(id("flash-success")); !strings.Contains(got, "nothing live changed") {
		t.Errorf("flash %q", got)
	}
}
