package placementapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
	"corral/web/webtest"
)

// app is the real corral application on a real database, with an admin
// and a reader holding API tokens.
type app struct {
	t      testing.TB
	URL    string // the Placement root: http://127.0.0.1:PORT/placement
	Store  *store.Store
	Admin  string // admin's token
	Reader string // reader's token
	web    *webtest.App
}

func startApp(t testing.TB, st *store.Store) *app {
	t.Helper()
	w := webtest.StartWith(t, webtest.Options{Store: st, Tokens: true, Users: []webtest.User{
		{Name: "ops-admin", Role: models.RoleAdmin, Project: "ops", Password: "a-long-enough-password"},
		{Name: "ops-reader", Role: models.RoleReader, Project: "ops", Password: "a-long-enough-password"},
	}})
	return &app{t: t, URL: w.URL + "/placement", Store: st, Admin: w.Tokens["ops-admin"], Reader: w.Tokens["ops-reader"], web: w}
}

// forEachStore runs fn on a fresh app over SQLite and, when
// CORRAL_TEST_POSTGRES is set, over PostgreSQL.
func forEachStore(t *testing.T, fn func(t *testing.T, a *app)) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) { fn(t, startApp(t, st)) })
}

type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// errorDetail returns the only error of a Placement error body.
func (r resp) errorItem(t testing.TB) map[string]any {
	t.Helper()
	m := r.json(t)
	errs, ok := m["errors"].([]any)
	if !ok || len(errs) != 1 {
		t.Fatalf("not a Placement error body: %s", r.Body)
	}
	return errs[0].(map[string]any)
}

// call sends one request. version "" sends no OpenStack-API-Version; token
// "" sends no X-Auth-Token; a non-nil body is sent as JSON (a string as is).
func (a *app) call(method, path, version, token string, body any) resp {
	a.t.Helper()
	r, err := a.try(method, path, version, token, body)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// try is call for other goroutines: it reports instead of failing.
func (a *app) try(method, path, version, token string, body any) (resp, error) {
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		default:
			buf, err := json.Marshal(b)
			if err != nil {
				return resp{}, err
			}
			rd = strings.NewReader(string(buf))
		}
	}
	req, err := http.NewRequest(method, a.URL+path, rd)
	if err != nil {
		return resp{}, err
	}
	if version != "" {
		req.Header.Set("OpenStack-API-Version", "placement "+version)
	}
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	r, err := a.web.Client(a.t).Try(req)
	if err != nil {
		return resp{}, err
	}
	return resp{Status: r.StatusCode, Header: r.Header, Body: []byte(r.Body)}, nil
}

// must sends a request as admin and fails unless the status is want.
func (a *app) must(want int, method, path, version string, body any) resp {
	a.t.Helper()
	r := a.call(method, path, version, a.Admin, body)
	if r.Status != want {
		a.t.Fatalf("%s %s [%s]: status %d, want %d\n%s", method, path, version, r.Status, want, r.Body)
	}
	return r
}

// names lists the provider names of a GET /resource_providers answer, sorted.
func names(t testing.TB, r resp) []string {
	t.Helper()
	var body struct {
		Providers []struct {
			Name string `json:"name"`
		} `json:"resource_providers"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("bad list body: %v\n%s", err, r.Body)
	}
	out := []string{}
	for _, p := range body.Providers {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// The fixture of the recorded exchanges with Placement 8.0.0
// (peers/placement_probe.txt): root1 in A {child1 {gchild1}},
// root2 in B {child2 in C}; D is on nobody.
const (
	root1  = "11111111-1111-4111-8111-111111111111"
	root2  = "22222222-2222-4222-8222-222222222222"
	child1 = "33333333-3333-4333-8333-333333333333"
	gchild = "44444444-4444-4444-8444-444444444444"
	child2 = "55555555-5555-4555-8555-555555555555"
	aggA   = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	aggB   = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	aggC   = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
	aggD   = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
)

// loadProbeFixture builds the probe's providers and aggregates through the
// API itself, as the probe did against Placement.
func (a *app) loadProbeFixture() {
	a.t.Helper()
	for _, p := range []struct{ name, uuid, parent string }{
		{"root1", root1, ""}, {"root2", root2, ""},
		{"child1", child1, root1}, {"gchild1", gchild, child1}, {"child2", child2, root2},
	} {
		body := map[string]any{"name": p.name, "uuid": p.uuid}
		if p.parent != "" {
			body["parent_provider_uuid"] = p.parent
		}
		a.must(http.StatusOK, "POST", "/resource_providers", "1.39", body)
	}
	for _, m := range []struct{ rp, agg string }{{root1, aggA}, {root2, aggB}, {child2, aggC}} {
		a.must(http.StatusOK, "PUT", "/resource_providers/"+m.rp+"/aggregates", "1.39",
			map[string]any{"aggregates": []string{m.agg}, "resource_provider_generation": 0})
	}
}

func openSQLite(t testing.TB) *store.Store { return storetest.Open(t) }
