package cloud_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
)

// keystonePeople starts nova, Placement and Keystone with people in two
// projects: alice a member of ks-alpha, rita a reader there, bob a member
// of ks-alpha and ks-beta, dora disabled.
func keystonePeople(t *testing.T) (*cloudtest.Cloud, cloud.Options, map[string]cloudtest.Person) {
	t.Helper()
	cloudtest.SkipOrFail(t)
	if _, err := os.Stat("/usr/bin/keystone-manage"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI: Debian's python3-keystone is not installed")
		}
		t.Skip("Debian's python3-keystone is not installed")
	}
	dir := t.TempDir()
	c, err := cloudtest.StartWithKeystone(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	people := map[string]cloudtest.Person{}
	for _, p := range []struct {
		name    string
		enabled bool
		roles   map[string]string
	}{
		{"alice", true, map[string]string{"ks-alpha": "member"}},
		{"rita", true, map[string]string{"ks-alpha": "reader"}},
		{"bob", true, map[string]string{"ks-alpha": "member", "ks-beta": "member"}},
		{"dora", false, map[string]string{"ks-alpha": "member"}},
	} {
		person, err := c.AddPerson(p.name, p.name+"-secret-pw", p.enabled, p.roles)
		if err != nil {
			t.Fatal(err)
		}
		people[p.name] = person
	}
	file := filepath.Join(dir, "clouds.yaml")
	if err := os.WriteFile(file, []byte(c.CloudsYAML()), 0o600); err != nil {
		t.Fatal(err)
	}
	o := cloud.Options{Cloud: "corral-ks", Getenv: func(k string) string {
		if k == "OS_CLIENT_CONFIG_FILE" {
			return file
		}
		return ""
	}}
	return c, o, people
}

// TestKeystoneIdentity signs people in with the real Keystone, validates
// and revokes their tokens, and sends a write with a member's own token:
// Nova records the member's user and project, not corral's.
func TestKeystoneIdentity(t *testing.T) {
	c, o, people := keystonePeople(t)
	ctx := context.Background()
	id, err := cloud.NewIdentity(ctx, o)
	if err != nil || id == nil {
		t.Fatalf("NewIdentity: %v, %v", id, err)
	}
	if got, want := id.AuthURL(), c.KeystoneURL; got != want {
		t.Errorf("AuthURL %q, want %q", got, want)
	}
	if id.Region() != "RegionOne" {
		t.Errorf("Region %q, want RegionOne", id.Region())
	}
	alpha, _ := c.EnsureProject("ks-alpha")

	// Sign-in: one project, several, refusals.
	p, projects, err := id.SignIn(ctx, "", "alice", people["alice"].Password)
	if err != nil || len(projects) != 1 || projects[0].Name != "ks-alpha" {
		t.Fatalf("alice signs in: %v projects %v", err, projects)
	}
	if p.UserID != people["alice"].ID {
		t.Errorf("alice's user id %q, want %q", p.UserID, people["alice"].ID)
	}
	_, projects, err = id.SignIn(ctx, "Default", "bob", people["bob"].Password)
	if err != nil || len(projects) != 2 {
		t.Fatalf("bob signs in: %v projects %v", err, projects)
	}
	for _, bad := range []struct{ name, pw string }{{"alice", "wrong"}, {"dora", people["dora"].Password}, {"nobody", "x"}} {
		if _, _, err := id.SignIn(ctx, "", bad.name, bad.pw); models.KindOf(err) != models.Unauthorized {
			t.Errorf("%s signs in: %v, want Unauthorized", bad.name, err)
		}
	}
	scoped, err := id.Scope(ctx, p.Token, alpha)
	if err != nil || scoped.ProjectID != alpha || scoped.Role() != models.RoleMember {
		t.Fatalf("alice scoped to ks-alpha: %+v, %v", scoped, err)
	}

	// Validation, with the cache: revoked here, refused at once; revoked
	// elsewhere, refused once the cache's time is up.
	v, err := id.Validate(ctx, scoped.Token)
	if err != nil || v.ProjectID != alpha || v.Role() != models.RoleMember || v.UserName != "alice" {
		t.Fatalf("validate alice's token: %+v, %v", v, err)
	}
	if _, err := id.Validate(ctx, "gAAAAABbogus"); models.KindOf(err) != models.Unauthorized {
		t.Errorf("a bogus token: %v, want Unauthorized", err)
	}
	if err := id.Revoke(ctx, scoped.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := id.Validate(ctx, scoped.Token); models.KindOf(err) != models.Unauthorized {
		t.Errorf("a token revoked by sign-out: %v, want Unauthorized", err)
	}
	rita, err := c.PersonToken(people["rita"], "ks-alpha")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	id.Now = func() time.Time { return now }
	if v, err := id.Validate(ctx, rita); err != nil || v.Role() != models.RoleReader {
		t.Fatalf("rita's token: %+v, %v", v, err)
	}
	if err := c.CallKeystone("DELETE", "auth/tokens", nil, nil, 204, "X-Subject-Token", rita); err != nil {
		t.Fatal(err)
	}
	if _, err := id.Validate(ctx, rita); err != nil {
		t.Errorf("within the cache's time a token revoked elsewhere still counts (%v): the cache is not used", err)
	}
	now = now.Add(cloud.DefaultTokenCacheTTL)
	if _, err := id.Validate(ctx, rita); models.KindOf(err) != models.Unauthorized {
		t.Errorf("a token revoked elsewhere, after the cache's time: %v, want Unauthorized", err)
	}

	// A token of another Keystone is not valid here.
	other, err := cloudtest.StartKeystoneOnly(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop()
	if _, err := id.Validate(ctx, other.AdminToken); models.KindOf(err) != models.Unauthorized {
		t.Errorf("another Keystone's token: %v, want Unauthorized", err)
	}

	// Acting as the person: the request layer sends alice's token.
	client, err := cloud.Connect(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	aliceTok, err := c.PersonToken(people["alice"], "ks-alpha")
	if err != nil {
		t.Fatal(err)
	}
	var made struct {
		ServerGroup struct {
			ID        string `json:"id"`
			ProjectID string `json:"project_id"`
			UserID    string `json:"user_id"`
		} `json:"server_group"`
	}
	asAlice := models.WithPersonIn(ctx, aliceTok, "")
	if err := client.SendForTest(asAlice, "compute", "POST", "os-server-groups",
		map[string]any{"server_group": map[string]any{"name": "alice-group", "policy": "anti-affinity"}}, &made, 200); err != nil {
		t.Fatal(err)
	}
	var back struct {
		ServerGroup struct {
			ProjectID string `json:"project_id"`
			UserID    string `json:"user_id"`
		} `json:"server_group"`
	}
	if err := c.Call("compute", "GET", "os-server-groups/"+made.ServerGroup.ID, nil, &back, 200); err != nil {
		t.Fatal(err)
	}
	if back.ServerGroup.ProjectID != alpha || back.ServerGroup.UserID != people["alice"].ID {
		t.Errorf("the group alice's write made belongs to project %q user %q, want %q %q (hers)",
			back.ServerGroup.ProjectID, back.ServerGroup.UserID, alpha, people["alice"].ID)
	}
	// A refusal reaches the caller with the cloud's own message.
	err = client.SendForTest(models.WithPersonIn(ctx, "gAAAAABnot-a-token-at-all-xxxxxxxxxxxxxxxx", ""), "compute", "POST", "os-server-groups",
		map[string]any{"server_group": map[string]any{"name": "nobody-group", "policy": "anti-affinity"}}, nil, 200)
	var se *cloud.ServiceError
	if !errors.As(err, &se) || se.Status() != 401 || strings.Contains(err.Error(), "not-a-token") {
		t.Errorf("a write with a bogus person token: %v; want nova's 401, the token not repeated", err)
	}
	// Without a person (sync), corral's own identity.
	if err := client.SendForTest(ctx, "compute", "POST", "os-server-groups",
		map[string]any{"server_group": map[string]any{"name": "service-group", "policy": "anti-affinity"}}, &made, 200); err != nil {
		t.Fatal(err)
	}
	if made.ServerGroup.ProjectID == alpha {
		t.Errorf("without a person the group landed in alice's project")
	}
}
