package account_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"

	"corral/models"
	"corral/models/store"
	"corral/web/webtest"
)

// The user admin pages are tested through the real application
// (webtest.Start), driven over loopback HTTP like a browser without
// JavaScript: sessions, CSRF and role checks all take part.

const uaPassword = "rita-first-password"

type (
	uaClient = webtest.Client
	uaResp   = webtest.Response
)

// uaTryLogin signs in through the form and returns the answer's status
// (303 on success, 401 on a refused password).
func uaTryLogin(t *testing.T, app *webtest.App, name, password string) (*uaClient, int) {
	t.Helper()
	c := app.Client(t)
	return c, c.Login(name, password).StatusCode
}

func uaLogin(t *testing.T, app *webtest.App, name, password string) *uaClient {
	t.Helper()
	c, status := uaTryLogin(t, app, name, password)
	if status != http.StatusSeeOther {
		t.Fatalf("sign in as %s: status %d", name, status)
	}
	return c
}

// follow loads the page a 303 points to, which shows the flashes.
func follow(c *uaClient, r *uaResp) *uaResp {
	c.T.Helper()
	if r.StatusCode != http.StatusSeeOther {
		c.T.Fatalf("status %d, want 303; body:\n%s", r.StatusCode, r.Body)
	}
	return c.Get(r.Header.Get("Location"))
}

// signedIn reports whether the client's session still opens the dashboard.
func signedIn(c *uaClient) bool {
	c.T.Helper()
	return c.Get("/").StatusCode == http.StatusOK
}

// uaApp is the application with rita (reader in project tB) besides the
// admin.
func uaApp(t *testing.T) (*webtest.App, *models.User) {
	t.Helper()
	app := webtest.Start(t)
	rita, err := app.Store.CreateUser(context.Background(), store.Actor{Name: "test", Via: "cli"}, "rita", uaPassword, models.RoleReader, "tB")
	if err != nil {
		t.Fatal(err)
	}
	return app, rita
}

func uaUser(t *testing.T, app *webtest.App, name string) *models.User {
	t.Helper()
	u, err := app.Store.UserByName(context.Background(), name)
	if err != nil {
		t.Fatalf("user %s: %v", name, err)
	}
	return u
}

func uaURL(u *models.User) string { return "/users/" + strconv.FormatInt(u.ID, 10) }

// tokenStatus is what /api/whoami answers a request carrying token.
func tokenStatus(t *testing.T, app *webtest.App, token string) int {
	t.Helper()
	return app.Client(t).Get("/api/whoami", "X-Auth-Token", token).StatusCode
}

func TestUsersListLinksToUserPage(t *testing.T) {
	app, rita := uaApp(t)
	admin := uaLogin(t, app, app.AdminName, app.AdminPassword)
	list := admin.Get("/users")
	var href string
	list.Doc(t).Find(`[data-testid="user-row"]`).Each(func(_ int, s *goquery.Selection) {
		if strings.TrimSpace(s.Find(`[data-testid="user-name"]`).Text()) == "rita" {
			href, _ = s.Find(`[data-testid="user-link"]`).Attr("href")
		}
	})
	if href != uaURL(rita) {
		t.Fatalf("rita's link on /users = %q, want %q", href, uaURL(rita))
	}
	page := admin.Get(href)
	if page.StatusCode != http.StatusOK || page.Text(t, "page-title") != "rita" {
		t.Fatalf("GET %s: status %d, title %q", href, page.StatusCode, page.Text(t, "page-title"))
	}
	if admin.Get("/users/999999").StatusCode != http.StatusNotFound || admin.Get("/users/nobody").StatusCode != http.StatusNotFound {
		t.Error("an unknown user's page is not a 404")
	}
}

func TestUserPageEditsRoleAndProject(t *testing.T) {
	cases := []struct {
		name        string
		role        models.Role
		proj        string
		flash       string
		wantSignOut bool
	}{
		{"role", models.RoleMember, "tB", "Role of rita changed from reader to member; rita's 2 sessions were ended.", true},
		{"project", models.RoleReader, "tC", "Project of rita changed from tB to tC; rita's 2 sessions were ended.", true},
		{"both", models.RoleAdmin, "", "Role of rita changed from reader to admin and project from tB to none; rita's 2 sessions were ended.", true},
		{"nothing", models.RoleReader, " tB ", "Nothing changed for rita.", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app, rita := uaApp(t)
			admin := uaLogin(t, app, app.AdminName, app.AdminPassword)
			laptop := uaLogin(t, app, "rita", uaPassword)
			phone := uaLogin(t, app, "rita", uaPassword)
			if got := admin.Get(uaURL(rita)).Text(t, "user-session-count"); got != "2" {
				t.Fatalf("session count %q before the change, want 2", got)
			}
			r := admin.Submit(uaURL(rita), uaURL(rita), url.Values{"role": {string(tc.role)}, "project": {tc.proj}})
			page := follow(admin, r)
			if got := page.Text(t, "flash-success"); got != tc.flash {
				t.Errorf("flash %q, want %q", got, tc.flash)
			}
			after := uaUser(t, app, "rita")
			if after.Role != tc.role || after.ProjectID != strings.TrimSpace(tc.proj) {
				t.Errorf("stored role %q project %q, want %q %q", after.Role, after.ProjectID, tc.role, strings.TrimSpace(tc.proj))
			}
			if page.Text(t, "user-role") != string(tc.role) {
				t.Errorf("page shows role %q, want %q", page.Text(t, "user-role"), tc.role)
			}
			if signedIn(laptop) == tc.wantSignOut || signedIn(phone) == tc.wantSignOut {
				t.Errorf("rita's sessions signed in = %v, want %v", !tc.wantSignOut, !tc.wantSignOut)
			}
			evs, _, err := app.Store.ListAudit(context.Background(), store.AuditQuery{ObjectType: "user", ObjectID: strconv.FormatInt(rita.ID, 10), Actor: app.AdminName})
			if err != nil {
				t.Fatal(err)
			}
			updates := 0
			for _, ev := range evs {
				if ev.Action == "update" {
					updates++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.wantSignOut]; updates != want {
				t.Errorf("%d update events in the audit log by %s, want %d", updates, app.AdminName, want)
			}
		})
	}
}

func TestUserPageRefusesBadInputAndSavesNothing(t *testing.T) {
	long := strings.Repeat("p", 256)
	cases := []struct {
		name       string
		role, proj string
		status     int
		errs       []string // fields with an error shown
	}{
		{"unknown role", "root", "tB", http.StatusBadRequest, []string{"role"}},
		{"empty role", "", "tB", http.StatusBadRequest, []string{"role"}},
		{"long project", string(models.RoleMember), long, http.StatusBadRequest, []string{"project"}},
		{"both", "superuser", long, http.StatusBadRequest, []string{"role", "project"}},
	}
	app, rita := uaApp(t)
	admin := uaLogin(t, app, app.AdminName, app.AdminPassword)
	session := uaLogin(t, app, "rita", uaPassword)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := admin.Submit(uaURL(rita), uaURL(rita), url.Values{"role": {tc.role}, "project": {tc.proj}})
			if r.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", r.StatusCode, tc.status)
			}
			for _, f := range []string{"role", "project"} {
				shown := r.Text(t, "error-"+f) != ""
				want := false
				for _, e := range tc.errs {
					want = want || e == f
				}
				if shown != want {
					t.Errorf("error next to %s shown = %v, want %v (%q)", f, shown, want, r.Text(t, "error-"+f))
				}
			}
			// The refused values stay in the form for correcting.
			if v, _ := r.Doc(t).Find(`[data-testid="user-edit-form"] input[name="project"]`).Attr("value"); v != tc.proj {
				t.Errorf("project field re-shown as %q, want %q", v, tc.proj)
			}
			after := uaUser(t, app, "rita")
			if after.Role != models.RoleReader || after.ProjectID != "tB" || !after.UpdatedAt.Equal(rita.UpdatedAt) {
				t.Errorf("rita changed after a refused edit: %+v", after)
			}
			if !signedIn(session) {
				t.Error("a refused edit signed rita out")
			}
		})
	}
}

func TestUserPageSetsPassword(t *testing.T) {
	app, rita := uaApp(t)
	admin := uaLogin(t, app, app.AdminName, app.AdminPassword)
	old := uaLogin(t, app, "rita", uaPassword)
	const fresh = "rita-second-password"
	refused := []struct {
		name, pw, confirm, field string
	}{
		{"too short", "short", "short", "password"},
		{"empty", "", "", "password"},
		{"retyped differently", fresh, fresh + "x", "confirm"},
		{"over 72 bytes", strings.Repeat("x", 73), strings.Repeat("x", 73), "password"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			r := admin.Submit(uaURL(rita), uaURL(rita)+"/password", url.Values{"password": {tc.pw}, "confirm": {tc.confirm}})
			if r.StatusCode != http.StatusBadRequest || r.Text(t, "error-"+tc.field) == "" {
				t.Fatalf("status %d, error next to %s %q; want 400 with an error", r.StatusCode, tc.field, r.Text(t, "error-"+tc.field))
			}
			if _, status := uaTryLogin(t, app, "rita", uaPassword); status != http.StatusSeeOther {
				t.Errorf("the old password stopped working after a refused change (status %d)", status)
			}
		})
	}
	if got := admin.Get(uaURL(rita)).Text(t, "user-session-count"); got == "" || got == "0" {
		t.Fatalf("rita's session count %q, want some", got)
	}
	r := admin.Submit(uaURL(rita), uaURL(rita)+"/password", url.Values{"password": {fresh}, "confirm": {fresh}})
	flash := follow(admin, r).Text(t, "flash-success")
	if !strings.HasPrefix(flash, "New password set for rita; rita's ") || !strings.Contains(flash, " sessions were ended. Their API tokens are revoked.") {
		t.Errorf("flash %q", flash)
	}
	if signedIn(old) {
		t.Error("a session from before the new password still works")
	}
	if _, status := uaTryLogin(t, app, "rita", uaPassword); status == http.StatusSeeOther {
		t.Error("the old password still signs in")
	}
	if _, status := uaTryLogin(t, app, "rita", fresh); status != http.StatusSeeOther {
		t.Errorf("the new password is refused (status %d)", status)
	}
}

func TestUserPageDeletesUserAndTokens(t *testing.T) {
	app, rita := uaApp(t)
	ctx := context.Background()
	plain, _, err := app.Store.CreateToken(ctx, store.Actor{Name: "test", Via: "cli"}, "rita", "ci")
	if err != nil {
		t.Fatal(err)
	}
	if s := tokenStatus(t, app, plain); s != http.StatusOK {
		t.Fatalf("rita's token before deletion: status %d", s)
	}
	session := uaLogin(t, app, "rita", uaPassword)
	admin := uaLogin(t, app, app.AdminName, app.AdminPassword)
	page := admin.Get(uaURL(rita))
	if page.Text(t, "user-token-name") != "ci" {
		t.Errorf("the user page lists tokens %q, want ci", page.Text(t, "user-token-name"))
	}
	btn := page.Doc(t).Find(`[data-testid="user-delete-button"]`)
	href, _ := btn.Attr("href")
	confirm, _ := btn.Attr("hx-confirm")
	if href != uaURL(rita)+"/delete" || !strings.Contains(confirm, "rita") {
		t.Fatalf("delete button href %q, hx-confirm %q", href, confirm)
	}
	ask := admin.Get(href)
	if ask.StatusCode != http.StatusOK || !strings.Contains(ask.Text(t, "confirm-message"), "1 active API token") {
		t.Fatalf("confirmation page: status %d, message %q", ask.StatusCode, ask.Text(t, "confirm-message"))
	}
	if _, err := app.Store.UserByID(ctx, rita.ID); err != nil {
		t.Fatal("the confirmation page deleted the user")
	}
	r := admin.Submit(href, href, nil)
	if loc := r.Header.Get("Location"); r.StatusCode != http.StatusSeeOther || loc != "/users" {
		t.Fatalf("delete: status %d to %q", r.StatusCode, loc)
	}
	list := admin.Get("/users")
	if got, want := list.Text(t, "flash-success"), "User rita deleted with 1 API token; rita's 1 session was ended."; got != want {
		t.Errorf("flash %q, want %q", got, want)
	}
	list.Doc(t).Find(`[data-testid="user-name"]`).Each(func(_ int, s *goquery.Selection) {
		if strings.TrimSpace(s.Text()) == "rita" {
			t.Error("rita is still listed")
		}
	})
	if s := tokenStatus(t, app, plain); s != http.StatusUnauthorized {
		t.Errorf("rita's token after deletion: status %d, want 401", s)
	}
	if signedIn(session) {
		t.Error("rita's session survived the deletion")
	}
	if admin.Get(uaURL(rita)).StatusCode != http.StatusNotFound {
		t.Error("the deleted user's page is not a 404")
	}
}

func TestUserPageRevokesTokens(t *testing.T) {
	app, rita := uaApp(t)
	ctx := context.Background()
	plain, tok, err := app.Store.CreateToken(ctx, store.Actor{Name: "test", Via: "cli"}, "rita", "ci")
	if err != nil {
		t.Fatal(err)
	}
	mine, _, err := app.Store.CreateToken(ctx, store.Actor{Name: "test", Via: "cli"}, app.AdminName, "own")
	if err != nil {
		t.Fatal(err)
	}
	admin := uaLogin(t, app, app.AdminName, app.AdminPassword)
	page := admin.Get(uaURL(rita))
	href, _ := page.Doc(t).Find(`[data-testid="user-token-revoke"]`).Attr("href")
	if want := uaURL(rita) + "/tokens/" + strconv.FormatInt(tok.ID, 10) + "/revoke"; href != want {
		t.Fatalf("revoke link %q, want %q", href, want)
	}
	// The admin's own token is not rita's: her page cannot reach it.
	other := uaURL(rita) + "/tokens/" + strconv.FormatInt(tok.ID+1, 10) + "/revoke"
	if r := admin.Submit(href, other, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("revoking another user's token through rita's page: status %d, want 404", r.StatusCode)
	}
	flash := follow(admin, admin.Submit(href, href, nil)).Text(t, "flash-success")
	if flash != "Token “ci” of rita revoked." {
		t.Errorf("flash %q", flash)
	}
	if s := tokenStatus(t, app, plain); s != http.StatusUnauthorized {
		t.Errorf("the revoked token: status %d, want 401", s)
	}
	if s := tokenStatus(t, app, mine); s != http.StatusOK {
		t.Errorf("the admin's own token: status %d, want 200", s)
	}
}

// An admin cannot demote, delete or reset the password of their own
// account here, and the last admin cannot be demoted or deleted.
func TestUserPageProtectsAdmins(t *testing.T) {
	app, _ := uaApp(t)
	me := uaUser(t, app, app.AdminName)
	admin := uaLogin(t, app, app.AdminName, app.AdminPassword)
	self := uaURL(me)
	page := admin.Get(self)
	if page.Has(t, "user-delete-button") || page.Has(t, "user-password-form") || !page.Has(t, "user-delete-self") {
		t.Error("the own page offers deletion or a password reset")
	}
	cases := []struct {
		name   string
		action string
		form   url.Values
		status int
		testid string
		says   string
	}{
		{"demote self", self, url.Values{"role": {string(models.RoleMember)}, "project": {""}}, http.StatusForbidden, "error-role", "your own role"},
		{"delete self", self + "/delete", nil, http.StatusForbidden, "user-delete-error", "your own account"},
		{"confirm deleting self", "", nil, http.StatusForbidden, "user-delete-error", "your own account"},
		{"set own password", self + "/password", url.Values{"password": {"a-new-password"}, "confirm": {"a-new-password"}}, http.StatusForbidden, "form-error", "API tokens page"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r *uaResp
			if tc.action == "" {
				r = admin.Get(self + "/delete")
			} else {
				r = admin.Submit(self, tc.action, tc.form)
			}
			if r.StatusCode != tc.status || !strings.Contains(r.Text(t, tc.testid), tc.says) {
				t.Fatalf("status %d, %s %q; want %d saying %q", r.StatusCode, tc.testid, r.Text(t, tc.testid), tc.status, tc.says)
			}
			if u := uaUser(t, app, app.AdminName); u.Role != models.RoleAdmin {
				t.Fatalf("the admin became %s", u.Role)
			}
			if !signedIn(admin) {
				t.Fatal("the refusal signed the admin out")
			}
		})
	}
	// The own project may change; the admin stays signed in here.
	r := admin.Submit(self, self, url.Values{"role": {string(models.RoleAdmin)}, "project": {"ops"}})
	if got := follow(admin, r).Text(t, "flash-success"); got != "Project of admin changed from none to ops; your other sessions were ended." {
		t.Errorf("own project change: flash %q", got)
	}
	if !signedIn(admin) {
		t.Error("changing the own project signed this browser out")
	}
}

// Two admins demoting each other at the same moment through the console:
// whatever the order, one admin is left and the other request is refused
// (the store's last-admin rule, or a session ended by the winner).
func TestAdminsDemotingEachOtherThroughConsole(t *testing.T) {
	for round := 0; round < 3; round++ {
		app, _ := uaApp(t)
		ctx := context.Background()
		if _, err := app.Store.CreateUser(ctx, store.Actor{Name: "test", Via: "cli"}, "bea", uaPassword, models.RoleAdmin, ""); err != nil {
			t.Fatal(err)
		}
		ann, bea := uaUser(t, app, app.AdminName), uaUser(t, app, "bea")
		ca := uaLogin(t, app, app.AdminName, app.AdminPassword)
		cb := uaLogin(t, app, "bea", uaPassword)
		// Load the forms first so that only the posts race.
		type prepared struct {
			c      *uaClient
			action string
			form   url.Values
		}
		var ps []prepared
		for _, p := range []struct {
			c      *uaClient
			target *models.User
		}{{ca, bea}, {cb, ann}} {
			tok, _ := p.c.Get(uaURL(p.target)).Doc(t).Find(`input[name="_csrf"]`).First().Attr("value")
			ps = append(ps, prepared{p.c, uaURL(p.target), url.Values{"_csrf": {tok}, "role": {string(models.RoleMember)}, "project": {""}}})
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		res := make([]*uaResp, 2)
		for i, p := range ps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res[i] = p.c.Post(p.action, p.form)
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for i, r := range res {
			t.Logf("round %d, request %d: %d %s", round, i, r.StatusCode, r.Header.Get("Location"))
			switch {
			case r.StatusCode == http.StatusSeeOther && strings.HasPrefix(r.Header.Get("Location"), "/users/"):
				won++
			case r.StatusCode == http.StatusConflict:
				if !strings.Contains(r.Text(t, "error-role"), "last admin") {
					t.Errorf("round %d, request %d: 409 saying %q, want the last-admin rule", round, i, r.Text(t, "error-role"))
				}
			case r.StatusCode == http.StatusSeeOther && strings.HasPrefix(r.Header.Get("Location"), "/login"):
				// Signed out by the winner's change before it got in.
			default:
				t.Errorf("round %d, request %d: status %d to %q", round, i, r.StatusCode, r.Header.Get("Location"))
			}
		}
		users, err := app.Store.ListUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		admins := 0
		for _, u := range users {
			if u.Role == models.RoleAdmin {
				admins++
			}
		}
		if won != 1 || admins != 1 {
			t.Fatalf("round %d: %d requests won, %d admins left; want 1 and 1", round, won, admins)
		}
	}
}

// Members and readers get 403 on every user admin page and action, and
// change nothing.
func TestUserPagesNeedAdmin(t *testing.T) {
	app, rita := uaApp(t)
	ctx := context.Background()
	if _, err := app.Store.CreateUser(ctx, store.Actor{Name: "test", Via: "cli"}, "mike", uaPassword, models.RoleMember, "tA"); err != nil {
		t.Fatal(err)
	}
	_, tok, err := app.Store.CreateToken(ctx, store.Actor{Name: "test", Via: "cli"}, "rita", "ci")
	if err != nil {
		t.Fatal(err)
	}
	u := uaURL(rita)
	tokURL := u + "/tokens/" + strconv.FormatInt(tok.ID, 10) + "/revoke"
	requests := []struct{ method, path string }{
		{http.MethodGet, u},
		{http.MethodPost, u},
		{http.MethodPost, u + "/password"},
		{http.MethodGet, u + "/delete"},
		{http.MethodPost, u + "/delete"},
		{http.MethodGet, tokURL},
		{http.MethodPost, tokURL},
	}
	for _, who := range []string{"mike", "rita"} {
		c := uaLogin(t, app, who, uaPassword)
		for _, rq := range requests {
			t.Run(who+" "+rq.method+" "+rq.path, func(t *testing.T) {
				var r *uaResp
				if rq.method == http.MethodGet {
					r = c.Get(rq.path)
				} else {
					r = c.Submit("/tokens", rq.path, url.Values{"role": {string(models.RoleAdmin)}, "project": {""}, "password": {"taken-over-1"}, "confirm": {"taken-over-1"}})
				}
				if r.StatusCode != http.StatusForbidden {
					t.Errorf("status %d, want 403", r.StatusCode)
				}
			})
		}
	}
	after := uaUser(t, app, "rita")
	if after.Role != models.RoleReader || after.ProjectID != "tB" {
		t.Errorf("rita changed: %+v", after)
	}
	if _, status := uaTryLogin(t, app, "rita", uaPassword); status != http.StatusSeeOther {
		t.Error("rita's password changed")
	}
	toks, err := app.Store.ListTokens(ctx, rita.ID)
	if err != nil || len(toks) != 1 || toks[0].RevokedAt != nil {
		t.Errorf("rita's tokens: %+v, %v", toks, err)
	}
}

// In a browser: follow rita's link from /users, change her role, then
// delete her through htmx's confirm dialog.
func TestBrowserUserAdmin(t *testing.T) {
	app, rita := uaApp(t)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatal(err)
	}
	b.Do(
		chromedp.Navigate(app.URL+"/users"),
		chromedp.Click(chromedp.CSS(`a[data-testid="user-link"][href="`+uaURL(rita)+`"]`)),
		chromedp.WaitVisible(webtest.TestID("user-edit-form")),
		chromedp.SetValue(chromedp.ID("f-role"), string(models.RoleMember)),
		chromedp.Click(webtest.TestID("user-save")),
		chromedp.WaitVisible(webtest.TestID("flash-success")),
	)
	if got, want := b.Text(webtest.TestID("flash-success")), "Role of rita changed from reader to member."; got != want {
		t.Errorf("flash %q, want %q", got, want)
	}
	if got := uaUser(t, app, "rita").Role; got != models.RoleMember {
		t.Fatalf("rita is %s after saving, want member", got)
	}
	dialogs := b.AcceptDialogs()
	b.Do(
		chromedp.Click(webtest.TestID("user-delete-button")),
		chromedp.WaitVisible(webtest.TestID("users-table")),
		chromedp.WaitVisible(webtest.TestID("flash-success")),
	)
	select {
	case msg := <-dialogs:
		if !strings.Contains(msg, "rita") {
			t.Errorf("confirm dialog says %q", msg)
		}
	default:
		t.Error("no confirm dialog before deleting")
	}
	if got := b.Text(webtest.TestID("flash-success")); !strings.HasPrefix(got, "User rita deleted") {
		t.Errorf("flash %q after deleting", got)
	}
	if _, err := app.Store.UserByID(context.Background(), rita.ID); models.KindOf(err) != models.NotFound {
		t.Errorf("rita after deleting: %v, want not found", err)
	}
}
