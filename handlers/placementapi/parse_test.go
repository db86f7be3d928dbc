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

// FuzzVersionHeader: ParseVersionHeader reads a header as Placement's
// split on commas and whitespace does, never panics, and answers a
// version, a 400 or a 406.
func FuzzVersionHeader(f *testing.F) {
	for _, s := range []string{"placement 1.14", "compute 2.1, placement latest", " placement\t1.2 ,", "placement 1.2 x",
		"placement\u00a01.3", "placement \xff1.3", ",,placement 1.39,", "PLACEMENT 1.1, placement 1.40", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		for _, part := range strings.Split(header, ",") {
			want := strings.Fields(part)
			got, n := twoFields(part)
			if n != len(want) || (n >= 1 && got[0] != want[0]) || (n >= 2 && got[1] != want[1]) {
				t.Fatalf("twoFields(%q) = %q, %d; strings.Fields: %q", part, got, n, want)
			}
		}
		v, err := ParseVersionHeader([]string{header})
		if err != nil && err.Status != http.StatusBadRequest && err.Status != http.StatusNotAcceptable {
			t.Fatalf("%q: status %d", header, err.Status)
		}
		if err == nil && (v.Major != 1 || v.Minor < MinVersion.Minor || v.Minor > MaxVersion.Minor) {
			t.Fatalf("%q: version %s", header, v)
		}
	})
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
