package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/securecookie"

	"corral/handlers"
	"corral/models"
	"corral/models/store"
)

// signedIn reports whether c's session gets it the dashboard; a browser
// without a valid session is sent to /login.
func signedIn(c *client) bool {
	c.T.Helper()
	r := c.Get("/")
	switch {
	case r.StatusCode == http.StatusOK:
		return true
	case r.StatusCode == http.StatusSeeOther && strings.HasPrefix(r.Header.Get("Location"), "/login"):
		return false
	}
	c.T.Fatalf("GET /: status %d to %q", r.StatusCode, r.Header.Get("Location"))
	return false
}

// copyOf is a second browser holding a copy of c's session cookie, as a
// thief would.
func copyOf(c *client) *client {
	c.T.Helper()
	ck := c.Cookie(handlers.SessionCookie)
	if ck == nil {
		c.T.Fatal("no session cookie to copy")
	}
	thief := c.App.Client(c.T)
	u, _ := url.Parse(c.App.URL)
	thief.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: handlers.SessionCookie, Value: ck.Value}})
	return thief
}

// sessionID decodes c's session cookie with the store's keys and returns
// the session id it carries.
func sessionID(c *client) string {
	c.T.Helper()
	keys, err := c.App.Store.SessionKeys(context.Background())
	if err != nil {
		c.T.Fatal(err)
	}
	ck := c.Cookie(handlers.SessionCookie)
	if ck == nil {
		c.T.Fatal("no session cookie")
	}
	values := map[any]any{}
	if err := securecookie.DecodeMulti(handlers.SessionCookie, ck.Value, &values, securecookie.CodecsFromPairs(keys...)...); err != nil {
		c.T.Fatalf("decode the session cookie: %v", err)
	}
	sid, _ := values["sid"].(string)
	if sid == "" {
		c.T.Fatalf("the session cookie carries no session id: %v", values)
	}
	return sid
}

func user(t testing.TB, a *testApp, name string) *models.User {
	t.Helper()
	u, err := a.Store.UserByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestCopiedCookieRefusedAfterSignOut(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	login(c, "mike")
	thief := copyOf(c)
	if !signedIn(thief) {
		t.Fatal("the copied cookie does not work even before signing out")
	}
	if r := c.Submit("/", "/logout", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: status %d", r.StatusCode)
	}
	if signedIn(thief) {
		t.Fatal("the copied cookie still works after signing out")
	}
	if r := thief.Get("/login"); !strings.Contains(r.Text(t, "flash-warning"), "signed out") {
		t.Errorf("the refused browser's login page: warning %q, want a note that it was signed out", r.Text(t, "flash-warning"))
	}
	if list, _ := a.Store.ListSessions(context.Background(), user(t, a, "mike").ID, a.Clock.Now()); len(list) != 0 {
		t.Errorf("%d session rows left after signing out", len(list))
	}
}

func TestSignInEndsThePreviousSession(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	login(c, "mike")
	thief := copyOf(c)
	// The sign-in page redirects a signed-in browser; post the form anyway.
	r := c.Submit("/", "/login", url.Values{"name": {"alice"}, "password": {testPassword}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("signing in again: status %d", r.StatusCode)
	}
	if signedIn(thief) {
		t.Error("a copy of the cookie from before signing in again still works")
	}
	if !signedIn(c) {
		t.Error("the new sign-in does not work")
	}
}

func TestSessionIDNotStoredInPlainText(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	login(c, "mike")
	sid := sessionID(c)
	list, err := a.Store.ListSessions(context.Background(), user(t, a, "mike").ID, a.Clock.Now())
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions = %+v, %v; want one", list, err)
	}
	sum := sha256.Sum256([]byte(sid))
	if list[0].Hash == sid || list[0].Hash != hex.EncodeToString(sum[:]) {
		t.Errorf("stored %q for session id %q; want its SHA-256 only", list[0].Hash, sid)
	}
	if len(sid) < 43 {
		t.Errorf("session id %q has under 256 bits", sid)
	}
}

// A change that ends a user's sessions refuses every browser of theirs,
// whoever made it and through which door; other users stay signed in.
func TestUserChangesRefuseOtherSessions(t *testing.T) {
	by := store.Actor{Name: "alice", Via: "console", Role: models.RoleAdmin}
	cases := []struct {
		name   string
		change func(a *testApp, u *models.User) error
	}{
		{"password change", func(a *testApp, u *models.User) error {
			return a.Store.SetPassword(context.Background(), by, u.Name, "a new password")
		}},
		{"role change", func(a *testApp, u *models.User) error {
			_, err := a.Store.UpdateUser(context.Background(), by, u.ID, func(u *models.User) error { u.Role = models.RoleReader; return nil })
			return err
		}},
		{"project change", func(a *testApp, u *models.User) error {
			_, err := a.Store.UpdateUser(context.Background(), by, u.ID, func(u *models.User) error { u.ProjectID = "tZ"; return nil })
			return err
		}},
		{"deletion", func(a *testApp, u *models.User) error {
			return a.Store.DeleteUser(context.Background(), by, u.ID)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newApp(t)
			laptop, phone, other := a.Client(t), a.Client(t), a.Client(t)
			login(laptop, "mike")
			login(phone, "mike")
			login(other, "rita")
			if err := tc.change(a, user(t, a, "mike")); err != nil {
				t.Fatal(err)
			}
			if signedIn(laptop) || signedIn(phone) {
				t.Errorf("a session of mike's survived the %s", tc.name)
			}
			if !signedIn(other) {
				t.Errorf("rita was signed out by a %s of mike's", tc.name)
			}
		})
	}
}

func TestSignOutOtherSessionsKeepsThisOne(t *testing.T) {
	a := newApp(t)
	here, there := a.Client(t), a.Client(t)
	login(there, "mike")
	login(here, "mike")
	elsewhere := a.Client(t)
	login(elsewhere, "alice")

	r := here.Get("/tokens")
	rows := r.Doc(t).Find(`[data-testid="session-row"]`)
	if rows.Length() != 2 || r.Doc(t).Find(`[data-testid="session-current"]`).Length() != 1 {
		t.Fatalf("tokens page: %d session rows, %d marked current; want 2 and 1", rows.Length(), r.Doc(t).Find(`[data-testid="session-current"]`).Length())
	}
	if ip := r.Text(t, "session-ip"); !strings.Contains(ip, "127.0.0.1") {
		t.Errorf("session address %q, want the loopback address", ip)
	}
	// The current session has no button of its own; the other one does.
	if n := r.Doc(t).Find(`[data-testid="session-revoke"]`).Length(); n != 1 {
		t.Errorf("%d per-session sign-out buttons, want 1 (not on this session)", n)
	}

	r = here.Submit("/tokens", "/sessions/revoke-others", nil)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out others: status %d\n%s", r.StatusCode, r.Body)
	}
	if !signedIn(here) {
		t.Fatal("signing out the other sessions ended this one")
	}
	if signedIn(there) {
		t.Error("the other session survived")
	}
	if !signedIn(elsewhere) {
		t.Error("another user's session ended")
	}
	r = here.Get("/tokens")
	if n := r.Doc(t).Find(`[data-testid="session-row"]`).Length(); n != 1 {
		t.Errorf("%d session rows after signing out the others, want 1", n)
	}
	if r.Has(t, "sessions-revoke-others") {
		t.Error("the sign-out-others button shows with no other session")
	}
}

func TestSignOutOneSession(t *testing.T) {
	a := newApp(t)
	here, there := a.Client(t), a.Client(t)
	login(there, "mike")
	login(here, "mike")
	mine, err := a.Store.ListSessions(context.Background(), user(t, a, "mike").ID, a.Clock.Now())
	if err != nil || len(mine) != 2 {
		t.Fatalf("sessions = %v, %v", mine, err)
	}
	var otherID int64
	sid := sessionID(here)
	for _, s := range mine {
		if s.Hash != hashOf(sid) {
			otherID = s.ID
		}
	}
	path := "/sessions/" + strconv.FormatInt(otherID, 10) + "/revoke"

	// Someone else's session is not found, and stays.
	intruder := a.Client(t)
	login(intruder, "alice")
	if r := intruder.Get(path); r.StatusCode != http.StatusNotFound {
		t.Errorf("alice GET %s: status %d, want 404", path, r.StatusCode)
	}
	if r := intruder.Submit("/", path, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("alice POST %s: status %d, want 404", path, r.StatusCode)
	}
	if !signedIn(there) {
		t.Fatal("another user ended mike's session")
	}

	confirm := here.Get(path)
	if confirm.StatusCode != http.StatusOK || !confirm.Has(t, "confirm-submit") {
		t.Fatalf("confirmation page: status %d", confirm.StatusCode)
	}
	if r := here.Submit(path, path, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out one session: status %d\n%s", r.StatusCode, r.Body)
	}
	if signedIn(there) {
		t.Error("the signed-out session still works")
	}
	if !signedIn(here) {
		t.Error("signing out another session ended this one")
	}
	if r := here.Submit("/", path, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("signing out an ended session: status %d, want 404", r.StatusCode)
	}
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestAdminSignsUserOutEverywhere(t *testing.T) {
	a := newApp(t)
	laptop, phone := a.Client(t), a.Client(t)
	login(laptop, "mike")
	login(phone, "mike")
	admin := a.Client(t)
	login(admin, "alice")
	mike := user(t, a, "mike")
	path := "/users/" + strconv.FormatInt(mike.ID, 10) + "/sessions/revoke"

	row := admin.Get("/users").Doc(t).Find(`[data-testid="user-row"][data-user-id="` + strconv.FormatInt(mike.ID, 10) + `"]`)
	if got := strings.TrimSpace(row.Find(`[data-testid="user-sessions"]`).Text()); got != "2" {
		t.Errorf("users page: mike has %q sessions, want 2", got)
	}
	if row.Find(`[data-testid="user-sign-out"]`).Length() != 1 {
		t.Error("users page: no sign-out-everywhere button for mike")
	}

	// Only admins may.
	if r := laptop.Submit("/", path, nil); r.StatusCode != http.StatusForbidden {
		t.Errorf("member POST %s: status %d, want 403", path, r.StatusCode)
	}
	if !signedIn(phone) {
		t.Fatal("a member signed mike out")
	}

	if r := admin.Get(path); r.StatusCode != http.StatusOK || !r.Has(t, "confirm-submit") {
		t.Fatalf("confirmation page: status %d", r.StatusCode)
	}
	r := admin.Submit(path, path, nil)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/users" {
		t.Fatalf("sign out everywhere: status %d to %q\n%s", r.StatusCode, r.Header.Get("Location"), r.Body)
	}
	if signedIn(laptop) || signedIn(phone) {
		t.Error("a session survived signing out everywhere")
	}
	if !signedIn(admin) {
		t.Error("the admin was signed out too")
	}
	evs, _, err := a.Store.ListAudit(context.Background(), store.AuditQuery{Actor: "alice", ObjectType: "user", ObjectID: strconv.FormatInt(mike.ID, 10)})
	if err != nil || len(evs) == 0 || evs[0].Action != "sign-out-everywhere" || evs[0].Via != "console" {
		t.Errorf("audit = %+v, %v; want alice's sign-out-everywhere of mike via the console", evs, err)
	}

	// An unknown user is not found.
	if r := admin.Submit("/", "/users/99999/sessions/revoke", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown user: status %d, want 404", r.StatusCode)
	}

	// Signing oneself out everywhere ends this browser's session too, and
	// says so at once.
	self := "/users/" + strconv.FormatInt(user(t, a, "alice").ID, 10) + "/sessions/revoke"
	r = admin.Submit("/users", self, nil)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/login" {
		t.Fatalf("signing oneself out everywhere: status %d to %q", r.StatusCode, r.Header.Get("Location"))
	}
	if signedIn(admin) {
		t.Error("the admin's own session survived signing herself out everywhere")
	}
}

func TestExpiredSessionRowRefused(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	login(c, "mike")
	thief := copyOf(c)
	a.Clock.Advance(handlers.DefaultSessionTTL + time.Second)
	if signedIn(thief) || signedIn(c) {
		t.Fatal("a session past its TTL still works")
	}
	list, err := a.Store.ListSessions(context.Background(), user(t, a, "mike").ID, a.Clock.Now())
	if err != nil || len(list) != 0 {
		t.Errorf("expired sessions listed: %+v, %v", list, err)
	}
	// Signing in again prunes the expired row.
	login(c, "mike")
	all, _ := a.Store.ListSessions(context.Background(), user(t, a, "mike").ID, a.Clock.Now().Add(-handlers.DefaultSessionTTL))
	if len(all) != 1 {
		t.Errorf("%d session rows after signing in again, want 1 (the expired one pruned)", len(all))
	}
}

func TestLastSeenRecorded(t *testing.T) {
	a := newApp(t)
	c := a.Client(t)
	login(c, "mike")
	start := a.Clock.Now()
	a.Clock.Advance(30 * time.Second)
	signedIn(c)
	list, _ := a.Store.ListSessions(context.Background(), user(t, a, "mike").ID, a.Clock.Now())
	if len(list) != 1 || list[0].LastSeenAt.Sub(start).Abs() > time.Millisecond {
		t.Fatalf("after 30 s: last seen %v, want the sign-in time %v (written at most once a minute)", list, start)
	}
	a.Clock.Advance(time.Minute)
	signedIn(c)
	list, _ = a.Store.ListSessions(context.Background(), user(t, a, "mike").ID, a.Clock.Now())
	if len(list) != 1 || list[0].LastSeenAt.Sub(a.Clock.Now()).Abs() > time.Millisecond {
		t.Fatalf("after 90 s: last seen %v, want %v", list, a.Clock.Now())
	}
	if list[0].UserAgent == "" || list[0].IP != "127.0.0.1" {
		t.Errorf("session user agent %q, address %q", list[0].UserAgent, list[0].IP)
	}
}

func TestChangePasswordKeepsThisSessionOnly(t *testing.T) {
	a := newApp(t)
	here, there := a.Client(t), a.Client(t)
	login(there, "mike")
	login(here, "mike")
	before := copyOf(here)

	refused := []struct {
		name  string
		form  url.Values
		field string
	}{
		{"wrong current password", url.Values{"current": {"not my password"}, "password": {"a new password"}, "confirm": {"a new password"}}, "current"},
		{"confirmation differs", url.Values{"current": {testPassword}, "password": {"a new password"}, "confirm": {"a new passw0rd"}}, "confirm"},
		{"too short", url.Values{"current": {testPassword}, "password": {"short"}, "confirm": {"short"}}, "password"},
		{"too long for bcrypt", url.Values{"current": {testPassword}, "password": {strings.Repeat("x", 73)}, "confirm": {strings.Repeat("x", 73)}}, "password"},
	}
	for _, c := range refused {
		r := here.Submit("/tokens", "/password", c.form)
		if r.StatusCode != http.StatusBadRequest || r.Text(t, "error-"+c.field) == "" {
			t.Errorf("%s: status %d, error on %s %q; want 400 with a message there", c.name, r.StatusCode, c.field, r.Text(t, "error-"+c.field))
		}
		if !signedIn(there) {
			t.Fatalf("%s: a refused change signed the other session out", c.name)
		}
	}

	r := here.Submit("/tokens", "/password", url.Values{"current": {testPassword}, "password": {"a new password"}, "confirm": {"a new password"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("change password: status %d\n%s", r.StatusCode, r.Body)
	}
	if !signedIn(here) {
		t.Error("the browser that changed the password was signed out")
	}
	if signedIn(there) {
		t.Error("the other session survived the password change")
	}
	if signedIn(before) {
		t.Error("a copy of the cookie from before the change still works")
	}
	if _, err := a.Store.Authenticate(context.Background(), "mike", "a new password"); err != nil {
		t.Errorf("the new password does not work: %v", err)
	}

	// An API token cannot change the password.
	plain, _, err := a.Store.CreateToken(context.Background(), store.Actor{Name: "test"}, "mike", "ci")
	if err != nil {
		t.Fatal(err)
	}
	api := a.Client(t)
	r = api.Post("/password", url.Values{"current": {"a new password"}, "password": {"third password"}, "confirm": {"third password"}}, "X-Auth-Token", plain)
	if r.StatusCode != http.StatusForbidden {
		t.Errorf("password change by API token: status %d, want 403", r.StatusCode)
	}
}
