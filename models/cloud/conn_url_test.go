package cloud_test

import (
	"context"
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
