package cloudtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/store"
	"corral/models/store/storetest"
)

// TestSyncWithAProjectDeletedInKeystone syncs a cloud where a project that
// Keystone no longer has still owns a server group: Nova answers 400 to its
// quotas. The sync stores everything else and names the project in a
// warning.
func TestSyncWithAProjectDeletedInKeystone(t *testing.T) {
	cloudtest.SkipOrFail(t)
	c, err := cloudtest.StartWithKeystone(t.TempDir())
	if err != nil {
		if strings.Contains(err.Error(), "python3-keystone") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	defer c.Stop()

	var project struct {
		Project struct {
			ID string `json:"id"`
		} `json:"project"`
	}
	must(t, c.CallKeystone("POST", "projects", map[string]any{"project": map[string]any{"name": "leftover", "domain_id": "default"}}, &project, 201))
	group := groupOfProject(t, c, project.Project.ID, "dp-g1")
	must(t, c.CallKeystone("DELETE", "projects/"+project.Project.ID, nil, nil, 204))

	ctx := context.Background()
	cl, err := cloud.Connect(ctx, cloud.Options{ComputeURL: c.ComputeURL, PlacementURL: c.PlacementURL, Token: c.AdminToken})
	must(t, err)
	defer cl.Close()
	st := storetest.Open(t)
	res, err := cloud.Sync(ctx, st, cl, store.Actor{Name: "t", Via: "cli"}, cloud.SyncOptions{Connection: "test"})
	if err != nil {
		t.Fatalf("a deleted project's quotas failed the whole sync: %v", err)
	}
	if !res.Stored {
		t.Fatal("the sync stored nothing")
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, project.Project.ID) && strings.Contains(w, "os-quota-sets") && strings.Contains(w, "400")
	}) {
		t.Errorf("warnings %q do not name the deleted project %s", res.Warnings, project.Project.ID)
	}
	w, err := st.ExportWorld(ctx)
	must(t, err)
	if !slices.ContainsFunc(w.ServerGroups, func(g models.ServerGroup) bool { return g.UUID == group && g.ProjectID == project.Project.ID }) {
		t.Errorf("the deleted project's server group is not stored: %+v", w.ServerGroups)
	}
}

// groupOfProject creates a server group owned by project: the admin gets
// the admin role there and creates the group with a token scoped to it.
func groupOfProject(t *testing.T, c *cloudtest.Cloud, project, name string) string {
	t.Helper()
	var roles struct {
		Roles []struct {
			ID string `json:"id"`
		} `json:"roles"`
	}
	must(t, c.CallKeystone("GET", "roles?name=admin", nil, &roles, 200))
	if len(roles.Roles) != 1 {
		t.Fatalf("admin role: %+v", roles)
	}
	must(t, c.CallKeystone("PUT", "projects/"+project+"/users/"+adminID(t, c)+"/roles/"+roles.Roles[0].ID, nil, nil, 204))
	auth := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{"user": map[string]any{
			"name": "admin", "domain": map[string]any{"id": "default"}, "password": c.AdminPassword}}},
		"scope": map[string]any{"project": map[string]any{"id": project}}}}
	resp := post(t, c.KeystoneURL+"/auth/tokens", "", auth, http.StatusCreated)
	token := resp.Header.Get("X-Subject-Token")
	resp = post(t, c.ComputeURL+"/os-server-groups", token, map[string]any{"server_group": map[string]any{"name": name, "policy": "affinity"}}, http.StatusOK)
	var out struct {
		ServerGroup struct {
			ID string `json:"id"`
		} `json:"server_group"`
	}
	must(t, json.NewDecoder(resp.Body).Decode(&out))
	return out.ServerGroup.ID
}

func post(t *testing.T, url, token string, body any, want int) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	must(t, err)
	req, err := http.NewRequest("POST", url, bytes.NewReader(b))
	must(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
		req.Header.Set("OpenStack-API-Version", "compute 2.64") // policy, not policies
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != want {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, msg)
	}
	return resp
}
