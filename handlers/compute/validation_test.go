package compute

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	js "corral/handlers/jsonschema"
)

// Messages below were recorded from nova-api (nova_probe.txt and direct
// requests against the reference peer); corral must answer the same text.
func TestParseServerGroupCreate(t *testing.T) {
	long := strings.Repeat("x", 256)
	tests := []struct {
		v    Version
		body string
		want ServerGroupSpec
		msg  string // non-empty: expected 400 message
	}{
		// 2.1 – 2.14
		{v: Version{2, 1}, body: `{"server_group":{"name":"g21","policies":["anti-affinity"]}}`,
			want: ServerGroupSpec{Name: "g21", Policy: "anti-affinity", Rules: map[string]int{}}},
		{v: Version{2, 14}, body: `{"server_group":{"name":"g","policies":["soft-anti-affinity"]}}`,
			msg: "Invalid input for field/attribute 0. Value: soft-anti-affinity. 'soft-anti-affinity' is not one of ['anti-affinity', 'affinity']"},
		{v: Version{2, 14}, body: `{"server_group":{"name":"g","policies":["soft-affinity"]}}`,
			msg: "Invalid input for field/attribute 0. Value: soft-affinity. 'soft-affinity' is not one of ['anti-affinity', 'affinity']"},
		// 2.15 – 2.63
		{v: Version{2, 15}, body: `{"server_group":{"name":"g215soft","policies":["soft-anti-affinity"]}}`,
			want: ServerGroupSpec{Name: "g215soft", Policy: "soft-anti-affinity", Rules: map[string]int{}}},
		{v: Version{2, 63}, body: `{"server_group":{"name":"g","policies":["soft-affinity"]}}`,
			want: ServerGroupSpec{Name: "g", Policy: "soft-affinity", Rules: map[string]int{}}},
		{v: Version{2, 15}, body: `{"server_group":{"name":"g2","policies":["affinity","anti-affinity"]}}`,
			msg: "Invalid input for field/attribute policies. Value: ['affinity', 'anti-affinity']. ['affinity', 'anti-affinity'] is too long"},
		{v: Version{2, 15}, body: `{"server_group":{"name":"g2","policies":["affinity","affinity"]}}`,
			msg: "Invalid input for field/attribute policies. Value: ['affinity', 'affinity']. ['affinity', 'affinity'] has non-unique elements"},
		{v: Version{2, 15}, body: `{"server_group":{"name":"g2","policies":[]}}`,
			msg: "Invalid input for field/attribute policies. Value: []. [] is too short"},
		{v: Version{2, 15}, body: `{"server_group":{"name":"g","policies":"affinity"}}`,
			msg: "Invalid input for field/attribute policies. Value: affinity. 'affinity' is not of type 'array'"},
		{v: Version{2, 63}, body: `{"server_group":{"name":"g2","policy":"affinity"}}`,
			msg: "Invalid input for field/attribute server_group. Value: {'name': 'g2', 'policy': 'affinity'}. 'policies' is a required property"},
		{v: Version{2, 63}, body: `{"server_group":{"name":"g2","policies":["affinity"],"rules":{}}}`,
			msg: "Invalid input for field/attribute server_group. Value: {'name': 'g2', 'policies': ['affinity'], 'rules': {}}. Additional properties are not allowed ('rules' was unexpected)"},
		// 2.64 and later
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":3}}}`,
			want: ServerGroupSpec{Name: "g", Policy: "anti-affinity", Rules: map[string]int{"max_server_per_host": 3}}},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g-strrule","policy":"anti-affinity","rules":{"max_server_per_host":"2"}}}`,
			want: ServerGroupSpec{Name: "g-strrule", Policy: "anti-affinity", Rules: map[string]int{"max_server_per_host": 2}}},
		{v: Version{2, 104}, body: `{"server_group":{"name":"g","policy":"anti-affinity"}}`,
			want: ServerGroupSpec{Name: "g", Policy: "anti-affinity", Rules: map[string]int{}}},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g-emptyrules","policy":"affinity","rules":{}}}`,
			want: ServerGroupSpec{Name: "g-emptyrules", Policy: "affinity", Rules: map[string]int{}}},
		{v: Version{2, 64}, body: `{"server_group":{"name":"good* $%name","policy":"soft-affinity"}}`,
			want: ServerGroupSpec{Name: "good* $%name", Policy: "soft-affinity", Rules: map[string]int{}}},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g2","policies":["affinity"]}}`,
			msg: "Invalid input for field/attribute server_group. Value: {'name': 'g2', 'policies': ['affinity']}. 'policy' is a required property"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"affinity","rules":{"max_server_per_host":3}}}`,
			msg: "Only anti-affinity policy supports rules."},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"soft-anti-affinity","rules":{"max_server_per_host":3}}}`,
			msg: "Only anti-affinity policy supports rules."},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":0}}}`,
			msg: "Invalid input for field/attribute max_server_per_host. Value: 0. 0 is less than the minimum of 1"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":"0"}}}`,
			msg: "Invalid input for field/attribute max_server_per_host. Value: 0. 0 is less than the minimum of 1"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":-1}}}`,
			msg: "Invalid input for field/attribute max_server_per_host. Value: -1. -1 is less than the minimum of 1"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":"abc"}}}`,
			msg: "Invalid input for field/attribute max_server_per_host. Value: abc. 'abc' does not match '^[0-9]*$'"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":""}}}`,
			msg: "Invalid input for field/attribute max_server_per_host. Value: . '' is too short"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":1.5}}}`,
			msg: "Invalid input for field/attribute max_server_per_host. Value: 1.5. 1.5 is not of type 'integer', 'string'"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":3.0}}}`,
			msg: "Invalid input for field/attribute max_server_per_host. Value: 3.0. 3.0 is not of type 'integer', 'string'"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":"007"}}}`,
			want: ServerGroupSpec{Name: "g", Policy: "anti-affinity", Rules: map[string]int{"max_server_per_host": 7}}},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":true}}}`,
			msg: "Invalid input for field/attribute max_server_per_host. Value: True. True is not of type 'integer', 'string'"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":99999999999}}}`,
			msg: "Invalid input for field/attribute max_server_per_host. Value: 99999999999. 99999999999 is greater than the maximum of 2147483647"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"foo":1}}}`,
			msg: "Invalid input for field/attribute rules. Value: {'foo': 1}. Additional properties are not allowed ('foo' was unexpected)"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":null}}`,
			msg: "Invalid input for field/attribute rules. Value: None. None is not of type 'object'"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"foo"}}`,
			msg: "Invalid input for field/attribute policy. Value: foo. 'foo' is not one of ['anti-affinity', 'affinity', 'soft-anti-affinity', 'soft-affinity']"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","extra":1}}`,
			msg: "Invalid input for field/attribute server_group. Value: {'name': 'g', 'policy': 'anti-affinity', 'extra': 1}. Additional properties are not allowed ('extra' was unexpected)"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity"},"extra":1}`,
			msg: "Additional properties are not allowed ('extra' was unexpected)"},
		{v: Version{2, 64}, body: `{"server_group":{"policy":"anti-affinity"}}`,
			msg: "Invalid input for field/attribute server_group. Value: {'policy': 'anti-affinity'}. 'name' is a required property"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g"}}`,
			msg: "Invalid input for field/attribute server_group. Value: {'name': 'g'}. 'policy' is a required property"},
		{v: Version{2, 64}, body: `{"server_group":{"name":"","policy":"anti-affinity"}}`,
			msg: "Invalid input for field/attribute name. Value: . '' is too short"},
		{v: Version{2, 64}, body: `{"server_group":{"name":" g","policy":"anti-affinity"}}`,
			msg: "An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace."},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g ","policy":"anti-affinity"}}`,
			msg: "An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace."},
		{v: Version{2, 64}, body: `{"server_group":{"name":"` + long + `","policy":"anti-affinity"}}`,
			msg: "Invalid input for field/attribute name. Value: " + long + ". '" + long + "' is too long"},
		{v: Version{2, 64}, body: `{"server_group":{"name":5,"policy":"anti-affinity"}}`,
			msg: "Invalid input for field/attribute name. Value: 5. 5 is not of type 'string'"},
		{v: Version{2, 64}, body: `{"server_group":"x"}`,
			msg: "Invalid input for field/attribute server_group. Value: x. 'x' is not of type 'object'"},
		// Python's $ takes a final newline, and int() then ignores it.
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":"3\n"}}}`,
			want: ServerGroupSpec{Name: "g", Policy: "anti-affinity", Rules: map[string]int{"max_server_per_host": 3}}},
		{v: Version{2, 64}, body: `{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":"\n"}}}`,
			msg: "Invalid input for field/attribute max_server_per_host. Value: \n. '\\n' is not an integer"},
		{v: Version{2, 64}, body: `{}`, msg: "'server_group' is a required property"},
		{v: Version{2, 15}, body: `[]`, msg: "[] is not of type 'object'"},
		{v: Version{2, 15}, body: ``, msg: "None is not of type 'object'"},
		{v: Version{2, 64}, body: `not json`, msg: "Malformed request body"},
		{v: Version{2, 64}, body: `{"server_group":{}} trailing`, msg: "Malformed request body"},
	}
	for _, tt := range tests {
		t.Run(tt.v.String()+" "+tt.body[:min(len(tt.body), 60)], func(t *testing.T) {
			got, fErr := ParseServerGroupCreate(tt.v, []byte(tt.body))
			f := faultOf(fErr)
			if tt.msg != "" {
				if f == nil {
					t.Fatalf("accepted as %+v, want 400 %q", got, tt.msg)
				}
				if f.Status != 400 || f.Message != tt.msg {
					t.Fatalf("got %d %q\nwant 400 %q", f.Status, f.Message, tt.msg)
				}
				return
			}
			if f != nil {
				t.Fatalf("refused: %d %q", f.Status, f.Message)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseServerGroupList(t *testing.T) {
	tests := []struct {
		v     Version
		query string
		want  ServerGroupListParams
		msg   string
	}{
		{v: Version{2, 64}, query: "", want: ServerGroupListParams{Limit: 1000}},
		{v: Version{2, 64}, query: "all_projects=True&limit=2&offset=1", want: ServerGroupListParams{AllProjects: true, Limit: 2, Offset: 1}},
		{v: Version{2, 64}, query: "all_projects=0", want: ServerGroupListParams{AllProjects: true, Limit: 1000}},
		{v: Version{2, 64}, query: "all_projects", want: ServerGroupListParams{AllProjects: true, Limit: 1000}},
		{v: Version{2, 64}, query: "limit=0", want: ServerGroupListParams{Limit: 1000}},
		{v: Version{2, 64}, query: "limit=5000", want: ServerGroupListParams{Limit: 1000}},
		{v: Version{2, 64}, query: "limit=7&limit=3", want: ServerGroupListParams{Limit: 3}},
		{v: Version{2, 64}, query: "offset=99999999999999999999999", want: ServerGroupListParams{Limit: 1000, Offset: 2147483647}},
		{v: Version{2, 74}, query: "foo=bar", want: ServerGroupListParams{Limit: 1000}},
		{v: Version{2, 75}, query: "foo=bar", msg: "Additional properties are not allowed ('foo' was unexpected)"},
		{v: Version{2, 75}, query: "zzz=1&aaa=2", msg: "Additional properties are not allowed ('aaa', 'zzz' were unexpected)"},
		{v: Version{2, 75}, query: "all_projects=1&limit=1&offset=0", want: ServerGroupListParams{AllProjects: true, Limit: 1}},
		{v: Version{2, 64}, query: "limit=-1", msg: "Invalid input for query parameters limit. Value: -1. '-1' does not match '^[0-9]*$'"},
		{v: Version{2, 64}, query: "limit=", msg: "Invalid input for query parameters limit. Value: . '' is too short"},
		{v: Version{2, 64}, query: "limit=5&limit=x", msg: "Invalid input for query parameters limit. Value: x. 'x' does not match '^[0-9]*$'"},
		{v: Version{2, 1}, query: "offset=abc", msg: "Invalid input for query parameters offset. Value: abc. 'abc' does not match '^[0-9]*$'"},
	}
	for _, tt := range tests {
		t.Run(tt.v.String()+" "+tt.query, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, fErr := ParseServerGroupList(tt.v, q)
			f := faultOf(fErr)
			if tt.msg != "" {
				if f == nil || f.Status != 400 || f.Message != tt.msg {
					t.Fatalf("got %+v %v, want 400 %q", got, f, tt.msg)
				}
				return
			}
			if f != nil {
				t.Fatalf("refused: %q", f.Message)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestShowQueryStrictFrom2102(t *testing.T) {
	q := url.Values{"foo": {"1"}}
	if f := faultOf(ParseServerGroupShowQuery(Version{2, 101}, q)); f != nil {
		t.Errorf("2.101 refused a query: %q", f.Message)
	}
	f := faultOf(ParseServerGroupShowQuery(Version{2, 102}, q))
	if f == nil || f.Message != "Additional properties are not allowed ('foo' was unexpected)" {
		t.Errorf("2.102 = %v", f)
	}
	if f := faultOf(ParseServerGroupShowQuery(Version{2, 102}, url.Values{})); f != nil {
		t.Errorf("2.102 refused an empty query: %q", f.Message)
	}
}

// Aggregate request schemas, with messages recorded from nova-api.
func TestAggregateSchemas(t *testing.T) {
	tests := []struct {
		name   string
		schema js.Schema
		body   string
		msg    string // "" = valid
	}{
		{"create", aggCreate, `{"aggregate":{"name":"agg1","availability_zone":"az1"}}`, ""},
		{"create null az", aggCreate, `{"aggregate":{"name":"agg1","availability_zone":null}}`, ""},
		{"create leading space", aggCreate, `{"aggregate":{"name":" agg1"}}`,
			"An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace."},
		{"create empty az", aggCreate, `{"aggregate":{"name":"agg1","availability_zone":""}}`,
			"Invalid input for field/attribute availability_zone. Value: . '' is not valid under any of the given schemas"},
		{"create colon az", aggCreate, `{"aggregate":{"name":"agg1","availability_zone":"a:b"}}`,
			"Invalid input for field/attribute availability_zone. Value: a:b. 'a:b' is not valid under any of the given schemas"},
		{"create no name", aggCreate, `{"aggregate":{}}`,
			"Invalid input for field/attribute aggregate. Value: {}. 'name' is a required property"},
		{"update empty", aggUpdate, `{"aggregate":{}}`,
			"Invalid input for field/attribute aggregate. Value: {}. {} is not valid under any of the given schemas"},
		{"update spaces", aggUpdate, `{"aggregate":{"name":"  renamed  "}}`, ""},
		{"update blank", aggUpdate, `{"aggregate":{"name":"   "}}`,
			"An invalid 'name' value was provided. The name must be: printable characters with at least one non space character"},
		{"update az null", aggUpdate, `{"aggregate":{"availability_zone":null}}`, ""},
		{"add_host", aggAddHost, `{"add_host":{"host":"cn1.example_org-2"}}`, ""},
		{"add_host bad", aggAddHost, `{"add_host":{"host":"a b"}}`,
			"Invalid input for field/attribute host. Value: a b. 'a b' does not match '^[a-zA-Z0-9-._]*$'"},
		{"add_host missing", aggAddHost, `{"add_host":{}}`,
			"Invalid input for field/attribute add_host. Value: {}. 'host' is a required property"},
		{"remove_host extra", aggRemoveHost, `{"remove_host":{"host":"h","x":1}}`,
			"Invalid input for field/attribute remove_host. Value: {'host': 'h', 'x': 1}. Additional properties are not allowed ('x' was unexpected)"},
		{"set_metadata", aggSetMetadata, `{"set_metadata":{"metadata":{"k1":"v1","k2":null,"a:b.c d":"x"}}}`, ""},
		{"set_metadata bad key", aggSetMetadata, `{"set_metadata":{"metadata":{"k1":"v1","k/2":"x"}}}`,
			"Invalid input for field/attribute metadata. Value: {'k1': 'v1', 'k/2': 'x'}. 'k/2' does not match any of the regexes: '^[a-zA-Z0-9-_:. ]{1,255}$'"},
		{"set_metadata number", aggSetMetadata, `{"set_metadata":{"metadata":{"k1":"v1","k2":null, "k3": 5}}}`,
			"Invalid input for field/attribute k3. Value: 5. 5 is not of type 'string', 'null'"},
		{"set_metadata missing", aggSetMetadata, `{"set_metadata":{}}`,
			"Invalid input for field/attribute set_metadata. Value: {}. 'metadata' is a required property"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, fErr := validateBody(tt.schema, []byte(tt.body))
			f := faultOf(fErr)
			switch {
			case tt.msg == "" && f != nil:
				t.Fatalf("refused: %q", f.Message)
			case tt.msg != "" && f == nil:
				t.Fatalf("accepted, want %q", tt.msg)
			case tt.msg != "" && f.Message != tt.msg:
				t.Fatalf("got  %q\nwant %q", f.Message, tt.msg)
			}
		})
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		s                  string
		strict, withSpaces bool
		az                 bool
	}{
		{"g", true, true, true},
		{"good* $%name", true, true, true},
		{"", true, false, true}, // minLength reports it, not the format
		{" g", false, true, false},
		{"g ", false, true, false},
		{"   ", false, false, false},
		{"g\n", true, true, true}, // Python's $ matches before a final newline
		{"\n", false, false, false},
		{"a\tb", false, false, false},
		{"a:b", true, true, false},
		{"ünïcödé", true, true, true},
		{"pile of \U0001F4A9", false, false, false}, // outside the BMP
		{"a\u00a0b", true, true, true},              // no-break space is Zs: allowed inside
		{"\u2028x", false, false, false},            // line separator
	}
	for _, tt := range tests {
		if got := isName(tt.s); got != tt.strict {
			t.Errorf("isName(%q) = %v", tt.s, got)
		}
		if got := isNameWithSpaces(tt.s); got != tt.withSpaces {
			t.Errorf("isNameWithSpaces(%q) = %v", tt.s, got)
		}
		if got := isAZName(tt.s); got != tt.az {
			t.Errorf("isAZName(%q) = %v", tt.s, got)
		}
	}
}

// faultOf is the fault an error renders as, or nil.
func faultOf(err error) *Fault {
	if err == nil {
		return nil
	}
	return asFault(err)
}
