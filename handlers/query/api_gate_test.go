package query_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The drafts API's safety gate: applying a draft that strands running
// servers (taking acme off its tenant aggregate) without "confirm" is a
// 409 naming the servers and changes nothing; with "confirm": true it is
// applied. A draft with no such consequence needs no confirmation.
func TestDraftsAPIApplyAsksToConfirmConsequences(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	var d apiDraft
	if st := c.api("POST", "/api/drafts", `{"name": "drop acme", "changes": [{"op": "remove_tenant", "aggregate": "tenant-acme", "project": "acme"}]}`, &d); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	var refused struct {
		apiError
		Consequences struct {
			Servers []struct{ Name, Host string } `json:"servers"`
			Pairs   []struct{ Project, Flavor string }
			Token   string `json:"token"`
		} `json:"consequences"`
	}
	for _, body := range []string{fmt.Sprintf(`{"version": %d}`, d.Version), fmt.Sprintf(`{"version": %d, "confirm": false}`, d.Version)} {
		st := c.api("POST", "/api/drafts/"+d.ID+"/apply", body, &refused)
		if st != http.StatusConflict || refused.Error.Field != "confirm" || len(refused.Consequences.Servers) == 0 || refused.Consequences.Token == "" {
			t.Fatalf("apply %s: %d %+v; want 409 on confirm, naming the stranded servers", body, st, refused)
		}
		first := refused.Consequences.Servers[0]
		if !strings.Contains(refused.Error.Message, "strands") || !strings.Contains(refused.Error.Message, first.Name) {
			t.Errorf("message %q does not name the stranded server %s", refused.Error.Message, first.Name)
		}
	}
	if agg, err := c.app.Store.GetAggregate(ctx, "tenant-acme"); err != nil || agg.Metadata["filter_tenant_id"] != "acme" {
		t.Fatalf("the refused apply changed tenant-acme: %v %v", agg.Metadata, err)
	}
	var got apiDraft
	if st := c.api("GET", "/api/drafts/"+d.ID, "", &got); st != http.StatusOK {
		t.Fatalf("the draft is gone after a refused apply: %d", st)
	}
	var ap struct {
		AuditEvent int64 `json:"audit_event"`
	}
	if st := c.api("POST", "/api/drafts/"+d.ID+"/apply", fmt.Sprintf(`{"version": %d, "confirm": true}`, d.Version), &ap); st != http.StatusOK || ap.AuditEvent == 0 {
		t.Fatalf("confirmed apply: %d %+v", st, ap)
	}
	if agg, _ := c.app.Store.GetAggregate(ctx, "tenant-acme"); agg.Metadata["filter_tenant_id"] == "acme" {
		t.Errorf("the confirmed apply left tenant-acme %v", agg.Metadata)
	}

	// Harmless: applied without "confirm".
	var h apiDraft
	if st := c.api("POST", "/api/drafts", `{"name": "colour", "changes": [{"op": "set_metadata", "aggregate": "tenant-globex", "key": "colour", "value": "blue"}]}`, &h); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	if st := c.api("POST", "/api/drafts/"+h.ID+"/apply", fmt.Sprintf(`{"version": %d}`, h.Version), nil); st != http.StatusOK {
		t.Errorf("a harmless draft without confirm: %d, want 200", st)
	}
}

// Renaming a zone whose hosts run servers is a zone trap: the 409 names
// it with its code, the aggregate, the hosts and how many servers run
// there (docs/drafts.md, "Zone traps").
func TestDraftsAPIApplyNamesAZoneRenamedUnderServers(t *testing.T) {
	c := newClient(t)
	var d apiDraft
	if st := c.api("POST", "/api/drafts", `{"name": "rename west", "changes": [{"op": "set_zone", "aggregate": "az-west", "availability_zone": "north"}]}`, &d); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	var refused struct {
		apiError
		Consequences struct {
			Zones []struct {
				Code, Aggregate, From, To string
				Hosts                     []string
				Servers                   int
			} `json:"zones"`
		} `json:"consequences"`
	}
	st := c.api("POST", "/api/drafts/"+d.ID+"/apply", fmt.Sprintf(`{"version": %d}`, d.Version), &refused)
	z := refused.Consequences.Zones
	if st != http.StatusConflict || len(z) != 1 || z[0].Code != "zone_renamed_under_servers" || z[0].Aggregate != "az-west" ||
		z[0].From != "west" || z[0].To != "north" || strings.Join(z[0].Hosts, ",") != "cn5,cn6,cn8" || z[0].Servers != 4 {
		t.Fatalf("apply: %d %+v; want 409 naming the zone trap", st, refused)
	}
	if !strings.Contains(refused.Error.Message, "moves aggregate az-west from zone west to zone north under 4 running servers on cn5, cn6, cn8") {
		t.Errorf("message %q", refused.Error.Message)
	}
	if st := c.api("POST", "/api/drafts/"+d.ID+"/apply", fmt.Sprintf(`{"version": %d, "confirm": true}`, d.Version), nil); st != http.StatusOK {
		t.Errorf("confirmed apply: %d", st)
	}
}
