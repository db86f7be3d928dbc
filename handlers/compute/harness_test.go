package compute_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
	"corral/web/webtest"
)

// server is the real corral application on a real store, reached over HTTP.
type server struct {
	t      testing.TB
	URL    string
	Store  *store.Store
	app    *webtest.App
	tokens map[string]string // user name → API token
}

// Users every test starts with: name → role, project.
var testUsers = []struct {
	name    string
	role    models.Role
	project string
}{
	{"admin", models.RoleAdmin, "admin"},
	{"alice", models.RoleMember, "p1"},
	{"rita", models.RoleReader, "p1"},
	{"bob", models.RoleMember, "p2"},
	{"olga", models.RoleMember, "0a1b2c3d4e5f"}, // a Keystone-style (hex) project id
}

func newServer(t testing.TB, st *store.Store) *server {
	t.Helper()
	if st == nil {
		st = storetest.Open(t)
	}
	opts := webtest.Options{Store: st, Tokens: true}
	for _, u := range testUsers {
		opts.Users = append(opts.Users, webtest.User{Name: u.name, Role: u.role, Project: u.project, Password: "password-" + u.name})
	}
	app := webtest.StartWith(t, opts)
	return &server{t: t, URL: app.URL, Store: st, app: app, tokens: app.Tokens}
}

type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value for comparisons.
func (r response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.Body, err)
	}
	return v
}

// req sends one request. user "" sends no token; version "" no header.
func (s *server) req(method, path, user, version, body string, extra ...string) response {
	s.t.Helper()
	var hdr []string
	if user != "" {
		tok, ok := s.tokens[user]
		if !ok {
			tok = user // a raw (bad) token
		}
		hdr = append(hdr, "X-Auth-Token", tok)
	}
	if version != "" {
		hdr = append(hdr, "OpenStack-API-Version", "compute "+version)
	}
	var payload any
	if body != "" {
		payload = body
	}
	r := s.app.Client(s.t).JSON(method, path, payload, append(hdr, extra...)...)
	return response{Status: r.StatusCode, Header: r.Header, Body: []byte(r.Body)}
}

// must asserts the status and returns the response.
func must(t *testing.T, r response, status int) response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	return r
}

// fault asserts a Nova fault body.
func fault(t *testing.T, r response, status int, name, msg string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	var body map[string]struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("fault body %q: %v", r.Body, err)
	}
	f, ok := body[name]
	if !ok || len(body) != 1 {
		t.Fatalf("fault body %s, want key %q", r.Body, name)
	}
	if f.Code != status || (msg != "" && f.Message != msg) {
		t.Fatalf("fault %s: code %d message %q, want %d %q", name, f.Code, f.Message, status, msg)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=UTF-8" {
		t.Errorf("fault Content-Type %q", ct)
	}
}
