package placementapi_test

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// TestMemberOfMatrix replays the probe's "compact matrix": what Placement
// 8.0.0 answered for each query, on the same fixture. member_of on
// GET /resource_providers is judged on each provider's own aggregates.
func TestMemberOfMatrix(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *app) {
		a.loadProbeFixture()
		all := []string{"child1", "child2", "gchild1", "root1", "root2"}
		cases := []struct {
			query string
			want  []string
		}{
			{"", all},
			{"member_of=" + aggA, []string{"root1"}},
			{"member_of=!" + aggA, []string{"child1", "child2", "gchild1", "root2"}},
			{"member_of=" + aggB, []string{"root2"}},
			{"member_of=!" + aggB, []string{"child1", "child2", "gchild1", "root1"}},
			{"member_of=" + aggC, []string{"child2"}},
			{"member_of=!" + aggC, []string{"child1", "gchild1", "root1", "root2"}},
			{"member_of=" + aggD, []string{}},
			{"member_of=!" + aggD, all},
			{"member_of=in:" + aggA + "," + aggB, []string{"root1", "root2"}},
			{"member_of=in:" + aggA + "," + aggC, []string{"child2", "root1"}},
			{"member_of=!in:" + aggA + "," + aggB, []string{"child1", "child2", "gchild1"}},
			{"member_of=!in:" + aggA + "," + aggC, []string{"child1", "gchild1", "root2"}},
			{"member_of=!" + aggA + "&member_of=!" + aggC, []string{"child1", "gchild1", "root2"}},
			{"member_of=in:" + aggA + "," + aggB + "&member_of=!" + aggB, []string{"root1"}},
			{"member_of=" + aggA + "&member_of=" + aggB, []string{}},
			// A contradiction is not an error: the answer is simply empty.
			{"member_of=" + aggA + "&member_of=!" + aggA, []string{}},
			// Unknown uuids inside an in: list are ignored.
			{"member_of=in:" + aggD + "," + aggA, []string{"root1"}},
			{"in_tree=" + root1, []string{"child1", "gchild1", "root1"}},
			{"in_tree=" + child1, []string{"child1", "gchild1", "root1"}},
			{"in_tree=" + root1 + "&member_of=!" + aggA, []string{"child1", "gchild1"}},
			{"in_tree=" + root1 + "&member_of=" + aggA, []string{"root1"}},
			{"in_tree=" + root2 + "&member_of=" + aggC, []string{"child2"}},
			{"in_tree=99999999-9999-4999-8999-999999999999", []string{}},
			{"name=child2", []string{"child2"}},
			{"uuid=" + gchild, []string{"gchild1"}},
			{"name=root1&member_of=!" + aggA, []string{}},
		}
		for _, tc := range cases {
			r := a.must(http.StatusOK, "GET", "/resource_providers?"+tc.query, "1.39", nil)
			if got := names(t, r); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("?%s: got %v, want %v", tc.query, got, tc.want)
			}
		}
		// The reader may list too (corral's policy; Placement's default is admin-only).
		r := a.call("GET", "/resource_providers?member_of=!"+aggA, "1.32", a.Reader, nil)
		if r.Status != http.StatusOK || len(names(t, r)) != 4 {
			t.Errorf("reader at 1.32: %d %s", r.Status, r.Body)
		}
	})
}

// TestMemberOfErrors checks every member_of message, in Placement's
// validation order, at the microversion boundaries.
func TestMemberOfErrors(t *testing.T) {
	a := startApp(t, openSQLite(t))
	a.loadProbeFixture()
	const expectUUID = "Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: "
	cases := []struct {
		version, query string
		status         int
		detail         string // substring of detail; "" for a 200
	}{
		{"1.2", "member_of=" + aggA, 400, "Invalid query string parameters: Additional properties are not allowed ('member_of' was unexpected)"},
		{"1.3", "member_of=" + aggA, 200, ""},
		{"1.3", "member_of=in:" + aggA + "," + aggB, 200, ""},
		{"1.23", "member_of=" + aggA + "&member_of=" + aggB, 400, "Multiple member_of parameters are not supported"},
		{"1.24", "member_of=" + aggA + "&member_of=" + aggB, 200, ""},
		{"1.31", "member_of=!" + aggA, 400, "Forbidden member_of parameters are not supported in the specified microversion"},
		{"1.31", "member_of=!in:" + aggA + "," + aggB, 400, "Forbidden member_of parameters are not supported in the specified microversion"},
		// A malformed value is reported before the microversion of '!'.
		{"1.31", "member_of=!not-a-uuid", 400, expectUUID + "not-a-uuid"},
		{"1.32", "member_of=!" + aggA, 200, ""},
		{"1.39", "member_of=in:" + aggA + ",!" + aggB, 400, expectUUID + "!" + aggB},
		{"1.39", "member_of=in:!" + aggA, 400, expectUUID + "!" + aggA},
		{"1.39", "member_of=!in:" + aggA + ",!" + aggB, 400, expectUUID + "!" + aggB},
		{"1.39", "member_of=!" + aggA + "," + aggB, 400,
			"Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: !" + aggA + "," + aggB},
		{"1.39", "member_of=" + aggA + "," + aggB, 400, "Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword"},
		{"1.39", "member_of=in:", 400, expectUUID},
		{"1.39", "member_of=", 400, expectUUID},
		{"1.39", "member_of=!", 400, expectUUID},
		{"1.39", "member_of=not-a-uuid", 400, expectUUID + "not-a-uuid"},
		{"1.39", "member_of=!!" + aggA, 400, expectUUID + "!" + aggA},
		{"1.39", "member_of=in:" + aggA + ",," + aggB, 400, expectUUID},
		{"1.39", "member_of=%20" + aggA, 400, expectUUID + " " + aggA},
		{"1.39", "member_of1=" + aggA, 400, "Additional properties are not allowed ('member_of1' was unexpected)"},
	}
	for _, tc := range cases {
		r := a.call("GET", "/resource_providers?"+tc.query, tc.version, a.Admin, nil)
		if r.Status != tc.status {
			t.Errorf("[%s] ?%s: status %d, want %d: %s", tc.version, tc.query, r.Status, tc.status, r.Body)
			continue
		}
		if tc.status == 200 {
			continue
		}
		e := r.errorItem(t)
		detail, _ := e["detail"].(string)
		if !strings.Contains(detail, tc.detail) {
			t.Errorf("[%s] ?%s: detail %q does not contain %q", tc.version, tc.query, detail, tc.detail)
		}
		if !strings.HasPrefix(detail, "The server could not comply with the request since it is either malformed or otherwise incorrect.\n\n ") {
			t.Errorf("[%s] ?%s: detail %q lacks webob's explanation", tc.version, tc.query, detail)
		}
		// Error codes exist from 1.23; parse errors carry the undefined one.
		code, hasCode := e["code"]
		if wantCode := versionAtLeast(tc.version, 23); hasCode != wantCode || (hasCode && code != "placement.undefined_code") {
			t.Errorf("[%s] ?%s: code %v (present %v)", tc.version, tc.query, code, hasCode)
		}
		if id, _ := e["request_id"].(string); !strings.HasPrefix(id, "req-") {
			t.Errorf("[%s] ?%s: request_id %q", tc.version, tc.query, id)
		}
	}
}

// TestListQueryValidation covers the schema of each microversion and the
// other filters' messages.
func TestListQueryValidation(t *testing.T) {
	a := startApp(t, openSQLite(t))
	a.loadProbeFixture()
	cases := []struct {
		version, query string
		status         int
		detail         string
	}{
		{"1.39", "bogus=1", 400, "Invalid query string parameters: Additional properties are not allowed ('bogus' was unexpected)"},
		{"1.39", "bogus=1&other=2", 400, "('bogus', 'other' were unexpected)"},
		{"1.0", "name=root1", 200, ""},
		{"1.13", "in_tree=" + root1, 400, "('in_tree' was unexpected)"},
		{"1.14", "in_tree=" + root1, 200, ""},
		{"1.39", "uuid=nope", 400, "Invalid query string parameters: 'nope' is not a 'uuid'"},
		{"1.39", "in_tree=nope", 400, "Invalid query string parameters: 'nope' is not a 'uuid'"},
		{"1.3", "resources=VCPU:1", 400, "('resources' was unexpected)"},
		{"1.4", "resources=VCPU:1", 200, ""},
		{"1.4", "resources=VCPU", 400, "Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: VCPU."},
		{"1.4", "resources=VCPU:x", 400, "Requested resource VCPU expected positive integer amount. Got: x."},
		{"1.4", "resources=VCPU:0", 400, "Requested resource VCPU requires amount >= 1. Got: 0."},
		{"1.4", "resources=CUSTOM_NOPE:1", 400, "Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE."},
		{"1.17", "required=HW_CPU_X86_AVX2", 400, "('required' was unexpected)"},
		{"1.18", "required=HW_CPU_X86_AVX2", 200, ""},
		{"1.18", "required=!HW_CPU_X86_AVX2", 400, "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: !HW_CPU_X86_AVX2"},
		{"1.22", "required=!HW_CPU_X86_AVX2", 200, ""},
		{"1.22", "required=A,,B", 400, "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: A,,B"},
		{"1.38", "required=in:A,B", 400, "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: in:A,B"},
		{"1.39", "required=in:A,!B", 400, "does not support forbidden traits. Got: in:A,!B"},
		{"1.39", "required=CUSTOM_NOBODY", 400, `Invalid trait(s) in "required" parameter: No such trait(s): CUSTOM_NOBODY.`},
	}
	for _, tc := range cases {
		r := a.call("GET", "/resource_providers?"+tc.query, tc.version, a.Admin, nil)
		if r.Status != tc.status {
			t.Errorf("[%s] ?%s: status %d, want %d: %s", tc.version, tc.query, r.Status, tc.status, r.Body)
			continue
		}
		if tc.status != 200 {
			if d, _ := r.errorItem(t)["detail"].(string); !strings.Contains(d, tc.detail) {
				t.Errorf("[%s] ?%s: detail %q does not contain %q", tc.version, tc.query, d, tc.detail)
			}
		}
	}
}

func versionAtLeast(v string, minor int) bool {
	_, m, _ := strings.Cut(v, ".")
	n := 0
	for _, c := range m {
		n = n*10 + int(c-'0')
	}
	return n >= minor
}

// TestMemberOfEncodedQuery checks that percent-encoded values (as clients
// send `in:` and `!`) parse like plain ones.
func TestMemberOfEncodedQuery(t *testing.T) {
	a := startApp(t, openSQLite(t))
	a.loadProbeFixture()
	q := url.Values{"member_of": {"!in:" + aggA + "," + aggC}}
	r := a.must(http.StatusOK, "GET", "/resource_providers?"+q.Encode(), "1.32", nil)
	if got, want := names(t, r), []string{"child1", "gchild1", "root2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
