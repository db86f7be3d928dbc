package web_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"corral/web/webtest"
)

// TestBrowserSignInAndOut drives Chromium through the real app: sign in,
// see the dashboard with the demo data's counts, sign out.
func TestBrowserSignInAndOut(t *testing.T) {
	app := webtest.Start(t)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	if user := b.Text(webtest.TestID("current-user")); user != webtest.AdminName {
		t.Errorf("signed in as %q, want %q", user, webtest.AdminName)
	}
	for _, name := range []string{"aggregates", "hosts"} {
		s := b.Text(webtest.TestID("count-" + name))
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err != nil || n == 0 {
			t.Errorf("dashboard shows %q %s; the demo data has some", s, name)
		}
	}
	b.Do(
		chromedp.Click(webtest.TestID("sign-out")),
		chromedp.WaitVisible(webtest.TestID("login-form")),
	)
	if flash := b.Text(webtest.TestID("flash-success")); !strings.Contains(flash, "signed out") {
		t.Errorf("after sign-out the flash says %q", flash)
	}
	// Signed out for real: the dashboard sends the browser back to sign in.
	b.Do(
		chromedp.Navigate(app.URL+"/"),
		chromedp.WaitVisible(webtest.TestID("login-form")),
	)
}

// TestBrowserTokenLifecycle creates an API token in the browser and revokes
// it through htmx (hx-confirm, then a POST carrying the CSRF header). Were
// htmx blocked, e.g. by the Content-Security-Policy, the click would land on
// the no-JavaScript confirmation page instead and the test would time out.
func TestBrowserTokenLifecycle(t *testing.T) {
	app := webtest.Start(t)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	b.Do(
		chromedp.Navigate(app.URL+"/tokens"),
		chromedp.WaitVisible(webtest.TestID("token-form")),
		chromedp.SendKeys(chromedp.ID("f-name"), "from-the-browser"),
		chromedp.Click(webtest.TestID("token-create")),
		chromedp.WaitVisible(webtest.TestID("new-token-value")),
	)
	plain := strings.TrimSpace(b.Text(webtest.TestID("new-token-value")))
	if u, _, err := app.Store.UserByToken(b.Ctx, plain); err != nil || u.Name != webtest.AdminName {
		t.Fatalf("the token shown does not authenticate the admin: %v", err)
	}

	dialogs := b.AcceptDialogs()
	b.Do(
		chromedp.Click(webtest.TestID("token-revoke")),
		chromedp.WaitVisible(webtest.TestID("flash-success")),
	)
	select {
	case msg := <-dialogs:
		if !strings.Contains(msg, "from-the-browser") {
			t.Errorf("confirm dialog says %q", msg)
		}
	default:
		t.Error("no confirm dialog before revoking")
	}
	if status := b.Text(webtest.TestID("token-status")); !strings.Contains(status, "revoked") {
		t.Errorf("token status after revoke = %q", status)
	}
	if _, _, err := app.Store.UserByToken(b.Ctx, plain); err == nil {
		t.Error("the revoked token still authenticates")
	}
}
