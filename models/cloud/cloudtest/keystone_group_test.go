package cloudtest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
)

// A rollout through Keystone creates a server group in the group's own
// project, with a token scoped to it; a project the user has no role in
// is refused before anything is sent.
func TestKeystoneRolloutCreatesGroupInItsProject(t *testing.T) {
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
	defer c.Stop()
	project := func(name string) string {
		var out struct {
			Project struct {
				ID string `json:"id"`
			} `json:"project"`
		}
		must(t, c.CallKeystone("POST", "projects", map[string]any{"project": map[string]any{"name": name, "domain_id": "default"}}, &out, 201))
		return out.Project.ID
	}
	member, stranger := project("ksg-member"), project("ksg-stranger")
	var roles struct {
		Roles []struct {
			ID string `json:"id"`
		} `json:"roles"`
	}
	must(t, c.CallKeystone("GET", "roles?name=admin", nil, &roles, 200))
	must(t, c.CallKeystone("PUT", fmt.Sprintf("projects/%s/users/%s/roles/%s", member, adminID(t, c), roles.Roles[0].ID), nil, nil, 204))

	yaml := fmt.Sprintf(`clouds:
  ksg:
    auth:
      auth_url: %s
      username: admin
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    identity_api_version: 3
`, c.KeystoneURL)
	file := filepath.Join(dir, "clouds.yaml")
	must(t, os.WriteFile(file, []byte(yaml), 0o600))
	getenv := func(k string) string {
		switch k {
		case "OS_CLIENT_CONFIG_FILE":
			return file
		case "OS_PASSWORD":
			return c.AdminPassword
		}
		return ""
	}
	ctx := context.Background()
	cl, err := cloud.Connect(ctx, cloud.Options{Cloud: "ksg", Getenv: getenv})
	must(t, err)
	defer cl.Close()
	st := storetest.Open(t)
	actor := store.Actor{Name: "t", Via: "cli", Role: models.RoleAdmin}
	_, err = cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "ksg"})
	must(t, err)
	rollout := func(proj string) (*cloud.RolloutReport, error) {
		d, err := st.CreateDraft(ctx, actor, "group in "+proj)
		must(t, err)
		d, err = st.SetDraftChanges(ctx, actor, d.ID, d.Version, []scheduling.Change{
			{Op: scheduling.OpCreateServerGroup, ServerGroup: "ksg-web", Project: proj, Policy: models.PolicyAntiAffinity}})
		must(t, err)
		p, err := cloud.PlanDraft(ctx, st, d.ID)
		must(t, err)
		return cl.RolloutDraft(ctx, st, actor, p, "ksg")
	}

	_, err = rollout(stranger)
	var me *models.Error
	if !errors.As(err, &me) || me.Kind != models.Invalid || !strings.Contains(err.Error(), "server group ksg-web belongs to project "+stranger) ||
		!strings.Contains(err.Error(), "the user needs a role in it") {
		t.Errorf("a project without a role: %v", err)
	}
	rep, err := rollout(member)
	must(t, err)
	if rep.Failed != nil || len(rep.Done) != 1 {
		t.Fatalf("rollout: %v %s done %d", rep.Failed, rep.Error, len(rep.Done))
	}
	var groups struct {
		Groups []struct {
			Name      string `json:"name"`
			ProjectID string `json:"project_id"`
		} `json:"server_groups"`
	}
	must(t, c.Call("compute", "GET", "os-server-groups?all_projects=True", nil, &groups, 200))
	if len(groups.Groups) != 1 || groups.Groups[0].Name != "ksg-web" || groups.Groups[0].ProjectID != member {
		t.Errorf("server groups in nova: %+v, want ksg-web in %s", groups.Groups, member)
	}
}
