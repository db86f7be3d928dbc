package compute_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

func (s *server) provider(t *testing.T, name string, parent *string, traits ...string) *models.Provider {
	t.Helper()
	p := &models.Provider{Name: name, ParentUUID: parent, Traits: traits}
	if err := s.Store.CreateProvider(context.Background(), store.Actor{Name: "test"}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func aggOf(t *testing.T, r response) map[string]any {
	t.Helper()
	return r.JSON(t)["aggregate"].(map[string]any)
}

func TestAggregateLifecycle(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) { aggregateLifecycle(t, newServer(t, st)) })
}

func aggregateLifecycle(t *testing.T, s *server) {
	cn1 := s.provider(t, "cn1", nil)
	s.provider(t, "cn2", nil)
	s.provider(t, "numa0", &cn1.UUID)
	ss := s.provider(t, "shared-disk", nil, models.TraitSharesViaAggregate)
	const base = "/compute/v2.1/os-aggregates"

	// Create: 200, no hosts/metadata, uuid from 2.41, names stripped.
	r := must(t, s.req("POST", base, "admin", "2.41", `{"aggregate":{"name":"agg1","availability_zone":"az1"}}`), 200)
	a := aggOf(t, r)
	wantKeys := []string{"availability_zone", "created_at", "deleted", "deleted_at", "id", "name", "updated_at", "uuid"}
	if got := keys(a); !reflect.DeepEqual(got, wantKeys) {
		t.Fatalf("create keys %v, want %v", got, wantKeys)
	}
	if a["availability_zone"] != "az1" || a["deleted"] != false || a["deleted_at"] != nil || a["updated_at"] != nil {
		t.Errorf("create body %s", r.Body)
	}
	id := fmt.Sprint(a["id"])
	path := base + "/" + id
	fault(t, s.req("POST", base, "admin", "2.41", `{"aggregate":{"name":"agg1"}}`), 409, "conflictingRequest", "Aggregate agg1 already exists.")
	r = must(t, s.req("POST", base, "admin", "2.40", `{"aggregate":{"name":"agg2","availability_zone":null}}`), 200)
	a2 := aggOf(t, r)
	if _, ok := a2["uuid"]; ok || a2["availability_zone"] != nil {
		t.Errorf("2.40 create %s", r.Body)
	}

	// Show: hosts and metadata (the zone is mirrored into metadata).
	r = must(t, s.req("GET", path, "admin", "2.41", ""), 200)
	a = aggOf(t, r)
	if !reflect.DeepEqual(a["hosts"], []any{}) || !reflect.DeepEqual(a["metadata"], map[string]any{"availability_zone": "az1"}) {
		t.Errorf("show %s", r.Body)
	}
	if _, ok := must(t, s.req("GET", path, "admin", "2.40", ""), 200).JSON(t)["aggregate"].(map[string]any)["uuid"]; ok {
		t.Error("uuid shown below 2.41")
	}

	// Update name (spaces stripped) and zone.
	r = must(t, s.req("PUT", path, "admin", "2.41", `{"aggregate":{"name":"  renamed  ","availability_zone":"az9"}}`), 200)
	a = aggOf(t, r)
	if a["name"] != "renamed" || a["availability_zone"] != "az9" || a["updated_at"] == nil ||
		!reflect.DeepEqual(a["metadata"], map[string]any{"availability_zone": "az9"}) {
		t.Errorf("update %s", r.Body)
	}
	fault(t, s.req("PUT", path, "admin", "2.41", `{"aggregate":{"availability_zone":null}}`), 400, "badRequest",
		"Cannot update aggregate "+id+". Reason: Aggregate renamed does not support empty named availability zone.")
	fault(t, s.req("PUT", path, "admin", "2.41", `{"aggregate":{"name":"agg2"}}`), 409, "conflictingRequest", "Aggregate agg2 already exists.")

	// set_metadata merges; null deletes.
	r = must(t, s.req("POST", path+"/action", "admin", "2.41", `{"set_metadata":{"metadata":{"k1":"v1","k2":"v2"}}}`), 200)
	r = must(t, s.req("POST", path+"/action", "admin", "2.41", `{"set_metadata":{"metadata":{"k1":null,"k3":"v3"}}}`), 200)
	if got := aggOf(t, r)["metadata"]; !reflect.DeepEqual(got, map[string]any{"availability_zone": "az9", "k2": "v2", "k3": "v3"}) {
		t.Errorf("metadata %v", got)
	}
	fault(t, s.req("POST", path+"/action", "admin", "2.41", `{"set_metadata":{"metadata":{"availability_zone":null}}}`), 400, "badRequest",
		"Cannot update metadata of aggregate "+id+". Reason: Aggregate renamed does not support empty named availability zone.")
	r = must(t, s.req("POST", path+"/action", "admin", "2.41", `{"set_metadata":{"metadata":{"availability_zone":"az1"}}}`), 200)
	if aggOf(t, r)["availability_zone"] != "az1" {
		t.Errorf("zone via metadata: %s", r.Body)
	}

	// Hosts: only host providers count; a host is added once.
	fault(t, s.req("POST", path+"/action", "admin", "2.41", `{"add_host":{"host":"nope"}}`), 404, "itemNotFound", "Compute host nope could not be found.")
	fault(t, s.req("POST", path+"/action", "admin", "2.41", `{"add_host":{"host":"numa0"}}`), 404, "itemNotFound", "Compute host numa0 could not be found.")
	fault(t, s.req("POST", path+"/action", "admin", "2.41", `{"add_host":{"host":"shared-disk"}}`), 404, "itemNotFound", "Compute host shared-disk could not be found.")
	r = must(t, s.req("POST", path+"/action", "admin", "2.41", `{"add_host":{"host":"cn1"}}`), 200)
	if got := aggOf(t, r)["hosts"]; !reflect.DeepEqual(got, []any{"cn1"}) {
		t.Errorf("hosts %v", got)
	}
	fault(t, s.req("POST", path+"/action", "admin", "2.41", `{"add_host":{"host":"cn1"}}`), 409, "conflictingRequest", "Aggregate "+id+" already has host cn1.")
	must(t, s.req("POST", path+"/action", "admin", "2.41", `{"add_host":{"host":"cn2"}}`), 200)
	// The host is the root provider: its aggregates are the store's.
	aggs, _, err := s.Store.ProviderAggregates(context.Background(), cn1.UUID)
	if err != nil || len(aggs) != 1 || aggs[0] != a["uuid"] {
		t.Errorf("cn1 aggregates %v %v", aggs, err)
	}
	// A sharing provider put in by the Placement side is not a Nova host.
	if _, err := s.Store.SetProviderAggregates(context.Background(), store.Actor{Name: "test"}, ss.UUID, store.AnyGeneration, []string{a["uuid"].(string)}); err != nil {
		t.Fatal(err)
	}
	r = must(t, s.req("GET", base, "admin", "2.41", ""), 200)
	list := r.JSON(t)["aggregates"].([]any)
	if len(list) != 2 || !reflect.DeepEqual(list[0].(map[string]any)["hosts"], []any{"cn1", "cn2"}) {
		t.Errorf("list %s", r.Body)
	}

	// A host cannot sit in two zones.
	path2 := base + "/" + fmt.Sprint(a2["id"])
	must(t, s.req("POST", path2+"/action", "admin", "2.41", `{"set_metadata":{"metadata":{"availability_zone":"az2"}}}`), 200)
	fault(t, s.req("POST", path2+"/action", "admin", "2.41", `{"add_host":{"host":"cn1"}}`), 409, "conflictingRequest",
		"Cannot add host to aggregate "+fmt.Sprint(a2["id"])+". Reason: One or more hosts already in availability zone(s) ['az1'].")
	must(t, s.req("PUT", path2, "admin", "2.41", `{"aggregate":{"availability_zone":"az1"}}`), 200)
	must(t, s.req("POST", path2+"/action", "admin", "2.41", `{"add_host":{"host":"cn1"}}`), 200)
	fault(t, s.req("PUT", path2, "admin", "2.41", `{"aggregate":{"availability_zone":"az3"}}`), 400, "badRequest",
		"Cannot update aggregate "+fmt.Sprint(a2["id"])+". Reason: One or more hosts already in availability zone(s) ['az1'].")

	// Delete is refused while hosts remain.
	fault(t, s.req("DELETE", path, "admin", "2.41", ""), 400, "badRequest",
		"Cannot remove host from aggregate "+id+". Reason: Host aggregate is not empty.")
	fault(t, s.req("POST", path+"/action", "admin", "2.41", `{"remove_host":{"host":"nope"}}`), 404, "itemNotFound", "Cannot remove host nope in aggregate "+id)
	fault(t, s.req("POST", base+"/999/action", "admin", "2.41", `{"remove_host":{"host":"cn1"}}`), 404, "itemNotFound", "Cannot remove host cn1 in aggregate 999")
	for _, h := range []string{"cn1", "cn2"} {
		r = must(t, s.req("POST", path+"/action", "admin", "2.41", `{"remove_host":{"host":"`+h+`"}}`), 200)
	}
	if got := aggOf(t, r)["hosts"]; !reflect.DeepEqual(got, []any{}) {
		t.Errorf("hosts after removal %v", got)
	}
	fault(t, s.req("POST", path+"/action", "admin", "2.41", `{"remove_host":{"host":"cn1"}}`), 404, "itemNotFound", "Cannot remove host cn1 in aggregate "+id)
	r = must(t, s.req("DELETE", path, "admin", "2.41", ""), 200)
	if len(r.Body) != 0 {
		t.Errorf("delete body %q", r.Body)
	}
	fault(t, s.req("GET", path, "admin", "2.41", ""), 404, "itemNotFound", "Aggregate "+id+" could not be found.")
	fault(t, s.req("DELETE", path, "admin", "2.41", ""), 404, "itemNotFound", "Aggregate "+id+" could not be found.")
	if _, err := s.Store.GetProvider(context.Background(), ss.UUID); err != nil {
		t.Errorf("the sharing provider went with the aggregate: %v", err)
	}
	// The audit log saw the API's changes.
	evs, _, err := s.Store.ListAudit(context.Background(), store.AuditQuery{ObjectType: "aggregate", ObjectID: a["uuid"].(string)})
	if err != nil || len(evs) < 8 || evs[0].Via != "compute-api" || evs[0].Actor != "admin" {
		t.Errorf("audit: %d events, %v", len(evs), err)
	}
}

func TestAggregateErrors(t *testing.T) {
	s := newServer(t, nil)
	const base = "/compute/v2.1/os-aggregates"
	r := must(t, s.req("POST", base, "admin", "2.41", `{"aggregate":{"name":"a"}}`), 200)
	path := base + "/" + fmt.Sprint(aggOf(t, r)["id"])
	tests := []struct {
		name, user, method, path, version, body string
		status                                  int
		fault, msg                              string
	}{
		{"member list", "alice", "GET", base, "2.41", "", 403, "forbidden", "Policy doesn't allow os_compute_api:os-aggregates:index to be performed."},
		{"reader show", "rita", "GET", path, "2.41", "", 403, "forbidden", "Policy doesn't allow os_compute_api:os-aggregates:show to be performed."},
		{"member create", "bob", "POST", base, "2.41", `{"aggregate":{"name":"b"}}`, 403, "forbidden", "Policy doesn't allow os_compute_api:os-aggregates:create to be performed."},
		{"member add_host", "bob", "POST", path + "/action", "2.41", `{"add_host":{"host":"x"}}`, 403, "forbidden", "Policy doesn't allow os_compute_api:os-aggregates:add_host to be performed."},
		{"id not integer", "admin", "GET", base + "/abc", "2.41", "", 400, "badRequest", "Invalid input received: id must be an integer"},
		{"no such id", "admin", "GET", base + "/999", "2.41", "", 404, "itemNotFound", "Aggregate 999 could not be found."},
		{"name with spaces", "admin", "POST", base, "2.41", `{"aggregate":{"name":" x"}}`, 400, "badRequest",
			"An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace."},
		{"empty az", "admin", "POST", base, "2.41", `{"aggregate":{"name":"x","availability_zone":""}}`, 400, "badRequest",
			"Invalid input for field/attribute availability_zone. Value: . '' is not valid under any of the given schemas"},
		{"empty update", "admin", "PUT", path, "2.41", `{"aggregate":{}}`, 400, "badRequest",
			"Invalid input for field/attribute aggregate. Value: {}. {} is not valid under any of the given schemas"},
		{"two actions", "admin", "POST", path + "/action", "2.41", `{"add_host":{"host":"x"},"remove_host":{"host":"y"}}`, 400, "badRequest", "Malformed request body"},
		{"unknown action", "admin", "POST", path + "/action", "2.41", `{"frob":{}}`, 400, "badRequest", "There is no such action: frob"},
		{"bad host", "admin", "POST", path + "/action", "2.41", `{"add_host":{"host":"a b"}}`, 400, "badRequest",
			"Invalid input for field/attribute host. Value: a b. 'a b' does not match '^[a-zA-Z0-9-._]*$'"},
		{"bad metadata key", "admin", "POST", path + "/action", "2.41", `{"set_metadata":{"metadata":{"k/2":"x"}}}`, 400, "badRequest",
			"Invalid input for field/attribute metadata. Value: {'k/2': 'x'}. 'k/2' does not match any of the regexes: '^[a-zA-Z0-9-_:. ]{1,255}$'"},
		{"query ignored below 2.102", "admin", "GET", base + "?foo=1", "2.101", "", 200, "", ""},
		{"query refused from 2.102", "admin", "GET", base + "?foo=1", "2.102", "", 400, "badRequest", "Additional properties are not allowed ('foo' was unexpected)"},
		{"show query from 2.102", "admin", "GET", path + "?foo=1", "2.102", "", 400, "badRequest", "Additional properties are not allowed ('foo' was unexpected)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.req(tt.method, tt.path, tt.user, tt.version, tt.body)
			if tt.fault == "" {
				must(t, r, tt.status)
				return
			}
			fault(t, r, tt.status, tt.fault, tt.msg)
		})
	}
}
