package cloudtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/store"
	"corral/models/store/storetest"
)

// TestKeystoneSync syncs through --os-cloud: clouds.yaml and the OS_*
// environment, a real Keystone (password and application credentials),
// its catalog pointing at the real nova-api and Placement, which check
// the tokens with it.
func TestKeystoneSync(t *testing.T) {
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

	host := models.NewUUID()
	must(t, c.Call("placement", "POST", "resource_providers", map[string]any{"name": "ks-cn1", "uuid": host}, nil, 200))
	must(t, c.AddComputeHost("ks-cn1", host))
	var agg struct {
		Aggregate struct {
			ID   int    `json:"id"`
			UUID string `json:"uuid"`
		} `json:"aggregate"`
	}
	must(t, c.Call("compute", "POST", "os-aggregates", map[string]any{"aggregate": map[string]any{"name": "ks-agg"}}, &agg, 200))
	// Nova mirrors the host into Placement through Keystone's catalog.
	must(t, c.Call("compute", "POST", fmt.Sprintf("os-aggregates/%d/action", agg.Aggregate.ID), map[string]any{"add_host": map[string]any{"host": "ks-cn1"}}, nil, 200))

	// An application credential of the admin.
	userID := adminID(t, c)
	appcred := createAppCred(t, c, userID)

	yaml := fmt.Sprintf(`clouds:
  ks-password:
    auth:
      auth_url: %[1]s
      username: admin
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    interface: public
    identity_api_version: 3
  ks-appcred:
    auth_type: v3applicationcredential
    auth:
      auth_url: %[1]s
      application_credential_id: %[2]s
      application_credential_secret: %[3]s
    region_name: RegionOne
`, c.KeystoneURL, appcred.ID, appcred.Secret)
	file := filepath.Join(dir, "clouds.yaml")
	must(t, os.WriteFile(file, []byte(yaml), 0o600))
	env := func(extra map[string]string) func(string) string {
		return func(k string) string {
			if k == "OS_CLIENT_CONFIG_FILE" {
				return file
			}
			return extra[k]
		}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		cloud string
		env   map[string]string
	}{
		// The password comes from the environment, as the openstack CLI
		// lets OS_PASSWORD complete a clouds.yaml entry.
		{"ks-password", map[string]string{"OS_PASSWORD": c.AdminPassword}},
		{"ks-appcred", nil},
	} {
		t.Run(tc.cloud, func(t *testing.T) {
			cl, err := cloud.Connect(ctx, cloud.Options{Cloud: tc.cloud, Getenv: env(tc.env)})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			st := storetest.Open(t)
			res, err := cloud.Sync(ctx, st, cl, store.Actor{Name: "t", Via: "cli"}, cloud.SyncOptions{Connection: tc.cloud})
			if err != nil {
				t.Fatal(err)
			}
			w, err := st.ExportWorld(ctx)
			must(t, err)
			if len(w.Aggregates) != 1 || w.Aggregates[0].UUID != agg.Aggregate.UUID || len(w.Aggregates[0].Members) != 1 || w.Aggregates[0].Members[0] != host {
				t.Errorf("aggregates through keystone: %+v", w.Aggregates)
			}
			if len(res.Disagreements) != 0 {
				t.Errorf("nova did not mirror the host into placement: %+v", res.Disagreements)
			}
			ev, _, _ := st.ListAudit(ctx, store.AuditQuery{Limit: 10})
			for _, e := range ev {
				if strings.Contains(e.Before+e.After+e.ObjectName, c.AdminPassword) || strings.Contains(e.Before+e.After+e.ObjectName, appcred.Secret) {
					t.Errorf("a secret is in the audit log: %+v", e)
				}
			}
		})
	}
	// The same sync over TLS.
	syncOverTLS(t, c, dir, agg.Aggregate.UUID)

	// Refused credentials: one line naming Keystone and its answer.
	_, err = cloud.Connect(ctx, cloud.Options{Cloud: "ks-password", Getenv: env(map[string]string{"OS_PASSWORD": "wrong"})})
	if err == nil || !strings.Contains(err.Error(), "keystone "+c.KeystoneURL+" refused the credentials of cloud ks-password: 401") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("wrong password: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func adminID(t *testing.T, c *cloudtest.Cloud) string {
	t.Helper()
	var out struct {
		Users []struct {
			ID string `json:"id"`
		} `json:"users"`
	}
	must(t, c.CallKeystone("GET", "users?name=admin", nil, &out, 200))
	if len(out.Users) != 1 {
		t.Fatalf("admin user: %+v", out)
	}
	return out.Users[0].ID
}

type appCred struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
}

func createAppCred(t *testing.T, c *cloudtest.Cloud, user string) appCred {
	t.Helper()
	var out struct {
		ApplicationCredential appCred `json:"application_credential"`
	}
	must(t, c.CallKeystone("POST", "users/"+user+"/application_credentials", map[string]any{"application_credential": map[string]any{"name": "corral-sync"}}, &out, 201))
	return out.ApplicationCredential
}
