package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloud/cloudtest"
	"corral/models/scheduling"
	"corral/models/store"
)

func TestMain(m *testing.M) { os.Exit(cloudtest.Main(m)) }

func call(t *testing.T, c *cloudtest.Cloud, service, method, path string, body, out any, want int) {
	t.Helper()
	if err := c.Call(service, method, path, body, out, want); err != nil {
		t.Fatal(err)
	}
}

// TestSyncCommand runs `corral sync` and `corral export` against the real
// Placement and nova-api and compares the exported world with what was
// created through their APIs.
func TestSyncCommand(t *testing.T) {
	c := cloudtest.Shared(t)
	db := filepath.Join(t.TempDir(), "c.db")
	conn := []string{"--compute-url", c.ComputeURL, "--placement-url", c.PlacementURL, "--token", cloudtest.Token}

	host, child := models.NewUUID(), models.NewUUID()
	call(t, c, "placement", "POST", "resource_providers", map[string]any{"name": "cli-cn1", "uuid": host}, nil, 200)
	call(t, c, "placement", "POST", "resource_providers", map[string]any{"name": "cli-cn1-gpu", "uuid": child, "parent_provider_uuid": host}, nil, 200)
	call(t, c, "placement", "PUT", "resource_providers/"+host+"/inventories", map[string]any{"resource_provider_generation": 0,
		"inventories": map[string]any{"VCPU": map[string]any{"total": 12, "reserved": 2, "allocation_ratio": 2.0}}}, nil, 200)
	if err := c.AddComputeHost("cli-cn1", host); err != nil {
		t.Fatal(err)
	}
	var agg struct {
		Aggregate struct {
			ID   int    `json:"id"`
			UUID string `json:"uuid"`
		} `json:"aggregate"`
	}
	call(t, c, "compute", "POST", "os-aggregates", map[string]any{"aggregate": map[string]any{"name": "cli-agg", "availability_zone": "cli-az"}}, &agg, 200)
	act := fmt.Sprintf("os-aggregates/%d/action", agg.Aggregate.ID)
	call(t, c, "compute", "POST", act, map[string]any{"set_metadata": map[string]any{"metadata": map[string]any{"filter_tenant_id": "p7", "reservation:r7": "true"}}}, nil, 200)
	call(t, c, "compute", "POST", act, map[string]any{"add_host": map[string]any{"host": "cli-cn1"}}, nil, 200)
	flavor := models.NewUUID()
	call(t, c, "compute", "POST", "flavors", map[string]any{"flavor": map[string]any{"name": "cli-m1", "id": flavor, "vcpus": 4, "ram": 8192, "disk": 40}}, nil, 200)
	call(t, c, "compute", "POST", "flavors/"+flavor+"/os-extra_specs", map[string]any{"extra_specs": map[string]any{"reservation:r7": "true"}}, nil, 200)

	// Bad usage and refused credentials: exit 2 and 1, one line each.
	if code, _, errOut := runCLI(t, "", "sync", "--db", db); code != 2 || !strings.Contains(errOut, "no connection") {
		t.Errorf("sync without a connection: %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "", "sync", "--db", db, "--compute-url", c.ComputeURL, "--placement-url", c.PlacementURL); code != 2 || !strings.Contains(errOut, "--token") {
		t.Errorf("sync without a token: %d %q", code, errOut)
	}
	code, _, errOut := runCLI(t, "", "sync", "--db", db, "--compute-url", c.ComputeURL, "--placement-url", c.PlacementURL, "--token", "someone:p9")
	if code != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "answered 403 Forbidden to GET /") || strings.Contains(errOut, "someone") {
		t.Errorf("sync with a non-admin token: %d %q", code, errOut)
	}

	// --dry-run prints the changes and stores nothing.
	code, out, errOut := runCLI(t, "", append([]string{"sync", "--db", db, "--dry-run"}, conn...)...)
	if code != 0 || !strings.Contains(out, "+ aggregate cli-agg") || !strings.Contains(out, "dry run, nothing stored") {
		t.Fatalf("dry run: %d\n%s\n%s", code, out, errOut)
	}
	_, exported, _ := runCLI(t, "", "export", "--db", db)
	if w, err := models.DecodeWorldJSON([]byte(exported), ""); err != nil || len(w.Providers) != 0 {
		t.Fatalf("dry run stored something: %v %s", err, exported)
	}

	code, out, errOut = runCLI(t, "", append([]string{"sync", "--db", db}, conn...)...)
	if code != 0 || !strings.Contains(out, "stored as revision") || !strings.Contains(out, "+ provider cli-cn1-gpu") {
		t.Fatalf("sync: %d\n%s\n%s", code, out, errOut)
	}
	code, exported, errOut = runCLI(t, "", "export", "--db", db)
	if code != 0 {
		t.Fatalf("export: %s", errOut)
	}
	var doc struct {
		Providers []struct {
			UUID        string                      `json:"uuid"`
			Name        string                      `json:"name"`
			Parent      *string                     `json:"parent"`
			Inventories map[string]models.Inventory `json:"inventories"`
		} `json:"providers"`
		Aggregates []struct {
			UUID             string            `json:"uuid"`
			Name             string            `json:"name"`
			AvailabilityZone *string           `json:"availability_zone"`
			Metadata         map[string]string `json:"metadata"`
			Members          []string          `json:"members"`
		} `json:"aggregates"`
		Flavors []struct {
			ID         string            `json:"id"`
			Name       string            `json:"name"`
			VCPUs      int               `json:"vcpus"`
			RAMMB      int               `json:"ram_mb"`
			DiskGB     int               `json:"disk_gb"`
			ExtraSpecs map[string]string `json:"extra_specs"`
		} `json:"flavors"`
	}
	if err := json.Unmarshal([]byte(exported), &doc); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, p := range doc.Providers {
		switch p.UUID {
		case host:
			seen++
			if inv := p.Inventories["VCPU"]; p.Name != "cli-cn1" || p.Parent != nil || inv.Total != 12 || inv.Reserved != 2 || inv.AllocationRatio != 2 {
				t.Errorf("exported host %+v", p)
			}
		case child:
			seen++
			if p.Name != "cli-cn1-gpu" || p.Parent == nil || *p.Parent != host {
				t.Errorf("exported child %+v", p)
			}
		}
	}
	for _, a := range doc.Aggregates {
		if a.UUID == agg.Aggregate.UUID {
			seen++
			if a.Name != "cli-agg" || a.AvailabilityZone == nil || *a.AvailabilityZone != "cli-az" || a.Metadata["filter_tenant_id"] != "p7" ||
				a.Metadata["reservation:r7"] != "true" || len(a.Members) != 1 || a.Members[0] != host {
				t.Errorf("exported aggregate %+v", a)
			}
		}
	}
	for _, f := range doc.Flavors {
		if f.ID == flavor {
			seen++
			if f.Name != "cli-m1" || f.VCPUs != 4 || f.RAMMB != 8192 || f.DiskGB != 40 || f.ExtraSpecs["reservation:r7"] != "true" {
				t.Errorf("exported flavor %+v", f)
			}
		}
	}
	if seen != 4 {
		t.Errorf("export lacks some of the cloud's objects (%d of 4):\n%s", seen, exported)
	}

	// Change the cloud; the next sync says exactly that.
	call(t, c, "compute", "POST", act, map[string]any{"set_metadata": map[string]any{"metadata": map[string]any{"filter_tenant_id": "p8"}}}, nil, 200)
	code, out, _ = runCLI(t, "", append([]string{"sync", "--db", db}, conn...)...)
	if code != 0 || !strings.Contains(out, "~ aggregate cli-agg: metadata.filter_tenant_id: p7 → p8") || !strings.Contains(out, "changes since the last sync (1)") {
		t.Errorf("second sync:\n%s", out)
	}

	// corral rollout: the plan, then the calls.
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.CreateDraft(context.Background(), store.Actor{Name: "t", Via: "cli"}, "tag")
	if err == nil {
		d, err = st.SetDraftChanges(context.Background(), store.Actor{Name: "t", Via: "cli"}, d.ID, d.Version,
			[]scheduling.Change{{Op: scheduling.OpAddReservation, Aggregate: "cli-agg", Reservation: "r8"}})
	}
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "", append([]string{"rollout", "--db", db, "--draft", d.ID, "--dry-run"}, conn...)...)
	if code != 0 || !strings.Contains(out, "openstack aggregate set --property reservation:r8=true cli-agg") || strings.Contains(out, "done:") {
		t.Fatalf("rollout --dry-run: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", append([]string{"rollout", "--db", db, "--draft", d.ID}, conn...)...)
	if code != 0 || !strings.Contains(out, "rolled out 1 call(s)") {
		t.Fatalf("rollout: %d\n%s\n%s", code, out, errOut)
	}
	var got struct {
		Aggregate struct {
			Metadata map[string]string `json:"metadata"`
		} `json:"aggregate"`
	}
	call(t, c, "compute", "GET", fmt.Sprintf("os-aggregates/%d", agg.Aggregate.ID), nil, &got, 200)
	if got.Aggregate.Metadata["reservation:r8"] != scheduling.ReservationTagValue {
		t.Errorf("after the rollout nova says %v", got.Aggregate.Metadata)
	}
	if code, _, errOut := runCLI(t, "", append([]string{"rollout", "--db", db, "--draft", d.ID}, conn...)...); code == 0 || !strings.Contains(errOut, "not found") {
		t.Errorf("a rolled-out draft is gone: %d %q", code, errOut)
	}
}

func TestSettingsImportNovaConf(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	conf := filepath.Join(dir, "nova.conf")
	if err := os.WriteFile(conf, []byte("[scheduler]\nlimit_tenants_to_placement_aggregate = true\n[filter_scheduler]\nenabled_filters = ImagePropertiesFilter,AggregateMultiTenancyIsolation\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "settings", "import", "--db", db, conf)
	if code != 0 || !strings.Contains(out, "settings saved") || !strings.Contains(out, "not modelled: this preview may differ from Nova: ImagePropertiesFilter") {
		t.Fatalf("settings import: %d\n%s\n%s", code, out, errOut)
	}
	_, exported, _ := runCLI(t, "", "export", "--db", db)
	w, err := models.DecodeWorldJSON([]byte(exported), "")
	if err != nil || !w.Settings.LimitTenantsToPlacementAggregate || len(w.Settings.EnabledFilters) != 2 || w.Settings.EnabledFilters[1] != models.FilterAggregateMultiTenancy {
		t.Errorf("settings after import: %+v %v", w.Settings, err)
	}
	if code, out, _ := runCLI(t, "", "settings", "import", "--db", db, conf); code != 0 || !strings.Contains(out, "settings unchanged") {
		t.Errorf("second import: %d %s", code, out)
	}
	if err := os.WriteFile(conf, []byte("[scheduler]\nlimit_tenants_to_placement_aggregate = sometimes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "", "settings", "import", "--db", db, conf); code != 2 || !strings.Contains(errOut, "is not a boolean") {
		t.Errorf("bad nova.conf: %d %q", code, errOut)
	}
}
