package compute_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"corral/models"
)

// limitsOf reads p's effective server-group limits from the store.
func limitsOf(t *testing.T, s *server, p string) (groups, members int) {
	t.Helper()
	u, err := s.Store.GetProjectUsage(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	groups, _ = u.Limit(models.QuotaServerGroups)
	members, _ = u.Limit(models.QuotaServerGroupMembers)
	return groups, members
}

func TestOpenStackClientQuotas(t *testing.T) {
	bin := clientPath(t, "openstack")
	s := newServer(t, nil)
	as := func(user string) cli {
		return cli{t: t, bin: bin, args: []string{"--os-auth-type", "admin_token",
			"--os-endpoint", s.URL + "/compute/v2.1", "--os-token=" + s.tokens[user]}}
	}
	admin, alice, rita := as("admin"), as("alice"), as("rita")

	admin.ok("quota", "set", "--server-groups", "3", "--server-group-members", "4", "p1")
	if g, m := limitsOf(t, s, "p1"); g != 3 || m != 4 {
		t.Fatalf("after quota set: store has %d, %d", g, m)
	}
	shown := admin.json("quota", "show", "p1")
	if shown["server-groups"] != 3.0 || shown["server-group-members"] != 4.0 || shown["cores"] != -1.0 || shown["project"] != "p1" {
		t.Errorf("quota show: %v", shown)
	}
	if d := admin.json("quota", "show", "--default", "p1"); d["server-groups"] != 10.0 || d["server-group-members"] != 10.0 {
		t.Errorf("quota show --default: %v", d)
	}
	if r := rita.json("quota", "show", "p1"); r["server-groups"] != 3.0 {
		t.Errorf("reader's quota show: %v", r)
	}

	out, err := admin.run("quota", "set", "--cores", "5", "p1")
	if err == nil || !strings.Contains(out, "Quota cores cannot be set: corral enforces only server_groups and server_group_members") {
		t.Errorf("setting cores: %v\n%s", err, out)
	}
	out, err = alice.run("quota", "set", "--server-groups", "50", "p1")
	if err == nil || !strings.Contains(out, "Policy doesn't allow os_compute_api:os-quota-sets:update to be performed.") {
		t.Errorf("member setting quotas: %v\n%s", err, out)
	}

	for _, name := range []string{"a", "b"} {
		must(t, s.req(http.MethodPost, "/compute/v2.1/os-server-groups", "alice", "2.64",
			`{"server_group":{"name":"`+name+`","policy":"affinity"}}`), http.StatusOK)
	}
	out, err = admin.run("quota", "set", "--server-groups", "1", "p1")
	if err == nil || !strings.Contains(out, "Quota limit 1 for server_groups must be greater than or equal to already used and reserved 2.") {
		t.Errorf("limit below usage: %v\n%s", err, out)
	}

	var detail []map[string]any
	if err := json.Unmarshal([]byte(admin.ok("quota", "list", "--compute", "--detail", "--project", "p1", "-f", "json")), &detail); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, row := range detail {
		if row["Resource"] == "server_groups" {
			found = true
			if row["In Use"] != 2.0 || row["Limit"] != 3.0 {
				t.Errorf("detail row: %v", row)
			}
		}
	}
	if !found {
		t.Errorf("no server_groups in quota list --detail: %v", detail)
	}

	absolute := func(c cli, args ...string) map[string]any {
		var rows []map[string]any
		out := c.ok(append([]string{"limits", "show", "--absolute", "-f", "json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("limits show: %v\n%s", err, out)
		}
		m := map[string]any{}
		for _, r := range rows {
			m[r["Name"].(string)] = r["Value"]
		}
		return m
	}
	if l := absolute(alice); l["maxServerGroups"] != 3.0 || l["maxServerGroupMembers"] != 4.0 || l["totalServerGroupsUsed"] != 2.0 || l["maxTotalCores"] != -1.0 {
		t.Errorf("alice's limits: %v", l)
	}
	if l := absolute(admin); l["maxServerGroups"] != 10.0 || l["totalServerGroupsUsed"] != 0.0 {
		t.Errorf("admin's own limits: %v", l)
	}
}

func TestNovaClientQuotas(t *testing.T) {
	bin := clientPath(t, "nova")
	s := newServer(t, nil)
	as := func(user, project string) cli {
		return cli{t: t, bin: bin,
			args: []string{"--os-auth-type", "admin_token", "--os-endpoint", s.URL + "/compute/v2.1", "--os-token=" + s.tokens[user]},
			env:  []string{"OS_PROJECT_ID=" + project, "OS_AUTH_URL=http://127.0.0.1:9/unused"}}
	}
	admin, bob := as("admin", "admin"), as("bob", "p2")
	row := func(name, value string) *regexp.Regexp {
		return regexp.MustCompile(`\|\s*` + name + `\s*\|\s*` + regexp.QuoteMeta(value) + `\s*\|`)
	}

	admin.ok("quota-update", "--server-groups", "4", "--server-group-members", "6", "p2")
	if g, m := limitsOf(t, s, "p2"); g != 4 || m != 6 {
		t.Fatalf("after quota-update: store has %d, %d", g, m)
	}
	out := bob.ok("quota-show", "--tenant", "p2")
	if !row("server_groups", "4").MatchString(out) || !row("server_group_members", "6").MatchString(out) || !row("cores", "-1").MatchString(out) {
		t.Errorf("quota-show:\n%s", out)
	}
	must(t, s.req(http.MethodPost, "/compute/v2.1/os-server-groups", "bob", "2.64",
		`{"server_group":{"name":"g","policy":"affinity"}}`), http.StatusOK)
	out = bob.ok("--os-compute-api-version", "2.75", "quota-show", "--tenant", "p2", "--detail")
	if !row("server_groups", "{'limit': 4, 'in_use': 1, 'reserved': 0}").MatchString(out) {
		t.Errorf("quota-show --detail:\n%s", out)
	}
	if out := admin.ok("quota-defaults", "--tenant", "p2"); !row("server_groups", "10").MatchString(out) {
		t.Errorf("quota-defaults:\n%s", out)
	}
	out = bob.ok("--os-compute-api-version", "2.75", "limits")
	// Name | Used | Max
	if !regexp.MustCompile(`\|\s*ServerGroups\s*\|\s*1\s*\|\s*4\s*\|`).MatchString(out) {
		t.Errorf("limits:\n%s", out)
	}
	// An admin reads another project's limits with --tenant (tenant_id).
	out = admin.ok("--os-compute-api-version", "2.75", "limits", "--tenant", "p2")
	if !regexp.MustCompile(`\|\s*ServerGroups\s*\|\s*1\s*\|\s*4\s*\|`).MatchString(out) {
		t.Errorf("limits --tenant p2:\n%s", out)
	}
	outErr, err := bob.run("quota-update", "--server-groups", "40", "p2")
	if err == nil || !strings.Contains(outErr, "Policy doesn't allow os_compute_api:os-quota-sets:update to be performed.") {
		t.Errorf("member quota-update: %v\n%s", err, outErr)
	}

	admin.ok("quota-delete", "--tenant", "p2")
	if g, m := limitsOf(t, s, "p2"); g != 10 || m != 10 {
		t.Errorf("after quota-delete: store has %d, %d", g, m)
	}
}
