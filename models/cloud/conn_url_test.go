package cloud_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
)

// TestComputeURLWithoutVersion connects with nova's root URL (no /v2.1):
// the error says the URL must end in /v2.1 and names it.
func TestComputeURLWithoutVersion(t *testing.T) {
	c := cloudtest.Shared(t)
	root := strings.TrimSuffix(c.ComputeURL, "/v2.1")
	_, err := cloud.Connect(context.Background(), cloud.Options{ComputeURL: root, PlacementURL: c.PlacementURL, Token: cloudtest.Token})
	if err == nil || !strings.Contains(err.Error(), "must end in /v2.1") || !strings.Contains(err.Error(), root) ||
		strings.Contains(err.Error(), "offers no microversions") {
		t.Errorf("compute URL %s without /v2.1: %v", root, err)
	}
}

// TestKeystoneUnreachable connects through a clouds.yaml whose Keystone
// does not listen: the error says Keystone did not answer, naming its URL
// and the cloud, and does not claim the credentials were refused.
func TestKeystoneUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	authURL := "http://" + l.Addr().String() + "/v3"
	must(t, l.Close()) // nothing listens there now
	file := filepath.Join(t.TempDir(), "clouds.yaml")
	must(t, os.WriteFile(file, []byte(`clouds:
  gone:
    auth:
      auth_url: `+authURL+`
      username: admin
      password: secret
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
`), 0o600))
	getenv := func(k string) string {
		if k == "OS_CLIENT_CONFIG_FILE" {
			return file
		}
		return ""
	}
	_, err = cloud.Connect(context.Background(), cloud.Options{Cloud: "gone", Getenv: getenv})
	if err == nil || !strings.Contains(err.Error(), "keystone "+authURL) || !strings.Contains(err.Error(), `cloud gone (region "RegionOne") did not answer`) ||
		strings.Contains(err.Error(), "refused the credentials") || strings.Contains(err.Error(), "secret") {
		t.Errorf("keystone unreachable: %v", err)
	}
}
