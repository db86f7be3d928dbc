package placementapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"corral/models/store"
)

const consumer1 = "c0c0c0c0-0000-4000-8000-000000000001"

// loadResources gives the probe fixture inventories: root1 VCPU 8 (ratio
// 2) and MEMORY_MB 4096, child1 a custom class, root2 DISK_GB.
func (a *app) loadResources() {
	a.t.Helper()
	a.loadProbeFixture()
	a.must(201, "PUT", "/resource_classes/CUSTOM_FPGA", "1.39", nil)
	a.must(200, "PUT", "/resource_providers/"+root1+"/inventories", "1.39", map[string]any{
		"resource_provider_generation": 1,
		"inventories": map[string]any{
			"VCPU":      map[string]any{"total": 8, "allocation_ratio": 2.0, "max_unit": 8},
			"MEMORY_MB": map[string]any{"total": 4096, "reserved": 512},
		}})
	a.must(200, "PUT", "/resource_providers/"+child1+"/inventories", "1.39", map[string]any{
		"resource_provider_generation": 0,
		"inventories":                  map[string]any{"CUSTOM_FPGA": map[string]any{"total": 2}}})
	a.must(200, "PUT", "/resource_providers/"+root2+"/inventories", "1.39", map[string]any{
		"resource_provider_generation": 1,
		"inventories":                  map[string]any{"DISK_GB": map[string]any{"total": 100, "step_size": 10}}})
}

func detailOf(t testing.TB, r resp) (string, string) {
	t.Helper()
	e := r.errorItem(t)
	code, _ := e["code"].(string)
	return e["detail"].(string), code
}

func TestInventoriesAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *app) {
		a.loadResources()
		path := "/resource_providers/" + root1 + "/inventories"
		r := a.must(200, "GET", path, "1.39", nil)
		var body struct {
			Inventories map[string]map[string]any `json:"inventories"`
			Generation  int                       `json:"resource_provider_generation"`
		}
		_ = json.Unmarshal(r.Body, &body)
		if body.Generation != 2 || body.Inventories["MEMORY_MB"]["reserved"] != float64(512) ||
			body.Inventories["MEMORY_MB"]["max_unit"] != float64(2147483647) || body.Inventories["VCPU"]["allocation_ratio"] != 2.0 {
			t.Errorf("GET inventories: %s", r.Body)
		}
		cases := []struct {
			method, path, version string
			body                  any
			status                int
			code, detail          string
		}{
			{"PUT", path, "1.39", map[string]any{"resource_provider_generation": 0, "inventories": map[string]any{}}, 409,
				"placement.concurrent_update", "resource provider generation conflict"},
			{"PUT", path, "1.39", map[string]any{"inventories": map[string]any{}}, 400, "", "'resource_provider_generation' is a required property"},
			{"PUT", path, "1.39", map[string]any{"resource_provider_generation": 2, "inventories": map[string]any{"VCPU": map[string]any{"total": 0}}}, 400,
				"", "0 is less than the minimum of 1"},
			{"PUT", path, "1.39", map[string]any{"resource_provider_generation": 2, "inventories": map[string]any{"VCPU": map[string]any{"reserved": 1}}}, 400,
				"", "'total' is a required property"},
			{"PUT", path, "1.39", map[string]any{"resource_provider_generation": 2, "inventories": map[string]any{"CUSTOM_NOPE": map[string]any{"total": 1}}}, 400,
				"", "No such resource class CUSTOM_NOPE."},
			{"PUT", path, "1.25", map[string]any{"resource_provider_generation": 2, "inventories": map[string]any{"VCPU": map[string]any{"total": 4, "reserved": 4}}}, 400,
				"", "The reserved value is greater than or equal to total."},
			{"PUT", path, "1.26", map[string]any{"resource_provider_generation": 2, "inventories": map[string]any{"VCPU": map[string]any{"total": 4, "reserved": 5}}}, 400,
				"", "The reserved value is greater than total."},
			{"GET", path + "/DISK_GB", "1.39", nil, 404, "", "No inventory of class DISK_GB for " + root1},
			{"GET", "/resource_providers/" + aggD + "/inventories", "1.39", nil, 404, "", "No resource provider with uuid " + aggD + " found"},
			{"DELETE", path, "1.4", nil, 405, "", ""},
		}
		for _, c := range cases {
			r := a.call(c.method, c.path, c.version, a.Admin, c.body)
			if r.Status != c.status {
				t.Errorf("%s %s [%s]: %d, want %d: %s", c.method, c.path, c.version, r.Status, c.status, r.Body)
				continue
			}
			if c.status == 405 {
				continue
			}
			d, code := detailOf(t, r)
			if !strings.Contains(d, c.detail) || (c.code != "" && code != c.code) {
				t.Errorf("%s %s [%s]: %q (%s), want %q (%s)", c.method, c.path, c.version, d, code, c.detail, c.code)
			}
		}
		// Per class: update, then delete; POST adds one.
		a.must(200, "PUT", path+"/VCPU", "1.39", map[string]any{"resource_provider_generation": 2, "total": 16})
		r = a.must(201, "POST", path, "1.39", map[string]any{"resource_class": "DISK_GB", "total": 50})
		if !strings.HasSuffix(r.Header.Get("Location"), "/placement/resource_providers/"+root1+"/inventories/DISK_GB") {
			t.Errorf("POST Location: %q", r.Header.Get("Location"))
		}
		a.must(204, "DELETE", path+"/DISK_GB", "1.39", nil)
		r = a.must(200, "GET", path+"/VCPU", "1.39", nil)
		if m := r.json(t); m["total"] != float64(16) || m["resource_provider_generation"] != float64(5) {
			t.Errorf("GET VCPU: %s", r.Body)
		}
	})
}

func TestAllocationsAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *app) {
		a.loadResources()
		alloc := func(gen any, vcpu int) map[string]any {
			return map[string]any{
				"allocations":         map[string]any{root1: map[string]any{"resources": map[string]any{"VCPU": vcpu, "MEMORY_MB": 512}}},
				"project_id":          "p1",
				"user_id":             "u1",
				"consumer_generation": gen,
				"consumer_type":       "INSTANCE",
			}
		}
		path := "/allocations/" + consumer1
		a.must(204, "PUT", path, "1.39", alloc(nil, 4))
		r := a.must(200, "GET", path, "1.39", nil)
		m := r.json(t)
		if m["consumer_generation"] != float64(1) || m["project_id"] != "p1" || m["consumer_type"] != "INSTANCE" {
			t.Errorf("GET allocations: %s", r.Body)
		}
		// Consumer generations (1.28): null for an existing consumer, a
		// stale number, a number for a new one.
		for _, c := range []struct {
			gen    any
			path   string
			detail string
		}{
			{nil, path, "consumer generation conflict - expected 1 but got None"},
			{0, path, "consumer generation conflict - expected 1 but got 0"},
			{3, "/allocations/c0c0c0c0-0000-4000-8000-000000000002", "consumer generation conflict - expected null but got 3"},
		} {
			r := a.call("PUT", c.path, "1.39", a.Admin, alloc(c.gen, 1))
			d, code := detailOf(t, r)
			if r.Status != 409 || code != "placement.concurrent_update" || !strings.Contains(d, c.detail) {
				t.Errorf("gen %v: %d %q %s", c.gen, r.Status, d, code)
			}
		}
		// Capacity: 8 × 2 = 16 VCPU, max_unit 8.
		r = a.call("PUT", path, "1.39", a.Admin, alloc(1, 9))
		if d, _ := detailOf(t, r); r.Status != 409 || !strings.Contains(d, "would violate inventory constraints") {
			t.Errorf("max_unit: %d %s", r.Status, r.Body)
		}
		a.must(204, "PUT", path, "1.39", alloc(1, 8))
		a.must(204, "PUT", "/allocations/c0c0c0c0-0000-4000-8000-000000000003", "1.39", map[string]any{
			"allocations": map[string]any{root1: map[string]any{"resources": map[string]any{"VCPU": 8}}},
			"project_id":  "p1", "user_id": "u2", "consumer_generation": nil, "consumer_type": "MIGRATION"})
		r = a.call("PUT", "/allocations/c0c0c0c0-0000-4000-8000-000000000004", "1.39", a.Admin, alloc(nil, 1))
		if d, _ := detailOf(t, r); r.Status != 409 || !strings.Contains(d, "The requested amount would exceed the capacity.") {
			t.Errorf("capacity: %d %s", r.Status, r.Body)
		}
		// Usages: per provider, per project (1.9) and by consumer type (1.38).
		r = a.must(200, "GET", "/resource_providers/"+root1+"/usages", "1.39", nil)
		if m := r.json(t)["usages"].(map[string]any); m["VCPU"] != float64(16) || m["MEMORY_MB"] != float64(512) {
			t.Errorf("provider usages: %s", r.Body)
		}
		r = a.must(200, "GET", "/usages?project_id=p1", "1.9", nil)
		if m := r.json(t)["usages"].(map[string]any); m["VCPU"] != float64(16) {
			t.Errorf("usages 1.9: %s", r.Body)
		}
		r = a.must(200, "GET", "/usages?project_id=p1&user_id=u2", "1.38", nil)
		if m := r.json(t)["usages"].(map[string]any); m["MIGRATION"] == nil || m["INSTANCE"] != nil {
			t.Errorf("usages 1.38: %s", r.Body)
		}
		if r := a.call("GET", "/usages?project_id=p1&consumer_type=INSTANCE", "1.37", a.Admin, nil); r.Status != 400 {
			t.Errorf("consumer_type at 1.37: %d", r.Status)
		}
		// Removing inventory in use is refused.
		r = a.call("DELETE", "/resource_providers/"+root1+"/inventories", "1.39", a.Admin, nil)
		if _, code := detailOf(t, r); r.Status != 409 || code != "placement.inventory.inuse" {
			t.Errorf("delete in use: %d %s", r.Status, r.Body)
		}
		// POST /allocations moves both consumers at once; an empty
		// allocation deletes a consumer.
		a.must(204, "POST", "/allocations", "1.39", map[string]any{
			consumer1: map[string]any{"allocations": map[string]any{}, "project_id": "p1", "user_id": "u1",
				"consumer_generation": 2, "consumer_type": "INSTANCE"},
			"c0c0c0c0-0000-4000-8000-000000000003": map[string]any{
				"allocations": map[string]any{root2: map[string]any{"resources": map[string]any{"DISK_GB": 20}}},
				"project_id":  "p1", "user_id": "u2", "consumer_generation": 1, "consumer_type": "MIGRATION"},
		})
		r = a.must(200, "GET", "/resource_providers/"+root1+"/allocations", "1.39", nil)
		if m := r.json(t)["allocations"].(map[string]any); len(m) != 0 {
			t.Errorf("root1 allocations after move: %s", r.Body)
		}
		a.must(204, "DELETE", "/allocations/c0c0c0c0-0000-4000-8000-000000000003", "1.39", nil)
		if r := a.call("DELETE", "/allocations/c0c0c0c0-0000-4000-8000-000000000003", "1.39", a.Admin, nil); r.Status != 404 {
			t.Errorf("second delete: %d", r.Status)
		}
		if r := a.call("PUT", "/allocations/not-a-uuid", "1.39", a.Admin, alloc(nil, 1)); r.Status != 400 {
			t.Errorf("bad consumer uuid: %d", r.Status)
		}
		// Every allocation write was audited.
		evs, _, err := a.Store.ListAudit(t.Context(), store.AuditQuery{ObjectType: "allocations"})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ev := range evs {
			if ev.ObjectType == "allocations" {
				n++
			}
		}
		if n < 4 {
			t.Errorf("%d allocation audit events", n)
		}
	})
}

func TestResourceClassesAndTraitsAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *app) {
		a.loadResources()
		r := a.must(200, "GET", "/resource_classes", "1.39", nil)
		if !strings.Contains(string(r.Body), `"CUSTOM_FPGA"`) || !strings.Contains(string(r.Body), `"VCPU"`) {
			t.Errorf("classes: %s", r.Body)
		}
		if r := a.call("DELETE", "/resource_classes/CUSTOM_FPGA", "1.39", a.Admin, nil); r.Status != 409 {
			t.Errorf("delete class in use: %d %s", r.Status, r.Body)
		}
		a.must(201, "POST", "/resource_classes", "1.39", map[string]any{"name": "CUSTOM_GPU"})
		if r := a.call("POST", "/resource_classes", "1.39", a.Admin, map[string]any{"name": "CUSTOM_GPU"}); r.Status != 409 {
			t.Errorf("duplicate class: %d", r.Status)
		}
		if r := a.call("POST", "/resource_classes", "1.39", a.Admin, map[string]any{"name": "GPU"}); r.Status != 400 {
			t.Errorf("non-custom class: %d", r.Status)
		}
		a.must(204, "DELETE", "/resource_classes/CUSTOM_GPU", "1.39", nil)
		if r := a.call("DELETE", "/resource_classes/VCPU", "1.39", a.Admin, nil); r.Status != 400 {
			t.Errorf("delete standard class: %d", r.Status)
		}
		a.must(201, "PUT", "/traits/CUSTOM_GOLD", "1.39", nil)
		a.must(204, "PUT", "/traits/CUSTOM_GOLD", "1.39", nil)
		a.must(204, "GET", "/traits/CUSTOM_GOLD", "1.39", nil)
		r = a.must(200, "GET", "/traits?name=startswith:CUSTOM_", "1.39", nil)
		if strings.TrimSpace(string(r.Body)) != `{"traits":["CUSTOM_GOLD"]}` {
			t.Errorf("traits: %s", r.Body)
		}
		tp := "/resource_providers/" + root1 + "/traits"
		r = a.call("PUT", tp, "1.39", a.Admin, map[string]any{"traits": []string{"CUSTOM_GOLD"}, "resource_provider_generation": 0})
		if _, code := detailOf(t, r); r.Status != 409 || code != "placement.concurrent_update" {
			t.Errorf("stale trait PUT: %d %s", r.Status, r.Body)
		}
		r = a.call("PUT", tp, "1.39", a.Admin, map[string]any{"traits": []string{"CUSTOM_NOPE"}, "resource_provider_generation": 2})
		if d, _ := detailOf(t, r); r.Status != 400 || !strings.Contains(d, "No such trait CUSTOM_NOPE") {
			t.Errorf("unknown trait: %d %s", r.Status, r.Body)
		}
		a.must(200, "PUT", tp, "1.39", map[string]any{"traits": []string{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"}, "resource_provider_generation": 2})
		if r := a.call("DELETE", "/traits/CUSTOM_GOLD", "1.39", a.Admin, nil); r.Status != 409 {
			t.Errorf("delete trait in use: %d", r.Status)
		}
		a.must(204, "DELETE", tp, "1.39", nil)
		a.must(204, "DELETE", "/traits/CUSTOM_GOLD", "1.39", nil)
		if r := a.call("DELETE", "/traits/HW_CPU_X86_AVX2", "1.39", a.Admin, nil); r.Status != 400 {
			t.Errorf("delete standard trait: %d", r.Status)
		}
	})
}

// TestAllocationCandidatesShapes checks each microversion's shape on the
// probe fixture with inventories.
func TestAllocationCandidatesShapes(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *app) {
		a.loadResources()
		q := "/allocation_candidates?resources=VCPU:1"
		if r := a.call("GET", q, "1.9", a.Admin, nil); r.Status != 404 {
			t.Errorf("1.9: %d", r.Status)
		}
		r := a.must(200, "GET", q, "1.10", nil)
		want := `{"allocation_requests":[{"allocations":[{"resource_provider":{"uuid":"` + root1 + `"},"resources":{"VCPU":1}}]}],` +
			`"provider_summaries":{"` + root1 + `":{"resources":{"VCPU":{"capacity":16,"used":0}}}}}`
		if strings.TrimSpace(string(r.Body)) != want {
			t.Errorf("1.10:\n got %s\nwant %s", r.Body, want)
		}
		r = a.must(200, "GET", q, "1.12", nil)
		if !strings.Contains(string(r.Body), `"allocations":{"`+root1+`":{"resources":{"VCPU":1}}}`) {
			t.Errorf("1.12: %s", r.Body)
		}
		r = a.must(200, "GET", q, "1.17", nil)
		if !strings.Contains(string(r.Body), `"traits":[]`) {
			t.Errorf("1.17: %s", r.Body)
		}
		r = a.must(200, "GET", q, "1.27", nil)
		if !strings.Contains(string(r.Body), `"MEMORY_MB":{"capacity":3584,"used":0}`) {
			t.Errorf("1.27 lists every class: %s", r.Body)
		}
		r = a.must(200, "GET", q, "1.29", nil)
		if !strings.Contains(string(r.Body), `"root_provider_uuid":"`+root1+`"`) || !strings.Contains(string(r.Body), child1) {
			t.Errorf("1.29 whole tree with parents: %s", r.Body)
		}
		r = a.must(200, "GET", q, "1.34", nil)
		if !strings.Contains(string(r.Body), `"mappings":{"":["`+root1+`"]}`) {
			t.Errorf("1.34 mappings: %s", r.Body)
		}
		// Nested: VCPU from root1, CUSTOM_FPGA from child1 only from 1.29.
		nq := "/allocation_candidates?resources=VCPU:1,CUSTOM_FPGA:1"
		if r := a.must(200, "GET", nq, "1.28", nil); strings.Contains(string(r.Body), child1) {
			t.Errorf("1.28 must not combine a tree: %s", r.Body)
		}
		if r := a.must(200, "GET", nq, "1.29", nil); !strings.Contains(string(r.Body), `"`+child1+`":{"resources":{"CUSTOM_FPGA":1}}`) {
			t.Errorf("1.29 nested: %s", r.Body)
		}
		errs := []struct{ version, query, detail, code string }{
			{"1.10", "", "'resources' is a required property", ""},
			{"1.39", "resources=VCPU:1&resources1=VCPU:1&resources2=MEMORY_MB:1", `The "group_policy" parameter is required`, "placement.undefined_code"},
			{"1.39", "resources=CUSTOM_NOPE:1", "Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE.", "placement.undefined_code"},
			{"1.39", "resources=VCPU:1&required=CUSTOM_NOPE", "No such trait(s): CUSTOM_NOPE.", ""},
			{"1.39", "resources=VCPU:1&required=HW_CPU_X86_AVX2&required=!HW_CPU_X86_AVX2", "Conflicting required and forbidden traits found in the following traits keys: required: (HW_CPU_X86_AVX2)", ""},
			{"1.35", "resources=VCPU:1&member_of2=" + aggA, "All member_of parameters must be associated with resources. Found the following orphaned member_of keys: member_of2", ""},
			{"1.36", "resources=VCPU:1&member_of2=" + aggA, "Resourceless suffixed group request should be specified in `same_subtree` query param: bad group(s) - ['2'].", "placement.query.bad_value"},
			{"1.36", "member_of2=" + aggA + "&same_subtree=2", "There must be at least one resources or resources[$S] parameter.", "placement.query.missing_value"},
			{"1.35", "resources=VCPU:1&root_required=A&root_required=B", "Query parameter 'root_required' may be specified only once.", "placement.query.duplicate_key"},
			{"1.39", "resources=VCPU:1&limit=0", "'0' does not match '^[1-9][0-9]*$'", ""},
			{"1.24", "resources=VCPU:1&group_policy=none", "Additional properties are not allowed ('group_policy' was unexpected)", ""},
			{"1.39", "resources=VCPU:1&in_tree=x", "Expected 'in_tree' parameter to be a format of uuid. Got: x", ""},
		}
		for _, e := range errs {
			r := a.call("GET", "/allocation_candidates?"+e.query, e.version, a.Admin, nil)
			d, code := detailOf(t, r)
			if r.Status != 400 || !strings.Contains(d, e.detail) || (e.code != "" && code != e.code) {
				t.Errorf("[%s] %s: %d %q (%s)", e.version, e.query, r.Status, d, code)
			}
		}
	})
}
