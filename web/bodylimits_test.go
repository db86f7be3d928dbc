package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"corral/models"
	"corral/web"
)

// TestEveryRouteDeclaresABodyLimit: every route of the application, as the
// router lists it, has a body limit of its own or is of a method that
// carries none, and every row of the table names a route. A new POST or
// PUT route without a row fails here.
func TestEveryRouteDeclaresABodyLimit(t *testing.T) {
	a := newApp(t)
	paths := map[string]bool{}
	routes := map[string]bool{}
	for _, r := range a.Echo.Routes() {
		if strings.HasPrefix(r.Method, "echo_route_not_found") {
			continue
		}
		routes[r.Method+" "+r.Path], paths[r.Path] = true, true
		if _, ok := web.RouteBodyLimit(r.Method, r.Path); !ok {
			t.Errorf("%s %s has no body limit: declare it with handlers.Body where the route is registered", r.Method, r.Path)
		}
	}
	for _, row := range web.RouteBodyLimitRows() {
		method, path, _ := strings.Cut(row, " ")
		if method == "*" && paths[path] || routes[row] {
			continue
		}
		t.Errorf("body limit row %q names no route", row)
	}
}

// TestBodyLimitsArePerRoute: a signed-in user's form over its route's
// limit is refused from its declared length, where another route takes
// it; a method without a body takes none.
func TestBodyLimitsArePerRoute(t *testing.T) {
	a := newApp(t)
	admin := a.Client(t)
	login(admin, "alice")
	big := strings.Repeat("x", 100<<10) // over a small form, under a list form
	token := admin.CSRF("/tokens")
	r := admin.Request(http.MethodPost, "/tokens", strings.NewReader(url.Values{"name": {big}, "_csrf": {token}}.Encode()),
		"Content-Type", "application/x-www-form-urlencoded")
	if r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("100 KiB token form: status %d, want 413", r.StatusCode)
	}
	r = admin.Request(http.MethodPost, "/aggregates/1/members", strings.NewReader(url.Values{"provider": {big}, "_csrf": {token}}.Encode()),
		"Content-Type", "application/x-www-form-urlencoded")
	if r.StatusCode == http.StatusRequestEntityTooLarge {
		t.Errorf("100 KiB member list: status 413, want it read")
	}
	r = admin.Request(http.MethodGet, "/aggregates", strings.NewReader("x=1"), "Content-Type", "application/x-www-form-urlencoded")
	if r.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(r.Body, "takes none") {
		t.Errorf("GET with a body: status %d, want 413 saying it takes none; body %.300s", r.StatusCode, r.Body)
	}
}

// TestAnonymousAPICallsAreRefusedBeforeTheirBody: a caller without a token
// gets the API's 401 whatever its body (hostile bytes, too large, any
// method), as upstream's auth middleware answers before the body is read.
func TestAnonymousAPICallsAreRefusedBeforeTheirBody(t *testing.T) {
	a, fx := newAuthzApp(t)
	c := a.Client(t)
	traits := "/placement/resource_providers/" + fx.provider + "/traits"
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodPut, traits, `{"traits": ["CUSTOM_X"], "resource_provider_generation": 0}`},
		{http.MethodPut, traits, `{"traits": ["\u0000"]}`},
		{http.MethodPut, traits, "{\"traits\": [\"\xff\"]}"},
		{http.MethodPut, traits, strings.Repeat("x", 200<<10)},
		{http.MethodPut, "/placement/resource_providers", `{}`},
		{http.MethodPost, "/compute/v2.1/os-aggregates", "{\"aggregate\": {\"name\": \"a\xff\"}}"},
		{http.MethodPost, "/compute/v2.1/os-server-groups", strings.Repeat("x", 200<<10)},
	} {
		r := c.Request(tc.method, tc.path, strings.NewReader(tc.body), "Content-Type", "application/json", "OpenStack-API-Version", "placement 1.6")
		if r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.Body, "X-Auth-Token") {
			t.Errorf("anonymous %s %s with %.30q: status %d, want 401; body %.300s", tc.method, tc.path, tc.body, r.StatusCode, r.Body)
		}
	}
	for _, p := range []string{"/placement/", "/compute/v2.1/"} {
		if r := c.Get(p); r.StatusCode != http.StatusOK {
			t.Errorf("anonymous GET %s: status %d, want the version document", p, r.StatusCode)
		}
	}
}

// TestAPIBodiesAreReadUpToTheirDeclaredLimit: a JSON body of /api under
// the limit its route declares is read whole (the draft takes the change
// it carries), and one over it is refused from its declared length; the
// route and its reader agree on one limit.
func TestAPIBodiesAreReadUpToTheirDeclaredLimit(t *testing.T) {
	a := newApp(t)
	if err := a.Store.CreateAggregate(context.Background(), testActor, &models.Aggregate{Name: "gpu"}); err != nil {
		t.Fatal(err)
	}
	limit, ok := web.RouteBodyLimit(http.MethodPost, "/api/drafts/:id/changes")
	if !ok {
		t.Fatal("POST /api/drafts/:id/changes declares no body limit")
	}
	c := a.TokenClient(t, "alice")
	r := c.Request(http.MethodPost, "/api/drafts", strings.NewReader(`{"name": "large body"}`), "Content-Type", "application/json")
	var d struct {
		ID      string `json:"id"`
		Version int    `json:"version"`
	}
	if r.StatusCode != http.StatusCreated || json.Unmarshal([]byte(r.Body), &d) != nil {
		t.Fatalf("create draft: status %d; body %.300s", r.StatusCode, r.Body)
	}
	changes := func(size int64) string {
		doc := fmt.Sprintf(`{"version": %d, "changes": [{"op": "set_metadata", "aggregate": "gpu", "key": "a", "value": "b"}]`, d.Version)
		return doc + strings.Repeat(" ", int(size)-len(doc)-1) + "}"
	}
	under := changes(limit - limit/4) // over 1 MiB when the limit is 2 MiB
	r = c.Request(http.MethodPost, "/api/drafts/"+d.ID+"/changes", strings.NewReader(under), "Content-Type", "application/json")
	if r.StatusCode != http.StatusOK {
		t.Errorf("%d-byte changes under the route's %d-byte limit: status %d, want 200; body %.300s", len(under), limit, r.StatusCode, r.Body)
	}
	over := changes(limit + 1)
	r = c.Request(http.MethodPost, "/api/drafts/"+d.ID+"/changes", strings.NewReader(over), "Content-Type", "application/json")
	if r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("%d-byte changes over the route's %d-byte limit: status %d, want 413; body %.300s", len(over), limit, r.StatusCode, r.Body)
	}
}
