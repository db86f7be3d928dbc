package placementapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	js "corral/handlers/jsonschema"
	"corral/models/placement"
)

func TestParseVersionHeader(t *testing.T) {
	cases := []struct {
		values []string
		want   string
		status int
	}{
		{nil, "1.0", 0},
		{[]string{"placement 1.14"}, "1.14", 0},
		{[]string{"PLACEMENT 1.14"}, "1.14", 0},
		{[]string{"compute 2.1, placement 1.7"}, "1.7", 0},
		{[]string{"compute 2.1"}, "1.0", 0},
		{[]string{"placement latest"}, "1.39", 0},
		{[]string{"placement 1.01"}, "1.1", 0},
		{[]string{"placement 1.40"}, "", http.StatusNotAcceptable},
		{[]string{"placement 0.9"}, "", http.StatusNotAcceptable},
		{[]string{"placement 2.0"}, "", http.StatusNotAcceptable},
		{[]string{"placement 1.a"}, "", http.StatusBadRequest},
		{[]string{"placement 1"}, "", http.StatusBadRequest},
		{[]string{"placement 1.-1"}, "", http.StatusBadRequest},
	}
	for _, tc := range cases {
		v, err := ParseVersionHeader(tc.values)
		switch {
		case tc.status != 0 && (err == nil || err.Status != tc.status):
			t.Errorf("%q: got %v %v, want status %d", tc.values, v, err, tc.status)
		case tc.status == 0 && (err != nil || v.String() != tc.want):
			t.Errorf("%q: got %v %v, want %s", tc.values, v, err, tc.want)
		}
	}
}

// FuzzParseListQuery: any query string gets a filter or a 400, never a
// panic or another status.
func FuzzParseListQuery(f *testing.F) {
	for _, s := range []string{
		"member_of=in:aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa,!b", "required=in:A,!B&required=C",
		"resources=VCPU:1,VCPU:2", "name=x&name=y", "in_tree=%zz", "member_of=!&member_of=",
		"required=!!!", "resources=:", "a;b=c", "uuid=aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa&in_tree=x",
		"in_tree=aaaaaaaaaaaa4aaa8aaaaaaaaaaaaaaa&resources=VCPU:1", "bogus=1&name=a", "name=a&name=", "member_of=",
	} {
		f.Add(s, 39)
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, raw string, minor int) {
		if minor < 0 || minor > 39 {
			return
		}
		v := placement.V(minor)
		if params, _, perr := orderedQuery(raw); perr == nil {
			// The shortcut decides exactly as the schema does.
			q := lastValues(params)
			fast, full := listQueryValid(q, v), js.Placement.Validate(listQuerySchema(v), q) == nil
			if fast != full {
				t.Fatalf("%q at %s: shortcut says valid=%v, the schema %v", raw, v, fast, full)
			}
		}
		flt, err := parseListQuery(raw, v)
		if err != nil && err.Status != http.StatusBadRequest {
			t.Fatalf("%q: status %d", raw, err.Status)
		}
		if err == nil && flt == nil {
			t.Fatalf("%q: no filter and no error", raw)
		}
	})
}

// TestRequestIDs: "req-" and a random version 4 uuid in its usual form,
// a new one each time.
func TestRequestIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := newRequestID()
		u, err := uuid.Parse(strings.TrimPrefix(id, "req-"))
		if !strings.HasPrefix(id, "req-") || err != nil || "req-"+u.String() != id || u.Version() != 4 {
			t.Fatalf("request id %q (%v)", id, err)
		}
		if seen[id] {
			t.Fatalf("request id %q repeated", id)
		}
		seen[id] = true
	}
}
