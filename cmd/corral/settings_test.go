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

func settingsOf(t *testing.T, db string) (models.Settings, int64) {
	t.Helper()
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, gen, err := s.GetSettings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st, gen
}

// settings export prints nova.conf lines that settings import reads back
// into the same settings, every option of the table included.
func TestSettingsExportImportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "from.db"), filepath.Join(dir, "to.db")
	conf := filepath.Join(dir, "nova.conf")
	in := "[scheduler]\nlimit_tenants_to_placement_aggregate = yes\nenable_isolated_aggregate_filtering = true\n" +
		"query_placement_for_availability_zone = false\nplacement_req_required_member_prefix = ['resv:']\n" +
		"placement_req_default_forbidden_member_prefix =\n[filter_scheduler]\n" +
		"enabled_filters = ComputeFilter,ServerGroupAntiAffinityFilter,AggregateInstanceTypeFilter\n" +
		"soft_affinity_weight_multiplier = 0.25\nsoft_anti_affinity_weight_multiplier = 3\n"
	if err := os.WriteFile(conf, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "", "settings", "import", "--db", from, conf); code != 0 || !strings.Contains(out, "settings saved") {
		t.Fatalf("import: %d\n%s\n%s", code, out, errOut)
	}
	want := models.Settings{
		LimitTenantsToPlacementAggregate: true, EnableIsolatedAggregateFiltering: true,
		RequiredMemberPrefix: "resv:", DefaultForbiddenMemberPrefix: "",
		EnabledFilters:               []string{"ComputeFilter", models.FilterServerGroupAntiAffinity, models.FilterAggregateInstanceType},
		SoftAffinityWeightMultiplier: 0.25, SoftAntiAffinityWeightMultiplier: 3,
		// Options the file does not set take Nova's defaults; the release
		// is not Nova's option and keeps the database's.
		NovaRelease: models.NovaLatest, MaxPlacementResults: 1000, WeightClasses: models.AllWeighers,
		RAMWeightMultiplier: 1, CPUWeightMultiplier: 1, DiskWeightMultiplier: 1, IoOpsWeightMultiplier: -1,
		BuildFailureWeightMultiplier: 1000000, HostSubsetSize: 1,
		MaxInstancesPerHost: 50, DefaultAvailabilityZone: "nova",
	}
	if got, gen := settingsOf(t, from); !reflect.DeepEqual(got, want) || gen != 1 {
		t.Fatalf("imported %+v gen %d\nwant %+v", got, gen, want)
	}

	code, exported, errOut := runCLI(t, "", "settings", "export", "--db", from)
	if code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	for _, row := range models.SettingTable {
		if !strings.Contains(exported, "\n"+row.Option+" = ") {
			t.Errorf("export lacks %s:\n%s", row.Option, exported)
		}
	}
	if err := os.WriteFile(conf, []byte(exported), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "", "settings", "import", "--db", to, conf); code != 0 || strings.Contains(out, "left out") {
		t.Fatalf("import of the export: %d\n%s\n%s", code, out, errOut)
	}
	if got, _ := settingsOf(t, to); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip\n got %+v\nwant %+v", got, want)
	}
	if code, out, _ := runCLI(t, "", "settings", "import", "--db", from, conf); code != 0 || !strings.Contains(out, "settings unchanged") {
		t.Errorf("importing a database's own export: %d %s", code, out)
	}
	// A fresh database exports the defaults, which read back as them.
	code, exported, _ = runCLI(t, "", "settings", "export", "--db", filepath.Join(dir, "fresh.db"))
	if err := os.WriteFile(conf, []byte(exported), 0o600); code != 0 || err != nil {
		t.Fatal(code, err)
	}
	if code, _, errOut := runCLI(t, "", "settings", "import", "--db", to, conf); code != 0 {
		t.Fatalf("import of the defaults: %d %s", code, errOut)
	}
	if got, gen := settingsOf(t, to); !reflect.DeepEqual(got, models.DefaultSettings()) || gen != 2 {
		t.Errorf("defaults back: %+v gen %d", got, gen)
	}
	for _, args := range [][]string{{"settings"}, {"settings", "frob"}, {"settings", "export", "--db", to, "extra"}} {
		if code, _, _ := runCLI(t, "", args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
