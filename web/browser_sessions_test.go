package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"corral/web/webtest"
)

// TestBrowserSignsOutAnotherSession signs the admin in twice — in Chromium
// and in a plain HTTP client — and ends the client's session from the
// browser's Tokens page through htmx (confirm dialog, POST with the CSRF
// header). The client is refused from then on; the browser is not.
func TestBrowserSignsOutAnotherSession(t *testing.T) {
	app := webtest.Start(t)
	b := webtest.NewBrowser(t, app)
	// The other browser: the test client, pointed at the same server.
	other := app.Client(t)
	r := other.Submit("/login", "/login", map[string][]string{"name": {app.AdminName}, "password": {app.AdminPassword}})
	if r.StatusCode != 303 || !signedIn(other) {
		t.Fatalf("the HTTP client could not sign in: status %d", r.StatusCode)
	}
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	b.Do(
		chromedp.Navigate(app.URL+"/tokens"),
		chromedp.WaitVisible(webtest.TestID("sessions-table")),
	)
	if cur := b.Text(webtest.TestID("session-current")); !strings.Contains(cur, "this session") {
		t.Errorf("the browser's own session is marked %q", cur)
	}
	dialogs := b.AcceptDialogs()
	b.Do(
		chromedp.Click(webtest.TestID("session-revoke")),
		chromedp.WaitVisible(webtest.TestID("flash-success")),
	)
	select {
	case msg := <-dialogs:
		if !strings.Contains(msg, "127.0.0.1") {
			t.Errorf("confirm dialog says %q", msg)
		}
	default:
		t.Error("no confirm dialog before signing the session out")
	}
	if signedIn(other) {
		t.Error("the session signed out from the browser still works")
	}
	admin, err := app.Store.UserByName(b.Ctx, app.AdminName)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := app.Store.ListSessions(b.Ctx, admin.ID, app.Env.Now()); err != nil || len(list) != 1 {
		t.Errorf("sessions left: %d, %v; want the browser's only", len(list), err)
	}
}
