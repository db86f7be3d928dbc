package scheduling

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"corral/models"
)

// ComputeFilter, through the world format and the whole pipeline: a host
// whose service is disabled, forced down or down fails with Nova's
// reason; an enabled, up host and a host whose service corral does not
// know pass, and a world without the filter enabled lets every host by.
func TestComputeFilter(t *testing.T) {
	doc := `{"providers": [
	  {"name": "up", "inventories": {"VCPU": {"total": 8, "allocation_ratio": 1}}, "compute": {"host": "up", "status": "enabled", "state": "up"}},
	  {"name": "unknown", "inventories": {"VCPU": {"total": 8, "allocation_ratio": 1}}},
	  {"name": "disabled", "inventories": {"VCPU": {"total": 8, "allocation_ratio": 1}}, "compute": {"status": "disabled", "disabled_reason": "maintenance", "state": "up"}},
	  {"name": "forced", "inventories": {"VCPU": {"total": 8, "allocation_ratio": 1}}, "compute": {"state": "down", "forced_down": true}},
	  {"name": "dead", "inventories": {"VCPU": {"total": 8, "allocation_ratio": 1}}, "compute": {"state": "down", "last_seen": "2026-12-01T10:00:00.000000"}}],
	  "flavors": [{"name": "f", "vcpus": 1, "ram_mb": 0, "disk_gb": 0}]}`
	w, err := models.DecodeWorldJSON([]byte(doc), "")
	if err != nil {
		t.Fatal(err)
	}
	// The format keeps the service as it was given.
	var out bytes.Buffer
	if err := models.EncodeWorld(&out, w); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"compute": {`) || !strings.Contains(out.String(), `"disabled_reason": "maintenance"`) {
		t.Fatalf("encoded world lost the service:\n%s", out.String())
	}
	want := map[string]string{
		"up":       "",
		"unknown":  "",
		"disabled": "the host's compute service is disabled, reason: maintenance",
		"forced":   "the host's compute service is forced down",
		"dead":     "the host's compute service has not been heard from in a while (down at the last sync); last heartbeat 2026-12-01T10:00:00.000000",
	}
	for _, enabled := range []bool{true, false} {
		w.Settings = models.DefaultSettings()
		if enabled {
			w.Settings.EnabledFilters = append([]string{models.FilterCompute}, w.Settings.EnabledFilters...)
		}
		s, err := NewSnapshot(w)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := s.Run(&RequestSpec{ProjectID: "p", Flavor: FlavorRef{Name: "f"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Hosts) != len(want) {
			t.Fatalf("%d hosts in the trace, want %d", len(tr.Hosts), len(want))
		}
		for _, h := range tr.Hosts {
			reason, ok := want[h.Name]
			if !ok {
				t.Fatalf("unexpected host %s", h.Name)
			}
			if !enabled {
				reason = ""
			}
			if h.Passed != (reason == "") || (reason != "" && (h.Stage != models.FilterCompute || h.Reason != reason)) {
				t.Errorf("filter enabled %v: %s passed %v at %q: %q, want reason %q", enabled, h.Name, h.Passed, h.Stage, h.Reason, reason)
			}
		}
	}
}

// A service's status and state take Nova's words only, and only a host
// runs one.
func TestComputeHostValidated(t *testing.T) {
	for _, tc := range []struct{ doc, field string }{
		{`{"providers": [{"name": "h", "compute": {"status": "off"}}]}`, "providers[0].compute.status"},
		{`{"providers": [{"name": "h", "compute": {"state": "gone"}}]}`, "providers[0].compute.state"},
		{`{"providers": [{"name": "h", "compute": {"disabled_reason": "` + strings.Repeat("x", 256) + `"}}]}`, "providers[0].compute.disabled_reason"},
		{`{"providers": [{"name": "h"}, {"name": "n", "parent": "h", "compute": {}}]}`, "providers[1].compute"},
	} {
		w, err := models.DecodeWorldJSON([]byte(tc.doc), "")
		if err == nil {
			err = w.Validate()
		}
		var e *models.Error
		if err == nil || !errors.As(err, &e) || e.Field != tc.field {
			t.Errorf("%s: got %v, want an error on %s", tc.doc, err, tc.field)
		}
	}
}
