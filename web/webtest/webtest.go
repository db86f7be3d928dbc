// Package webtest runs the real corral application for end-to-end tests,
// on 127.0.0.1 and a real database, with named users, and drives it over
// HTTP (Client: a cookie jar, CSRF tokens, goquery, API tokens) or with
// Debian's Chromium through chromedp (Browser).
//
//	app := webtest.StartWith(t, webtest.Options{Users: []webtest.User{{Name: "mike", Role: models.RoleMember}}})
//	c := app.SignIn(t, "mike")
//	r := c.Submit("/aggregates/new", "/aggregates", url.Values{"name": {"a1"}})
//	page := c.Get(r.Header.Get("Location"))
//	msg := page.Text(t, "flash-success")
//
// Start is the usual case for pages: a SQLite file holding the demo data
// and an admin whose password is known.
//
//	app := webtest.Start(t)
//	b := webtest.NewBrowser(t, app) // skips when Chromium is missing (fails under CI)
//	if err := b.Login(b.Ctx); err != nil { t.Fatal(err) }
//	b.Do(chromedp.Navigate(app.URL+"/query"), chromedp.WaitVisible(webtest.TestID("page-query")))
//	n := b.Text(webtest.TestID("count-aggregates"))
//
// When a test using a Browser fails, a full-page screenshot is saved under
// os.TempDir()/corral-screenshots/ and its path logged — also when the
// test's browser deadline (Timeout) has run out.
package webtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
	"corral/models/store"
)

// The admin every App has.
const (
	AdminName     = "admin"
	AdminPassword = "webtest-admin-pass"
)

// App is a running corral.
type App struct {
	URL    string // http://127.0.0.1:PORT, no trailing slash
	DBPath string // the SQLite file, when StartWith opened one
	Store  *store.Store
	Env    *handlers.Env
	Echo   *echo.Echo
	// AdminName and AdminPassword sign in as an admin (set by Start).
	AdminName, AdminPassword string
	// Clock is the app's clock when Options.Clock asked for one.
	Clock *Clock
	// Tokens holds each user's API token when Options.Tokens asked for them.
	Tokens map[string]string

	t     testing.TB
	users map[string]User
}

// Start runs the application for the rest of the test, on a fresh SQLite
// file holding the demo data, with the admin AdminName and users. Set
// CORRAL_TEST_LOG to see its request log on stderr.
func Start(t testing.TB, users ...User) *App {
	t.Helper()
	admin := User{Name: AdminName, Role: models.RoleAdmin, Password: AdminPassword}
	app := StartWith(t, Options{Demo: true, Users: append([]User{admin}, users...)})
	app.AdminName, app.AdminPassword = AdminName, AdminPassword
	return app
}

// Browser is a headless Chromium tab bound to an App.
type Browser struct {
	// Ctx is the tab's context: pass it to chromedp.Run. It ends with the
	// test, or after Timeout.
	Ctx context.Context
	App *App
	t   testing.TB
	tab context.Context // the tab without the test's deadline, for screenshots
}

// Timeout bounds one browser test.
var Timeout = 2 * time.Minute

// startTimeout bounds Chromium's start.
const startTimeout = time.Minute

// screenshotTimeout bounds one screenshot, which runs on a context of its
// own: it must work after the test's context has run out.
const screenshotTimeout = 20 * time.Second

// ChromiumPath finds the browser: $CHROME_BIN, else Debian's
// /usr/bin/chromium, else chromium on $PATH. It returns "" when none exists.
func ChromiumPath() string {
	if p := os.Getenv("CHROME_BIN"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	return ""
}

// NewBrowser starts Chromium with a fresh profile. Without Chromium the
// test is skipped, unless $CI is set: there a missing browser is a failure.
func NewBrowser(t testing.TB, app *App) *Browser {
	t.Helper()
	bin := ChromiumPath()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("webtest: Chromium not found (install Debian's chromium, or set CHROME_BIN)")
		}
		t.Skip("webtest: Chromium not found; install Debian's chromium to run browser tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// Start the browser now, so that a broken installation fails here. The
	// first Run binds the browser's life to the context it is given, so it
	// must be tab itself: started under the test's deadline, the browser
	// would die with that deadline and take the failure screenshot with it.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(tab) }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("webtest: start Chromium (%s): %v", bin, err)
		}
	case <-time.After(startTimeout):
		cancelTab()
		t.Fatalf("webtest: Chromium (%s) did not start within %v", bin, startTimeout)
	}
	ctx, cancelTimeout := context.WithTimeout(tab, Timeout)
	t.Cleanup(cancelTimeout)
	b := &Browser{Ctx: ctx, App: app, t: t, tab: tab}
	// Registered after the browser's own cleanup, so it runs before it.
	t.Cleanup(func() {
		if t.Failed() {
			b.saveFailureScreenshot()
		}
	})
	return b
}

// Login signs in as the App's admin and waits for the dashboard.
func (b *Browser) Login(ctx context.Context) error {
	return b.LoginAs(ctx, b.App.AdminName, b.App.AdminPassword)
}

// LoginAs signs in as name and waits for the dashboard.
func (b *Browser) LoginAs(ctx context.Context, name, password string) error {
	return chromedp.Do(ctx,
		chromedp.Navigate(b.App.URL+"/login"),
		chromedp.WaitVisible(TestID("login-form")),
		chromedp.SendKeys(chromedp.ID("f-name"), name),
		chromedp.SendKeys(chromedp.ID("f-password"), password),
		chromedp.Click(TestID("login-submit")),
		chromedp.WaitVisible(TestID("page-dashboard")),
	)
}

// TestID selects the first element whose data-testid is id.
func TestID(id string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf("[data-testid=%q]", id))
}

// Do runs actions in the tab and fails the test on error.
func (b *Browser) Do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.Ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// Text returns the visible text of the first element sel matches, failing
// the test when there is none.
func (b *Browser) Text(sel chromedp.CSS) string {
	b.t.Helper()
	s, err := chromedp.Run(b.Ctx, chromedp.Text(sel))
	if err != nil {
		b.t.Fatalf("browser: text of %s: %v", sel, err)
	}
	return s
}

// AcceptDialogs answers "OK" to every JavaScript dialog the page opens from
// now on (htmx's hx-confirm uses window.confirm) and sends each dialog's
// message on the returned channel, which holds up to 16 unread messages.
func (b *Browser) AcceptDialogs() <-chan string {
	msgs := make(chan string, 16)
	dialogs := chromedp.Events(b.Ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			select {
			case msgs <- ev.Message:
			default:
			}
			if _, err := chromedp.Call(b.Ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true}); err != nil {
				return
			}
		}
	}()
	return msgs
}

// ScreenshotDir is where failure screenshots go.
func ScreenshotDir() string { return filepath.Join(os.TempDir(), "corral-screenshots") }

// Screenshot saves a full-page PNG of the tab and returns its path. It
// works after Ctx has run out: the capture gets a fresh short deadline on
// the same tab.
func (b *Browser) Screenshot(label string) (string, error) {
	ctx, cancel := context.WithTimeout(b.tab, screenshotTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 means PNG
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(ScreenshotDir(), 0o755); err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s-%s-%s.png", safeName(b.t.Name()), safeName(label), time.Now().UTC().Format("20060102T150405.000"))
	path := filepath.Join(ScreenshotDir(), name)
	return path, os.WriteFile(path, png, 0o644)
}

func (b *Browser) saveFailureScreenshot() {
	path, err := b.Screenshot("failure")
	if err != nil {
		b.t.Logf("webtest: no failure screenshot: %v", err)
		return
	}
	b.t.Logf("webtest: failure screenshot saved to %s", path)
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string { return unsafeChars.ReplaceAllString(s, "_") }
