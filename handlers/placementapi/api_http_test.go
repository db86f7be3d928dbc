package placementapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
)

func TestVersionNegotiation(t *testing.T) {
	a := startApp(t, openSQLite(t))
	cases := []struct {
		path, version string
		status        int
		echoed        string // OpenStack-API-Version sent back; "" for none
		detail        string
	}{
		{"/", "", 200, "placement 1.0", ""},
		{"", "", 200, "placement 1.0", ""},
		{"/", "1.39", 200, "placement 1.39", ""},
		{"/", "latest", 200, "placement 1.39", ""},
		{"/resource_providers", "", 200, "placement 1.0", ""},
		{"/resource_providers", "1.17", 200, "placement 1.17", ""},
		{"/resource_providers", "latest", 200, "placement 1.39", ""},
		{"/resource_providers", "1.40", 406, "", "Invalid microversion: Unacceptable version header: 1.40"},
		{"/resource_providers", "2.0", 406, "", "Unacceptable version header: 2.0"},
		{"/resource_providers", "1.a", 400, "", "Invalid microversion: invalid version string: 1.a"},
	}
	for _, tc := range cases {
		r := a.call("GET", tc.path, tc.version, a.Admin, nil)
		if r.Status != tc.status {
			t.Errorf("%s [%s]: status %d, want %d: %s", tc.path, tc.version, r.Status, tc.status, r.Body)
			continue
		}
		if got := r.Header.Get("OpenStack-API-Version"); got != tc.echoed {
			t.Errorf("%s [%s]: OpenStack-API-Version %q, want %q", tc.path, tc.version, got, tc.echoed)
		}
		if tc.echoed != "" && !strings.EqualFold(r.Header.Get("Vary"), "openstack-api-version") {
			t.Errorf("%s [%s]: Vary %q", tc.path, tc.version, r.Header.Get("Vary"))
		}
		if tc.status >= 400 {
			e := r.errorItem(t)
			if d, _ := e["detail"].(string); !strings.Contains(d, tc.detail) {
				t.Errorf("%s [%s]: detail %q does not contain %q", tc.path, tc.version, d, tc.detail)
			}
			if _, ok := e["code"]; ok {
				t.Errorf("%s [%s]: a failed negotiation has no code: %s", tc.path, tc.version, r.Body)
			}
			_, hasMax := e["max_version"]
			if hasMax != (tc.status == 406) || (hasMax && (e["max_version"] != "1.39" || e["min_version"] != "1.0")) {
				t.Errorf("%s [%s]: max/min version: %s", tc.path, tc.version, r.Body)
			}
		}
	}
	// The version document is Placement's, and needs no token.
	r := a.call("GET", "/", "", "", nil)
	want := `{"versions":[{"id":"v1.0","links":[{"href":"","rel":"self"}],"max_version":"1.39","min_version":"1.0","status":"CURRENT"}]}`
	if r.Status != 200 || strings.TrimSpace(string(r.Body)) != want {
		t.Errorf("version document: %d %s", r.Status, r.Body)
	}
}

func TestAuthAndPolicy(t *testing.T) {
	a := startApp(t, openSQLite(t))
	cases := []struct {
		method, path, token string
		body                any
		status              int
		detail              string
	}{
		{"GET", "/resource_providers", "", nil, 401, "X-Auth-Token"},
		{"GET", "/resource_providers", "not-a-token", nil, 401, ""},
		{"GET", "/resource_providers", a.Reader, nil, 200, ""},
		{"POST", "/resource_providers", a.Reader, map[string]any{"name": "x"}, 403,
			"Access was denied to this resource.\n\n Policy does not allow placement:resource_providers:create to be performed."},
		{"PUT", "/resource_providers/" + root1 + "/aggregates", a.Reader, []string{}, 403,
			"placement:resource_providers:aggregates:update"},
		{"DELETE", "/resource_providers/" + root1, a.Reader, nil, 403, "placement:resource_providers:delete"},
		{"POST", "/resource_providers", a.Admin, map[string]any{"name": "x"}, 200, ""},
	}
	for _, tc := range cases {
		r := a.call(tc.method, tc.path, "1.39", tc.token, tc.body)
		if r.Status != tc.status {
			t.Errorf("%s %s: status %d, want %d: %s", tc.method, tc.path, r.Status, tc.status, r.Body)
			continue
		}
		if tc.status >= 400 {
			if d, _ := r.errorItem(t)["detail"].(string); !strings.Contains(d, tc.detail) {
				t.Errorf("%s %s: detail %q does not contain %q", tc.method, tc.path, d, tc.detail)
			}
		}
	}
}

// TestResponseShapes checks links, tree fields and caching headers at each
// microversion boundary.
func TestResponseShapes(t *testing.T) {
	a := startApp(t, openSQLite(t))
	a.loadProbeFixture()
	cases := []struct {
		version string
		rels    string
		tree    bool
		lastMod bool
	}{
		{"1.0", "self,inventories,usages", false, false},
		{"1.1", "self,inventories,usages,aggregates", false, false},
		{"1.6", "self,inventories,usages,aggregates,traits", false, false},
		{"1.11", "self,inventories,usages,aggregates,traits,allocations", false, false},
		{"1.13", "self,inventories,usages,aggregates,traits,allocations", false, false},
		{"1.14", "self,inventories,usages,aggregates,traits,allocations", true, false},
		{"1.15", "self,inventories,usages,aggregates,traits,allocations", true, true},
		{"1.39", "self,inventories,usages,aggregates,traits,allocations", true, true},
	}
	for _, tc := range cases {
		for _, path := range []string{"/resource_providers?uuid=" + child1, "/resource_providers/" + child1} {
			r := a.must(200, "GET", path, tc.version, nil)
			m := r.json(t)
			var p map[string]any
			if list, ok := m["resource_providers"].([]any); ok {
				if len(list) != 1 {
					t.Fatalf("%s: %s", path, r.Body)
				}
				p = list[0].(map[string]any)
			} else {
				p = m
			}
			var rels []string
			for _, l := range p["links"].([]any) {
				lm := l.(map[string]any)
				rels = append(rels, lm["rel"].(string))
				want := "/placement/resource_providers/" + child1
				if lm["rel"] != "self" {
					want += "/" + lm["rel"].(string)
				}
				if lm["href"] != want {
					t.Errorf("[%s] %s: href %v, want %s", tc.version, path, lm["href"], want)
				}
			}
			if got := strings.Join(rels, ","); got != tc.rels {
				t.Errorf("[%s] %s: links %s, want %s", tc.version, path, got, tc.rels)
			}
			_, hasParent := p["parent_provider_uuid"]
			if hasParent != tc.tree {
				t.Errorf("[%s] %s: tree fields present=%v: %s", tc.version, path, hasParent, r.Body)
			}
			if tc.tree && (p["parent_provider_uuid"] != root1 || p["root_provider_uuid"] != root1) {
				t.Errorf("[%s] %s: parent/root: %s", tc.version, path, r.Body)
			}
			if (r.Header.Get("Last-Modified") != "") != tc.lastMod || (r.Header.Get("Cache-Control") == "no-cache") != tc.lastMod {
				t.Errorf("[%s] %s: Last-Modified %q Cache-Control %q", tc.version, path,
					r.Header.Get("Last-Modified"), r.Header.Get("Cache-Control"))
			}
		}
	}
	// A root's parent is null, not absent.
	r := a.must(200, "GET", "/resource_providers/"+root1, "1.14", nil)
	if !strings.Contains(string(r.Body), `"parent_provider_uuid":null`) {
		t.Errorf("root at 1.14: %s", r.Body)
	}
}

func TestRoutingErrors(t *testing.T) {
	a := startApp(t, openSQLite(t))
	r := a.call("GET", "/nonexistent", "1.39", a.Admin, nil)
	if r.Status != 404 {
		t.Fatalf("unknown path: %d %s", r.Status, r.Body)
	}
	if e := r.errorItem(t); e["detail"] != "The resource could not be found.\n\n   " || e["code"] != "placement.undefined_code" {
		t.Errorf("unknown path: %s", r.Body)
	}
	r = a.call("PATCH", "/resource_providers", "1.39", a.Admin, nil)
	if r.Status != 405 {
		t.Fatalf("PATCH: %d %s", r.Status, r.Body)
	}
	if d, _ := r.errorItem(t)["detail"].(string); !strings.Contains(d, "The method PATCH is not allowed for this resource.") {
		t.Errorf("PATCH: %s", r.Body)
	}
	if got := r.Header.Get("Allow"); got != "GET, POST" {
		t.Errorf("PATCH: Allow %q, want %q", got, "GET, POST")
	}
	r = a.call("GET", "/resource_providers/99999999-9999-4999-8999-999999999999", "1.39", a.Admin, nil)
	if d, _ := r.errorItem(t)["detail"].(string); r.Status != 404 || !strings.Contains(d, "No resource provider with uuid 99999999-9999-4999-8999-999999999999 found") {
		t.Errorf("unknown provider: %d %s", r.Status, r.Body)
	}
}

func TestProviderWrites(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *app) {
		a.loadProbeFixture()
		// Below 1.20 a create answers 201 with no body, and a Location.
		r := a.must(201, "POST", "/resource_providers", "1.19", map[string]any{"name": "old-style"})
		if len(r.Body) != 0 || !strings.Contains(r.Header.Get("Location"), "/placement/resource_providers/") {
			t.Errorf("1.19 create: %q Location %q", r.Body, r.Header.Get("Location"))
		}
		// A uuid without dashes is stored in the dashed form.
		r = a.must(200, "POST", "/resource_providers", "1.20", map[string]any{"name": "dashless", "uuid": "66666666666646668666666666666666"})
		if m := r.json(t); m["uuid"] != "66666666-6666-4666-8666-666666666666" || m["generation"] != float64(0) {
			t.Errorf("dashless create: %s", r.Body)
		}
		errCases := []struct {
			method, path, version string
			body                  any
			status                int
			code, detail          string
		}{
			{"POST", "/resource_providers", "1.39", map[string]any{"name": "root1"}, 409, "placement.duplicate_name",
				"Conflicting resource provider name: root1 already exists."},
			{"POST", "/resource_providers", "1.39", map[string]any{"name": "dup", "uuid": root1}, 409, "placement.duplicate_name",
				"Conflicting resource provider uuid: " + root1 + " already exists."},
			{"POST", "/resource_providers", "1.39", map[string]any{"name": "orphan", "parent_provider_uuid": "99999999-9999-4999-8999-999999999999"}, 400, "placement.undefined_code",
				"Object action create failed because: parent provider UUID does not exist."},
			{"POST", "/resource_providers", "1.39", map[string]any{"name": "x", "bogus": 1}, 400, "placement.undefined_code",
				"JSON does not validate: Additional properties are not allowed ('bogus' was unexpected)"},
			{"POST", "/resource_providers", "1.13", map[string]any{"name": "x", "parent_provider_uuid": root1}, 400, "",
				"('parent_provider_uuid' was unexpected)"},
			{"POST", "/resource_providers", "1.39", map[string]any{}, 400, "placement.undefined_code", "'name' is a required property"},
			{"POST", "/resource_providers", "1.39", map[string]any{"name": strings.Repeat("n", 201)}, 400, "", "is too long"},
			{"POST", "/resource_providers", "1.39", map[string]any{"name": "x", "uuid": "nope"}, 400, "", "'nope' is not a 'uuid'"},
			{"POST", "/resource_providers", "1.39", `{"name":`, 400, "", "Malformed JSON"},
			{"PUT", "/resource_providers/" + child1, "1.14", map[string]any{"name": "child1", "parent_provider_uuid": root2}, 400, "",
				"Unable to save resource provider " + child1 + ": Object action update failed because: re-parenting a provider is not currently allowed."},
			{"PUT", "/resource_providers/" + child1, "1.36", map[string]any{"name": "child1", "parent_provider_uuid": nil}, 400, "",
				"un-parenting a provider is not currently allowed."},
			{"PUT", "/resource_providers/" + root1, "1.39", map[string]any{"name": "root1", "parent_provider_uuid": gchild}, 400, "",
				"creating loop in the provider tree is not allowed."},
			{"PUT", "/resource_providers/" + root1, "1.39", map[string]any{"name": "root2"}, 409, "placement.duplicate_name",
				"Conflicting resource provider root2 already exists."},
			{"PUT", "/resource_providers/99999999-9999-4999-8999-999999999999", "1.39", map[string]any{"name": "z"}, 404, "", "No resource provider with uuid"},
			{"DELETE", "/resource_providers/" + root1, "1.39", nil, 409, "placement.resource_provider.cannot_delete_parent",
				"Unable to delete parent resource provider " + root1 + ": It has child resource providers."},
			{"DELETE", "/resource_providers/99999999-9999-4999-8999-999999999999", "1.39", nil, 404, "",
				"No resource provider with uuid 99999999-9999-4999-8999-999999999999 found for delete"},
		}
		for _, tc := range errCases {
			r := a.call(tc.method, tc.path, tc.version, a.Admin, tc.body)
			if r.Status != tc.status {
				t.Errorf("%s %s [%s]: status %d, want %d: %s", tc.method, tc.path, tc.version, r.Status, tc.status, r.Body)
				continue
			}
			e := r.errorItem(t)
			if d, _ := e["detail"].(string); !strings.Contains(d, tc.detail) {
				t.Errorf("%s %s [%s]: detail %q does not contain %q", tc.method, tc.path, tc.version, d, tc.detail)
			}
			if tc.code != "" && e["code"] != tc.code {
				t.Errorf("%s %s [%s]: code %v, want %s", tc.method, tc.path, tc.version, e["code"], tc.code)
			}
		}
		// Content-Type must be JSON.
		req, _ := http.NewRequest("POST", a.URL+"/resource_providers", strings.NewReader(`{"name":"x"}`))
		req.Header.Set("X-Auth-Token", a.Admin)
		req.Header.Set("Content-Type", "text/plain")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("text/plain body: %d", res.StatusCode)
		}

		// Below 1.37 a root may still be given a parent.
		a.must(200, "POST", "/resource_providers", "1.39", map[string]any{"name": "adoptee", "uuid": "77777777-7777-4777-8777-777777777777"})
		r = a.must(200, "PUT", "/resource_providers/77777777-7777-4777-8777-777777777777", "1.14",
			map[string]any{"name": "adoptee", "parent_provider_uuid": child2})
		if m := r.json(t); m["parent_provider_uuid"] != child2 || m["root_provider_uuid"] != root2 {
			t.Errorf("adopt a root at 1.14: %s", r.Body)
		}
		// Rename, re-parent at 1.37, un-parent, then delete leaves first.
		before := a.must(200, "GET", "/resource_providers/"+child1, "1.39", nil).json(t)["generation"]
		r = a.must(200, "PUT", "/resource_providers/"+child1, "1.39", map[string]any{"name": "child1-renamed"})
		if m := r.json(t); m["name"] != "child1-renamed" || m["parent_provider_uuid"] != root1 {
			t.Errorf("rename: %s", r.Body)
		} else if m["generation"] != before {
			t.Errorf("a rename moved the generation from %v to %v; Placement keeps it", before, m["generation"])
		}
		r = a.must(200, "PUT", "/resource_providers/"+child1, "1.37", map[string]any{"name": "child1", "parent_provider_uuid": root2})
		if m := r.json(t); m["root_provider_uuid"] != root2 {
			t.Errorf("re-parent: %s", r.Body)
		}
		r = a.must(200, "GET", "/resource_providers/"+gchild, "1.39", nil)
		if m := r.json(t); m["root_provider_uuid"] != root2 {
			t.Errorf("the subtree moves with its top: %s", r.Body)
		}
		a.must(200, "PUT", "/resource_providers/"+child1, "1.37", map[string]any{"name": "child1", "parent_provider_uuid": nil})
		r = a.must(200, "GET", "/resource_providers?in_tree="+child1, "1.39", nil)
		if got := strings.Join(names(t, r), ","); got != "child1,gchild1" {
			t.Errorf("un-parented tree: %s", got)
		}
		a.must(204, "DELETE", "/resource_providers/"+gchild, "1.39", nil)
		a.must(404, "GET", "/resource_providers/"+gchild, "1.39", nil)

		// Every write is in the audit log, through the placement API.
		evs, _, err := a.Store.ListAudit(context.Background(), store.AuditQuery{ObjectType: "provider", ObjectID: gchild})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ev := range evs {
			if ev.Action == "delete" && ev.Via == "placement-api" && ev.Actor == "ops-admin" {
				found = true
			}
		}
		if !found {
			t.Errorf("no audit event for the delete: %+v", evs)
		}
	})
}

func TestAggregatesAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *app) {
		a.loadProbeFixture()
		path := "/resource_providers/" + root1 + "/aggregates"
		// The route starts at 1.1.
		if r := a.call("GET", path, "1.0", a.Admin, nil); r.Status != 404 {
			t.Errorf("1.0: %d %s", r.Status, r.Body)
		}
		r := a.must(200, "GET", path, "1.18", nil)
		if strings.TrimSpace(string(r.Body)) != `{"aggregates":["`+aggA+`"]}` {
			t.Errorf("1.18 GET: %s", r.Body)
		}
		r = a.must(200, "GET", path, "1.19", nil)
		if m := r.json(t); m["resource_provider_generation"] != float64(1) {
			t.Errorf("1.19 GET: %s", r.Body)
		}
		errCases := []struct {
			version string
			body    any
			status  int
			code    string
			detail  string
		}{
			{"1.39", map[string]any{"aggregates": []string{aggA}, "resource_provider_generation": 0}, 409, "placement.concurrent_update",
				"Resource provider's generation already changed. Please update the generation and try again."},
			{"1.39", []string{aggA}, 400, "placement.undefined_code", "JSON does not validate: ['" + aggA + "'] is not of type 'object'"},
			{"1.39", map[string]any{"aggregates": []string{"not-a-uuid"}, "resource_provider_generation": 1}, 400, "", "'not-a-uuid' is not a 'uuid'"},
			{"1.39", map[string]any{"aggregates": []string{aggA, aggA}, "resource_provider_generation": 1}, 400, "", "has non-unique elements"},
			{"1.39", map[string]any{"aggregates": []string{aggA}}, 400, "", "'resource_provider_generation' is a required property"},
			{"1.39", map[string]any{"aggregates": []string{aggA}, "resource_provider_generation": "1"}, 400, "", "'1' is not of type 'integer'"},
			{"1.18", map[string]any{"aggregates": []string{aggA}}, 400, "", "is not of type 'array'"},
		}
		for _, tc := range errCases {
			r := a.call("PUT", path, tc.version, a.Admin, tc.body)
			if r.Status != tc.status {
				t.Errorf("[%s] %v: status %d, want %d: %s", tc.version, tc.body, r.Status, tc.status, r.Body)
				continue
			}
			e := r.errorItem(t)
			if d, _ := e["detail"].(string); !strings.Contains(d, tc.detail) {
				t.Errorf("[%s] %v: detail %q does not contain %q", tc.version, tc.body, d, tc.detail)
			}
			if tc.code != "" && e["code"] != tc.code {
				t.Errorf("[%s] %v: code %v", tc.version, tc.body, e["code"])
			}
		}
		// 1.19: replace, echoing the list and the incremented generation.
		r = a.must(200, "PUT", path, "1.19", map[string]any{"aggregates": []string{aggD, aggB}, "resource_provider_generation": 1})
		var got struct {
			Aggregates []string `json:"aggregates"`
			Gen        int64    `json:"resource_provider_generation"`
		}
		if err := json.Unmarshal(r.Body, &got); err != nil || got.Gen != 2 || strings.Join(got.Aggregates, ",") != aggD+","+aggB {
			t.Errorf("1.19 PUT: %s", r.Body)
		}
		// The new membership is what member_of sees at once.
		r = a.must(200, "GET", "/resource_providers?member_of="+aggD, "1.3", nil)
		if strings.Join(names(t, r), ",") != "root1" {
			t.Errorf("member_of after PUT: %s", r.Body)
		}
		r = a.must(200, "GET", "/resource_providers?member_of=in:"+aggA+","+aggC, "1.3", nil)
		if strings.Join(names(t, r), ",") != "child2" {
			t.Errorf("member_of after PUT: %s", r.Body)
		}
		// Legacy PUT: a bare list, no generation in the answer, and the
		// generation does not move (Placement increments it only from 1.19).
		r = a.must(200, "PUT", path, "1.18", []string{aggA})
		if strings.TrimSpace(string(r.Body)) != `{"aggregates":["`+aggA+`"]}` {
			t.Errorf("1.18 PUT: %s", r.Body)
		}
		r = a.must(200, "GET", path, "1.19", nil)
		if m := r.json(t); m["resource_provider_generation"] != float64(2) || len(m["aggregates"].([]any)) != 1 {
			t.Errorf("GET after the 1.18 PUT: %s (generation must stay 2)", r.Body)
		}
		if r := a.call("PUT", "/resource_providers/99999999-9999-4999-8999-999999999999/aggregates", "1.18", a.Admin, []string{}); r.Status != 404 {
			t.Errorf("unknown provider: %d %s", r.Status, r.Body)
		}
	})
}

func TestTraitsAndResources(t *testing.T) {
	a := startApp(t, openSQLite(t))
	a.loadProbeFixture()
	ctx := context.Background()
	_, err := a.Store.UpdateProvider(ctx, store.Actor{Name: "test", Via: "cli"}, child1, store.AnyGeneration, func(p *models.Provider) error {
		p.Traits = []string{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"}
		p.Inventories = map[string]models.Inventory{"VCPU": {Total: 8, AllocationRatio: 1, MaxUnit: 4}}
		p.Usages = map[string]int64{"VCPU": 6}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := a.must(200, "GET", "/resource_providers/"+child1+"/traits", "1.6", nil)
	if strings.TrimSpace(string(r.Body)) != `{"resource_provider_generation":1,"traits":["CUSTOM_GOLD","HW_CPU_X86_AVX2"]}` {
		t.Errorf("traits: %s", r.Body)
	}
	if r := a.call("GET", "/resource_providers/"+child1+"/traits", "1.5", a.Admin, nil); r.Status != 404 {
		t.Errorf("traits at 1.5: %d", r.Status)
	}
	cases := []struct{ version, query, want string }{
		{"1.18", "required=CUSTOM_GOLD", "child1"},
		{"1.18", "required=CUSTOM_GOLD,HW_CPU_X86_AVX2", "child1"},
		{"1.18", "required=HW_CPU_X86_SSE", ""},
		{"1.22", "required=!CUSTOM_GOLD", "child2,gchild1,root1,root2"},
		{"1.39", "required=in:CUSTOM_GOLD,HW_CPU_X86_SSE", "child1"},
		{"1.39", "required=CUSTOM_GOLD&required=!HW_CPU_X86_AVX2", ""},
		{"1.4", "resources=VCPU:2", "child1"},
		{"1.4", "resources=VCPU:3", ""}, // 6 of 8 used
		{"1.39", "resources=VCPU:1&member_of=" + aggA, ""},
		{"1.39", "resources=VCPU:1&in_tree=" + root1, "child1"},
	}
	for _, tc := range cases {
		r := a.must(200, "GET", "/resource_providers?"+tc.query, tc.version, nil)
		if got := strings.Join(names(t, r), ","); got != tc.want {
			t.Errorf("[%s] ?%s: got %q, want %q", tc.version, tc.query, got, tc.want)
		}
	}
}

// TestConcurrentAggregateUpdates: writers racing on one provider generation
// never lose an update silently; exactly one wins, the rest get Placement's
// 409 placement.concurrent_update.
func TestConcurrentAggregateUpdates(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *app) {
		a.loadProbeFixture()
		const writers = 8
		type result struct {
			r   resp
			err error
		}
		results := make(chan result, writers)
		start := make(chan struct{})
		for i := 0; i < writers; i++ {
			agg := strings.Replace(aggD, "dddddddd", fmt.Sprintf("%08d", i), 1)
			go func() {
				<-start
				r, err := a.try("PUT", "/resource_providers/"+root1+"/aggregates", "1.39", a.Admin,
					map[string]any{"aggregates": []string{agg}, "resource_provider_generation": 1})
				results <- result{r, err}
			}()
		}
		close(start)
		wins := 0
		for i := 0; i < writers; i++ {
			res := <-results
			switch {
			case res.err != nil:
				t.Errorf("request: %v", res.err)
			case res.r.Status == http.StatusOK:
				wins++
			case res.r.Status == http.StatusConflict:
				if code := res.r.errorItem(t)["code"]; code != "placement.concurrent_update" {
					t.Errorf("409 code %v: %s", code, res.r.Body)
				}
			default:
				t.Errorf("status %d: %s", res.r.Status, res.r.Body)
			}
		}
		if wins != 1 {
			t.Errorf("%d writers won, want exactly 1", wins)
		}
		r := a.must(200, "GET", "/resource_providers/"+root1+"/aggregates", "1.19", nil)
		if m := r.json(t); m["resource_provider_generation"] != float64(2) || len(m["aggregates"].([]any)) != 1 {
			t.Errorf("after the race: %s", r.Body)
		}
	})
}
