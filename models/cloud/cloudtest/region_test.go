package cloudtest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
)

// TestWrongRegionIsNamed connects through a real Keystone with a region
// its catalog does not have: the error names Keystone's URL, the cloud
// and the region.
func TestWrongRegionIsNamed(t *testing.T) {
	cloudtest.SkipOrFail(t)
	dir := t.TempDir()
	c, err := cloudtest.StartWithKeystone(dir)
	if err != nil {
		if strings.Contains(err.Error(), "python3-keystone") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	defer c.Stop()
	file := filepath.Join(dir, "clouds.yaml")
	must(t, os.WriteFile(file, []byte(`clouds:
  elsewhere:
    auth:
      auth_url: `+c.KeystoneURL+`
      username: admin
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionTwo
`), 0o600))
	getenv := func(k string) string {
		switch k {
		case "OS_CLIENT_CONFIG_FILE":
			return file
		case "OS_PASSWORD":
			return c.AdminPassword
		}
		return ""
	}
	_, err = cloud.Connect(context.Background(), cloud.Options{Cloud: "elsewhere", Getenv: getenv})
	if err == nil || !strings.Contains(err.Error(), "keystone "+c.KeystoneURL) || !strings.Contains(err.Error(), "cloud elsewhere") ||
		!strings.Contains(err.Error(), `region "RegionTwo"`) {
		t.Errorf("a region the catalog does not have: %v", err)
	}
}
