package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/account"
	"corral/models"
	"corral/models/store"
	"corral/web"
)

func TestLoginShowsDashboard(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	login(c, "alice")
	r := c.Get("/")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET / after login: status %d", r.StatusCode)
	}
	if got := r.Text(t, "current-user"); got != "alice" {
		t.Errorf("current-user = %q, want alice", got)
	}
	if got := r.Text(t, "current-role"); got != "admin" {
		t.Errorf("current-role = %q, want admin", got)
	}
	if !r.Has(t, "page-dashboard") || !r.Has(t, "count-aggregates") {
		t.Errorf("dashboard not shown:\n%s", r.Body)
	}
	if n := r.Doc(t).Find(`[data-testid="recent-row"]`).Length(); n != 3 {
		t.Errorf("recent changes: %d rows, want the 3 user creations", n)
	}
	if href, _ := r.Doc(t).Find(`[data-testid="dashboard-query"]`).Attr("href"); href != "/query" {
		t.Errorf("dashboard links the query page at %q, want /query", href)
	}
}

func TestLoginRedirectsBackToNext(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	r := c.Get("/audit?actor=alice")
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("anonymous GET /audit: status %d, want 303", r.StatusCode)
	}
	loc := r.Header.Get("Location")
	if !strings.HasPrefix(loc, "/login?next=") {
		t.Fatalf("redirected to %q, want /login?next=…", loc)
	}
	next, _ := url.ParseQuery(strings.TrimPrefix(loc, "/login?"))
	r = c.Submit(loc, "/login", url.Values{"name": {"alice"}, "password": {testPassword}, "next": {next.Get("next")}})
	if got := r.Header.Get("Location"); got != "/audit?actor=alice" {
		t.Errorf("after login redirected to %q, want /audit?actor=alice", got)
	}
}

func TestLoginRefusesOpenRedirect(t *testing.T) {
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"} {
		if got := handlers.SafeNext(next); got != "/" {
			t.Errorf("SafeNext(%q) = %q, want /", next, got)
		}
	}
	if got := handlers.SafeNext("/tokens?x=1"); got != "/tokens?x=1" {
		t.Errorf("SafeNext kept %q, want /tokens?x=1", got)
	}
}

func TestWrongPasswordRefused(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	r := c.Submit("/login", "/login", url.Values{"name": {"alice"}, "password": {"not the password"}})
	if r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", r.StatusCode)
	}
	if msg := r.Text(t, "form-error"); !strings.Contains(msg, "Wrong user name or password") {
		t.Errorf("form-error = %q", msg)
	}
	if v, _ := r.Doc(t).Find(`input[name="name"]`).Attr("value"); v != "alice" {
		t.Errorf("the form forgot the user name: %q", v)
	}
	if r := c.Get("/"); r.StatusCode != http.StatusSeeOther {
		t.Errorf("GET / after a refused login: status %d, want 303 to /login", r.StatusCode)
	}
	// An unknown user gets the same answer.
	r = c.Submit("/login", "/login", url.Values{"name": {"nobody"}, "password": {testPassword}})
	if r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.Text(t, "form-error"), "Wrong user name or password") {
		t.Errorf("unknown user: status %d, error %q", r.StatusCode, r.Text(t, "form-error"))
	}
}

func TestCSRF(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	// Signing in needs the token too (no login CSRF).
	if r := c.Post("/login", url.Values{"name": {"alice"}, "password": {testPassword}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("login without CSRF token: status %d, want 403", r.StatusCode)
	}
	login(c, "alice")
	cases := []struct {
		name   string
		form   url.Values
		header []string
		want   int
	}{
		{"missing token", url.Values{"name": {"x"}}, nil, http.StatusForbidden},
		{"wrong token", url.Values{"name": {"x"}, "_csrf": {"forged"}}, nil, http.StatusForbidden},
		{"wrong header", url.Values{"name": {"x"}}, []string{"X-CSRF-Token", "forged"}, http.StatusForbidden},
		{"cross-site browser request", url.Values{"name": {"x"}}, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"same-origin browser request", url.Values{"name": {"same-origin"}}, []string{"Sec-Fetch-Site", "same-origin"}, http.StatusCreated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Post("/tokens", tc.form, tc.header...)
			if r.StatusCode != tc.want {
				t.Fatalf("POST /tokens: status %d, want %d\n%s", r.StatusCode, tc.want, r.Body)
			}
		})
	}
	// The right token in the header (as htmx sends it) passes.
	tok := c.CSRF("/tokens")
	r := c.Post("/tokens", url.Values{"name": {"via-header"}}, "X-CSRF-Token", tok)
	if r.StatusCode != http.StatusCreated {
		t.Errorf("POST /tokens with X-CSRF-Token: status %d, want 201", r.StatusCode)
	}
	toks, err := a.Store.ListTokens(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tk := range toks {
		names = append(names, tk.Name)
	}
	if len(toks) != 2 {
		t.Errorf("tokens created: %v; want only same-origin and via-header", names)
	}
}

func TestSessionExpires(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	login(c, "alice")
	a.Clock.Advance(handlers.DefaultSessionTTL - time.Minute)
	if r := c.Get("/"); r.StatusCode != http.StatusOK {
		t.Fatalf("within the TTL: status %d, want 200", r.StatusCode)
	}
	a.Clock.Advance(2 * time.Minute)
	r := c.Get("/tokens")
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/login") {
		t.Fatalf("after the TTL: status %d to %q, want 303 to /login", r.StatusCode, r.Header.Get("Location"))
	}
	r = c.Get(r.Header.Get("Location"))
	if msg := r.Text(t, "flash-warning"); !strings.Contains(msg, "expired") {
		t.Errorf("login page after expiry: flash %q, want a note that the session expired", msg)
	}
	// The expired session stays dead even though the cookie is still sent.
	if r := c.Get("/"); r.StatusCode != http.StatusSeeOther {
		t.Errorf("second request after the TTL: status %d, want 303", r.StatusCode)
	}
}

func TestLoginStartsNewSession(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	// A pre-login session (here: one carrying a flash) must not be reused.
	c.Submit("/login", "/login", url.Values{"name": {"alice"}, "password": {"wrong-password"}})
	c.Submit("/login", "/logout", nil)
	before := c.Cookie(handlers.SessionCookie)
	if before == nil {
		t.Fatal("no pre-login session cookie to compare with")
	}
	login(c, "alice")
	after := c.Cookie(handlers.SessionCookie)
	if after == nil || after.Value == before.Value {
		t.Fatal("login kept the pre-login session cookie")
	}
	// The old cookie gives no access.
	other := a.Client(t)
	u, _ := url.Parse(a.URL)
	other.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: handlers.SessionCookie, Value: before.Value}})
	if r := other.Get("/"); r.StatusCode != http.StatusSeeOther {
		t.Errorf("pre-login cookie: status %d, want 303", r.StatusCode)
	}
}

func TestLogout(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	login(c, "mike")
	r := c.Submit("/", "/logout", nil)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/login" {
		t.Fatalf("logout: status %d to %q", r.StatusCode, r.Header.Get("Location"))
	}
	if r := c.Get("/"); r.StatusCode != http.StatusSeeOther {
		t.Errorf("GET / after logout: status %d, want 303", r.StatusCode)
	}
	if r := c.Get("/login"); !strings.Contains(r.Text(t, "flash-success"), "signed out") {
		t.Errorf("login page after logout: flash %q", r.Text(t, "flash-success"))
	}
}

func TestSessionCookieAttributes(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	form := url.Values{"name": {"alice"}, "password": {testPassword}, "_csrf": {c.CSRF("/login")}}
	r := c.Post("/login", form)
	ck := r.SetCookie(handlers.SessionCookie)
	if ck == nil {
		t.Fatal("no session cookie set on login")
	}
	if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure || ck.Path != "/" {
		t.Errorf("plain HTTP cookie: HttpOnly=%v SameSite=%v Secure=%v Path=%q; want true, Lax, false, /", ck.HttpOnly, ck.SameSite, ck.Secure, ck.Path)
	}
	if ck.MaxAge != int(handlers.DefaultSessionTTL/time.Second) {
		t.Errorf("MaxAge = %d, want %d", ck.MaxAge, int(handlers.DefaultSessionTTL/time.Second))
	}
	// Behind a TLS-terminating proxy the cookie is Secure.
	c2 := a.Client(t)
	form.Set("_csrf", c2.CSRF("/login"))
	r = c2.Post("/login", form, "X-Forwarded-Proto", "https")
	if ck := r.SetCookie(handlers.SessionCookie); ck == nil || !ck.Secure {
		t.Errorf("over https: session cookie %+v, want Secure", ck)
	}
}

func TestRevokedTokenRefused(t *testing.T) {
	a := newApp(t)
	ctx := context.Background()
	plain, tok, err := a.Store.CreateToken(ctx, store.Actor{Name: "test", Via: "cli"}, "mike", "ci")
	if err != nil {
		t.Fatal(err)
	}
	api := a.Client(t)
	r := api.Get("/api/whoami", "X-Auth-Token", plain)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("valid token: status %d\n%s", r.StatusCode, r.Body)
	}
	var who account.WhoAmIResponse
	if err := json.Unmarshal([]byte(r.Body), &who); err != nil || who.Name != "mike" || who.ProjectID != "tA" || who.Via != "api" {
		t.Fatalf("whoami = %+v (%v), want mike in tA via api", who, err)
	}
	if ck := r.SetCookie(handlers.SessionCookie); ck != nil {
		t.Errorf("a token request got a session cookie")
	}
	// A token-authenticated write needs no CSRF token.
	if r := api.Post("/api/whoami", nil, "X-Auth-Token", plain); r.StatusCode == http.StatusForbidden {
		t.Errorf("token-authenticated POST was refused by CSRF: %s", r.Body)
	}

	// mike revokes it in the console, confirming on the no-JavaScript page.
	c := a.Client(t)
	login(c, "mike")
	path := "/tokens/" + strconv.FormatInt(tok.ID, 10) + "/revoke"
	confirm := c.Get(path)
	if confirm.StatusCode != http.StatusOK || !confirm.Has(t, "confirm-submit") {
		t.Fatalf("confirmation page: status %d", confirm.StatusCode)
	}
	r = c.Submit(path, path, nil)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: status %d\n%s", r.StatusCode, r.Body)
	}
	if got := c.Get("/tokens").Text(t, "token-status"); !strings.Contains(got, "revoked") {
		t.Errorf("token status after revoke = %q", got)
	}

	r = api.Get("/api/whoami", "X-Auth-Token", plain)
	if r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("revoked token: status %d, want 401", r.StatusCode)
	}
	var body struct {
		Error struct {
			Status int    `json:"status"`
			Kind   string `json:"kind"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.Body), &body); err != nil || body.Error.Status != 401 || body.Error.Kind != "unauthorized" {
		t.Errorf("revoked token body = %s", r.Body)
	}
	if r := api.Get("/api/whoami"); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("no credentials: status %d, want 401", r.StatusCode)
	}
}

func TestTokenOfAnotherUserIsNotFound(t *testing.T) {
	a := newApp(t)
	_, tok, err := a.Store.CreateToken(context.Background(), store.Actor{Name: "test"}, "alice", "admin-token")
	if err != nil {
		t.Fatal(err)
	}
	c := a.Client(t)
	login(c, "mike")
	path := "/tokens/" + strconv.FormatInt(tok.ID, 10) + "/revoke"
	if r := c.Get(path); r.StatusCode != http.StatusNotFound {
		t.Errorf("confirm another user's token: status %d, want 404", r.StatusCode)
	}
	form := url.Values{"_csrf": {c.CSRF("/tokens")}}
	if r := c.Post(path, form); r.StatusCode != http.StatusNotFound {
		t.Errorf("revoke another user's token: status %d, want 404", r.StatusCode)
	}
}

func TestCreateTokenShowsItOnce(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	login(c, "rita")
	r := c.Submit("/tokens", "/tokens", url.Values{"name": {"laptop"}})
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("create: status %d", r.StatusCode)
	}
	plain := r.Text(t, "new-token-value")
	u, _, err := a.Store.UserByToken(context.Background(), plain)
	if err != nil || u.Name != "rita" {
		t.Fatalf("the token shown (%q) does not authenticate rita: %v", plain, err)
	}
	again := c.Get("/tokens")
	if again.Has(t, "new-token") || strings.Contains(again.Body, plain) {
		t.Error("the plain token is shown again")
	}
	if got := again.Text(t, "token-name"); got != "laptop" {
		t.Errorf("token list shows %q", got)
	}
	// An empty name is refused next to the field.
	r = c.Submit("/tokens", "/tokens", url.Values{"name": {"  "}})
	if r.StatusCode != http.StatusBadRequest || r.Text(t, "error-name") == "" {
		t.Errorf("empty name: status %d, error %q", r.StatusCode, r.Text(t, "error-name"))
	}
}

func TestHTMXRevokeRedirects(t *testing.T) {
	a := newApp(t)
	_, tok, err := a.Store.CreateToken(context.Background(), store.Actor{Name: "test"}, "mike", "x")
	if err != nil {
		t.Fatal(err)
	}
	c := a.Client(t)
	login(c, "mike")
	csrf := c.CSRF("/tokens")
	r := c.Post("/tokens/"+strconv.FormatInt(tok.ID, 10)+"/revoke", nil, "HX-Request", "true", "X-CSRF-Token", csrf)
	if r.StatusCode != http.StatusOK || r.Header.Get("HX-Redirect") != "/tokens" {
		t.Fatalf("htmx revoke: status %d, HX-Redirect %q", r.StatusCode, r.Header.Get("HX-Redirect"))
	}
	if got := c.Get("/tokens").Text(t, "flash-success"); !strings.Contains(got, "revoked") {
		t.Errorf("flash after htmx revoke = %q", got)
	}
}

func TestRoles(t *testing.T) {
	a := newApp(t)
	reader := a.Client(t)
	login(reader, "rita")
	if r := reader.Get("/users"); r.StatusCode != http.StatusForbidden {
		t.Errorf("reader GET /users: status %d, want 403", r.StatusCode)
	} else if !r.Has(t, "error-page") {
		t.Errorf("reader GET /users: no error page")
	}
	form := url.Values{"name": {"mallory"}, "password": {"password123"}, "role": {"admin"}, "_csrf": {reader.CSRF("/")}}
	if r := reader.Post("/users", form); r.StatusCode != http.StatusForbidden {
		t.Errorf("reader POST /users: status %d, want 403", r.StatusCode)
	}
	if _, err := a.Store.UserByName(context.Background(), "mallory"); models.KindOf(err) != models.NotFound {
		t.Errorf("the reader created a user (err %v)", err)
	}
	if home := reader.Get("/"); home.Has(t, "nav-users") || home.Has(t, "nav-world") {
		t.Error("the reader sees the Users or World link")
	} else if !home.Has(t, "nav-quotas") {
		t.Error("the reader does not see the Quotas link")
	}
	member := a.Client(t)
	login(member, "mike")
	if r := member.Get("/users"); r.StatusCode != http.StatusForbidden {
		t.Errorf("member GET /users: status %d, want 403", r.StatusCode)
	}

	admin := a.Client(t)
	login(admin, "alice")
	if home := admin.Get("/"); !home.Has(t, "nav-users") || !home.Has(t, "nav-world") {
		t.Error("the admin does not see the Users and World links")
	}
	r := admin.Get("/users")
	if r.StatusCode != http.StatusOK || r.Doc(t).Find(`[data-testid="user-row"]`).Length() != 3 {
		t.Fatalf("admin GET /users: status %d, rows %d", r.StatusCode, r.Doc(t).Find(`[data-testid="user-row"]`).Length())
	}
	r = admin.Submit("/users", "/users", url.Values{"name": {"nora"}, "password": {"short"}, "role": {"member"}, "project": {"tC"}})
	if r.StatusCode != http.StatusBadRequest || r.Text(t, "error-password") == "" {
		t.Errorf("short password: status %d, field error %q", r.StatusCode, r.Text(t, "error-password"))
	}
	if v, _ := r.Doc(t).Find(`input[name="project"]`).Attr("value"); v != "tC" {
		t.Errorf("the refused form lost the project: %q", v)
	}
	r = admin.Submit("/users", "/users", url.Values{"name": {"alice"}, "password": {"long enough"}, "role": {"member"}})
	if r.StatusCode != http.StatusConflict {
		t.Errorf("duplicate name: status %d, want 409", r.StatusCode)
	}
	r = admin.Submit("/users", "/users", url.Values{"name": {"nora"}, "password": {"long enough"}, "role": {"member"}, "project": {"tC"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("create nora: status %d\n%s", r.StatusCode, r.Body)
	}
	u, err := a.Store.UserByName(context.Background(), "nora")
	if err != nil || u.Role != models.RoleMember || u.ProjectID != "tC" {
		t.Fatalf("nora = %+v, %v", u, err)
	}
	if got := admin.Get("/users").Text(t, "flash-success"); !strings.Contains(got, "nora") {
		t.Errorf("flash = %q", got)
	}
}

func TestAuditPage(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	login(c, "alice")
	c.Submit("/tokens", "/tokens", url.Values{"name": {"audited"}})

	r := c.Get("/audit?actor=alice")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("status %d", r.StatusCode)
	}
	rows := r.Doc(t).Find(`[data-testid="audit-row"]`)
	if rows.Length() != 1 {
		t.Fatalf("alice's events: %d rows, want 1 (the token)\n%s", rows.Length(), r.Body)
	}
	if got := strings.TrimSpace(rows.Find(`[data-testid="audit-object"]`).Text()); !strings.Contains(got, "token") || !strings.Contains(got, "audited") {
		t.Errorf("object cell = %q", got)
	}
	if rows.Find(`[data-testid="audit-diff-row"]`).Length() == 0 {
		t.Error("no before → after shown")
	}

	// Filter by object type; the three users of newApp plus none else.
	r = c.Get("/audit?object_type=user")
	if n := r.Doc(t).Find(`[data-testid="audit-row"]`).Length(); n != 3 {
		t.Errorf("object_type=user: %d rows, want 3", n)
	}
	// Paging: two per page over the four events.
	r = c.Get("/audit?limit=2")
	if n := r.Doc(t).Find(`[data-testid="audit-row"]`).Length(); n != 2 {
		t.Errorf("limit=2: %d rows", n)
	}
	if got := r.Text(t, "pager-range"); got != "1–2 of 4" {
		t.Errorf("pager range = %q, want 1–2 of 4", got)
	}
	next, _ := r.Doc(t).Find(`[data-testid="pager-next"]`).Attr("href")
	r = c.Get(next)
	if got := r.Text(t, "pager-range"); got != "3–4 of 4" || r.Has(t, "pager-next") {
		t.Errorf("second page: range %q, next link %v", got, r.Has(t, "pager-next"))
	}
	// A time range in the future matches nothing; a bad time is a field error.
	future := time.Now().Add(48 * time.Hour).UTC().Format("2006-01-02T15:04")
	if r := c.Get("/audit?since=" + future); !r.Has(t, "audit-empty") {
		t.Error("since a future time: rows shown")
	}
	r = c.Get("/audit?since=yesterday")
	if r.StatusCode != http.StatusBadRequest || r.Text(t, "error-since") == "" {
		t.Errorf("bad since: status %d, error %q", r.StatusCode, r.Text(t, "error-since"))
	}
}

func TestSecurityHeaders(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	want := map[string]string{
		"X-Frame-Options":        "DENY",
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "same-origin",
	}
	for _, path := range []string{"/login", "/", "/static/css/corral.css", "/no-such-page"} {
		r := c.Get(path)
		for h, v := range want {
			if got := r.Header.Get(h); got != v {
				t.Errorf("%s: %s = %q, want %q", path, h, got, v)
			}
		}
		csp := r.Header.Get("Content-Security-Policy")
		for _, part := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, part) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, part)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP allows unsafe sources: %q", path, csp)
		}
		if r.Header.Get(echo.HeaderXRequestID) == "" {
			t.Errorf("%s: no request id", path)
		}
	}
	// The OpenStack APIs answer JSON, never a document: no sniffing, no
	// framing, and none of the page-only headers.
	tok := a.NewToken(t, "alice")
	for _, path := range []string{"/placement/", "/placement/resource_providers", "/compute/v2.1/os-aggregates"} {
		r := c.Get(path, "X-Auth-Token", tok)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", path, r.StatusCode)
		}
		want := map[string]string{"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "frame-ancestors 'none'",
			"X-Frame-Options": "", "Referrer-Policy": "", "Cross-Origin-Opener-Policy": ""}
		for h, v := range want {
			if got := r.Header.Get(h); got != v {
				t.Errorf("%s: %s = %q, want %q", path, h, got, v)
			}
		}
		// Placement's request id is its own, as Placement sends it.
		placementID := r.Header.Get("X-Openstack-Request-Id")
		if strings.HasPrefix(path, "/placement") != (placementID != "" && r.Header.Get(echo.HeaderXRequestID) == "") {
			t.Errorf("%s: X-Openstack-Request-Id %q, X-Request-Id %q", path, placementID, r.Header.Get(echo.HeaderXRequestID))
		}
	}

	// The page references only same-origin assets, which exist.
	r := c.Get("/login")
	for _, sel := range []string{`link[rel="stylesheet"]`, `script[src]`} {
		r.Doc(t).Find(sel).Each(func(_ int, s *goquery.Selection) {
			src, _ := s.Attr("href")
			if src == "" {
				src, _ = s.Attr("src")
			}
			if !strings.HasPrefix(src, "/static/") {
				t.Errorf("asset %q is not served from /static/", src)
			}
			if r := c.Get(src); r.StatusCode != http.StatusOK {
				t.Errorf("asset %s: status %d", src, r.StatusCode)
			}
		})
	}
	if r.Doc(t).Find("script:not([src]), style, [style]").Length() > 0 {
		t.Error("inline script or style in the page; the CSP would block it")
	}
}

func TestErrorTable(t *testing.T) {
	a := newApp(t)
	kinds := []struct {
		kind   models.Kind
		status int
		name   string
	}{
		{models.Invalid, 400, "invalid"},
		{models.Unauthorized, 401, "unauthorized"},
		{models.Forbidden, 403, "forbidden"},
		{models.OverQuota, 403, "over_quota"},
		{models.NotFound, 404, "not_found"},
		{models.NotAcceptable, 406, "not_acceptable"},
		{models.Conflict, 409, "conflict"},
		{models.Internal, 500, "internal"},
	}
	fail := func(c echo.Context) error {
		k, _ := strconv.Atoi(c.Param("kind"))
		if models.Kind(k) == models.Internal {
			return context.DeadlineExceeded // a plain error is Internal
		}
		return models.E(models.Kind(k), "thing", "the thing is %s", models.Kind(k))
	}
	a.Echo.GET("/api/fail/:kind", fail, handlers.RequireLogin)
	a.Echo.GET("/fail/:kind", fail, handlers.RequireLogin)
	a.Echo.GET("/compute/fail/:kind", fail)
	a.Env.RenderErrorsUnder("/compute", func(c echo.Context, status int, err error) error {
		return c.JSON(status, map[string]any{"computeFault": map[string]any{"code": status, "message": err.Error()}})
	})

	plain, _, err := a.Store.CreateToken(context.Background(), store.Actor{Name: "test"}, "alice", "t")
	if err != nil {
		t.Fatal(err)
	}
	browser := a.Client(t)
	login(browser, "alice")
	api := a.Client(t)
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			n := strconv.Itoa(int(k.kind))
			if got := handlers.StatusOf(models.E(k.kind, "", "x")); got != k.status {
				t.Errorf("StatusOf(%s) = %d, want %d", k.kind, got, k.status)
			}
			// JSON for /api.
			r := api.Get("/api/fail/"+n, "X-Auth-Token", plain)
			var body struct {
				Error struct {
					Status  int    `json:"status"`
					Kind    string `json:"kind"`
					Field   string `json:"field"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
				t.Fatalf("/api body is not JSON: %v\n%s", err, r.Body)
			}
			if r.StatusCode != k.status || body.Error.Status != k.status || body.Error.Kind != k.name {
				t.Errorf("/api: status %d, body %+v; want %d %s", r.StatusCode, body.Error, k.status, k.name)
			}
			if k.status == 500 {
				if strings.Contains(r.Body, "deadline") {
					t.Errorf("an internal error's cause leaked: %s", r.Body)
				}
			} else if body.Error.Field != "thing" || !strings.Contains(body.Error.Message, "the thing is") {
				t.Errorf("/api: field %q message %q", body.Error.Field, body.Error.Message)
			}
			// A page for the console.
			r = browser.Get("/fail/" + n)
			if r.StatusCode != k.status || r.Text(t, "error-status") != strconv.Itoa(k.status) {
				t.Errorf("console: status %d, page shows %q; want %d", r.StatusCode, r.Text(t, "error-status"), k.status)
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Errorf("console: Content-Type %q", ct)
			}
			// A fragment for htmx.
			r = browser.Get("/fail/"+n, "HX-Request", "true")
			if r.StatusCode != k.status || !r.Has(t, "error-fragment") || r.Has(t, "nav") {
				t.Errorf("htmx: status %d, fragment %v, whole page %v", r.StatusCode, r.Has(t, "error-fragment"), r.Has(t, "nav"))
			}
			// The prefix's own renderer for /compute.
			r = api.Get("/compute/fail/"+n, "X-Auth-Token", plain)
			if r.StatusCode != k.status || !strings.Contains(r.Body, `"computeFault"`) {
				t.Errorf("/compute: status %d body %s", r.StatusCode, r.Body)
			}
		})
	}
	// Echo's own errors keep their status.
	if r := browser.Get("/no-such-page"); r.StatusCode != http.StatusNotFound || !r.Has(t, "error-page") {
		t.Errorf("unknown page: status %d", r.StatusCode)
	}
	if r := api.Get("/api/no-such-thing", "X-Auth-Token", plain); r.StatusCode != http.StatusNotFound || !strings.Contains(r.Body, `"not_found"`) {
		t.Errorf("unknown API path: status %d body %s", r.StatusCode, r.Body)
	}
}

func TestPanicIsAnInternalError(t *testing.T) {
	a := newApp(t)
	a.Echo.GET("/api/panic", func(echo.Context) error { panic("boom") }, handlers.RequireLogin)
	plain, _, err := a.Store.CreateToken(context.Background(), store.Actor{Name: "test"}, "alice", "t")
	if err != nil {
		t.Fatal(err)
	}
	c := a.Client(t)
	r := c.Get("/api/panic", "X-Auth-Token", plain)
	if r.StatusCode != http.StatusInternalServerError || strings.Contains(r.Body, "boom") {
		t.Errorf("panic: status %d body %s; want 500 without the panic value", r.StatusCode, r.Body)
	}
	if r := c.Get("/login"); r.StatusCode != http.StatusOK {
		t.Errorf("after a panic the app answers %d", r.StatusCode)
	}
}

func TestLoginRateLimit(t *testing.T) {
	// Three attempts at once, then one per thousand seconds: the fourth
	// attempt is refused however slow the machine is.
	a := newAppWith(t, web.Config{LoginRate: 0.001, LoginBurst: 3})
	c := a.Client(t)
	tok := c.CSRF("/login")
	for i := 0; i < 5; i++ {
		// A forged X-Forwarded-For must not buy a fresh allowance.
		r := c.Post("/login", url.Values{"name": {"alice"}, "password": {"guess"}, "_csrf": {tok}},
			"X-Forwarded-For", "10.0.0."+strconv.Itoa(i))
		want := http.StatusUnauthorized
		if i >= 3 {
			want = http.StatusTooManyRequests
		}
		if r.StatusCode != want {
			t.Errorf("attempt %d: status %d, want %d", i+1, r.StatusCode, want)
		}
	}
	// The limit is on attempts, not on the right password either.
	r := c.Post("/login", url.Values{"name": {"alice"}, "password": {testPassword}, "_csrf": {tok}})
	if r.StatusCode != http.StatusTooManyRequests {
		t.Errorf("sign-in with the right password while limited: status %d, want 429", r.StatusCode)
	}
}

// lockedBuffer collects log output written by the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A failed request's log line says which operation failed (op: field:
// message: cause); the client sees none of it.
func TestInternalErrorsAreLoggedWithTheirOp(t *testing.T) {
	a := newApp(t)
	var logged lockedBuffer
	a.Env.Log = slog.New(slog.NewTextHandler(&logged, nil))
	a.Echo.GET("/api/broken", func(echo.Context) error {
		return models.Wrap("store.ListThings", errors.New("disk on fire"))
	}, handlers.RequireLogin)
	c := a.Client(t)
	r := c.Get("/api/broken", "X-Auth-Token", a.NewToken(t, "alice"))
	if r.StatusCode != http.StatusInternalServerError || strings.Contains(r.Body, "fire") || strings.Contains(r.Body, "ListThings") {
		t.Errorf("status %d body %s; want 500 without the cause", r.StatusCode, r.Body)
	}
	if !strings.Contains(logged.String(), `err="store.ListThings: disk on fire"`) {
		t.Errorf("log %q does not name the operation", logged.String())
	}
}

// Browsers ask for /favicon.ico on every page, signed in or not.
func TestFavicon(t *testing.T) {
	a := newApp(t)
	r := a.Client(t).Get("/favicon.ico")
	if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(r.Body, "<svg") {
		t.Errorf("GET /favicon.ico: %d %q", r.StatusCode, r.Header.Get("Content-Type"))
	}
}
