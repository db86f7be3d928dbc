package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
	"corral/models/store"
	"corral/web"
)

// clock is a test clock the app reads through Env.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// testApp is the real application on a real SQLite file, served over
// loopback HTTP.
type testApp struct {
	t     testing.TB
	Store *store.Store
	Env   *handlers.Env
	Echo  *echo.Echo
	Srv   *httptest.Server
	Clock *clock
}

const testPassword = "correct horse battery"

func newApp(t testing.TB) *testApp {
	t.Helper()
	return newAppWith(t, web.Config{})
}

func newAppWith(t testing.TB, cfg web.Config) *testApp {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "corral.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return newAppOn(t, st, cfg)
}

// newAppOn is newAppWith on a given store (storetest.ForEach gives both
// databases).
func newAppOn(t testing.TB, st *store.Store, cfg web.Config) *testApp {
	t.Helper()
	ctx := context.Background()
	clk := &clock{t: time.Now()}
	env := &handlers.Env{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: clk.Now}
	e, err := web.New(env, cfg)
	if err != nil {
		t.Fatalf("web.New: %v", err)
	}
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	a := &testApp{t: t, Store: st, Env: env, Echo: e, Srv: srv, Clock: clk}
	for _, u := range []struct{ name, role, project string }{
		{"alice", models.RoleAdmin, ""},
		{"mike", models.RoleMember, "tA"},
		{"rita", models.RoleReader, "tB"},
	} {
		if _, err := st.CreateUser(ctx, store.Actor{Name: "test", Via: "cli"}, u.name, testPassword, u.role, u.project); err != nil {
			t.Fatalf("create user %s: %v", u.name, err)
		}
	}
	return a
}

// client is one browser-like HTTP client: a cookie jar, no automatic
// redirects (tests look at them), no Sec-Fetch-Site header (so the CSRF
// token path is the one exercised unless a test sets the header).
type client struct {
	t    testing.TB
	app  *testApp
	http *http.Client
}

func (a *testApp) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: a.t, app: a, http: &http.Client{
		Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

type response struct {
	*http.Response
	Body string
	doc  *goquery.Document
}

// Doc parses the body as HTML.
func (r *response) Doc(t testing.TB) *goquery.Document {
	t.Helper()
	if r.doc == nil {
		d, err := goquery.NewDocumentFromReader(strings.NewReader(r.Body))
		if err != nil {
			t.Fatalf("parse HTML: %v", err)
		}
		r.doc = d
	}
	return r.doc
}

// TestID returns the text of the elements with data-testid=id.
func (r *response) TestID(t testing.TB, id string) string {
	t.Helper()
	return strings.TrimSpace(r.Doc(t).Find(`[data-testid="` + id + `"]`).Text())
}

// Has reports whether an element with data-testid=id exists.
func (r *response) Has(t testing.TB, id string) bool {
	t.Helper()
	return r.Doc(t).Find(`[data-testid="`+id+`"]`).Length() > 0
}

func (c *client) do(req *http.Request) *response {
	c.t.Helper()
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("read body: %v", err)
	}
	return &response{Response: resp, Body: string(b)}
}

func (c *client) get(path string, hdr ...string) *response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.app.Srv.URL+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return c.do(req)
}

func (c *client) post(path string, form url.Values, hdr ...string) *response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.app.Srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return c.do(req)
}

// csrf loads path and returns the CSRF token of its first form.
func (c *client) csrf(path string) string {
	c.t.Helper()
	r := c.get(path)
	tok, ok := r.Doc(c.t).Find(`input[name="_csrf"]`).First().Attr("value")
	if !ok || tok == "" {
		c.t.Fatalf("GET %s: no _csrf field in the page (status %d)", path, r.StatusCode)
	}
	return tok
}

// submit posts a form with the CSRF token taken from the page at from.
func (c *client) submit(from, action string, form url.Values) *response {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("_csrf", c.csrf(from))
	return c.post(action, form)
}

// login signs in through the form and fails the test unless it worked.
func (c *client) login(name string) {
	c.t.Helper()
	r := c.submit("/login", "/login", url.Values{"name": {name}, "password": {testPassword}})
	if r.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("login %s: status %d, want 303; body:\n%s", name, r.StatusCode, r.Body)
	}
}

func (c *client) cookie(name string) *http.Cookie {
	u, _ := url.Parse(c.app.Srv.URL)
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

func setCookie(r *response, name string) *http.Cookie {
	for _, ck := range r.Cookies() {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}
