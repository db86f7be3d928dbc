package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
)

// blazarCloud is a world exported from a Blazar deployment: the free pool,
// host reservation r-host (availability zone blazar_r-host, owner p-host),
// instance reservation r-inst and the flavor Blazar made for it.
const blazarCloud = `{
  "format": "corral.world/v1",
  "providers": [{"name": "cn1"}, {"name": "cn2"}, {"name": "cn3"}],
  "aggregates": [
    {"name": "freepool", "metadata": {}, "members": ["cn1", "cn2"]},
    {"name": "r-host", "availability_zone": "blazar_r-host", "metadata": {"blazar:owner": "p-host"}, "members": ["cn3"]},
    {"name": "r-inst", "metadata": {"reservation": "r-inst", "filter_tenant_id": "p-inst", "blazar:owner": "p-inst"}, "members": ["cn2"]}
  ],
  "flavors": [
    {"id": "r-inst", "name": "reservation:r-inst", "vcpus": 1, "ram_mb": 512, "disk_gb": 1,
     "extra_specs": {"aggregate_instance_extra_specs:reservation": "r-inst"}}
  ]SETTINGS
}`

func blazarCloudFile(t *testing.T, settings string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "blazar.json")
	if err := os.WriteFile(file, []byte(strings.Replace(blazarCloud, "SETTINGS", settings, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestImportBlazar imports a Blazar-shaped world and checks what import
// says on stderr and what the database then holds.
func TestImportBlazar(t *testing.T) {
	defaultLines := []string{
		"aggregate freepool: Blazar free pool → reservation:freepool",
		"aggregate r-host: availability zone blazar_r-host → reservation:r-host",
		"aggregate r-host: blazar:owner=p-host → filter_tenant_id=p-host",
		"aggregate r-inst: reservation=r-inst → reservation:r-inst",
		"flavor reservation:r-inst: aggregate_instance_extra_specs:reservation=r-inst → reservation:r-inst",
	}
	resvLines := []string{
		"aggregate freepool: Blazar free pool → resv:freepool",
		"aggregate r-host: availability zone blazar_r-host → resv:r-host",
		"aggregate r-host: blazar:owner=p-host → filter_tenant_id=p-host",
		"aggregate r-inst: reservation=r-inst → resv:r-inst",
		"flavor reservation:r-inst: aggregate_instance_extra_specs:reservation=r-inst → resv:r-inst",
	}
	resvSettings := `, "settings": {"required_member_prefix": "resv:", "default_forbidden_member_prefix": "resv:",
	  "enabled_filters": ["AggregateInstanceExtraSpecsFilter"]}`
	cases := []struct {
		name     string
		settings string            // the world's settings, as JSON after the flavors
		dbPrefix string            // the database's reservation prefixes before the import
		args     []string          // extra flags
		lines    []string          // stderr
		freepool map[string]string // its metadata after the import
	}{
		{"default settings", "", "", nil, defaultLines, map[string]string{"reservation:freepool": "true"}},
		{"the world's own prefixes", resvSettings, "", nil, resvLines, map[string]string{"resv:freepool": "true"}},
		// A world without settings keeps the database's, and so their prefixes.
		{"the database's prefixes", "", "resv:", nil, resvLines, map[string]string{"resv:freepool": "true"}},
		// With --replace the world's (default) settings replace the database's.
		{"replace uses the world's settings", "", "resv:", []string{"--replace"}, defaultLines, map[string]string{"reservation:freepool": "true"}},
		{"reservation filter off in the database", "", "-", nil, nil, map[string]string{}},
		{"--no-blazar", "", "", []string{"--no-blazar"}, nil, map[string]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "c.db")
			st, err := store.Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			if c.dbPrefix != "" {
				s := models.DefaultSettings()
				s.RequiredMemberPrefix, s.DefaultForbiddenMemberPrefix = c.dbPrefix, c.dbPrefix
				if c.dbPrefix == "-" {
					s.RequiredMemberPrefix, s.DefaultForbiddenMemberPrefix = "", ""
				}
				_, gen, err := st.GetSettings(context.Background())
				if err == nil {
					err = st.UpdateSettings(context.Background(), store.Actor{Name: "test", Via: "cli"}, gen, s)
				}
				if err != nil {
					st.Close()
					t.Fatal(err)
				}
			}
			st.Close()

			args := append([]string{"import", "--db", db, blazarCloudFile(t, c.settings)}, c.args...)
			code, stdout, stderr := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("import: exit %d: %s", code, stderr)
			}
			if !strings.HasPrefix(stdout, "imported 3 providers, 3 aggregates, 1 flavors") {
				t.Errorf("stdout %q", stdout)
			}
			var lines []string
			if stderr != "" {
				lines = strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			}
			if !reflect.DeepEqual(lines, c.lines) {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, strings.Join(c.lines, "\n"))
			}

			st, err = store.Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			w, err := st.ExportWorld(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			md := map[string]map[string]string{}
			for _, a := range w.Aggregates {
				md[a.Name] = a.Metadata
			}
			if got := md["freepool"]; len(got) != len(c.freepool) || (len(got) > 0 && !reflect.DeepEqual(got, c.freepool)) {
				t.Errorf("freepool metadata %v, want %v", got, c.freepool)
			}
			// Blazar's own keys are always kept.
			if md["r-host"]["blazar:owner"] != "p-host" || md["r-inst"]["reservation"] != "r-inst" {
				t.Errorf("Blazar's keys lost: r-host %v, r-inst %v", md["r-host"], md["r-inst"])
			}
			_, tagged := md["r-host"]["filter_tenant_id"]
			if tagged != (c.lines != nil) {
				t.Errorf("r-host tenant tag present %v, want %v: %v", tagged, c.lines != nil, md["r-host"])
			}
		})
	}
}
