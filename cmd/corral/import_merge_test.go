package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportMergeKeepsWhatTheFileLeavesOut is `corral import` without
// --replace: a file naming a provider and a flavor by name only changes
// nothing of them, one field given changes that field, and a merge that
// cannot be made is refused (exit 2, one line naming the object and
// field) with nothing changed.
func TestImportMergeKeepsWhatTheFileLeavesOut(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	write := func(name, doc string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base.json", `{"providers": [
	    {"name": "cn1", "traits": ["CUSTOM_GOLD"], "inventories": {"VCPU": {"total": 8, "allocation_ratio": 1, "min_unit": 1, "max_unit": 8, "step_size": 1}}},
	    {"name": "numa0", "parent": "cn1", "traits": ["CUSTOM_NUMA"]}],
	  "flavors": [{"name": "m1", "vcpus": 2, "ram_mb": 512, "disk_gb": 1, "extra_specs": {"k": "v"}}]}`)
	if code, _, stderr := runCLI(t, "", "import", "--db", db, "--replace", base); code != 0 {
		t.Fatalf("import --replace: exit %d: %s", code, stderr)
	}
	export := func() string {
		t.Helper()
		code, out, stderr := runCLI(t, "", "export", "--db", db)
		if code != 0 {
			t.Fatalf("export: exit %d: %s", code, stderr)
		}
		return out
	}
	before := export()
	if code, _, stderr := runCLI(t, "", "import", "--db", db, write("names.json",
		`{"providers": [{"name": "cn1"}, {"name": "numa0"}], "flavors": [{"name": "m1"}]}`)); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	if after := export(); after != before {
		t.Errorf("a merge naming objects only changed them:\nbefore %s\nafter  %s", before, after)
	}
	if code, _, stderr := runCLI(t, "", "import", "--db", db, write("one.json",
		`{"providers": [{"name": "numa0", "parent": null}], "flavors": [{"name": "m1", "extra_specs": {}}]}`)); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	var w struct {
		Providers []struct {
			Name   string   `json:"name"`
			Parent *string  `json:"parent"`
			Traits []string `json:"traits"`
		} `json:"providers"`
		Flavors []struct {
			VCPUs      int               `json:"vcpus"`
			ExtraSpecs map[string]string `json:"extra_specs"`
		} `json:"flavors"`
	}
	if err := json.Unmarshal([]byte(export()), &w); err != nil {
		t.Fatal(err)
	}
	for _, p := range w.Providers {
		if p.Name == "numa0" && (p.Parent != nil || len(p.Traits) != 1) {
			t.Errorf("numa0 = parent %v, traits %v; want a root keeping its trait", p.Parent, p.Traits)
		}
	}
	if len(w.Flavors) != 1 || w.Flavors[0].VCPUs != 2 || len(w.Flavors[0].ExtraSpecs) != 0 {
		t.Errorf("flavors = %+v; want m1 with vcpus 2 and no extra specs", w.Flavors)
	}
	before = export()
	code, _, stderr := runCLI(t, "", "import", "--db", db, write("policy.json",
		`{"providers": [{"name": "cn1"}], "server_groups": [{"name": "g"}]}`))
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "server_groups[g].policy") {
		t.Errorf("a new group without a policy: exit %d, stderr %q; want 2 and one line naming server_groups[g].policy", code, stderr)
	}
	if after := export(); after != before {
		t.Error("a refused merge changed the world")
	}
	// An export with consumers merges back unchanged.
	if code, _, stderr = runCLI(t, "", "import", "--db", db, write("alloc.json",
		`{"providers": [{"name": "cn1"}], "allocations": [{"consumer": "c1", "resources": {"cn1": {"VCPU": 1}}}]}`)); code != 0 {
		t.Fatalf("merge with allocations: exit %d: %s", code, stderr)
	}
	before = export()
	if code, _, stderr = runCLI(t, "", "import", "--db", db, write("again.json", before)); code != 0 {
		t.Fatalf("merging an export back: exit %d: %s", code, stderr)
	}
	if after := export(); after != before {
		t.Errorf("an export merged back changed the world:\nbefore %s\nafter  %s", before, after)
	}
}
