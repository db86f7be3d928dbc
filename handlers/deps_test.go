package handlers

import (
	"os/exec"
	"strings"
	"testing"
)

// goListDeps is `go list -deps` of pkgs: every package they link, the
// standard library included.
func goListDeps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps %v: %v\n%s", pkgs, err, ee.Stderr)
		}
		t.Fatalf("go list -deps %v: %v", pkgs, err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps %v listed only %v", pkgs, deps)
	}
	return deps
}

// TestAdaptersDoNotKnowEachOther: the cloud adapter declares what it needs
// of the database instead of linking the store, and the JSON APIs (and the
// kernel under them) link no cloud client: neither gophercloud nor
// models/cloud.
func TestAdaptersDoNotKnowEachOther(t *testing.T) {
	for _, dep := range goListDeps(t, "corral/models/cloud") {
		if dep == "corral/models/store" {
			t.Error("corral/models/cloud depends on corral/models/store; declare what it needs in models/cloud/ports.go instead")
		}
	}
	sawStore := false
	for _, dep := range goListDeps(t, "corral/handlers", "corral/handlers/compute", "corral/handlers/placementapi") {
		sawStore = sawStore || dep == "corral/models/store"
		if strings.HasPrefix(dep, "github.com/gophercloud/") || dep == "corral/models/cloud" {
			t.Errorf("the kernel or a JSON API links %s", dep)
		}
	}
	if !sawStore {
		t.Error("the JSON APIs' dependencies do not include the store; is the listing broken?")
	}
}
