package compute_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// These tests drive corral with Debian's real OpenStack clients
// (python3-openstackclient, python3-novaclient) through keystoneauth's
// admin_token plugin, which sends X-Auth-Token to the given endpoint with no
// Keystone (see ../shared/peers/clients.md).

func clientPath(t *testing.T, name string) string {
	t.Helper()
	// Debian's clients run on /usr/bin/python3; a python on PATH (pyenv)
	// may lack their modules.
	for _, p := range []string{"/usr/bin/" + name, "/usr/local/bin/" + name} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not installed (apt-get install python3-openstackclient python3-novaclient)", name)
	}
	t.Skipf("%s not installed; install python3-openstackclient and python3-novaclient to run this test", name)
	return ""
}

// cli runs one client. Tokens are passed as "--os-token=T": corral's tokens
// are base64url and may start with '-', which argparse would take for an
// option.
type cli struct {
	t    *testing.T
	bin  string
	args []string
	env  []string
}

func (c cli) run(args ...string) (stdout string, err error) {
	c.t.Helper()
	cmd := exec.Command(c.bin, append(append([]string{}, c.args...), args...)...)
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin", "HOME="+c.t.TempDir(), "PYTHONWARNINGS=ignore")
	cmd.Env = append(cmd.Env, c.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		c.t.Fatalf("%s %v: timed out", c.bin, args)
	}
	if err != nil {
		return out.String() + errb.String(), err
	}
	return out.String(), nil
}

// ok runs a command that must succeed.
func (c cli) ok(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", c.bin, strings.Join(args, " "), err, out)
	}
	return out
}

func (c cli) json(args ...string) map[string]any {
	c.t.Helper()
	out := c.ok(append(args, "-f", "json")...)
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		c.t.Fatalf("%v: not JSON: %v\n%s", args, err, out)
	}
	return v
}

func TestOpenStackClientServerGroups(t *testing.T) {
	bin := clientPath(t, "openstack")
	s := newServer(t, nil)
	oc := cli{t: t, bin: bin, args: []string{"--os-auth-type", "admin_token", "--os-endpoint", s.URL + "/compute/v2.1", "--os-token=" + s.tokens["alice"]}}
	v := func(version string, args ...string) []string {
		return append([]string{"--os-compute-api-version", version}, args...)
	}

	g := oc.json(v("2.64", "server", "group", "create", "--policy", "anti-affinity", "--rule", "max_server_per_host=3", "osc-g")...)
	if g["policy"] != "anti-affinity" || !reflect.DeepEqual(g["rules"], map[string]any{"max_server_per_host": 3.0}) ||
		g["project_id"] != "p1" || g["user_id"] != "alice" {
		t.Errorf("2.64 create with rules: %v", g)
	}
	plain := oc.json(v("2.64", "server", "group", "create", "--policy", "affinity", "osc-plain")...)
	if plain["policy"] != "affinity" || !reflect.DeepEqual(plain["rules"], map[string]any{}) {
		t.Errorf("2.64 create without rules: %v", plain)
	}
	soft := oc.json(v("2.15", "server", "group", "create", "--policy", "soft-anti-affinity", "osc-215")...)
	if !reflect.DeepEqual(soft["policies"], []any{"soft-anti-affinity"}) || soft["project_id"] != "p1" {
		t.Errorf("2.15 create: %v", soft)
	}
	old := oc.json(v("2.1", "server", "group", "create", "--policy", "affinity", "osc-21")...)
	if !reflect.DeepEqual(old["policies"], []any{"affinity"}) {
		t.Errorf("2.1 create: %v", old)
	}

	out, err := oc.run(v("2.64", "server", "group", "create", "--policy", "affinity", "--rule", "max_server_per_host=3", "osc-bad")...)
	if err == nil || !strings.Contains(out, "Only anti-affinity policy supports rules.") {
		t.Errorf("rules with affinity: err=%v\n%s", err, out)
	}
	out, err = oc.run(v("2.64", "server", "group", "create", "--policy", "anti-affinity", "--rule", "max_server_per_host=0", "osc-bad")...)
	if err == nil || !strings.Contains(out, "Invalid input for field/attribute max_server_per_host. Value: 0. 0 is less than the minimum of 1") {
		t.Errorf("rule 0: err=%v\n%s", err, out)
	}

	var listed []map[string]any
	if err := json.Unmarshal([]byte(oc.ok(v("2.64", "server", "group", "list", "--long", "-f", "json")...)), &listed); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range listed {
		names = append(names, x["Name"].(string))
	}
	sort.Strings(names)
	if want := []string{"osc-21", "osc-215", "osc-g", "osc-plain"}; !reflect.DeepEqual(names, want) {
		t.Errorf("list: %v, want %v", names, want)
	}

	// Scoping as the client sees it: an admin lists every project's
	// groups with --all-projects, another project's member sees none.
	asUser := func(user string) cli {
		c := oc
		c.args = []string{"--os-auth-type", "admin_token", "--os-endpoint", s.URL + "/compute/v2.1", "--os-token=" + s.tokens[user]}
		return c
	}
	if out := asUser("admin").ok(v("2.64", "server", "group", "list", "--all-projects", "-f", "value", "-c", "Name")...); strings.Count(out, "osc-") != 4 {
		t.Errorf("admin --all-projects:\n%s", out)
	}
	if out := asUser("bob").ok(v("2.64", "server", "group", "list", "-f", "value")...); strings.TrimSpace(out) != "" {
		t.Errorf("bob sees %q", out)
	}

	shown := oc.json(v("2.64", "server", "group", "show", "osc-g")...) // by name
	if shown["id"] != g["id"] || !reflect.DeepEqual(shown["rules"], g["rules"]) {
		t.Errorf("show by name: %v", shown)
	}
	shown = oc.json(v("2.64", "server", "group", "show", g["id"].(string))...)
	if shown["name"] != "osc-g" {
		t.Errorf("show by id: %v", shown)
	}

	oc.ok(v("2.64", "server", "group", "delete", "osc-g", "osc-plain", "osc-215", "osc-21")...)
	if out := oc.ok(v("2.64", "server", "group", "list", "-f", "value")...); strings.TrimSpace(out) != "" {
		t.Errorf("groups left after delete: %q", out)
	}
}

func TestNovaClientServerGroups(t *testing.T) {
	bin := clientPath(t, "nova")
	s := newServer(t, nil)
	// novaclient wants a project id and an auth URL even with admin_token;
	// the auth URL is never contacted.
	nv := cli{t: t, bin: bin,
		args: []string{"--os-auth-type", "admin_token", "--os-endpoint", s.URL + "/compute/v2.1", "--os-token=" + s.tokens["bob"]},
		env:  []string{"OS_PROJECT_ID=p2", "OS_AUTH_URL=http://127.0.0.1:9/unused"}}
	uuidRE := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

	out := nv.ok("--os-compute-api-version", "2.64", "server-group-create", "--rule", "max_server_per_host=2", "nova-g", "anti-affinity")
	id := uuidRE.FindString(out)
	if id == "" || !strings.Contains(out, "{'max_server_per_host': 2}") || !strings.Contains(out, "anti-affinity") {
		t.Fatalf("create:\n%s", out)
	}
	out = nv.ok("--os-compute-api-version", "2.15", "server-group-create", "nova-215", "soft-affinity")
	id215 := uuidRE.FindString(out)
	if id215 == "" || !strings.Contains(out, "['soft-affinity']") {
		t.Fatalf("2.15 create:\n%s", out)
	}
	out, err := nv.run("--os-compute-api-version", "2.64", "server-group-create", "--rule", "max_server_per_host=0", "nova-bad", "anti-affinity")
	if err == nil || !strings.Contains(out, "0 is less than the minimum of 1") {
		t.Errorf("rule 0: %v\n%s", err, out)
	}
	out = nv.ok("--os-compute-api-version", "2.64", "server-group-list")
	if !strings.Contains(out, id) || !strings.Contains(out, id215) {
		t.Errorf("list:\n%s", out)
	}
	out = nv.ok("--os-compute-api-version", "2.64", "server-group-get", id)
	if !strings.Contains(out, "nova-g") || !strings.Contains(out, "p2") {
		t.Errorf("get:\n%s", out)
	}
	out = nv.ok("--os-compute-api-version", "2.64", "server-group-delete", id, id215)
	if strings.Count(out, "has been successfully deleted") != 2 {
		t.Errorf("delete:\n%s", out)
	}
	out, err = nv.run("--os-compute-api-version", "2.64", "server-group-get", id)
	if err == nil || !strings.Contains(out, "Instance group "+id+" could not be found.") {
		t.Errorf("get after delete: %v\n%s", err, out)
	}
}

func TestOpenStackClientAggregates(t *testing.T) {
	bin := clientPath(t, "openstack")
	s := newServer(t, nil)
	s.provider(t, "cn1", nil)
	oc := cli{t: t, bin: bin, args: []string{"--os-auth-type", "admin_token", "--os-endpoint", s.URL + "/compute/v2.1", "--os-token=" + s.tokens["admin"]}}

	a := oc.json("aggregate", "create", "--zone", "az1", "agg1")
	if a["name"] != "agg1" || a["availability_zone"] != "az1" {
		t.Errorf("create: %v", a)
	}
	oc.ok("aggregate", "set", "--property", "ssd=true", "--property", "filter_tenant_id=p1", "agg1")
	oc.ok("aggregate", "add", "host", "agg1", "cn1")
	shown := oc.json("aggregate", "show", "agg1")
	props, _ := shown["properties"].(map[string]any)
	if props["ssd"] != "true" || props["filter_tenant_id"] != "p1" {
		t.Errorf("properties: %v", shown)
	}
	if !reflect.DeepEqual(shown["hosts"], []any{"cn1"}) {
		t.Errorf("hosts: %v", shown)
	}
	// The store sees the same aggregate the console edits.
	agg, err := s.Store.GetAggregate(t.Context(), "agg1")
	if err != nil || agg.Metadata["ssd"] != "true" || len(agg.Members) != 1 || agg.AvailabilityZone == nil || *agg.AvailabilityZone != "az1" {
		t.Errorf("store: %+v %v", agg, err)
	}
	out, err := oc.run("aggregate", "delete", "agg1")
	if err == nil || !strings.Contains(out, "not empty") {
		t.Errorf("delete with hosts: %v\n%s", err, out)
	}
	oc.ok("aggregate", "remove", "host", "agg1", "cn1")
	oc.ok("aggregate", "unset", "--property", "ssd", "agg1")
	shown = oc.json("aggregate", "show", "agg1")
	if props, _ := shown["properties"].(map[string]any); props["ssd"] != nil {
		t.Errorf("unset: %v", shown)
	}
	oc.ok("aggregate", "delete", "agg1")
	if out := oc.ok("aggregate", "list", "-f", "value"); strings.TrimSpace(out) != "" {
		t.Errorf("left after delete: %q", out)
	}
}
