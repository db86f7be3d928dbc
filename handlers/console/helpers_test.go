package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/models"
	"corral/models/store"
	"corral/web/webtest"
)

// The app under test is the real one (webtest.Start: the whole Echo stack
// with sessions and CSRF, on a SQLite file holding the demo cloud), driven
// over loopback HTTP like a browser without JavaScript.

const memberPassword = "member-password-1"

type app struct {
	*webtest.App
	t testing.TB
}

func startApp(tb testing.TB) *webtest.App { return webtest.Start(tb) }

func newApp(t testing.TB) *app {
	t.Helper()
	a := &app{App: webtest.Start(t), t: t}
	ctx := context.Background()
	for _, u := range []struct {
		name    string
		role    models.Role
		project string
	}{
		{"mike", models.RoleMember, "acme"},
		{"rita", models.RoleReader, "globex"},
	} {
		if _, err := a.Store.CreateUser(ctx, store.Actor{Name: "test", Via: "cli"}, u.name, memberPassword, u.role, u.project); err != nil {
			t.Fatalf("create user %s: %v", u.name, err)
		}
	}
	return a
}

type client struct {
	t    testing.TB
	app  *app
	http *http.Client
}

type response struct {
	*http.Response
	Body string
	doc  *goquery.Document
}

// as signs in as name (the admin, or mike/rita) and returns the client.
func (a *app) as(name string) *client { return a.asTB(a.t, name) }

func (a *app) asTB(tb testing.TB, name string) *client {
	tb.Helper()
	if a.t == nil {
		a.t = tb
	}
	jar, _ := cookiejar.New(nil)
	c := &client{t: tb, app: a, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	pw := memberPassword
	if name == a.AdminName {
		pw = a.AdminPassword
	}
	r := c.submit("/login", "/login", url.Values{"name": {name}, "password": {pw}})
	if r.StatusCode != http.StatusSeeOther {
		tb.Fatalf("login %s: status %d", name, r.StatusCode)
	}
	return c
}

func (c *client) do(req *http.Request) *response {
	c.t.Helper()
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &response{Response: resp, Body: string(b)}
}

func (c *client) get(path string, hdr ...string) *response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.app.URL+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return c.do(req)
}

func (c *client) post(path string, form url.Values, hdr ...string) *response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.app.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return c.do(req)
}

// submit posts form to action with the CSRF token of the page at from.
func (c *client) submit(from, action string, form url.Values) *response {
	c.t.Helper()
	r := c.get(from)
	tok, ok := r.Doc(c.t).Find(`input[name="_csrf"]`).First().Attr("value")
	if !ok || tok == "" {
		c.t.Fatalf("GET %s: no _csrf field (status %d)", from, r.StatusCode)
	}
	if form == nil {
		form = url.Values{}
	}
	form.Set("_csrf", tok)
	return c.post(action, form)
}

// follow submits and follows the redirect, returning the page shown next
// (whose flashes say what happened). It fails unless the answer is a 303.
func (c *client) follow(from, action string, form url.Values) *response {
	c.t.Helper()
	r := c.submit(from, action, form)
	if r.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("POST %s: status %d, want 303; flashes/errors: %q", action, r.StatusCode, r.errorsText(c.t))
	}
	return c.get(r.Header.Get("Location"))
}

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

func sel(id string) string { return `[data-testid="` + id + `"]` }

// Text is the trimmed text of the elements with data-testid id.
func (r *response) Text(t testing.TB, id string) string {
	t.Helper()
	return strings.TrimSpace(r.Doc(t).Find(sel(id)).Text())
}

// Texts lists the trimmed text of each element with data-testid id.
func (r *response) Texts(t testing.TB, id string) []string {
	t.Helper()
	var out []string
	r.Doc(t).Find(sel(id)).Each(func(_ int, s *goquery.Selection) { out = append(out, strings.TrimSpace(s.Text())) })
	return out
}

func (r *response) Count(t testing.TB, id string) int {
	t.Helper()
	return r.Doc(t).Find(sel(id)).Length()
}

// errorsText gathers every error shown, for failure messages.
func (r *response) errorsText(t testing.TB) string {
	d, err := goquery.NewDocumentFromReader(strings.NewReader(r.Body))
	if err != nil {
		return r.Body
	}
	return strings.Join(strings.Fields(d.Find(".error, .flash, [data-testid=error-message]").Text()), " ")
}

func (a *app) aggregate(ref string) *models.Aggregate {
	a.t.Helper()
	agg, err := a.Store.GetAggregate(context.Background(), ref)
	if err != nil {
		a.t.Fatalf("get aggregate %s: %v", ref, err)
	}
	return agg
}

func (a *app) providerUUID(name string) string {
	a.t.Helper()
	p, err := a.Store.GetProvider(context.Background(), name)
	if err != nil {
		a.t.Fatalf("get provider %s: %v", name, err)
	}
	return p.UUID
}

func gen(g int64) string { return strconv.FormatInt(g, 10) }

type goqSel = goquery.Selection

type modelsAggregate = models.Aggregate
