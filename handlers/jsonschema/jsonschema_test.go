package jsonschema

import (
	"strconv"
	"testing"
	"unicode/utf8"

	"corral/models/pycompat"
)

// everyKeyword uses each keyword once, in a shape like the services'.
var everyKeyword = Schema{
	Type("object"),
	Properties(
		Prop{Name: "name", Schema: Schema{Type("string"), MinLength(1), MaxLength(8), NameFormat("name", func(s string) bool { return s != "bad" }, "not bad")}},
		Prop{Name: "n", Schema: Schema{Type("integer", "string"), Pattern(`^-?[0-9]+$`), Minimum(-1), Maximum(9)}},
		Prop{Name: "list", Schema: Schema{Type("array"), PrefixItems(Schema{EnumStrings("a", "b")}), UniqueItems(), MinItems(1), MaxItems(3)}},
		Prop{Name: "id", Schema: Schema{AnyOf(Schema{Type("string"), Format("uuid", func(s string) bool { return utf8.RuneCountInString(s) == 4 })}, Schema{Type("null")})}},
		Prop{Name: "one", Schema: Schema{OneOf(Schema{Type("boolean")}, Schema{Enum(true, "x", nil)})}},
		Prop{Name: "md", Schema: Schema{Type("object"), PatternProperties(PatternProp{Pattern: `^[a-z]{1,3}$`, Schema: Schema{Type("string", "null")}}), NoAdditional(nil, `^[a-z]{1,3}$`)}},
		Prop{Name: "tags", Schema: Schema{Type("array"), Items(Schema{Type("string"), MinLength(1)})}},
		Prop{Name: "counts", Schema: Schema{Type("object"), MinProperties(1), MaxProperties(3),
			ExtraProperties(Schema{Type("number"), MinimumFloat(0.5), MaximumFloat(2.5)}, nil)}},
		Prop{Name: "total", Schema: Schema{Type("integer"), Minimum(1), Maximum(2147483647)}},
	),
	Required("name"),
	NoAdditional([]string{"name", "n", "list", "id", "one", "md", "tags", "counts", "total"}),
}

func TestBestMatchAndFirst(t *testing.T) {
	cases := []struct{ body, nova, placement string }{
		{`{"name": "x"}`, "", ""},
		{`[]`, "[] is not of type 'object'", "[] is not of type 'object'"},
		{`{"n": 3.0, "name": "x"}`, "3.0 is not of type 'integer', 'string'", ""},
		{`{"name": "bad", "z": 1, "y": 2}`, "'bad' is not a 'name'", "Additional properties are not allowed ('y', 'z' were unexpected)"},
		{`{"name": "x", "id": "abc"}`, "'abc' is not valid under any of the given schemas", "'abc' is not a 'uuid'"},
		{`{"name": "x", "id": 5}`, "5 is not valid under any of the given schemas", "5 is not valid under any of the given schemas"},
		{`{"name": "x", "n": "10"}`, "10 is greater than the maximum of 9", ""},
		{`{"name": "x", "n": -2}`, "-2 is less than the minimum of -1", "-2 is less than the minimum of -1"},
		{`{"name": "x", "list": ["c", 1, 1.0]}`, "'c' is not one of ['a', 'b']", "['c', 1, 1.0] has non-unique elements"},
		{`{"name": "x", "one": true}`, "True is valid under each of the given schemas", "True is valid under each of the given schemas"},
		{`{"name": "x", "md": {"ab": 1, "ABCD": "x", "9": null}}`, "1 is not of type 'string', 'null'", "'9', 'ABCD' do not match any of the regexes: '^[a-z]{1,3}$'"},
	}
	for _, tc := range cases {
		v, err := pycompat.DecodeJSON([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []struct {
			name string
			d    Dialect
			want string
		}{{"nova", Nova, tc.nova}, {"placement", Placement, tc.placement}} {
			got := ""
			if e := d.d.Validate(everyKeyword, v); e != nil {
				got = e.Msg
			}
			if got != d.want {
				t.Errorf("%s %s: got %q, want %q", d.name, tc.body, got, d.want)
			}
		}
	}
}

// FuzzValidate: any JSON document is valid or gets one error whose path
// leads from the document to the value it quotes, in both dialects.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{`{"name": "x"}`, `{"name": "bad", "z": 1}`, `{"name": "x", "list": ["a", "a"], "id": 5}`,
		`{"md": {"ab": [1]}, "n": "1_0", "one": "x"}`, `{"n": 1e400, "name": 1.5}`, `[{}]`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		v, err := pycompat.DecodeJSON([]byte(body))
		if err != nil {
			return
		}
		for _, d := range []Dialect{Nova, Placement} {
			e := d.Validate(everyKeyword, v)
			if e == nil {
				continue
			}
			if e.Msg == "" {
				t.Fatalf("%s: empty message", body)
			}
			at := v
			for _, p := range e.Path {
				switch x := at.(type) {
				case *pycompat.Object:
					at = x.Vals[p]
				case []any:
					i, _ := strconv.Atoi(p)
					at = x[i]
				default:
					t.Fatalf("%s: path %q runs through %s", body, e.Path, pycompat.Repr(at))
				}
			}
			// A best_match inside anyOf/oneOf has a path relative to it.
			if d == Nova && pycompat.Repr(at) != pycompat.Repr(e.Value) {
				t.Fatalf("%s: path %q leads to %s, error is about %s", body, e.Path, pycompat.Repr(at), pycompat.Repr(e.Value))
			}
		}
	})
}
