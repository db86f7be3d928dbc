package jsonschema

import (
	"testing"

	"corral/handlers/jsonschema/jsonschematest"
	"corral/models/pycompat"
)

// everyKeywordPython is everyKeyword as jsonschema sees it, for Draft 4
// (first error, as Nova without its numeric strings) and for the latest
// draft through jsonschema.validate (best_match, as Placement).
const everyKeywordPython = `
import copy, jsonschema

checker = jsonschema.FormatChecker()
checker.checks("uuid")(lambda s: isinstance(s, str) and len(s) == 4)
checker.checks("name")(lambda s: s != "bad")

MD = "^[a-z]{1,3}$"
DRAFT4 = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 8, "format": "name"},
        "n": {"type": ["integer", "string"], "pattern": "^-?[0-9]+$", "minimum": -1, "maximum": 9},
        "list": {"type": "array", "items": [{"enum": ["a", "b"]}], "uniqueItems": True, "minItems": 1, "maxItems": 3},
        "id": {"anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]},
        "one": {"oneOf": [{"type": "boolean"}, {"enum": [True, "x", None]}]},
        "md": {"type": "object", "patternProperties": {MD: {"type": ["string", "null"]}}, "additionalProperties": False},
        "tags": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "counts": {"type": "object", "minProperties": 1, "maxProperties": 3,
                   "additionalProperties": {"type": "number", "minimum": 0.5, "maximum": 2.5}},
        "total": {"type": "integer", "minimum": 1, "maximum": 2147483647},
    },
    "required": ["name"],
    "additionalProperties": False,
}
LATEST = copy.deepcopy(DRAFT4)
LATEST["properties"]["list"]["prefixItems"] = LATEST["properties"]["list"].pop("items")

def draft4(instance):
    try:
        jsonschema.Draft4Validator(DRAFT4, format_checker=checker).validate(instance)
    except jsonschema.ValidationError as e:
        return e.message
    return None

def latest(instance):
    try:
        jsonschema.validate(instance, LATEST, format_checker=checker)
    except jsonschema.ValidationError as e:
        return e.message
    return None

SCHEMAS = {"draft4": draft4, "latest": latest}
`

// TestAgainstJSONSchema compares both ways of reporting (first error,
// best_match) with Python's jsonschema on bodies derived from valid ones.
func TestAgainstJSONSchema(t *testing.T) {
	python := jsonschematest.Python(t, "jsonschema")
	seeds := []string{
		`{"name": "x", "n": "5", "list": ["a"], "id": "abcd", "one": false, "md": {"ab": "v", "c": null}}`,
		`{"name": "yy", "tags": ["t", "u"], "counts": {"VCPU": 1, "DISK": 2.5}, "total": 2}`,
		`{"name": "z", "id": null, "one": "x", "n": -1, "list": ["b"]}`,
	}
	pool := []any{"bad", "abcd", "a", "b", "ab", "ABCD", pycompat.Float(0.25), pycompat.Float(2.75), pycompat.Int{Lit: "10"}}
	var cases []jsonschematest.Case
	bodies := append(jsonschematest.Mutations(seeds, pool, 3000, 7), seeds...)
	for _, b := range append(bodies, jsonschematest.Corpus(t, "FuzzValidate")...) {
		if _, err := pycompat.DecodeJSON([]byte(b)); err != nil {
			continue
		}
		cases = append(cases, jsonschematest.Case{Schema: "draft4", Instance: b}, jsonschematest.Case{Schema: "latest", Instance: b})
	}
	answers := jsonschematest.Ask(t, python, everyKeywordPython, cases)
	failures, skipped, unordered := 0, 0, 0
	for i, c := range cases {
		a := answers[i]
		if a.Raised != "" {
			t.Fatalf("%s %s: python raised %s", c.Schema, c.Instance, a.Raised)
		}
		want := ""
		if a.Message != nil {
			want = *a.Message
		}
		v, _ := pycompat.DecodeJSON([]byte(c.Instance))
		d := Placement
		if c.Schema == "draft4" {
			d = Dialect{}
		}
		got := ""
		if e := d.Validate(everyKeyword, v); e != nil {
			got = e.Msg
		}
		if got != want && len(want) > 0 && len(got) > 0 && oneOfListsSchemas(want) {
			skipped++ // jsonschema prints the matching schemas; see OneOf
			continue
		}
		if got != want && extraKeys(v) > 1 {
			unordered++ // jsonschema visits additional properties in a set's order
			continue
		}
		if got != want {
			t.Errorf("%s %s:\n got        %q\n jsonschema %q", c.Schema, c.Instance, got, want)
			if failures++; failures > 20 {
				t.Fatal("too many differences")
			}
		}
	}
	t.Logf("%d validations compared; %d oneOf messages that list schemas; %d with additional properties in set order",
		len(cases), skipped, unordered)
}

// extraKeys counts the keys of "counts", whose values ExtraProperties checks.
func extraKeys(v any) int {
	if o, ok := v.(*pycompat.Object); ok {
		if c, ok := o.Vals["counts"].(*pycompat.Object); ok {
			return len(c.Keys)
		}
	}
	return 0
}

func oneOfListsSchemas(msg string) bool {
	for i := 0; i+len(" is valid under each of {") <= len(msg); i++ {
		if msg[i:i+len(" is valid under each of {")] == " is valid under each of {" {
			return true
		}
	}
	return false
}
