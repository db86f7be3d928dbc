package compute_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestVersionDocuments(t *testing.T) {
	s := newServer(t, nil)
	for _, path := range []string{"/compute", "/compute/"} {
		r := must(t, s.req("GET", path, "", "", ""), 200)
		var body struct {
			Versions []struct {
				ID, Status, Version, MinVersion string
				Links                           []struct{ Rel, Href string }
			}
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Versions) != 2 || body.Versions[1].ID != "v2.1" || body.Versions[1].Status != "CURRENT" ||
			body.Versions[0].Status != "DEPRECATED" || body.Versions[1].Links[0].Href != s.URL+"/compute/v2.1/" {
			t.Errorf("%s: %s", path, r.Body)
		}
		if !strings.Contains(string(r.Body), `"version":"2.104","min_version":"2.1"`) {
			t.Errorf("%s does not advertise 2.1–2.104: %s", path, r.Body)
		}
	}
	for _, path := range []string{"/compute/v2.1", "/compute/v2.1/"} {
		r := must(t, s.req("GET", path, "", "", ""), 200)
		v := r.JSON(t)["version"].(map[string]any)
		if v["id"] != "v2.1" || v["version"] != "2.104" || v["min_version"] != "2.1" {
			t.Errorf("%s: %s", path, r.Body)
		}
		links := v["links"].([]any)
		if links[0].(map[string]any)["href"] != s.URL+"/compute/v2.1/" {
			t.Errorf("%s self link: %s", path, r.Body)
		}
		if r.Header.Get("OpenStack-API-Version") != "compute 2.1" {
			t.Errorf("%s version header %q", path, r.Header.Get("OpenStack-API-Version"))
		}
	}
}

// Every versioned response, faults included, carries the version headers
// and Vary; a malformed version carries none of the version headers.
func TestMicroversionOverHTTP(t *testing.T) {
	s := newServer(t, nil)
	tests := []struct {
		name      string
		header    []string
		status    int
		echo      string // expected OpenStack-API-Version ("" = absent)
		faultName string
		msg       string
	}{
		{"no header", nil, 200, "compute 2.1", "", ""},
		{"standard", []string{"OpenStack-API-Version", "compute 2.64"}, 200, "compute 2.64", "", ""},
		{"legacy", []string{"X-OpenStack-Nova-API-Version", "2.13"}, 200, "compute 2.13", "", ""},
		{"latest", []string{"OpenStack-API-Version", "compute latest"}, 200, "compute 2.104", "", ""},
		{"other service", []string{"OpenStack-API-Version", "placement 1.10"}, 200, "compute 2.1", "", ""},
		{"too new", []string{"OpenStack-API-Version", "compute 2.105"}, 406, "compute 2.105", "computeFault",
			"Version 2.105 is not supported by the API. Minimum is 2.1 and maximum is 2.104."},
		{"too old", []string{"X-OpenStack-Nova-API-Version", "2.0"}, 406, "compute 2.0", "computeFault",
			"Version 2.0 is not supported by the API. Minimum is 2.1 and maximum is 2.104."},
		{"malformed", []string{"OpenStack-API-Version", "compute 2.a"}, 400, "", "badRequest",
			"API Version String 2.a is of invalid format. Must be of format MajorNum.MinorNum."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.req("GET", "/compute/v2.1/os-server-groups", "alice", "", "", tt.header...)
			if tt.faultName != "" {
				fault(t, r, tt.status, tt.faultName, tt.msg)
			} else {
				must(t, r, tt.status)
				if ct := r.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
			}
			if got := r.Header.Get("OpenStack-API-Version"); got != tt.echo {
				t.Errorf("OpenStack-API-Version = %q, want %q", got, tt.echo)
			}
			wantLegacy := strings.TrimPrefix(tt.echo, "compute ")
			if got := r.Header.Get("X-OpenStack-Nova-API-Version"); got != wantLegacy {
				t.Errorf("X-OpenStack-Nova-API-Version = %q, want %q", got, wantLegacy)
			}
			if vary := strings.Join(r.Header.Values("Vary"), ","); !strings.Contains(vary, "OpenStack-API-Version") || !strings.Contains(vary, "X-OpenStack-Nova-API-Version") {
				t.Errorf("Vary = %q", vary)
			}
		})
	}
	// Other faults carry the headers too.
	r := s.req("GET", "/compute/v2.1/os-server-groups/nope", "alice", "2.64", "")
	fault(t, r, 404, "itemNotFound", "Instance group nope could not be found.")
	if r.Header.Get("OpenStack-API-Version") != "compute 2.64" || len(r.Header.Values("Vary")) == 0 {
		t.Errorf("404 headers: %v", r.Header)
	}
	fault(t, s.req("GET", "/compute/v2.1/os-server-groups", "", "2.64", ""), 401, "unauthorized", "")
	fault(t, s.req("GET", "/compute/v2.1/os-server-groups", "bogus-token", "2.64", ""), 401, "unauthorized", "")
	fault(t, s.req("GET", "/compute/v2.1/os-nothing-here", "alice", "2.64", ""), 404, "itemNotFound", "")
	// Nova answers an unrouted method with 404 too.
	fault(t, s.req("PATCH", "/compute/v2.1/os-server-groups", "alice", "2.64", "{}"), 404, "itemNotFound", "")
}

// The shape of a group at each microversion boundary.
func TestServerGroupShapesByVersion(t *testing.T) {
	s := newServer(t, nil)
	tests := []struct {
		version  string
		body     string
		wantKeys []string
		check    func(t *testing.T, g map[string]any)
	}{
		{"2.1", `{"server_group":{"name":"g21","policies":["affinity"]}}`,
			[]string{"id", "members", "metadata", "name", "policies"},
			func(t *testing.T, g map[string]any) {
				if !reflect.DeepEqual(g["policies"], []any{"affinity"}) || !reflect.DeepEqual(g["metadata"], map[string]any{}) {
					t.Errorf("%v", g)
				}
			}},
		{"2.12", `{"server_group":{"name":"g212","policies":["anti-affinity"]}}`,
			[]string{"id", "members", "metadata", "name", "policies"}, nil},
		{"2.13", `{"server_group":{"name":"g213","policies":["anti-affinity"]}}`,
			[]string{"id", "members", "metadata", "name", "policies", "project_id", "user_id"},
			func(t *testing.T, g map[string]any) {
				if g["project_id"] != "p1" || g["user_id"] != "alice" {
					t.Errorf("owner %v/%v", g["project_id"], g["user_id"])
				}
			}},
		{"2.15", `{"server_group":{"name":"g215","policies":["soft-anti-affinity"]}}`,
			[]string{"id", "members", "metadata", "name", "policies", "project_id", "user_id"},
			func(t *testing.T, g map[string]any) {
				if !reflect.DeepEqual(g["policies"], []any{"soft-anti-affinity"}) {
					t.Errorf("%v", g)
				}
			}},
		{"2.63", `{"server_group":{"name":"g263","policies":["soft-affinity"]}}`,
			[]string{"id", "members", "metadata", "name", "policies", "project_id", "user_id"}, nil},
		{"2.64", `{"server_group":{"name":"g264","policy":"anti-affinity","rules":{"max_server_per_host":"3"}}}`,
			[]string{"id", "members", "name", "policy", "project_id", "rules", "user_id"},
			func(t *testing.T, g map[string]any) {
				if g["policy"] != "anti-affinity" || !reflect.DeepEqual(g["rules"], map[string]any{"max_server_per_host": 3.0}) {
					t.Errorf("%v", g)
				}
			}},
		{"2.104", `{"server_group":{"name":"glatest","policy":"affinity"}}`,
			[]string{"id", "members", "name", "policy", "project_id", "rules", "user_id"},
			func(t *testing.T, g map[string]any) {
				if !reflect.DeepEqual(g["rules"], map[string]any{}) || !reflect.DeepEqual(g["members"], []any{}) {
					t.Errorf("%v", g)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			created := must(t, s.req("POST", "/compute/v2.1/os-server-groups", "alice", tt.version, tt.body), 200)
			g := created.JSON(t)["server_group"].(map[string]any)
			if got := keys(g); !reflect.DeepEqual(got, tt.wantKeys) {
				t.Fatalf("create keys %v, want %v", got, tt.wantKeys)
			}
			if tt.check != nil {
				tt.check(t, g)
			}
			id := g["id"].(string)
			shown := must(t, s.req("GET", "/compute/v2.1/os-server-groups/"+id, "alice", tt.version, ""), 200)
			if !reflect.DeepEqual(shown.JSON(t)["server_group"], g) {
				t.Errorf("show %s differs from create %s", shown.Body, created.Body)
			}
			list := must(t, s.req("GET", "/compute/v2.1/os-server-groups", "alice", tt.version, ""), 200)
			found := false
			for _, x := range list.JSON(t)["server_groups"].([]any) {
				if reflect.DeepEqual(x, g) {
					found = true
				}
			}
			if !found {
				t.Errorf("list %s lacks %v", list.Body, g)
			}
			r := must(t, s.req("DELETE", "/compute/v2.1/os-server-groups/"+id, "alice", tt.version, ""), 204)
			if len(r.Body) != 0 {
				t.Errorf("delete body %q", r.Body)
			}
			fault(t, s.req("GET", "/compute/v2.1/os-server-groups/"+id, "alice", tt.version, ""), 404, "itemNotFound",
				"Instance group "+id+" could not be found.")
			fault(t, s.req("DELETE", "/compute/v2.1/os-server-groups/"+id, "alice", tt.version, ""), 404, "itemNotFound",
				"Instance group "+id+" could not be found.")
		})
	}
}

func TestServerGroupCrossVersionReads(t *testing.T) {
	s := newServer(t, nil)
	r := must(t, s.req("POST", "/compute/v2.1/os-server-groups", "alice", "2.64",
		`{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":2}}}`), 200)
	id := r.JSON(t)["server_group"].(map[string]any)["id"].(string)
	tests := []struct{ version, body string }{
		{"2.1", `{"server_group":{"id":"` + id + `","name":"g","policies":["anti-affinity"],"metadata":{},"members":[]}}`},
		{"2.63", `{"server_group":{"id":"` + id + `","name":"g","policies":["anti-affinity"],"metadata":{},"members":[],"project_id":"p1","user_id":"alice"}}`},
		{"2.64", `{"server_group":{"id":"` + id + `","name":"g","policy":"anti-affinity","rules":{"max_server_per_host":2},"members":[],"project_id":"p1","user_id":"alice"}}`},
	}
	for _, tt := range tests {
		got := must(t, s.req("GET", "/compute/v2.1/os-server-groups/"+id, "alice", tt.version, ""), 200)
		if string(got.Body) != tt.body {
			t.Errorf("%s:\n got %s\nwant %s", tt.version, got.Body, tt.body)
		}
	}
	// A group made at 2.1 shows empty rules at 2.64.
	r = must(t, s.req("POST", "/compute/v2.1/os-server-groups", "alice", "", `{"server_group":{"name":"old","policies":["affinity"]}}`), 200)
	id = r.JSON(t)["server_group"].(map[string]any)["id"].(string)
	got := must(t, s.req("GET", "/compute/v2.1/os-server-groups/"+id, "alice", "2.64", ""), 200)
	if g := got.JSON(t)["server_group"].(map[string]any); !reflect.DeepEqual(g["rules"], map[string]any{}) || g["policy"] != "affinity" {
		t.Errorf("2.1 group at 2.64: %s", got.Body)
	}
}

// Nova's default policy and project scoping, actor by actor.
func TestServerGroupScoping(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) { serverGroupScoping(t, newServer(t, st)) })
}

func serverGroupScoping(t *testing.T, s *server) {
	create := func(user, name string) string {
		r := must(t, s.req("POST", "/compute/v2.1/os-server-groups", user, "2.64", `{"server_group":{"name":"`+name+`","policy":"affinity"}}`), 200)
		return r.JSON(t)["server_group"].(map[string]any)["id"].(string)
	}
	g1 := create("alice", "p1-group")
	g2 := create("bob", "p2-group")
	gA := create("admin", "admin-group")
	names := func(user, query string) []string {
		r := must(t, s.req("GET", "/compute/v2.1/os-server-groups"+query, user, "2.64", ""), 200)
		var out []string
		for _, g := range r.JSON(t)["server_groups"].([]any) {
			out = append(out, g.(map[string]any)["name"].(string))
		}
		sort.Strings(out)
		return out
	}
	lists := []struct {
		user, query string
		want        []string
	}{
		{"alice", "", []string{"p1-group"}},
		{"rita", "", []string{"p1-group"}},
		{"bob", "", []string{"p2-group"}},
		{"alice", "?all_projects=True", []string{"p1-group"}}, // silently scoped
		{"admin", "", []string{"admin-group"}},
		{"admin", "?all_projects=True", []string{"admin-group", "p1-group", "p2-group"}},
		{"admin", "?all_projects=0", []string{"admin-group", "p1-group", "p2-group"}}, // presence counts
	}
	for _, l := range lists {
		if got := names(l.user, l.query); !reflect.DeepEqual(got, l.want) {
			t.Errorf("%s list%s = %v, want %v", l.user, l.query, got, l.want)
		}
	}
	notFound := func(id string) string { return "Instance group " + id + " could not be found." }
	// Other projects' groups do not exist for non-admins.
	fault(t, s.req("GET", "/compute/v2.1/os-server-groups/"+g1, "bob", "2.64", ""), 404, "itemNotFound", notFound(g1))
	fault(t, s.req("DELETE", "/compute/v2.1/os-server-groups/"+g1, "bob", "2.64", ""), 404, "itemNotFound", notFound(g1))
	fault(t, s.req("GET", "/compute/v2.1/os-server-groups/"+gA, "alice", "2.64", ""), 404, "itemNotFound", notFound(gA))
	// Readers read but do not write.
	must(t, s.req("GET", "/compute/v2.1/os-server-groups/"+g1, "rita", "2.64", ""), 200)
	fault(t, s.req("DELETE", "/compute/v2.1/os-server-groups/"+g1, "rita", "2.64", ""), 403, "forbidden",
		"Policy doesn't allow os_compute_api:os-server-groups:delete to be performed.")
	fault(t, s.req("POST", "/compute/v2.1/os-server-groups", "rita", "2.64", `{"server_group":{"name":"r","policy":"affinity"}}`), 403, "forbidden",
		"Policy doesn't allow os_compute_api:os-server-groups:create to be performed.")
	// Validation comes before policy, as in Nova.
	fault(t, s.req("POST", "/compute/v2.1/os-server-groups", "rita", "2.64", `{"server_group":{"name":"r"}}`), 400, "badRequest", "")
	// Admins see and delete anything.
	must(t, s.req("GET", "/compute/v2.1/os-server-groups/"+g2, "admin", "2.64", ""), 200)
	must(t, s.req("DELETE", "/compute/v2.1/os-server-groups/"+g2, "admin", "2.64", ""), 204)
	// A project id in the URL is the caller's own: corral's projects may be
	// named, so the caller's own is routed whatever it looks like; another
	// must be hex, as Nova routes it (else 404), and is then Nova's 400.
	must(t, s.req("GET", "/compute/v2.1/p1/os-server-groups/"+g1, "alice", "2.64", ""), 200)
	fault(t, s.req("GET", "/compute/v2.1/p2/os-server-groups/"+g1, "alice", "2.64", ""), 404, "itemNotFound", "")
	gO := create("olga", "hex-group")
	must(t, s.req("GET", "/compute/v2.1/0a1b2c3d4e5f/os-server-groups/"+gO, "olga", "2.64", ""), 200)
	if got := must(t, s.req("GET", "/compute/v2.1/0a1b2c3d4e5f/os-server-groups", "olga", "2.64", ""), 200); !strings.Contains(string(got.Body), gO) {
		t.Errorf("list with project in URL: %s", got.Body)
	}
	fault(t, s.req("GET", "/compute/v2.1/0a1b2c3d4e5e/os-server-groups", "olga", "2.64", ""), 400, "badRequest",
		"Malformed request URL: URL's project_id '0a1b2c3d4e5e' doesn't match Context's project_id '0a1b2c3d4e5f'")
	must(t, s.req("DELETE", "/compute/v2.1/0a1b2c3d4e5f/os-server-groups/"+gO, "olga", "2.64", ""), 204)
}

func TestServerGroupQuota(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) { serverGroupQuota(t, newServer(t, st)) })
}

func serverGroupQuota(t *testing.T, s *server) {
	post := func(user string, i int) response {
		return s.req("POST", "/compute/v2.1/os-server-groups", user, "2.64", fmt.Sprintf(`{"server_group":{"name":"q%d","policy":"affinity"}}`, i))
	}
	for i := 1; i <= models.DefaultQuota; i++ {
		must(t, post("alice", i), 200)
	}
	fault(t, post("alice", 11), 403, "forbidden", "Quota exceeded, too many server groups.")
	// The quota is per project: rita shares p1, bob has his own.
	must(t, s.req("POST", "/compute/v2.1/os-server-groups", "admin", "2.64", `{"server_group":{"name":"a","policy":"affinity"}}`), 200)
	must(t, post("bob", 1), 200)
	ctx := context.Background()
	if err := s.Store.SetQuota(ctx, store.Actor{Name: "test"}, "p2", models.QuotaServerGroups, 1); err != nil {
		t.Fatal(err)
	}
	fault(t, post("bob", 2), 403, "forbidden", "Quota exceeded, too many server groups.")
	if err := s.Store.SetQuota(ctx, store.Actor{Name: "test"}, "p1", models.QuotaServerGroups, -1); err != nil {
		t.Fatal(err)
	}
	must(t, post("alice", 12), 200)
}

func TestServerGroupListPaging(t *testing.T) {
	s := newServer(t, nil)
	var ids []string
	for i := 0; i < 5; i++ {
		r := must(t, s.req("POST", "/compute/v2.1/os-server-groups", "alice", "2.64", fmt.Sprintf(`{"server_group":{"name":"g%d","policy":"affinity"}}`, i)), 200)
		ids = append(ids, r.JSON(t)["server_group"].(map[string]any)["id"].(string))
	}
	tests := []struct {
		version, query string
		want           []string
		msg            string
	}{
		{"2.64", "", ids, ""},
		{"2.64", "?limit=2", ids[:2], ""},
		{"2.64", "?limit=2&offset=1", ids[1:3], ""},
		{"2.64", "?limit=0", ids, ""},
		{"2.64", "?offset=4", ids[4:], ""},
		{"2.64", "?offset=9", nil, ""},
		{"2.64", "?limit=1&limit=3", ids[:3], ""},
		{"2.74", "?foo=bar", ids, ""},
		{"2.75", "?foo=bar", nil, "Additional properties are not allowed ('foo' was unexpected)"},
		{"2.64", "?limit=-1", nil, "Invalid input for query parameters limit. Value: -1. '-1' does not match '^[0-9]*$'"},
		{"2.1", "?offset=x", nil, "Invalid input for query parameters offset. Value: x. 'x' does not match '^[0-9]*$'"},
	}
	for _, tt := range tests {
		r := s.req("GET", "/compute/v2.1/os-server-groups"+tt.query, "alice", tt.version, "")
		if tt.msg != "" {
			fault(t, r, 400, "badRequest", tt.msg)
			continue
		}
		must(t, r, 200)
		var got []string
		for _, g := range r.JSON(t)["server_groups"].([]any) {
			got = append(got, g.(map[string]any)["id"].(string))
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %s: got %v, want %v", tt.version, tt.query, got, tt.want)
		}
	}
	// Show ignores query parameters until 2.102.
	must(t, s.req("GET", "/compute/v2.1/os-server-groups/"+ids[0]+"?foo=1", "alice", "2.101", ""), 200)
	fault(t, s.req("GET", "/compute/v2.1/os-server-groups/"+ids[0]+"?foo=1", "alice", "2.102", ""), 400, "badRequest",
		"Additional properties are not allowed ('foo' was unexpected)")
}

// Validation errors arrive intact over HTTP, with Nova's fault body.
func TestServerGroupValidationOverHTTP(t *testing.T) {
	s := newServer(t, nil)
	tests := []struct{ version, body, msg string }{
		{"2.64", `{"server_group":{"name":"g","policy":"affinity","rules":{"max_server_per_host":3}}}`, "Only anti-affinity policy supports rules."},
		{"2.64", `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":0}}}`,
			"Invalid input for field/attribute max_server_per_host. Value: 0. 0 is less than the minimum of 1"},
		{"2.14", `{"server_group":{"name":"g","policies":["soft-affinity"]}}`,
			"Invalid input for field/attribute 0. Value: soft-affinity. 'soft-affinity' is not one of ['anti-affinity', 'affinity']"},
		{"2.63", `{"server_group":{"name":"g","policies":["affinity"],"rules":{}}}`,
			"Invalid input for field/attribute server_group. Value: {'name': 'g', 'policies': ['affinity'], 'rules': {}}. Additional properties are not allowed ('rules' was unexpected)"},
		{"2.64", `not json`, "Malformed request body"},
	}
	for _, tt := range tests {
		fault(t, s.req("POST", "/compute/v2.1/os-server-groups", "alice", tt.version, tt.body), 400, "badRequest", tt.msg)
	}
	// Nova reads text/plain as JSON and refuses other declared types.
	body := `{"server_group":{"name":"g","policy":"affinity"}}`
	must(t, s.req("POST", "/compute/v2.1/os-server-groups", "alice", "2.64", body, "Content-Type", "text/plain"), 200)
	fault(t, s.req("POST", "/compute/v2.1/os-server-groups", "alice", "2.64", body, "Content-Type", "application/x-www-form-urlencoded"),
		415, "badMediaType", "Unsupported Content-Type")
}

// The API writes through the same store and audit log as the console, on
// SQLite and (when configured) PostgreSQL.
func TestServerGroupStoreAndAudit(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		s := newServer(t, st)
		r := must(t, s.req("POST", "/compute/v2.1/os-server-groups", "alice", "2.64",
			`{"server_group":{"name":"audited","policy":"anti-affinity","rules":{"max_server_per_host":2}}}`), 200)
		id := r.JSON(t)["server_group"].(map[string]any)["id"].(string)
		g, err := st.GetServerGroup(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if g.Name != "audited" || g.ProjectID != "p1" || g.UserID != "alice" || g.MaxServerPerHost() != 2 {
			t.Errorf("stored %+v", g)
		}
		must(t, s.req("DELETE", "/compute/v2.1/os-server-groups/"+id, "alice", "2.64", ""), 204)
		evs, _, err := st.ListAudit(context.Background(), store.AuditQuery{ObjectType: "server_group", ObjectID: id})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			got = append(got, e.Action+"/"+e.Actor+"/"+e.Via)
		}
		sort.Strings(got)
		want := []string{"create/alice/compute-api", "delete/alice/compute-api"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("audit %v, want %v", got, want)
		}
	})
}

// Members are added on the console side (the store checks the
// server_group_members quota); the API lists them at every version.
func TestServerGroupMembers(t *testing.T) {
	s := newServer(t, nil)
	r := must(t, s.req("POST", "/compute/v2.1/os-server-groups", "alice", "2.64", `{"server_group":{"name":"m","policy":"anti-affinity"}}`), 200)
	id := r.JSON(t)["server_group"].(map[string]any)["id"].(string)
	ctx := context.Background()
	sys := store.Actor{Name: "test"}
	var servers []string
	for i := 0; i < models.DefaultQuota+1; i++ {
		srv := &models.Server{Name: fmt.Sprintf("vm%d", i), ProjectID: "p1"}
		if err := s.Store.CreateServer(ctx, sys, srv); err != nil {
			t.Fatal(err)
		}
		servers = append(servers, srv.UUID)
	}
	if _, err := s.Store.UpdateServerGroup(ctx, sys, id, store.AnyGeneration, func(g *models.ServerGroup) error {
		g.Members = servers[:2]
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"2.1", "2.64"} {
		got := must(t, s.req("GET", "/compute/v2.1/os-server-groups/"+id, "alice", v, ""), 200)
		if m := got.JSON(t)["server_group"].(map[string]any)["members"]; !reflect.DeepEqual(m, []any{servers[0], servers[1]}) {
			t.Errorf("%s members %v", v, m)
		}
	}
	_, err := s.Store.UpdateServerGroup(ctx, sys, id, store.AnyGeneration, func(g *models.ServerGroup) error {
		g.Members = servers
		return nil
	})
	if models.KindOf(err) != models.OverQuota {
		t.Errorf("11 members: %v, want over quota", err)
	}
	// Deleting a group with members is allowed, as in Nova.
	must(t, s.req("DELETE", "/compute/v2.1/os-server-groups/"+id, "alice", "2.64", ""), 204)
}

// Concurrent creates never overshoot the quota: the check and the insert
// are one transaction in the store.
func TestServerGroupQuotaUnderConcurrency(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		s := newServer(t, st)
		const n = 3 * models.DefaultQuota
		statuses := make(chan int, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				req, _ := http.NewRequest("POST", s.URL+"/compute/v2.1/os-server-groups",
					strings.NewReader(fmt.Sprintf(`{"server_group":{"name":"c%d","policy":"affinity"}}`, i)))
				req.Header.Set("X-Auth-Token", s.tokens["alice"])
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("OpenStack-API-Version", "compute 2.64")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					statuses <- 0
					return
				}
				resp.Body.Close()
				statuses <- resp.StatusCode
			}(i)
		}
		wg.Wait()
		close(statuses)
		count := map[int]int{}
		for st := range statuses {
			count[st]++
		}
		if count[200] != models.DefaultQuota || count[403] != n-models.DefaultQuota {
			t.Errorf("statuses %v, want %d×200 and %d×403", count, models.DefaultQuota, n-models.DefaultQuota)
		}
		groups, err := st.ListServerGroups(context.Background(), store.ServerGroupQuery{ProjectID: "p1"})
		if err != nil || len(groups) != models.DefaultQuota {
			t.Errorf("stored %d groups (%v)", len(groups), err)
		}
	})
}
