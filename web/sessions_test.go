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
func (c *client) signedIn() bool {
	c.t.Helper()
	r := c.get("/")
	switch {
	case r.StatusCode == http.StatusOK:
		return true
	case r.StatusCode == http.StatusSeeOther && strings.HasPrefix(r.Header.Get("Location"), "/login"):
		return false
	}
	c.t.Fatalf("GET /: status %d to %q", r.StatusCode, r.Header.Get("Location"))
	return false
}

// copyOf is a second browser holding a copy of c's session cookie, as a
// thief would.
func (c *client) copyOf() *client {
	c.t.Helper()
	ck := c.cookie(handlers.SessionCookie)
	if ck == nil {
		c.t.Fatal("no session cookie to copy")
	}
	thief := c.app.client()
	u, _ := url.Parse(c.app.Srv.URL)
	thief.http.Jar.SetCookies(u, []*http.Cookie{{Name: handlers.SessionCookie, Value: ck.Value}})
	return thief
}

// sessionID decodes c's session cookie with the store's keys and returns
// the session id it carries.
func (c *client) sessionID() string {
	c.t.Helper()
	keys, err := c.app.Store.SessionKeys(context.Background())
	if err != nil {
		c.t.Fatal(err)
	}
	ck := c.cookie(handlers.SessionCookie)
	if ck == nil {
		c.t.Fatal("no session cookie")
	}
	values := map[any]any{}
	if err := securecookie.DecodeMulti(handlers.SessionCookie, ck.Value, &values, securecookie.CodecsFromPairs(keys...)...); err != nil {
		c.t.Fatalf("decode the session cookie: %v", err)
	}
	sid, _ := values["sid"].(string)
	if sid == "" {
		c.t.Fatalf("the session cookie carries no session id: %v", values)
	}
	return sid
}

func (a *testApp) user(name string) *models.User {
	a.t.Helper()
	u, err := a.Store.UserByName(context.Background(), name)
	if err != nil {
		a.t.Fatal(err)
	}
	return u
}

func TestCopiedCookieRefusedAfterSignOut(t *testing.T) {
	a := newApp(t)
	c := a.client()
	c.login("mike")
	thief := c.copyOf()
	if !thief.signedIn() {
		t.Fatal("the copied cookie does not work even before signing out")
	}
	if r := c.submit("/", "/logout", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: status %d", r.StatusCode)
	}
	if thief.signedIn() {
		t.Fatal("the copied cookie still works after signing out")
	}
	if r := thief.get("/login"); !strings.Contains(r.TestID(t, "flash-warning"), "signed out") {
		t.Errorf("the refused browser's login page: warning %q, want a note that it was signed out", r.TestID(t, "flash-warning"))
	}
	if list, _ := a.Store.ListSessions(context.Background(), a.user("mike").ID, a.Clock.Now()); len(list) != 0 {
		t.Errorf("%d session rows left after signing out", len(list))
	}
}

func TestSignInEndsThePreviousSession(t *testing.T) {
	a := newApp(t)
	c := a.client()
	c.login("mike")
	thief := c.copyOf()
	// The sign-in page redirects a signed-in browser; post the form anyway.
	r := c.submit("/", "/login", url.Values{"name": {"alice"}, "password": {testPassword}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("signing in again: status %d", r.StatusCode)
	}
	if thief.signedIn() {
		t.Error("a copy of the cookie from before signing in again still works")
	}
	if !c.signedIn() {
		t.Error("the new sign-in does not work")
	}
}

func TestSessionIDNotStoredInPlainText(t *testing.T) {
	a := newApp(t)
	c := a.client()
	c.login("mike")
	sid := c.sessionID()
	list, err := a.Store.ListSessions(context.Background(), a.user("mike").ID, a.Clock.Now())
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
			laptop, phone, other := a.client(), a.client(), a.client()
			laptop.login("mike")
			phone.login("mike")
			other.login("rita")
			if err := tc.change(a, a.user("mike")); err != nil {
				t.Fatal(err)
			}
			if laptop.signedIn() || phone.signedIn() {
				t.Errorf("a session of mike's survived the %s", tc.name)
			}
			if !other.signedIn() {
				t.Errorf("rita was signed out by a %s of mike's", tc.name)
			}
		})
	}
}

func TestSignOutOtherSessionsKeepsThisOne(t *testing.T) {
	a := newApp(t)
	here, there := a.client(), a.client()
	there.login("mike")
	here.login("mike")
	elsewhere := a.client()
	elsewhere.login("alice")

	r := here.get("/tokens")
	rows := r.Doc(t).Find(`[data-testid="session-row"]`)
	if rows.Length() != 2 || r.Doc(t).Find(`[data-testid="session-current"]`).Length() != 1 {
		t.Fatalf("tokens page: %d session rows, %d marked current; want 2 and 1", rows.Length(), r.Doc(t).Find(`[data-testid="session-current"]`).Length())
	}
	if ip := r.TestID(t, "session-ip"); !strings.Contains(ip, "127.0.0.1") {
		t.Errorf("session address %q, want the loopback address", ip)
	}
	// The current session has no button of its own; the other one does.
	if n := r.Doc(t).Find(`[data-testid="session-revoke"]`).Length(); n != 1 {
		t.Errorf("%d per-session sign-out buttons, want 1 (not on this session)", n)
	}

	r = here.submit("/tokens", "/sessions/revoke-others", nil)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out others: status %d\n%s", r.StatusCode, r.Body)
	}
	if !here.signedIn() {
		t.Fatal("signing out the other sessions ended this one")
	}
	if there.signedIn() {
		t.Error("the other session survived")
	}
	if !elsewhere.signedIn() {
		t.Error("another user's session ended")
	}
	r = here.get("/tokens")
	if n := r.Doc(t).Find(`[data-testid="session-row"]`).Length(); n != 1 {
		t.Errorf("%d session rows after signing out the others, want 1", n)
	}
	if r.Has(t, "sessions-revoke-others") {
		t.Error("the sign-out-others button shows with no other session")
	}
}

func TestSignOutOneSession(t *testing.T) {
	a := newApp(t)
	here, there := a.client(), a.client()
	there.login("mike")
	here.login("mike")
	mine, err := a.Store.ListSessions(context.Background(), a.user("mike").ID, a.Clock.Now())
	if err != nil || len(mine) != 2 {
		t.Fatalf("sessions = %v, %v", mine, err)
	}
	var otherID int64
	sid := here.sessionID()
	for _, s := range mine {
		if s.Hash != hashOf(sid) {
			otherID = s.ID
		}
	}
	path := "/sessions/" + strconv.FormatInt(otherID, 10) + "/revoke"

	// Someone else's session is not found, and stays.
	intruder := a.client()
	intruder.login("alice")
	if r := intruder.get(path); r.StatusCode != http.StatusNotFound {
		t.Errorf("alice GET %s: status %d, want 404", path, r.StatusCode)
	}
	if r := intruder.submit("/", path, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("alice POST %s: status %d, want 404", path, r.StatusCode)
	}
	if !there.signedIn() {
		t.Fatal("another user ended mike's session")
	}

	confirm := here.get(path)
	if confirm.StatusCode != http.StatusOK || !confirm.Has(t, "confirm-submit") {
		t.Fatalf("confirmation page: status %d", confirm.StatusCode)
	}
	if r := here.submit(path, path, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out one session: status %d\n%s", r.StatusCode, r.Body)
	}
	if there.signedIn() {
		t.Error("the signed-out session still works")
	}
	if !here.signedIn() {
		t.Error("signing out another session ended this one")
	}
	if r := here.submit("/", path, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("signing out an ended session: status %d, want 404", r.StatusCode)
	}
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestAdminSignsUserOutEverywhere(t *testing.T) {
	a := newApp(t)
	laptop, phone := a.client(), a.client()
	laptop.login("mike")
	phone.login("mike")
	admin := a.client()
	admin.login("alice")
	mike := a.user("mike")
	path := "/users/" + strconv.FormatInt(mike.ID, 10) + "/sessions/revoke"

	row := admin.get("/users").Doc(t).Find(`[data-testid="user-row"][data-user-id="` + strconv.FormatInt(mike.ID, 10) + `"]`)
	if got := strings.TrimSpace(row.Find(`[data-testid="user-sessions"]`).Text()); got != "2" {
		t.Errorf("users page: mike has %q sessions, want 2", got)
	}
	if row.Find(`[data-testid="user-sign-out"]`).Length() != 1 {
		t.Error("users page: no sign-out-everywhere button for mike")
	}

	// Only admins may.
	if r := laptop.submit("/", path, nil); r.StatusCode != http.StatusForbidden {
		t.Errorf("member POST %s: status %d, want 403", path, r.StatusCode)
	}
	if !phone.signedIn() {
		t.Fatal("a member signed mike out")
	}

	if r := admin.get(path); r.StatusCode != http.StatusOK || !r.Has(t, "confirm-submit") {
		t.Fatalf("confirmation page: status %d", r.StatusCode)
	}
	r := admin.submit(path, path, nil)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/users" {
		t.Fatalf("sign out everywhere: status %d to %q\n%s", r.StatusCode, r.Header.Get("Location"), r.Body)
	}
	if laptop.signedIn() || phone.signedIn() {
		t.Error("a session survived signing out everywhere")
	}
	if !admin.signedIn() {
		t.Error("the admin was signed out too")
	}
	evs, _, err := a.Store.ListAudit(context.Background(), store.AuditQuery{Actor: "alice", ObjectType: "user", ObjectID: strconv.FormatInt(mike.ID, 10)})
	if err != nil || len(evs) == 0 || evs[0].Action != "sign-out-everywhere" || evs[0].Via != "console" {
		t.Errorf("audit = %+v, %v; want alice's sign-out-everywhere of mike via the console", evs, err)
	}

	// An unknown user is not found.
	if r := admin.submit("/", "/users/99999/sessions/revoke", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown user: status %d, want 404", r.StatusCode)
	}

	// Signing oneself out everywhere ends this browser's session too, and
	// says so at once.
	self := "/users/" + strconv.FormatInt(a.user("alice").ID, 10) + "/sessions/revoke"
	r = admin.submit("/users", self, nil)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/login" {
		t.Fatalf("signing oneself out everywhere: status %d to %q", r.StatusCode, r.Header.Get("Location"))
	}
	if admin.signedIn() {
		t.Error("the admin's own session survived signing herself out everywhere")
	}
}

func TestExpiredSessionRowRefused(t *testing.T) {
	a := newApp(t)
	c := a.client()
	c.login("mike")
	thief := c.copyOf()
	a.Clock.Advance(handlers.DefaultSessionTTL + time.Second)
	if thief.signedIn() || c.signedIn() {
		t.Fatal("a session past its TTL still works")
	}
	list, err := a.Store.ListSessions(context.Background(), a.user("mike").ID, a.Clock.Now())
	if err != nil || len(list) != 0 {
		t.Errorf("expired sessions listed: %+v, %v", list, err)
	}
	// Signing in again prunes the expired row.
	c.login("mike")
	all, _ := a.Store.ListSessions(context.Background(), a.user("mike").ID, a.Clock.Now().Add(-handlers.DefaultSessionTTL))
	if len(all) != 1 {
		t.Errorf("%d session rows after signing in again, want 1 (the expired one pruned)", len(all))
	}
}

func TestLastSeenRecorded(t *testing.T) {
	a := newApp(t)
	c := a.client()
	c.login("mike")
	start := a.Clock.Now()
	a.Clock.Advance(30 * time.Second)
	c.signedIn()
	list, _ := a.Store.ListSessions(context.Background(), a.user("mike").ID, a.Clock.Now())
	if len(list) != 1 || list[0].LastSeenAt.Sub(start).Abs() > time.Millisecond {
		t.Fatalf("after 30 s: last seen %v, want the sign-in time %v (written at most once a minute)", list, start)
	}
	a.Clock.Advance(time.Minute)
	c.signedIn()
	list, _ = a.Store.ListSessions(context.Background(), a.user("mike").ID, a.Clock.Now())
	if len(list) != 1 || list[0].LastSeenAt.Sub(a.Clock.Now()).Abs() > time.Millisecond {
		t.Fatalf("after 90 s: last seen %v, want %v", list, a.Clock.Now())
	}
	if list[0].UserAgent == "" || list[0].IP != "127.0.0.1" {
		t.Errorf("session user agent %q, address %q", list[0].UserAgent, list[0].IP)
	}
}

func TestChangePasswordKeepsThisSessionOnly(t *testing.T) {
	a := newApp(t)
	here, there := a.client(), a.client()
	there.login("mike")
	here.login("mike")
	before := here.copyOf()

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
		r := here.submit("/tokens", "/password", c.form)
		if r.StatusCode != http.StatusBadRequest || r.TestID(t, "error-"+c.field) == "" {
			t.Errorf("%s: status %d, error on %s %q; want 400 with a message there", c.name, r.StatusCode, c.field, r.TestID(t, "error-"+c.field))
		}
		if !there.signedIn() {
			t.Fatalf("%s: a refused change signed the other session out", c.name)
		}
	}

	r := here.submit("/tokens", "/password", url.Values{"current": {testPassword}, "password": {"a new password"}, "confirm": {"a new password"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("change password: status %d\n%s", r.StatusCode, r.Body)
	}
	if !here.signedIn() {
		t.Error("the browser that changed the password was signed out")
	}
	if there.signedIn() {
		t.Error("the other session survived the password change")
	}
	if before.signedIn() {
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
	api := a.client()
	r = api.post("/password", url.Values{"current": {"a new password"}, "password": {"third password"}, "confirm": {"third password"}}, "X-Auth-Token", plain)
	if r.StatusCode != http.StatusForbidden {
		t.Errorf("password change by API token: status %d, want 403", r.StatusCode)
	}
}
