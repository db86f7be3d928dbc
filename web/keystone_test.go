package web_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/web"
	"corral/web/webtest"
)

// failingTransport stands for a Keystone that stopped answering.
type failingTransport struct {
	down *atomic.Bool
	next http.RoundTripper
}

func (f failingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.down.Load() {
		return nil, &url.Error{Op: r.Method, URL: r.URL.String(), Err: errString("connection refused")}
	}
	return f.next.RoundTrip(r)
}

type errString string

func (e errString) Error() string { return string(e) }

type keystoneApp struct {
	*webtest.App
	ks     *cloudtest.Cloud
	people map[string]cloudtest.Person
	down   *atomic.Bool
}

// sharedKeystone is one Keystone with its people for the whole test
// binary (TestMain stops it): starting one takes a while.
var sharedKeystone struct {
	once   sync.Once
	ks     *cloudtest.Cloud
	people map[string]cloudtest.Person
	file   string
	err    error
}

func startSharedKeystone() {
	s := &sharedKeystone
	dir, err := os.MkdirTemp("", "corral-keystone-")
	if err != nil {
		s.err = err
		return
	}
	if s.ks, s.err = cloudtest.StartKeystoneOnly(dir); s.err != nil {
		return
	}
	s.people = map[string]cloudtest.Person{}
	for name, roles := range map[string]map[string]string{
		"alice": {"ks-alpha": "member"}, "rita": {"ks-alpha": "reader"},
		"bob": {"ks-alpha": "member", "ks-beta": "member"}, "dora": {"ks-alpha": "member"},
	} {
		p, err := s.ks.AddPerson(name, name+"-secret-pw", name != "dora", roles)
		if err != nil {
			s.err = err
			return
		}
		s.people[name] = p
	}
	s.file = filepath.Join(dir, "clouds.yaml")
	s.err = os.WriteFile(s.file, []byte(s.ks.CloudsYAML()), 0o600)
}

func stopSharedKeystone() {
	if sharedKeystone.ks != nil {
		sharedKeystone.ks.Stop()
		os.RemoveAll(sharedKeystone.ks.Dir)
	}
}

// startKeystoneApp runs corral with people signing in at a real Keystone:
// alice a member of ks-alpha, rita a reader there, bob a member of
// ks-alpha and ks-beta, dora disabled.
func startKeystoneApp(t *testing.T) *keystoneApp { return startKeystoneAppWith(t, web.Config{}) }

func startKeystoneAppWith(t *testing.T, cfg web.Config) *keystoneApp {
	t.Helper()
	if _, err := os.Stat("/usr/bin/keystone-manage"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI: Debian's python3-keystone is not installed")
		}
		t.Skip("Debian's python3-keystone is not installed")
	}
	sharedKeystone.once.Do(startSharedKeystone)
	if sharedKeystone.err != nil {
		t.Fatal(sharedKeystone.err)
	}
	ks, people, file := sharedKeystone.ks, sharedKeystone.people, sharedKeystone.file
	down := &atomic.Bool{}
	id, err := cloud.NewIdentity(context.Background(), cloud.Options{Cloud: "corral-ks",
		HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: failingTransport{down, http.DefaultTransport}},
		Getenv: func(k string) string {
			if k == "OS_CLIENT_CONFIG_FILE" {
				return file
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Identity = id
	app := webtest.StartWith(t, webtest.Options{Clock: true, Demo: true, Config: cfg,
		Users: []webtest.User{{Name: "local-admin", Role: models.RoleAdmin}}})
	return &keystoneApp{App: app, ks: ks, people: people, down: down}
}

func whoami(t *testing.T, c *webtest.Client) map[string]any {
	t.Helper()
	r := c.Get("/api/whoami")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("whoami: %d %s", r.StatusCode, r.Body)
	}
	return r.Object(t)
}

// TestKeystoneSignInAndTokens signs people in with the real Keystone on
// the console's form and calls the APIs with Keystone tokens.
func TestKeystoneSignInAndTokens(t *testing.T) {
	a := startKeystoneApp(t)
	alpha, _ := a.ks.EnsureProject("ks-alpha")
	beta, _ := a.ks.EnsureProject("ks-beta")

	// A member of one project: signed in, scoped to it, as a member.
	alice := a.Client(t)
	if r := alice.Login("alice", a.people["alice"].Password); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("alice signs in: %d %s", r.StatusCode, r.ErrorsText())
	}
	if w := whoami(t, alice); w["name"] != "alice" || w["role"] != "member" || w["project_id"] != alpha {
		t.Errorf("alice is %v, want member of %s", w, alpha)
	}
	home := alice.Get("/")
	if got := home.Text(t, "current-project"); !strings.Contains(got, "ks-alpha") {
		t.Errorf("the page names alice's project %q, want ks-alpha", got)
	}
	if got := home.Text(t, "current-region"); !strings.Contains(got, "RegionOne") {
		t.Errorf("the page names the region %q, want RegionOne", got)
	}

	// Refusals: a wrong password, a disabled user, corral's own user.
	for _, bad := range []struct{ name, pw string }{{"alice", "wrong"}, {"dora", a.people["dora"].Password}, {"local-admin", webtest.DefaultPassword}} {
		r := a.Client(t).Login(bad.name, bad.pw)
		if r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.ErrorsText(), "Wrong user name") {
			t.Errorf("%s signs in: %d %q, want 401", bad.name, r.StatusCode, r.ErrorsText())
		}
	}

	// Several projects: the choice, as Horizon offers it.
	bob := a.Client(t)
	r := bob.Login("bob", a.people["bob"].Password)
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/login/project") {
		t.Fatalf("bob signs in: %d to %q, want the project choice", r.StatusCode, r.Header.Get("Location"))
	}
	if bob.Get("/api/whoami").StatusCode != http.StatusUnauthorized {
		t.Errorf("before choosing a project bob is signed in")
	}
	if n := bob.Get("/login/project").Count(t, "choose-project-form"); n != 1 {
		t.Fatalf("no project choice")
	}
	if r := bob.Submit("/login/project", "/login/project", url.Values{"project_id": {beta}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("bob chooses ks-beta: %d %s", r.StatusCode, r.ErrorsText())
	}
	if w := whoami(t, bob); w["project_id"] != beta {
		t.Errorf("bob is %v, want project %s", w, beta)
	}

	// Sign-out revokes the token: a copy of the cookie no longer works.
	kept := *alice.Cookie("corral_session")
	if r := alice.Submit("/", "/logout", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %d", r.StatusCode)
	}
	replay := a.Client(t)
	replay.Get("/login") // the jar learns the host
	u, _ := url.Parse(a.URL)
	replay.HTTP.Jar.SetCookies(u, []*http.Cookie{&kept})
	if r := replay.Get("/"); r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/login") {
		t.Errorf("the signed-out cookie still opens the console: %d", r.StatusCode)
	}

	// An expired token sends the browser back to sign in.
	a.Clock.Advance(2 * time.Hour) // Keystone's tokens last an hour
	r = bob.Get("/aggregates")
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/login") {
		t.Fatalf("with bob's token expired: %d to %q, want the sign-in page", r.StatusCode, r.Header.Get("Location"))
	}
	if page := bob.Get(r.Header.Get("Location")); !strings.Contains(page.Body, "expired") {
		t.Errorf("the sign-in page does not say the session expired")
	}

	// Keystone unreachable at sign-in: a clear page, no 500.
	a.down.Store(true)
	r = a.Client(t).Login("alice", a.people["alice"].Password)
	a.down.Store(false)
	if r.StatusCode != http.StatusServiceUnavailable || !strings.Contains(r.ErrorsText(), "did not answer") {
		t.Errorf("Keystone down at sign-in: %d %q, want 503 saying Keystone did not answer", r.StatusCode, r.ErrorsText())
	}
}

// TestKeystoneTokensOnTheAPIs calls the compute, Placement and console
// APIs with Keystone tokens: a member's own project only, a reader's write
// refused, a bogus token a 401 naming Keystone.
func TestKeystoneTokensOnTheAPIs(t *testing.T) {
	a := startKeystoneApp(t)
	alpha, _ := a.ks.EnsureProject("ks-alpha")
	token := func(name, project string) string {
		tok, err := a.ks.PersonToken(a.people[name], project)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	api := func(tok string) *webtest.Client {
		c := a.Client(t)
		c.Token = tok
		return c
	}
	alice, bobBeta, rita := api(token("alice", "ks-alpha")), api(token("bob", "ks-beta")), api(token("rita", "ks-alpha"))
	create := func(c *webtest.Client, name string) *webtest.Response {
		return c.JSON("POST", "/compute/v2.1/os-server-groups", map[string]any{"server_group": map[string]any{"name": name, "policies": []string{"anti-affinity"}}},
			"OpenStack-API-Version", "compute 2.13")
	}
	if r := create(alice, "alice-sg"); r.StatusCode != http.StatusOK {
		t.Fatalf("alice creates a group: %d %s", r.StatusCode, r.Body)
	} else if sg := r.Object(t)["server_group"].(map[string]any); sg["project_id"] != alpha || sg["user_id"] != a.people["alice"].ID {
		t.Errorf("alice's group is project %v user %v, want %s %s", sg["project_id"], sg["user_id"], alpha, a.people["alice"].ID)
	}
	if r := create(bobBeta, "bob-sg"); r.StatusCode != http.StatusOK {
		t.Fatalf("bob creates a group: %d %s", r.StatusCode, r.Body)
	}
	r := alice.Get("/compute/v2.1/os-server-groups")
	if r.StatusCode != http.StatusOK || !strings.Contains(r.Body, "alice-sg") || strings.Contains(r.Body, "bob-sg") {
		t.Errorf("alice lists %d %s; want her project's group only", r.StatusCode, r.Body)
	}
	if r := create(rita, "rita-sg"); r.StatusCode != http.StatusForbidden {
		t.Errorf("a reader creates a group: %d %s, want 403", r.StatusCode, r.Body)
	}
	want := `Keystone uri="` + a.ks.KeystoneURL + `"`
	for _, path := range []string{"/compute/v2.1/os-server-groups", "/placement/resource_providers", "/api/whoami"} {
		r := api("gAAAAABbogus-token").Get(path)
		if r.StatusCode != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") != want {
			t.Errorf("GET %s with a bogus token: %d, WWW-Authenticate %q; want 401 and %q", path, r.StatusCode, r.Header.Get("WWW-Authenticate"), want)
		}
	}
	if r := alice.Get("/api/whoami"); r.StatusCode != http.StatusOK || r.Object(t)["via"] != "api" {
		t.Errorf("alice's token on /api: %d %s", r.StatusCode, r.Body)
	}

	// Keystone's admin drafts a change; its impact matrix names the
	// projects by their Keystone names.
	admin := api(a.ks.AdminToken)
	r = admin.JSON("POST", "/api/drafts", `{"name": "colour gpu", "changes": [{"op": "set_metadata", "aggregate": "gpu", "key": "colour", "value": "blue"}]}`)
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("Keystone's admin drafts: %d %s", r.StatusCode, r.Body)
	}
	page := admin.Get("/drafts/" + r.Object(t)["id"].(string) + "/impact?project=" + alpha)
	if got := page.Text(t, "impact-project-name"); got != "ks-alpha ("+alpha+")" {
		t.Errorf("the impact matrix names the project %q, want ks-alpha (%s)", got, alpha)
	}
}

// TestKeystoneBrowserSignIn signs in with Keystone credentials in Chromium
// and sees the project by name.
func TestKeystoneBrowserSignIn(t *testing.T) {
	a := startKeystoneApp(t)
	b := webtest.NewBrowser(t, a.App)
	b.Do(
		chromedp.Navigate(a.URL+"/login"),
		chromedp.WaitVisible(webtest.TestID("login-keystone")),
		chromedp.SendKeys(chromedp.ID("f-name"), "bob"),
		chromedp.SendKeys(chromedp.ID("f-password"), a.people["bob"].Password),
		chromedp.Click(webtest.TestID("login-submit")),
		chromedp.WaitVisible(webtest.TestID("choose-project")),
		chromedp.Click(webtest.TestID("project-ks-beta")),
		chromedp.Click(webtest.TestID("choose-project-submit")),
		chromedp.WaitVisible(webtest.TestID("page-dashboard")),
	)
	if got := b.Text(webtest.TestID("current-user")); got != "bob" {
		t.Errorf("signed in as %q, want bob", got)
	}
	if got := b.Text(webtest.TestID("current-project")); !strings.Contains(got, "ks-beta") {
		t.Errorf("the top bar says %q, want the project's name ks-beta", got)
	}
	b.Do(
		chromedp.Click(webtest.TestID("sign-out")),
		chromedp.WaitVisible(webtest.TestID("login-form")),
	)
}

// TestKeystoneBreakGlassLocalUsers: with --local-users corral's own user
// signs in beside Keystone's people, also while Keystone does not answer.
func TestKeystoneBreakGlassLocalUsers(t *testing.T) {
	a := startKeystoneAppWith(t, web.Config{LocalUsers: true})
	if r := a.Client(t).Login("alice", a.people["alice"].Password); r.StatusCode != http.StatusSeeOther {
		t.Errorf("alice (Keystone) beside local users: %d %q", r.StatusCode, r.ErrorsText())
	}
	a.down.Store(true)
	defer a.down.Store(false)
	local := a.Client(t)
	if r := local.Login("local-admin", webtest.DefaultPassword); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("the break-glass admin with Keystone down: %d %q", r.StatusCode, r.ErrorsText())
	}
	if w := whoami(t, local); w["name"] != "local-admin" || w["role"] != "admin" {
		t.Errorf("the break-glass admin is %v", w)
	}
	if r := a.Client(t).Login("local-admin", "wrong"); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong break-glass password: %d, want 401", r.StatusCode)
	}
}
