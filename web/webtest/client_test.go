package webtest

import (
	"net/http"
	"net/url"
	"testing"

	"corral/models"
)

// The client signs in with the form, keeps its session, sends forms with
// their CSRF token, and a token client is who its token says.
func TestClient(t *testing.T) {
	app := StartWith(t, Options{Tokens: true, Users: []User{
		{Name: "ada", Role: models.RoleAdmin},
		{Name: "rita", Role: models.RoleReader, Project: "p1", Password: "rita-password-1"},
	}})
	if r := app.Client(t).Login("rita", "wrong-password"); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong password: status %d, want 401", r.StatusCode)
	}
	c := app.SignIn(t, "rita")
	if r := c.Get("/"); r.StatusCode != http.StatusOK || !r.Has(t, "page-dashboard") {
		t.Fatalf("dashboard after signing in: status %d", r.StatusCode)
	}
	if r := c.Post("/tokens", url.Values{"name": {"no-csrf"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("a form without its CSRF token: status %d, want 403", r.StatusCode)
	}
	r := c.Submit("/tokens", "/tokens", url.Values{"name": {"ci"}})
	if r.StatusCode != http.StatusCreated || r.Text(t, "new-token") == "" {
		t.Errorf("creating a token: status %d, token %q", r.StatusCode, r.Text(t, "new-token"))
	}
	who := app.TokenClient(t, "ada").Get("/api/whoami").Object(t)
	if who["name"] != "ada" || who["role"] != "admin" || who["via"] != "api" {
		t.Errorf("whoami with ada's token: %v", who)
	}
	if ck := c.Cookie("corral_session"); ck == nil {
		t.Error("the signed-in client keeps no session cookie")
	}
}
