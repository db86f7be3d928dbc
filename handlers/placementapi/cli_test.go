package placementapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// openstackCLI is Debian's OpenStackClient (with python3-osc-placement).
const openstackCLI = "/usr/bin/openstack"

// requireCLI skips when the client is missing, except under CI.
func requireCLI(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(openstackCLI); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found: install python3-openstackclient and python3-osc-placement", openstackCLI)
		}
		t.Skipf("%s not found; install python3-openstackclient and python3-osc-placement", openstackCLI)
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import osc_placement").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3-osc-placement is missing: %v", err)
		}
		t.Skipf("python3-osc-placement is missing: %v", err)
	}
}

// osc runs one openstack command against the app with the admin token
// (keystoneauth's admin_token plugin: no Keystone, the token goes as
// X-Auth-Token to the endpoint) and returns stdout, stderr and the error.
func (a *app) osc(t *testing.T, version string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full := []string{"--os-auth-type", "admin_token", "--os-endpoint", a.URL, "--os-token", a.Admin}
	if version != "" {
		full = append(full, "--os-placement-api-version", version)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, openstackCLI, full...)
	// Debian's client runs on /usr/bin/python3; keep other Pythons and any
	// cloud configuration of the machine out of the way.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func lines(s string) []string {
	out := []string{}
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// TestOpenStackClient drives osc-placement against corral, with the
// commands of the recorded exchanges with Placement 8.0.0.
func TestOpenStackClient(t *testing.T) {
	requireCLI(t)
	a := startApp(t, openSQLite(t))
	a.loadProbeFixture()

	mustOSC := func(version string, args ...string) string {
		t.Helper()
		out, errOut, err := a.osc(t, version, args...)
		if err != nil {
			t.Fatalf("openstack %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
		return out
	}

	// Listing, with the negotiated version (no --os-placement-api-version).
	var listed []map[string]any
	if err := json.Unmarshal([]byte(mustOSC("", "resource", "provider", "list", "-f", "json")), &listed); err != nil {
		t.Fatalf("list -f json: %v", err)
	}
	if len(listed) != 5 {
		t.Errorf("resource provider list: %v", listed)
	}

	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--member-of", aggA}, []string{"root1"}},
		{[]string{"--member-of", aggA + "," + aggB}, []string{"root1", "root2"}},
		{[]string{"--member-of", aggA, "--member-of", aggB}, []string{}},
		{[]string{"--member-of", aggC}, []string{"child2"}},
		{[]string{"--in-tree", root1}, []string{"child1", "gchild1", "root1"}},
	}
	for _, tc := range cases {
		args := append([]string{"resource", "provider", "list"}, tc.args...)
		args = append(args, "-f", "value", "-c", "name")
		if got := lines(mustOSC("1.39", args...)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("list %v: got %v, want %v", tc.args, got, tc.want)
		}
	}

	// osc-placement 4.0.0 always sends member_of=in:<value>, so '!<uuid>'
	// arrives as "in:!<uuid>"; corral answers as Placement does.
	out, errOut, err := a.osc(t, "1.39", "resource", "provider", "list", "--member-of", "!"+aggA)
	if err == nil || !strings.Contains(errOut, "Expected 'member_of' parameter to contain valid UUID(s). Got: !"+aggA+" (HTTP 400)") {
		t.Errorf("--member-of !uuid: err %v\n%s%s", err, out, errOut)
	}
	// And it refuses microversion 1.32 itself, before sending anything.
	if _, errOut, err := a.osc(t, "1.32", "resource", "provider", "list", "--member-of", "!"+aggA); err == nil ||
		!strings.Contains(errOut, "1.32") {
		t.Errorf("--os-placement-api-version 1.32: err %v\n%s", err, errOut)
	}

	// Aggregates: list, then set with the generation (1.19+).
	if got := lines(mustOSC("1.39", "resource", "provider", "aggregate", "list", root1, "-f", "value", "-c", "uuid")); !reflect.DeepEqual(got, []string{aggA}) {
		t.Errorf("aggregate list: %v", got)
	}
	mustOSC("1.39", "resource", "provider", "aggregate", "set", "--aggregate", aggA, "--aggregate", aggD, "--generation", "1", root1)
	if got := lines(mustOSC("1.39", "resource", "provider", "list", "--member-of", aggD, "-f", "value", "-c", "name")); !reflect.DeepEqual(got, []string{"root1"}) {
		t.Errorf("after aggregate set: %v", got)
	}
	// A stale generation is refused with Placement's conflict.
	_, errOut, err = a.osc(t, "1.39", "resource", "provider", "aggregate", "set", "--aggregate", aggB, "--generation", "1", root1)
	if err == nil || !strings.Contains(errOut, "generation already changed") {
		t.Errorf("stale aggregate set: err %v\n%s", err, errOut)
	}

	// Create a provider and a child, as the probe did.
	var created map[string]any
	if err := json.Unmarshal([]byte(mustOSC("1.39", "resource", "provider", "create", "osc-root", "-f", "json")), &created); err != nil {
		t.Fatal(err)
	}
	rootID, _ := created["uuid"].(string)
	if created["generation"] != float64(0) || created["root_provider_uuid"] != rootID || created["parent_provider_uuid"] != nil {
		t.Errorf("create: %v", created)
	}
	if err := json.Unmarshal([]byte(mustOSC("1.39", "resource", "provider", "create", "osc-child", "--parent-provider", rootID, "-f", "json")), &created); err != nil {
		t.Fatal(err)
	}
	if created["parent_provider_uuid"] != rootID || created["root_provider_uuid"] != rootID {
		t.Errorf("create child: %v", created)
	}
	mustOSC("1.39", "resource", "provider", "delete", created["uuid"].(string))
	if got := lines(mustOSC("1.39", "resource", "provider", "list", "--in-tree", rootID, "-f", "value", "-c", "name")); !reflect.DeepEqual(got, []string{"osc-root"}) {
		t.Errorf("after delete: %v", got)
	}
}
