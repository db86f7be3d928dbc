package compute_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"corral/handlers"
	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
	"corral/web"
)

// server is the real corral application on a real store, reached over HTTP.
type server struct {
	t      testing.TB
	URL    string
	Store  *store.Store
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
	env := &handlers.Env{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := web.New(env, web.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(e)
	t.Cleanup(ts.Close)
	s := &server{t: t, URL: ts.URL, Store: st, tokens: map[string]string{}}
	ctx := context.Background()
	sys := store.Actor{Name: "test", Via: "cli"}
	for _, u := range testUsers {
		if _, err := st.CreateUser(ctx, sys, u.name, "password-"+u.name, u.role, u.project); err != nil {
			t.Fatal(err)
		}
		tok, _, err := st.CreateToken(ctx, sys, u.name, "test")
		if err != nil {
			t.Fatal(err)
		}
		s.tokens[u.name] = tok
	}
	return s
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
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	r, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if user != "" {
		tok, ok := s.tokens[user]
		if !ok {
			tok = user // a raw (bad) token
		}
		r.Header.Set("X-Auth-Token", tok)
	}
	if version != "" {
		r.Header.Set("OpenStack-API-Version", "compute "+version)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(extra); i += 2 {
		r.Header.Set(extra[i], extra[i+1])
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
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
