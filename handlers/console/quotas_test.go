package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
	"corral/views"
	cv "corral/views/console"
)

// quotaRow finds the row of project on a quotas list page.
func quotaRow(t *testing.T, r *response, project string) *goqSel {
	t.Helper()
	row := r.Doc(t).Find(sel("quota-row") + `[data-project="` + project + `"]`)
	if row.Length() != 1 {
		t.Fatalf("quota rows for %s: %d; projects shown: %v", project, row.Length(), r.Texts(t, "quota-project"))
	}
	return row
}

func cellText(s *goqSel, id string) string {
	return strings.Join(strings.Fields(s.Find(sel(id)).Text()), " ")
}

func TestQuotaListShowsEveryProject(t *testing.T) {
	a := newApp(t)
	ctx := context.Background()
	admin := store.Actor{Name: "test", Via: "cli"}
	// A project known only by a user, and one known only by a quota row.
	if _, err := a.Store.CreateUser(ctx, admin, "lou", memberPassword, models.RoleReader, "lonely"); err != nil {
		t.Fatal(err)
	}
	if err := a.Store.SetQuota(ctx, admin, "quota-only", models.QuotaServerGroups, -1); err != nil {
		t.Fatal(err)
	}
	if err := a.Store.SetQuota(ctx, admin, "quota-only", models.QuotaServerGroupMembers, 4); err != nil {
		t.Fatal(err)
	}
	r := a.as(a.AdminName).Get("/quotas")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET /quotas: %d", r.StatusCode)
	}
	// The demo: acme owns web (3 members), db (2) and spread (0); globex
	// owns batch (3); mike is in acme and rita in globex.
	tests := []struct {
		project                          string
		groupsLimit, groupsUsed          string
		membersLimit, membersUsed        string
		servers, users                   string
		largestGroupShownInMembersColumn string
	}{
		{"acme", "10 (default)", "3 of 10", "10 (default)", "3 of 10", "7", "1", "web"},
		{"globex", "10 (default)", "1 of 10", "10 (default)", "3 of 10", "3", "1", "batch"},
		{"lonely", "10 (default)", "0 of 10", "10 (default)", "0 of 10", "0", "1", ""},
		{"quota-only", "unlimited", "0 (no limit)", "4", "0 of 4", "0", "0", ""},
	}
	if got := r.Texts(t, "quota-project"); len(got) != len(tests) {
		t.Errorf("projects = %v, want %d", got, len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.project, func(t *testing.T) {
			row := quotaRow(t, r, tc.project)
			for id, want := range map[string]string{
				"quota-limit-server_groups":        tc.groupsLimit,
				"quota-used-server_groups":         tc.groupsUsed,
				"quota-limit-server_group_members": tc.membersLimit,
				"quota-used-server_group_members":  tc.membersUsed,
				"quota-servers":                    tc.servers,
				"quota-users":                      tc.users,
			} {
				if got := cellText(row, id); got != want {
					t.Errorf("%s = %q, want %q", id, got, want)
				}
			}
			if got := strings.Contains(row.Text(), "largest group: "+tc.largestGroupShownInMembersColumn); tc.largestGroupShownInMembersColumn != "" && !got {
				t.Errorf("largest group %s not named in %q", tc.largestGroupShownInMembersColumn, strings.Join(strings.Fields(row.Text()), " "))
			}
		})
	}
	// The search narrows the list; an unknown project offers its page.
	r = a.as(a.AdminName).Get("/quotas?q=GLOB")
	if got := r.Texts(t, "quota-project"); len(got) != 1 || got[0] != "globex" {
		t.Errorf("search GLOB = %v", got)
	}
	r = a.as(a.AdminName).Get("/quotas?q=newco")
	if href, _ := r.Doc(t).Find(sel("quota-open")).Attr("href"); href != "/quotas/newco" {
		t.Errorf("offer for an unknown project = %q", href)
	}
}

// An admin lowers acme's quotas in the console; the compute API and the
// store then refuse the group and the member beyond the new limits.
func TestQuotaSetIsEnforcedByComputeAPI(t *testing.T) {
	a := newApp(t)
	ctx := context.Background()
	adm := a.as(a.AdminName)
	page := adm.Follow("/quotas/acme", "/quotas/acme", url.Values{
		"server_groups": {"4"}, "server_group_members": {"3"},
		"expect_server_groups": {"10"}, "expect_server_group_members": {"10"},
	})
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "server_groups = 4") || !strings.Contains(got, "server_group_members = 3") {
		t.Errorf("flash = %q", got)
	}
	if got := page.Text(t, "quota-limit-server_groups"); got != "4" {
		t.Errorf("limit shown = %q", got)
	}
	if got := page.Text(t, "quota-full-server_group_members"); got != "full" {
		t.Errorf("web's 3 members at a limit of 3 should show full, got %q", got)
	}
	for res, want := range map[string]int{models.QuotaServerGroups: 4, models.QuotaServerGroupMembers: 3} {
		if n, err := a.Store.GetQuota(ctx, "acme", res); err != nil || n != want {
			t.Errorf("stored %s = %d, %v; want %d", res, n, err, want)
		}
	}
	events, _, err := a.Store.ListAudit(ctx, store.AuditQuery{ObjectType: "quota"})
	if err != nil || len(events) != 2 || events[0].Actor != a.AdminName || events[0].Via != "console" {
		t.Errorf("audit = %+v, %v", events, err)
	}

	tok, _, err := a.Store.CreateToken(ctx, store.Actor{Name: "test", Via: "cli"}, "mike", "quota-test")
	if err != nil {
		t.Fatal(err)
	}
	create := func(name string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, a.URL+"/compute/v2.1/os-server-groups",
			strings.NewReader(fmt.Sprintf(`{"server_group":{"name":%q,"policy":"anti-affinity"}}`, name)))
		req.Header.Set("X-Auth-Token", tok)
		req.Header.Set("OpenStack-API-Version", "compute 2.64")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// acme owns 3 groups: the 4th fits, the 5th is over quota.
	if st, body := create("fourth"); st != http.StatusOK {
		t.Fatalf("4th group: %d %s", st, body)
	}
	if st, body := create("fifth"); st != http.StatusForbidden || !strings.Contains(body, "Quota exceeded, too many server groups.") {
		t.Fatalf("5th group: %d %s", st, body)
	}
	if n, _ := a.Store.CountServerGroups(ctx, "acme"); n != 4 {
		t.Errorf("acme owns %d groups, want 4", n)
	}
	// web holds 3 members at a limit of 3: a 4th is refused.
	web := findGroup(t, a, "acme", "web")
	_, err = a.Store.UpdateServerGroup(ctx, store.Actor{Name: "test"}, web.UUID, store.AnyGeneration, func(g *models.ServerGroup) error {
		g.Members = append(g.Members, serverUUID(t, a, "cache-1"))
		return nil
	})
	if models.KindOf(err) != models.OverQuota {
		t.Errorf("4th member: %v, want over quota", err)
	}
	// The list page now shows acme's groups quota as full.
	r := adm.Get("/quotas")
	if got := cellText(quotaRow(t, r, "acme"), "quota-full-server_groups"); got != "full" {
		t.Errorf("acme groups badge = %q", got)
	}
}

func findGroup(t *testing.T, a *app, project, name string) models.ServerGroup {
	t.Helper()
	gs, err := a.Store.ListServerGroups(context.Background(), store.ServerGroupQuery{ProjectID: project})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no group %s in %s", name, project)
	return models.ServerGroup{}
}

func serverUUID(t *testing.T, a *app, name string) string {
	t.Helper()
	ss, _, err := a.Store.ListServers(context.Background(), store.ServerQuery{Search: name})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if s.Name == name {
			return s.UUID
		}
	}
	t.Fatalf("no server %s", name)
	return ""
}

// A refused submission comes back with the message next to the field and
// the value as typed, and saves nothing, not even the valid field.
func TestQuotaInvalidInput(t *testing.T) {
	a := newApp(t)
	adm := a.as(a.AdminName)
	tests := []struct {
		name           string
		groups, member string
		field, want    string
		status         int
	}{
		{"word", "lots", "5", "server_groups", "“lots” is not a limit", http.StatusBadRequest},
		{"fraction", "5", "2.5", "server_group_members", "“2.5” is not a limit", http.StatusBadRequest},
		{"negative", "-2", "5", "server_groups", "“-2” is not a limit", http.StatusBadRequest},
		{"empty", "5", " ", "server_group_members", "Give a limit", http.StatusBadRequest},
		// acme owns 3 groups, and web has 3 members.
		{"below groups in use", "2", "5", "server_groups", "Quota limit 2 for server_groups must be greater than or equal to already used and reserved 3.", http.StatusBadRequest},
		{"below members in use", "5", "1", "server_group_members", "Quota limit 1 for server_group_members must be greater than or equal to already used and reserved 3.", http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := refused(t, adm, "/quotas/acme", "/quotas/acme", url.Values{"server_groups": {tc.groups}, "server_group_members": {tc.member}})
			if got := r.Text(t, "error-"+tc.field); !strings.Contains(got, tc.want) {
				t.Errorf("error next to %s = %q, want %q", tc.field, got, tc.want)
			}
			if v, _ := r.Doc(t).Find(`#f-server_groups`).Attr("value"); v != tc.groups {
				t.Errorf("server_groups re-shown as %q, want %q", v, tc.groups)
			}
			if qs, err := a.Store.ListQuotas(context.Background(), "acme"); err != nil || len(qs) != 0 {
				t.Errorf("quotas after a refused save: %v, %v", qs, err)
			}
		})
	}
	// "Force" lets a limit go below usage; the page then flags it.
	page := adm.Follow("/quotas/acme", "/quotas/acme", url.Values{"server_groups": {"2"}, "server_group_members": {"unlimited"}, "force": {"true"}})
	if got := page.Text(t, "quota-over-server_groups"); got != "over the limit" {
		t.Errorf("over badge = %q", got)
	}
	if got := page.Text(t, "quota-limit-server_group_members"); got != "unlimited" {
		t.Errorf("members limit shown = %q", got)
	}
	if n, _ := a.Store.GetQuota(context.Background(), "acme", models.QuotaServerGroupMembers); n != -1 {
		t.Errorf("unlimited stored as %d", n)
	}
}

// A save from a page that someone else's change made stale is refused.
func TestQuotaConcurrentChange(t *testing.T) {
	a := newApp(t)
	adm := a.as(a.AdminName)
	form := adm.Get("/quotas/globex")
	expect, _ := form.Doc(t).Find(`input[name="expect_server_groups"]`).Attr("value")
	if expect != "10" {
		t.Fatalf("expect_server_groups = %q", expect)
	}
	if err := a.Store.SetQuota(context.Background(), store.Actor{Name: "other"}, "globex", models.QuotaServerGroups, 7); err != nil {
		t.Fatal(err)
	}
	r := refused(t, adm, "/quotas/acme", "/quotas/globex", url.Values{
		"server_groups": {"5"}, "server_group_members": {"10"},
		"expect_server_groups": {expect}, "expect_server_group_members": {"10"},
	})
	if !strings.Contains(r.Text(t, "form-error"), "changed by someone else") {
		t.Fatalf("status %d, form error %q", r.StatusCode, r.Text(t, "form-error"))
	}
	if n, _ := a.Store.GetQuota(context.Background(), "globex", models.QuotaServerGroups); n != 7 {
		t.Errorf("globex server_groups = %d, want the other change (7) kept", n)
	}
}

func TestQuotaReset(t *testing.T) {
	a := newApp(t)
	ctx := context.Background()
	adm := a.as(a.AdminName)
	adm.Follow("/quotas/globex", "/quotas/globex", url.Values{"server_groups": {"unlimited"}, "server_group_members": {"6"}})
	page := adm.Follow("/quotas/globex", "/quotas/globex/reset", nil)
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "reset to the default") {
		t.Errorf("flash = %q", got)
	}
	for _, res := range []string{models.QuotaServerGroups, models.QuotaServerGroupMembers} {
		if got := page.Text(t, "quota-limit-"+res); got != "10 (default)" {
			t.Errorf("%s shown as %q", res, got)
		}
	}
	if qs, err := a.Store.ListQuotas(ctx, "globex"); err != nil || len(qs) != 0 {
		t.Errorf("rows left after reset: %v, %v", qs, err)
	}
	if page.Count(t, "quota-reset") != 0 {
		t.Error("reset offered with nothing to reset")
	}
	events, _, _ := a.Store.ListAudit(ctx, store.AuditQuery{ObjectType: "quota", Limit: 2})
	if len(events) != 2 || events[0].Action != "reset" || events[1].Action != "reset" {
		t.Errorf("latest quota events = %+v", events)
	}
	page = adm.Follow("/quotas/globex", "/quotas/globex/reset", nil)
	if got := page.Text(t, "flash-warning"); !strings.Contains(got, "Nothing to reset") {
		t.Errorf("second reset flash = %q", got)
	}
}

// Readers and members see their own project's quotas, read-only, and
// cannot change them; other projects' pages do not exist for them.
func TestQuotaNonAdmins(t *testing.T) {
	a := newApp(t)
	ctx := context.Background()
	for _, tc := range []struct{ user, project, other string }{
		{"rita", "globex", "acme"},
		{"mike", "acme", "globex"},
	} {
		t.Run(tc.user, func(t *testing.T) {
			c := a.as(tc.user)
			r := c.Get("/quotas")
			if got := r.Texts(t, "quota-project"); len(got) != 1 || got[0] != tc.project {
				t.Errorf("%s sees projects %v", tc.user, got)
			}
			if r.Count(t, "nav-quotas") != 1 {
				t.Error("no Quotas entry in the navigation")
			}
			if cur, _ := r.Doc(t).Find(`[aria-current="page"]`).Attr("data-testid"); cur != "nav-quotas" {
				t.Errorf("current page marked %q", cur)
			}
			own := c.Get("/quotas/" + tc.project)
			if own.StatusCode != http.StatusOK || own.Count(t, "quota-form") != 0 || own.Count(t, "quota-readonly") != 1 {
				t.Errorf("own page: status %d, %d forms", own.StatusCode, own.Count(t, "quota-form"))
			}
			if st := c.Get("/quotas/" + tc.other).StatusCode; st != http.StatusNotFound {
				t.Errorf("another project's page: %d, want 404", st)
			}
			for _, action := range []string{"/quotas/" + tc.project, "/quotas/" + tc.project + "/reset"} {
				r := c.Submit("/quotas/"+tc.project, action, url.Values{"server_groups": {"unlimited"}, "server_group_members": {"unlimited"}})
				if r.StatusCode != http.StatusForbidden {
					t.Errorf("POST %s: %d, want 403", action, r.StatusCode)
				}
			}
			if qs, err := a.Store.ListQuotas(ctx, ""); err != nil || len(qs) != 0 {
				t.Errorf("quotas after a refused post: %v, %v", qs, err)
			}
		})
	}
}

// The store side of the page, on SQLite and PostgreSQL: usage per project
// and UpdateQuotas's checks, each refusal leaving the limits unchanged.
func TestQuotaStoreUpdates(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := s.LoadDemo(ctx); err != nil {
			t.Fatal(err)
		}
		adm := store.Actor{Name: "test", Via: "cli"}
		us, err := s.ListProjectUsage(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range us {
			got = append(got, fmt.Sprintf("%s:%d groups,%d largest(%s),%d servers", u.ProjectID, u.Groups, u.LargestGroupMembers, u.LargestGroupName, u.Servers))
		}
		if want := []string{"acme:3 groups,3 largest(web),7 servers", "globex:1 groups,3 largest(batch),3 servers"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("usage = %v, want %v", got, want)
		}
		tests := []struct {
			name    string
			project string
			u       store.QuotaUpdate
			kind    models.Kind // 0: accepted
			field   string
			changed string
			after   map[string]int // the effective limits afterwards
		}{
			{"set both", "acme", store.QuotaUpdate{Set: map[string]int{"server_groups": 5, "server_group_members": -1}}, 0, "", "[server_groups server_group_members]", map[string]int{"server_groups": 5, "server_group_members": -1}},
			{"same again changes nothing", "acme", store.QuotaUpdate{Set: map[string]int{"server_groups": 5}}, 0, "", "[]", map[string]int{"server_groups": 5, "server_group_members": -1}},
			{"below usage", "acme", store.QuotaUpdate{Set: map[string]int{"server_groups": 2}}, models.Invalid, "server_groups", "", map[string]int{"server_groups": 5, "server_group_members": -1}},
			{"below usage forced", "acme", store.QuotaUpdate{Set: map[string]int{"server_groups": 2}, Force: true}, 0, "", "[server_groups]", map[string]int{"server_groups": 2, "server_group_members": -1}},
			{"stale expectation", "acme", store.QuotaUpdate{Set: map[string]int{"server_groups": 8}, Expect: map[string]int{"server_groups": 5}}, models.Conflict, "generation", "", map[string]int{"server_groups": 2, "server_group_members": -1}},
			{"current expectation", "acme", store.QuotaUpdate{Set: map[string]int{"server_groups": 8}, Expect: map[string]int{"server_groups": 2, "server_group_members": -1}}, 0, "", "[server_groups]", map[string]int{"server_groups": 8, "server_group_members": -1}},
			{"below -1", "acme", store.QuotaUpdate{Set: map[string]int{"server_group_members": -3}}, models.Invalid, "server_group_members", "", map[string]int{"server_groups": 8, "server_group_members": -1}},
			{"unknown resource", "acme", store.QuotaUpdate{Set: map[string]int{"cores": 3}}, models.Invalid, "resource", "", map[string]int{"server_groups": 8, "server_group_members": -1}},
			{"set and reset", "acme", store.QuotaUpdate{Set: map[string]int{"server_groups": 3}, Reset: []string{"server_groups"}}, models.Invalid, "server_groups", "", map[string]int{"server_groups": 8, "server_group_members": -1}},
			{"reset one", "acme", store.QuotaUpdate{Reset: []string{"server_group_members"}}, 0, "", "[server_group_members]", map[string]int{"server_groups": 8, "server_group_members": 10}},
			{"no project", "", store.QuotaUpdate{Set: map[string]int{"server_groups": 3}}, models.Invalid, "project", "", nil},
			{"new project", "newco", store.QuotaUpdate{Set: map[string]int{"server_group_members": 0}}, 0, "", "[server_group_members]", map[string]int{"server_groups": 10, "server_group_members": 0}},
		}
		for _, tc := range tests {
			changed, err := s.UpdateQuotas(ctx, adm, tc.project, tc.u)
			if tc.kind == 0 {
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if got := fmt.Sprint(changed); got != tc.changed {
					t.Errorf("%s: changed %s, want %s", tc.name, got, tc.changed)
				}
			} else if models.KindOf(err) != tc.kind || models.FieldOf(err) != tc.field {
				t.Errorf("%s: %v (kind %v, field %q), want %v on %q", tc.name, err, models.KindOf(err), models.FieldOf(err), tc.kind, tc.field)
			}
			if tc.project == "" {
				continue
			}
			u, err := s.GetProjectUsage(ctx, tc.project)
			if err != nil {
				t.Fatal(err)
			}
			for res, want := range tc.after {
				if n, _ := u.Limit(res); n != want {
					t.Errorf("%s: %s = %d, want %d", tc.name, res, n, want)
				}
			}
		}
		// One event per changed limit: 2 + 1 + 1 + 1 + 1.
		events, total, err := s.ListAudit(ctx, store.AuditQuery{ObjectType: "quota"})
		if err != nil || total != 6 {
			t.Errorf("quota audit events = %d, %v", total, err)
		}
		if len(events) > 0 && (events[0].ObjectID != "newco/server_group_members" || events[0].Action != "set") {
			t.Errorf("latest event = %+v", events[0])
		}
	})
}

// Project ids are free text: one with a slash or a space still has its own
// page, reached through the link other pages embed.
func TestQuotaProjectIDsNeedingEscapes(t *testing.T) {
	a := newApp(t)
	adm := a.as(a.AdminName)
	for _, project := range []string{"team/x", "team x", "100%"} {
		t.Run(project, func(t *testing.T) {
			var b strings.Builder
			if err := cv.QuotaLink(project).Render(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			d, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
			if err != nil {
				t.Fatal(err)
			}
			href, _ := d.Find(sel("quota-link")).Attr("href")
			page := adm.Follow(href, href, url.Values{"server_groups": {"3"}, "server_group_members": {"unlimited"}})
			if got := page.Text(t, "page-title"); got != "Quotas of "+project {
				t.Errorf("%s leads to %q", href, got)
			}
			if n, err := a.Store.GetQuota(context.Background(), project, models.QuotaServerGroups); err != nil || n != 3 {
				t.Errorf("stored limit of %q = %d, %v", project, n, err)
			}
		})
	}
}

// The navigation offers Quotas to every signed-in role, and to nobody else
// (error pages may use the same layout without a user).
func TestQuotaNavigation(t *testing.T) {
	a := newApp(t)
	for _, user := range []string{a.AdminName, "mike", "rita"} {
		if n := a.as(user).Get("/").Count(t, "nav-quotas"); n != 1 {
			t.Errorf("%s sees %d Quotas entries", user, n)
		}
	}
	var b strings.Builder
	if err := views.Layout(views.Page{Title: "Not found"}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `data-testid="nav-quotas"`) {
		t.Error("a page without a user offers Quotas")
	}
}

// Saving one limit leaves the other at the default it showed, rather than
// pinning it to today's default value.
func TestQuotaSaveKeepsTheOtherDefault(t *testing.T) {
	a := newApp(t)
	ctx := context.Background()
	adm := a.as(a.AdminName)
	adm.Follow("/quotas/globex", "/quotas/globex", url.Values{"server_groups": {"5"}, "server_group_members": {"10"}})
	qs, err := a.Store.ListQuotas(ctx, "globex")
	if err != nil || len(qs) != 1 || qs[0].Resource != models.QuotaServerGroups || qs[0].Limit != 5 {
		t.Errorf("quota rows after saving server_groups = 5: %+v, %v; want only server_groups", qs, err)
	}
}
