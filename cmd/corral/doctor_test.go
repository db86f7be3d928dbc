package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
)

// doctorWorld has one warning (a comma list in a tenant key) and, with
// broken, one error (an anti-affinity group with both members on h1).
func doctorWorld(broken bool) *models.World {
	w := &models.World{Settings: models.DefaultSettings()}
	w.Providers = []models.Provider{
		{UUID: "00000000-0000-4000-8000-000000000001", Name: "h1"},
		{UUID: "00000000-0000-4000-8000-000000000002", Name: "h2"},
	}
	w.Aggregates = []models.Aggregate{{UUID: "10000000-0000-4000-8000-000000000001", Name: "tenants",
		Metadata: map[string]string{"filter_tenant_id": "p1,p2"}, Members: []string{w.Providers[0].UUID}}}
	w.Flavors = []models.Flavor{{ID: "1", Name: "small", VCPUs: 1, ExtraSpecs: map[string]string{}}}
	second := "h2"
	if broken {
		second = "h1"
	}
	w.Servers = []models.Server{
		{UUID: "20000000-0000-4000-8000-000000000001", Name: "a", ProjectID: "p1", Host: "h1"},
		{UUID: "20000000-0000-4000-8000-000000000002", Name: "b", ProjectID: "p1", Host: second},
	}
	w.ServerGroups = []models.ServerGroup{{UUID: "30000000-0000-4000-8000-000000000001", Name: "spread", ProjectID: "p1",
		Policy: models.PolicyAntiAffinity, Members: []string{w.Servers[0].UUID, w.Servers[1].UUID}}}
	return w
}

func doctorDB(t *testing.T, w *models.World) (string, *store.Store) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "corral.db")
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.ImportWorld(context.Background(), cliActor(), w, true); err != nil {
		t.Fatal(err)
	}
	return db, s
}

type doctorJSON struct {
	Revision int64 `json:"revision"`
	Findings []struct {
		Code         string `json:"code"`
		Severity     string `json:"severity"`
		Key          string `json:"key"`
		Fingerprint  string `json:"fingerprint"`
		Why          string `json:"why"`
		Detail       string `json:"detail"`
		Objects      []map[string]string
		Fix          []map[string]any `json:"fix"`
		Acknowledged *struct {
			By, Reason string
		} `json:"acknowledged"`
	} `json:"findings"`
	Counts       map[string]int `json:"counts"`
	Acknowledged int            `json:"acknowledged"`
}

func doctorRun(t *testing.T, db string) (int, doctorJSON) {
	t.Helper()
	code, out, errOut := runCLI(t, "", "doctor", "--db", db, "--format", "json")
	var r doctorJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("doctor JSON: %v\n%s\n%s", err, out, errOut)
	}
	return code, r
}

func TestDoctorExitsOneOnErrorsAndZeroOnWarnings(t *testing.T) {
	db, _ := doctorDB(t, doctorWorld(true))
	code, r := doctorRun(t, db)
	if code != 1 || len(r.Findings) != 2 || r.Counts["error"] != 1 || r.Counts["warning"] != 1 || r.Counts["info"] != 0 {
		t.Fatalf("exit %d, report %+v", code, r)
	}
	if f := r.Findings[0]; f.Code != "server_group_violated" || f.Severity != "error" || f.Key == "" || f.Why == "" || f.Acknowledged != nil {
		t.Errorf("first finding %+v", f)
	}
	if f := r.Findings[1]; f.Code != "tenant_comma_list" || len(f.Fix) != 3 || f.Fix[0]["op"] != "unset_metadata" || f.Objects[0]["kind"] != "aggregate" {
		t.Errorf("second finding %+v", f)
	}
	code, out, _ := runCLI(t, "", "doctor", "--db", db)
	if code != 1 || !strings.Contains(out, "ERROR   server_group_violated: server group spread") ||
		!strings.Contains(out, "fix: ") || !strings.Contains(out, "2 finding(s): 1 error, 1 warning, 0 info") {
		t.Errorf("text: exit %d\n%s", code, out)
	}

	db, _ = doctorDB(t, doctorWorld(false))
	if code, r := doctorRun(t, db); code != 0 || len(r.Findings) != 1 {
		t.Errorf("warnings only: exit %d, %+v", code, r)
	}
	if code, _, errOut := runCLI(t, "", "doctor", "--db", db, "--format", "yaml"); code != 2 || !strings.Contains(errOut, "--format") {
		t.Errorf("a bad format: exit %d %s", code, errOut)
	}
}

// An acknowledged error stops failing the run and is shown with who and
// why; when the finding's content changes it fails again.
func TestDoctorAcknowledgedErrorsComeBackWhenTheyChange(t *testing.T) {
	w := doctorWorld(true)
	db, s := doctorDB(t, w)
	_, r := doctorRun(t, db)
	f := r.Findings[0]
	ack := store.FindingAck{Key: f.Key, Code: f.Code, Fingerprint: f.Fingerprint, Reason: "moving them tonight"}
	if _, err := s.AckFinding(context.Background(), store.Actor{Name: "alice", Via: "cli"}, ack); err != nil {
		t.Fatal(err)
	}
	code, r := doctorRun(t, db)
	if code != 0 || r.Acknowledged != 1 || r.Counts["error"] != 0 || r.Findings[0].Acknowledged == nil ||
		r.Findings[0].Acknowledged.By != "alice" || r.Findings[0].Acknowledged.Reason != "moving them tonight" {
		t.Fatalf("after the ack: exit %d %+v", code, r)
	}
	// A third member on h1: the same group, another violation.
	w.Servers = append(w.Servers, models.Server{UUID: "20000000-0000-4000-8000-000000000003", Name: "c", ProjectID: "p1", Host: "h1"})
	w.ServerGroups[0].Members = append(w.ServerGroups[0].Members, w.Servers[2].UUID)
	if err := s.ImportWorld(context.Background(), cliActor(), w, true); err != nil {
		t.Fatal(err)
	}
	code, r = doctorRun(t, db)
	if code != 1 || r.Findings[0].Key != f.Key || r.Findings[0].Acknowledged != nil || r.Acknowledged != 0 {
		t.Fatalf("after the change: exit %d %+v", code, r)
	}
}
