package main

import (
	"path/filepath"
	"strings"
	"testing"

	"corral/models/cloud/cloudtest"
)

// TestSyncURLFlagsWinOverOSCloud: OS_CLOUD in the environment names the
// cloud only when no flag names a connection; explicit URL flags are a
// connection of their own, not "--os-cloud and URLs".
func TestSyncURLFlagsWinOverOSCloud(t *testing.T) {
	c := cloudtest.Shared(t)
	t.Setenv("OS_CLOUD", "elsewhere")
	t.Setenv("OS_CLIENT_CONFIG_FILE", filepath.Join(t.TempDir(), "clouds.yaml"))
	db := filepath.Join(t.TempDir(), "c.db")
	code, out, errOut := runCLI(t, "", "sync", "--db", db, "--dry-run",
		"--compute-url", c.ComputeURL, "--placement-url", c.PlacementURL, "--token", cloudtest.Token)
	if code != 0 || !strings.Contains(out, "dry run, nothing stored") {
		t.Errorf("sync with URL flags and OS_CLOUD set: %d %q %q", code, out, errOut)
	}
	// Without flags OS_CLOUD is the cloud: clouds.yaml is asked for it.
	code, _, errOut = runCLI(t, "", "sync", "--db", db, "--dry-run")
	if code == 0 || !strings.Contains(errOut, "clouds.yaml") || strings.Contains(errOut, "no connection") {
		t.Errorf("sync with OS_CLOUD only: %d %q", code, errOut)
	}
}
