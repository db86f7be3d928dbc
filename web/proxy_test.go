package web_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"corral/models/store"
	"corral/web"
)

// TestTrustedProxiesLimitPerClient: behind a trusted proxy, the sign-in
// limit applies to each client named by X-Forwarded-For, so one client
// guessing passwords does not lock out another; without the setting the
// header is ignored and everyone shares the proxy's allowance.
func TestTrustedProxiesLimitPerClient(t *testing.T) {
	loopback, err := web.ParseTrustedProxies("127.0.0.0/8, ::1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		proxies []*net.IPNet
		second  int
	}{
		{"trusted", loopback, http.StatusUnauthorized},
		{"untrusted", nil, http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAppWith(t, web.Config{LoginRate: 0.001, LoginBurst: 2, TrustedProxies: tc.proxies})
			c := a.Client(t)
			tok := c.CSRF("/login")
			guess := func(client string) int {
				return c.Post("/login", url.Values{"name": {"alice"}, "password": {"guess"}, "_csrf": {tok}}, "X-Forwarded-For", client).StatusCode
			}
			for range 2 {
				guess("203.0.113.5")
			}
			if s := guess("203.0.113.5"); s != http.StatusTooManyRequests {
				t.Errorf("third guess from one client: status %d, want 429", s)
			}
			if s := guess("203.0.113.6"); s != tc.second {
				t.Errorf("another client behind the proxy: status %d, want %d", s, tc.second)
			}
		})
	}
	if _, err := web.ParseTrustedProxies("10.0.0.0/33"); err == nil {
		t.Error("a bad range was accepted")
	}
}

// TestPasswordResetAndSignOutRevokeTokens: an admin's password reset, a
// user's own password change and "sign out everywhere" revoke the user's
// API tokens.
func TestPasswordResetAndSignOutRevokeTokens(t *testing.T) {
	a := newApp(t)
	ctx := context.Background()
	mike, err := a.Store.UserByName(ctx, "mike")
	if err != nil {
		t.Fatal(err)
	}
	newToken := func() string {
		plain, _, err := a.Store.CreateToken(ctx, store.Actor{Name: "test", Via: "cli"}, "mike", "ci")
		if err != nil {
			t.Fatal(err)
		}
		return plain
	}
	works := func(plain string) bool {
		return a.Client(t).Get("/api/whoami", "X-Auth-Token", plain).StatusCode == http.StatusOK
	}
	admin := a.Client(t)
	login(admin, "alice")
	users := "/users/" + strconv.FormatInt(mike.ID, 10)

	tok := newToken()
	r := admin.Submit(users, users+"/password", url.Values{"password": {"a brand new secret"}, "confirm": {"a brand new secret"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("password reset: status %d", r.StatusCode)
	}
	if works(tok) {
		t.Error("a token survived an admin's password reset")
	}

	tok = newToken()
	r = admin.Submit(users+"/sessions/revoke", users+"/sessions/revoke", nil)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out everywhere: status %d", r.StatusCode)
	}
	if works(tok) {
		t.Error("a token survived signing out everywhere")
	}
}

// TestPlacementClientErrorsAreNotErrors: a Placement 4xx is logged at
// INFO (the request line), never at ERROR; a 5xx still is.
func TestPlacementClientErrorsAreNotErrors(t *testing.T) {
	var logs bytes.Buffer
	a := newApp(t)
	a.Env.Log = slog.New(slog.NewTextHandler(&logs, nil))
	plain, _, err := a.Store.CreateToken(context.Background(), store.Actor{Name: "test", Via: "cli"}, "alice", "ci")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/placement/resource_providers/00000000-0000-0000-0000-000000000000", "/placement/resource_providers?name=%00", "/placement/traits/NOPE"} {
		r := a.Client(t).Get(p, "X-Auth-Token", plain, "OpenStack-API-Version", "placement 1.39")
		if r.StatusCode < 400 || r.StatusCode >= 500 {
			t.Errorf("%s: status %d, want a 4xx", p, r.StatusCode)
		}
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a client error was logged as an error:\n%s", logs.String())
	}
}
