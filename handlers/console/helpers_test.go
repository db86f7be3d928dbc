package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/models"
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

type (
	client   = webtest.Client
	response = webtest.Response
)

func startApp(tb testing.TB) *webtest.App { return webtest.Start(tb) }

// newApp adds mike (member of acme) and rita (reader in globex) to the
// admin.
func newApp(t testing.TB) *app {
	t.Helper()
	return &app{t: t, App: webtest.Start(t,
		webtest.User{Name: "mike", Role: models.RoleMember, Project: "acme", Password: memberPassword},
		webtest.User{Name: "rita", Role: models.RoleReader, Project: "globex", Password: memberPassword},
	)}
}

// as signs in as name (the admin, or mike/rita) and returns the client.
func (a *app) as(name string) *client { return a.asTB(a.t, name) }

func (a *app) asTB(tb testing.TB, name string) *client {
	tb.Helper()
	return a.SignIn(tb, name)
}

var sel = webtest.Sel

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

// refused submits a form that must be refused. The answer is a redirect
// (post/redirect/get) to a GET address with the typed values (retry=…),
// and that page, returned, shows the form again with the error; loading
// it again (a reload, Enter in the address bar) shows the same form.
func refused(t *testing.T, c *client, from, action string, form url.Values) *response {
	t.Helper()
	r := c.Submit(from, action, form)
	loc := r.Header.Get("Location")
	if r.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "retry=") || strings.Contains(loc, "_csrf") {
		t.Fatalf("POST %s: status %d, location %q; want 303 back to the form, without the CSRF token", action, r.StatusCode, loc)
	}
	page := c.Get(loc)
	if page.StatusCode != http.StatusOK {
		t.Fatalf("GET %s after the refusal: status %d", loc, page.StatusCode)
	}
	if again := c.Get(loc); again.StatusCode != http.StatusOK {
		t.Fatalf("reloading %s: status %d", loc, again.StatusCode)
	}
	return page
}
