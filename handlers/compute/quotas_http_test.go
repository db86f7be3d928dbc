package compute_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

const qs = "/compute/v2.1/os-quota-sets/"

// quotaBody renders the flat quota_set Nova answers for the given limits of
// server_groups and server_group_members, every other resource at -1, with
// the resources microversion filtering leaves (all, from 2.36, from 2.57).
func quotaBody(id string, since string, groups, members int) string {
	var keys []string
	switch since {
	case "2.1":
		keys = []string{"cores", "fixed_ips", "floating_ips", "injected_file_content_bytes", "injected_file_path_bytes",
			"injected_files", "instances", "key_pairs", "metadata_items", "ram", "security_group_rules", "security_groups"}
	case "2.36":
		keys = []string{"cores", "injected_file_content_bytes", "injected_file_path_bytes", "injected_files", "instances",
			"key_pairs", "metadata_items", "ram"}
	case "2.57":
		keys = []string{"cores", "instances", "key_pairs", "metadata_items", "ram"}
	}
	var b strings.Builder
	b.WriteString(`{"quota_set":{`)
	if id != "" {
		fmt.Fprintf(&b, `"id":%q,`, id)
	}
	for _, k := range keys {
		fmt.Fprintf(&b, `%q:-1,`, k)
	}
	fmt.Fprintf(&b, `"server_group_members":%d,"server_groups":%d}}`, members, groups)
	return b.String()
}

func TestQuotaSetShowShapes(t *testing.T) {
	s := newServer(t, nil)
	if _, err := s.Store.UpdateQuotas(context.Background(), store.Actor{Name: "test"}, "p1",
		store.QuotaUpdate{Set: map[string]int{models.QuotaServerGroups: 4, models.QuotaServerGroupMembers: -1}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, user, version string
		want                      string
	}{
		{"no header is 2.1", qs + "p1", "rita", "", quotaBody("p1", "2.1", 4, -1)},
		{"2.35 keeps network proxies", qs + "p1", "alice", "2.35", quotaBody("p1", "2.1", 4, -1)},
		{"2.36 drops network proxies", qs + "p1", "alice", "2.36", quotaBody("p1", "2.36", 4, -1)},
		{"2.56 keeps personality", qs + "p1", "alice", "2.56", quotaBody("p1", "2.36", 4, -1)},
		{"2.57 drops personality", qs + "p1", "alice", "2.57", quotaBody("p1", "2.57", 4, -1)},
		{"latest", qs + "p1", "admin", "latest", quotaBody("p1", "2.57", 4, -1)},
		{"untouched project at defaults", qs + "p2", "bob", "2.57", quotaBody("p2", "2.57", 10, 10)},
		{"unknown project at defaults", qs + "nobody", "admin", "2.57", quotaBody("nobody", "2.57", 10, 10)},
		{"user_id shows the project's", qs + "p1?user_id=alice", "admin", "2.75", quotaBody("p1", "2.57", 4, -1)},
		{"defaults ignore the project's limits", qs + "p1/defaults", "alice", "2.1", quotaBody("p1", "2.1", 10, 10)},
		{"defaults at 2.57", qs + "p1/defaults", "alice", "2.57", quotaBody("p1", "2.57", 10, 10)},
		{"defaults of another project", qs + "p2/defaults", "rita", "2.36", quotaBody("p2", "2.36", 10, 10)},
		{"defaults take any query at 2.75", qs + "p2/defaults?x=1", "rita", "2.93", quotaBody("p2", "2.57", 10, 10)},
		{"project id in the URL", "/compute/v2.1/0a1b2c3d4e5f/os-quota-sets/0a1b2c3d4e5f", "olga", "2.57", quotaBody("0a1b2c3d4e5f", "2.57", 10, 10)},
		{"unknown query ignored before 2.75", qs + "p1?x=1", "alice", "2.74", quotaBody("p1", "2.57", 4, -1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := must(t, s.req(http.MethodGet, c.path, c.user, c.version, ""), http.StatusOK)
			if string(r.Body) != c.want {
				t.Errorf("body\n got %s\nwant %s", r.Body, c.want)
			}
			want := "compute " + c.version
			if c.version == "" {
				want = "compute 2.1"
			} else if c.version == "latest" {
				want = "compute 2.104"
			}
			if got := r.Header.Get("OpenStack-API-Version"); got != want {
				t.Errorf("version header %q, want %q", got, want)
			}
		})
	}
}

func TestQuotaSetDetailAndLimitsCountUsage(t *testing.T) {
	s := newServer(t, nil)
	ctx := context.Background()
	sys := store.Actor{Name: "test"}
	s.provider(t, "cn1", nil)
	var ids []string
	for i := 0; i < 4; i++ {
		srv := &models.Server{Name: fmt.Sprintf("vm%d", i), ProjectID: "p1", UserID: "alice", Host: "cn1"}
		if err := s.Store.CreateServer(ctx, sys, srv); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, srv.UUID)
	}
	groups := []*models.ServerGroup{
		{Name: "big", ProjectID: "p1", UserID: "alice", Policy: models.PolicyAffinity, Members: ids[:3]},
		{Name: "small", ProjectID: "p1", UserID: "alice", Policy: models.PolicyAntiAffinity, Members: ids[3:]},
		{Name: "other", ProjectID: "p2", UserID: "bob", Policy: models.PolicyAffinity},
	}
	for _, g := range groups {
		if err := s.Store.CreateServerGroup(ctx, sys, g); err != nil {
			t.Fatal(err)
		}
	}

	detail := func(limit, inUse int) string {
		return fmt.Sprintf(`{"limit":%d,"in_use":%d,"reserved":0}`, limit, inUse)
	}
	unl := detail(-1, 0)
	want257 := `{"quota_set":{"id":"p1","cores":` + unl + `,"instances":` + detail(-1, 4) + `,"key_pairs":` + unl +
		`,"metadata_items":` + unl + `,"ram":` + unl + `,"server_group_members":` + detail(10, 3) +
		`,"server_groups":` + detail(10, 2) + `}}`
	r := must(t, s.req(http.MethodGet, qs+"p1/detail", "rita", "2.57", ""), http.StatusOK)
	if string(r.Body) != want257 {
		t.Errorf("detail 2.57\n got %s\nwant %s", r.Body, want257)
	}
	r = must(t, s.req(http.MethodGet, qs+"p1/detail", "admin", "2.1", ""), http.StatusOK)
	if v := r.JSON(t)["quota_set"].(map[string]any); len(v) != 15 || v["security_groups"] == nil || v["injected_files"] == nil {
		t.Errorf("detail 2.1 keeps every resource: %s", r.Body)
	}

	limits := []struct {
		name, version, user, query string
		want                       string
	}{
		{"2.1", "", "alice", "", `{"limits":{"rate":[],"absolute":{"maxTotalInstances":-1,"maxTotalCores":-1,"maxTotalRAMSize":-1,` +
			`"maxServerMeta":-1,"maxImageMeta":-1,"maxPersonality":-1,"maxPersonalitySize":-1,"maxTotalKeypairs":-1,` +
			`"maxServerGroups":10,"maxServerGroupMembers":10,"maxTotalFloatingIps":-1,"maxSecurityGroups":-1,` +
			`"maxSecurityGroupRules":-1,"totalRAMUsed":0,"totalCoresUsed":0,"totalInstancesUsed":4,` +
			`"totalFloatingIpsUsed":0,"totalSecurityGroupsUsed":0,"totalServerGroupsUsed":2}}}`},
		{"2.36 drops network proxies", "2.36", "rita", "", `{"limits":{"rate":[],"absolute":{"maxTotalInstances":-1,"maxTotalCores":-1,` +
			`"maxTotalRAMSize":-1,"maxServerMeta":-1,"maxImageMeta":-1,"maxPersonality":-1,"maxPersonalitySize":-1,` +
			`"maxTotalKeypairs":-1,"maxServerGroups":10,"maxServerGroupMembers":10,"totalRAMUsed":0,"totalCoresUsed":0,` +
			`"totalInstancesUsed":4,"totalServerGroupsUsed":2}}}`},
		{"2.39 drops maxImageMeta", "2.39", "alice", "", `{"limits":{"rate":[],"absolute":{"maxTotalInstances":-1,"maxTotalCores":-1,` +
			`"maxTotalRAMSize":-1,"maxServerMeta":-1,"maxPersonality":-1,"maxPersonalitySize":-1,` +
			`"maxTotalKeypairs":-1,"maxServerGroups":10,"maxServerGroupMembers":10,"totalRAMUsed":0,"totalCoresUsed":0,` +
			`"totalInstancesUsed":4,"totalServerGroupsUsed":2}}}`},
		{"2.57 drops personality", "2.57", "bob", "", `{"limits":{"rate":[],"absolute":{"maxTotalInstances":-1,"maxTotalCores":-1,` +
			`"maxTotalRAMSize":-1,"maxServerMeta":-1,"maxTotalKeypairs":-1,"maxServerGroups":10,"maxServerGroupMembers":10,` +
			`"totalRAMUsed":0,"totalCoresUsed":0,"totalInstancesUsed":0,"totalServerGroupsUsed":1}}}`},
		{"admin asks for another project", "2.57", "admin", "?tenant_id=p2&tenant_id=p1", `{"limits":{"rate":[],"absolute":{"maxTotalInstances":-1,"maxTotalCores":-1,` +
			`"maxTotalRAMSize":-1,"maxServerMeta":-1,"maxTotalKeypairs":-1,"maxServerGroups":10,"maxServerGroupMembers":10,` +
			`"totalRAMUsed":0,"totalCoresUsed":0,"totalInstancesUsed":4,"totalServerGroupsUsed":2}}}`},
	}
	for _, c := range limits {
		t.Run("limits "+c.name, func(t *testing.T) {
			r := must(t, s.req(http.MethodGet, "/compute/v2.1/limits"+c.query, c.user, c.version, ""), http.StatusOK)
			if string(r.Body) != c.want {
				t.Errorf("body\n got %s\nwant %s", r.Body, c.want)
			}
		})
	}
}

func TestQuotaSetRequestsRefused(t *testing.T) {
	s := newServer(t, nil)
	forbid := func(action string) string {
		return "Policy doesn't allow os_compute_api:os-quota-sets:" + action + " to be performed."
	}
	cases := []struct {
		name, method, path, user, version, body string
		status                                  int
		fault, msg                              string
	}{
		// policy: readers see their own project, admins set and reset
		{"reader of another project", "GET", qs + "p2", "rita", "", "", 403, "forbidden", forbid("show")},
		{"detail of another project", "GET", qs + "p1/detail", "bob", "", "", 403, "forbidden", forbid("detail")},
		{"member cannot set", "PUT", qs + "p1", "alice", "", `{"quota_set":{"server_groups":3}}`, 403, "forbidden", forbid("update")},
		{"member cannot reset", "DELETE", qs + "p1", "alice", "", "", 403, "forbidden", forbid("delete")},
		{"policy before corral's refusal", "PUT", qs + "p1", "alice", "", `{"quota_set":{"cores":3}}`, 403, "forbidden", forbid("update")},
		{"tenant_id needs admin", "GET", "/compute/v2.1/limits?tenant_id=p1", "alice", "", "", 403, "forbidden",
			"Policy doesn't allow os_compute_api:limits:other_project to be performed."},
		{"no token", "GET", qs + "p1", "", "", "", 401, "unauthorized", ""},
		{"URL project is not the token's", "GET", "/compute/v2.1/0a1b2c3d4e5f/os-quota-sets/p1", "alice", "", "", 400, "badRequest",
			"Malformed request URL: URL's project_id '0a1b2c3d4e5f' doesn't match Context's project_id 'p1'"},
		// query schemas from 2.75
		{"unknown show query at 2.75", "GET", qs + "p1?x=1", "alice", "2.75", "", 400, "badRequest", "Additional properties are not allowed ('x' was unexpected)"},
		{"unknown detail query at 2.75", "GET", qs + "p1/detail?x=1", "alice", "2.75", "", 400, "badRequest", "Additional properties are not allowed ('x' was unexpected)"},
		{"unknown limits query at 2.75", "GET", "/compute/v2.1/limits?reserved=1", "alice", "2.75", "", 400, "badRequest", "Additional properties are not allowed ('reserved' was unexpected)"},
		{"unknown delete query at 2.75", "DELETE", qs + "p1?x=1", "admin", "2.75", "", 400, "badRequest", "Additional properties are not allowed ('x' was unexpected)"},
		// bodies, checked against nova-api's answers
		{"below -1", "PUT", qs + "p1", "admin", "", `{"quota_set":{"server_groups":-2}}`, 400, "badRequest",
			"Invalid input for field/attribute server_groups. Value: -2. -2 is less than the minimum of -1"},
		{"above MAX_INT", "PUT", qs + "p1", "admin", "", `{"quota_set":{"server_group_members":"2147483648"}}`, 400, "badRequest",
			"Invalid input for field/attribute server_group_members. Value: 2147483648. 2147483648 is greater than the maximum of 2147483647"},
		{"not a number", "PUT", qs + "p1", "admin", "", `{"quota_set":{"server_groups":"abc"}}`, 400, "badRequest",
			"Invalid input for field/attribute server_groups. Value: abc. 'abc' does not match '^-?[0-9]+$'"},
		{"a float", "PUT", qs + "p1", "admin", "", `{"quota_set":{"server_groups":1.5}}`, 400, "badRequest",
			"Invalid input for field/attribute server_groups. Value: 1.5. 1.5 is not of type 'integer', 'string'"},
		{"a boolean", "PUT", qs + "p1", "admin", "", `{"quota_set":{"server_groups":true}}`, 400, "badRequest",
			"Invalid input for field/attribute server_groups. Value: True. True is not of type 'integer', 'string'"},
		{"force as a number", "PUT", qs + "p1", "admin", "", `{"quota_set":{"force":1}}`, 400, "badRequest",
			"Invalid input for field/attribute force. Value: 1. 1 is not of type 'boolean', 'string'"},
		{"force not a boolean word", "PUT", qs + "p1", "admin", "", `{"quota_set":{"force":"maybe"}}`, 400, "badRequest",
			"Invalid input for field/attribute force. Value: maybe. 'maybe' is not one of [True, 'True', 'TRUE', 'true', '1', 'ON', 'On', 'on', 'YES', 'Yes', 'yes', False, 'False', 'FALSE', 'false', '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no']"},
		{"floating_ips gone at 2.57", "PUT", qs + "p1", "admin", "2.57", `{"quota_set":{"floating_ips":3}}`, 400, "badRequest",
			"Invalid input for field/attribute quota_set. Value: {'floating_ips': 3}. Additional properties are not allowed ('floating_ips' was unexpected)"},
		{"injected_files gone at 2.57", "PUT", qs + "p1", "admin", "2.57", `{"quota_set":{"injected_files":-1}}`, 400, "badRequest",
			"Invalid input for field/attribute quota_set. Value: {'injected_files': -1}. Additional properties are not allowed ('injected_files' was unexpected)"},
		{"unknown resource", "PUT", qs + "p1", "admin", "", `{"quota_set":{"foo":3}}`, 400, "badRequest",
			"Invalid input for field/attribute quota_set. Value: {'foo': 3}. Additional properties are not allowed ('foo' was unexpected)"},
		{"quota_set not an object", "PUT", qs + "p1", "admin", "", `{"quota_set":5}`, 400, "badRequest",
			"Invalid input for field/attribute quota_set. Value: 5. 5 is not of type 'object'"},
		{"no quota_set", "PUT", qs + "p1", "admin", "", `{"quota_sets":{}}`, 400, "badRequest", "'quota_set' is a required property"},
		{"empty body", "PUT", qs + "p1", "admin", "", "", 400, "badRequest", "None is not of type 'object'"},
		{"body before query at 2.75", "PUT", qs + "p1?x=1", "admin", "2.75", `{"quota_set":{"server_groups":"x"}}`, 400, "badRequest",
			"Invalid input for field/attribute server_groups. Value: x. 'x' does not match '^-?[0-9]+$'"},
		{"unknown update query at 2.75", "PUT", qs + "p1?x=1", "admin", "2.75", `{"quota_set":{"server_groups":3}}`, 400, "badRequest",
			"Additional properties are not allowed ('x' was unexpected)"},
		// what corral does not keep
		{"an unenforced resource", "PUT", qs + "p1", "admin", "", `{"quota_set":{"server_groups":3,"cores":"20"}}`, 400, "badRequest",
			"Quota cores cannot be set: corral enforces only server_groups and server_group_members, and reports cores as unlimited (-1)."},
		{"per-user quotas", "PUT", qs + "p1?user_id=alice", "admin", "", `{"quota_set":{"server_groups":3}}`, 400, "badRequest",
			"Invalid input for query parameters user_id: corral keeps no per-user quotas; leave user_id out to set the project's."},
		{"bad project id", "PUT", qs + "%20p1", "admin", "", `{"quota_set":{"server_groups":3}}`, 400, "badRequest", ""},
		{"XML body", "PUT", qs + "p1", "admin", "", `{"quota_set":{}}`, 415, "badMediaType", "Unsupported Content-Type"},
		{"no list of quota sets", "GET", "/compute/v2.1/os-quota-sets", "admin", "", "", 404, "itemNotFound", ""},
	}
	rev0, err := s.Store.Revision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var extra []string
			if c.status == 415 {
				extra = []string{"Content-Type", "application/xml"}
			}
			r := s.req(c.method, c.path, c.user, c.version, c.body, extra...)
			fault(t, r, c.status, c.fault, c.msg)
		})
	}
	// Nothing refused above may have written anything.
	u, err := s.Store.GetProjectUsage(context.Background(), "p1")
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Limits) != 0 {
		t.Errorf("refused requests changed p1's limits: %v", u.Limits)
	}
	if rev, err := s.Store.Revision(context.Background()); err != nil || rev != rev0 {
		t.Errorf("refused requests moved the revision from %d to %d (%v)", rev0, rev, err)
	}
}

func TestQuotaSetUpdateAndReset(t *testing.T) { testQuotaSetUpdateAndReset(t, nil) }

func TestQuotaSetUpdateAndResetPostgres(t *testing.T) {
	testQuotaSetUpdateAndReset(t, storetest.OpenPostgres(t))
}

func testQuotaSetUpdateAndReset(t *testing.T, st *store.Store) {
	s := newServer(t, st)
	ctx := context.Background()
	create := func(user, name string) response {
		return s.req(http.MethodPost, "/compute/v2.1/os-server-groups", user, "2.64",
			`{"server_group":{"name":"`+name+`","policy":"affinity"}}`)
	}
	must(t, create("alice", "g1"), http.StatusOK)
	must(t, create("alice", "g2"), http.StatusOK)

	steps := []struct {
		name, method, path, version, body string
		status                            int
		want                              string // exact body, or a fault message
		groups, members                   int    // p1's effective limits afterwards
		wrote                             bool   // a limit changed
	}{
		{"set both, as strings", "PUT", qs + "p1", "2.57", `{"quota_set":{"server_groups":"3","server_group_members":"5"}}`,
			200, quotaBody("", "2.57", 3, 5), 3, 5, true},
		{"unenforced at -1 is accepted", "PUT", qs + "p1", "2.1", `{"quota_set":{"cores":-1,"server_groups":4}}`,
			200, quotaBody("", "2.1", 4, 5), 4, 5, true},
		{"an empty set changes nothing", "PUT", qs + "p1", "2.1", `{"quota_set":{}}`,
			200, quotaBody("", "2.1", 4, 5), 4, 5, false},
		{"below usage", "PUT", qs + "p1", "2.1", `{"quota_set":{"server_groups":1}}`,
			400, "Quota limit 1 for server_groups must be greater than or equal to already used and reserved 2.", 4, 5, false},
		{"force false is no force", "PUT", qs + "p1", "2.1", `{"quota_set":{"server_groups":1,"force":"False"}}`,
			400, "Quota limit 1 for server_groups must be greater than or equal to already used and reserved 2.", 4, 5, false},
		{"forced below usage", "PUT", qs + "p1", "2.1", `{"quota_set":{"server_groups":1,"force":true}}`,
			200, quotaBody("", "2.1", 1, 5), 1, 5, true},
		{"unlimited", "PUT", qs + "p1", "2.1", `{"quota_set":{"server_groups":-1}}`,
			200, quotaBody("", "2.1", -1, 5), -1, 5, true},
		{"zero is allowed when unused", "PUT", qs + "p2", "2.1", `{"quota_set":{"server_groups":0}}`,
			200, quotaBody("", "2.1", 0, 10), -1, 5, true},
		{"reset to defaults", "DELETE", qs + "p1", "2.1", "", 202, "", 10, 10, true},
		{"reset again is fine", "DELETE", qs + "p1", "2.1", "", 202, "", 10, 10, false},
		{"per-user reset keeps the project's", "PUT", qs + "p1", "2.1", `{"quota_set":{"server_groups":7}}`,
			200, quotaBody("", "2.1", 7, 10), 7, 10, true},
		{"per-user reset", "DELETE", qs + "p1?user_id=alice", "2.75", "", 202, "", 7, 10, false},
	}
	for _, st := range steps {
		before, err := s.Store.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r := s.req(st.method, st.path, "admin", st.version, st.body)
		switch {
		case st.status == 202:
			must(t, r, 202)
			if len(r.Body) != 0 {
				t.Errorf("%s: 202 with body %q", st.name, r.Body)
			}
		case st.status == 200:
			must(t, r, 200)
			if string(r.Body) != st.want {
				t.Errorf("%s:\n got %s\nwant %s", st.name, r.Body, st.want)
			}
		default:
			fault(t, r, st.status, "badRequest", st.want)
		}
		u, err := s.Store.GetProjectUsage(ctx, "p1")
		if err != nil {
			t.Fatal(err)
		}
		g, _ := u.Limit(models.QuotaServerGroups)
		m, _ := u.Limit(models.QuotaServerGroupMembers)
		if g != st.groups || m != st.members {
			t.Fatalf("%s: store has server_groups=%d server_group_members=%d, want %d %d", st.name, g, m, st.groups, st.members)
		}
		// A write that changes a limit is one new revision; anything
		// else leaves the revision alone.
		after, err := s.Store.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if st.wrote {
			want = 1
		}
		if after-before != want {
			t.Errorf("%s: revision %d -> %d", st.name, before, after)
		}
	}

	// The limit set through the API is the one creation enforces.
	must(t, s.req(http.MethodPut, qs+"p1", "admin", "", `{"quota_set":{"server_groups":3}}`), http.StatusOK)
	must(t, create("alice", "g3"), http.StatusOK)
	fault(t, create("alice", "g4"), http.StatusForbidden, "forbidden", "Quota exceeded, too many server groups.")
	fault(t, create("bob", "none-allowed"), http.StatusForbidden, "forbidden", "Quota exceeded, too many server groups.")

	// Every change is audited under the admin who made it.
	events, _, err := s.Store.ListAudit(ctx, store.AuditQuery{ObjectType: "quota", Actor: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	var sets, resets int
	for _, e := range events {
		switch e.Action {
		case "set":
			sets++
		case "reset":
			resets++
		}
	}
	// 2 + 1 + 1 + 1 + 1 (p2) + 1 + 1 sets; one DELETE reset both resources.
	if sets != 8 || resets != 2 {
		t.Errorf("audit: %d sets, %d resets (%d events), want 8 and 2", sets, resets, len(events))
	}
}

// The Keystone- and Neutron-shaped answers OpenStackClient needs.
func TestQuotaClientLookups(t *testing.T) {
	s := newServer(t, nil)
	project := func(id string) string {
		return `{"id":"` + id + `","name":"` + id + `","domain_id":"default","description":"","enabled":true,` +
			`"parent_id":"default","is_domain":false,"tags":[],"options":{},"links":{"self":"` + s.URL + `/compute/v2.1/projects/` + id + `"}}`
	}
	keystoneErr := func(code int, title, msg string) string {
		return fmt.Sprintf(`{"error":{"code":%d,"message":%q,"title":%q}}`, code, msg, title)
	}
	list := func(ids ...string) string {
		var ps []string
		for _, id := range ids {
			ps = append(ps, project(id))
		}
		return `{"projects":[` + strings.Join(ps, ",") + `],"links":{"self":"` + s.URL + `/compute/v2.1/projects","previous":null,"next":null}}`
	}
	cases := []struct {
		name, path, user string
		status           int
		want             string
	}{
		{"own project", "/compute/v2.1/projects/p1", "rita", 200, `{"project":` + project("p1") + `}`},
		{"admin, any known project", "/compute/v2.1/projects/0a1b2c3d4e5f", "admin", 200, `{"project":` + project("0a1b2c3d4e5f") + `}`},
		{"another project", "/compute/v2.1/projects/p2", "alice", 404, keystoneErr(404, "Not Found", "Could not find project: p2.")},
		{"unknown project", "/compute/v2.1/projects/nobody", "admin", 404, keystoneErr(404, "Not Found", "Could not find project: nobody.")},
		{"list by name", "/compute/v2.1/projects?name=p2", "admin", 200, list("p2")},
		{"list all", "/compute/v2.1/projects", "admin", 200, list("0a1b2c3d4e5f", "admin", "p1", "p2")},
		{"list needs admin", "/compute/v2.1/projects?name=p1", "alice", 403,
			keystoneErr(403, "Forbidden", "You are not authorized to perform the requested action: identity:list_projects.")},
		{"empty network quota", "/compute/v2.1/v2.0/quotas/p1", "rita", 200, `{"quota":{}}`},
		{"network quota of another project", "/compute/v2.1/v2.0/quotas/p1", "bob", 403,
			`{"forbidden":{"code":403,"message":"Policy doesn't allow os_compute_api:os-quota-sets:show to be performed."}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := must(t, s.req(http.MethodGet, c.path, c.user, "", ""), c.status)
			if string(r.Body) != c.want {
				t.Errorf("body\n got %s\nwant %s", r.Body, c.want)
			}
		})
	}
}
