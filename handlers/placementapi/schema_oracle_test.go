package placementapi

import (
	"strings"
	"testing"

	js "corral/handlers/jsonschema"
	"corral/handlers/jsonschema/jsonschematest"
	"corral/models/placement"
	"corral/models/pycompat"
)

// placementSchemas are Placement's body schemas as placement/schemas/
// {resource_provider,aggregate,trait}.py declare them (the list query as
// the dict the query string becomes), checked as
// placement.util.extract_json does: jsonschema.validate with a format
// checker whose "uuid" is oslo's is_uuid_like.
const placementSchemas = `
import copy
import jsonschema
from oslo_utils import uuidutils

checker = jsonschema.FormatChecker()
checker.checks("uuid")(uuidutils.is_uuid_like)

POST_RESOURCE_PROVIDER_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 200},
        "uuid": {"type": "string", "format": "uuid"},
    },
    "required": ["name"],
    "additionalProperties": False,
}
PUT_RESOURCE_PROVIDER_SCHEMA = copy.deepcopy(POST_RESOURCE_PROVIDER_SCHEMA)
PUT_RESOURCE_PROVIDER_SCHEMA["properties"].pop("uuid")
POST_RP_SCHEMA_V1_14 = copy.deepcopy(POST_RESOURCE_PROVIDER_SCHEMA)
POST_RP_SCHEMA_V1_14["properties"]["parent_provider_uuid"] = {
    "anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]}
PUT_RP_SCHEMA_V1_14 = copy.deepcopy(POST_RP_SCHEMA_V1_14)
PUT_RP_SCHEMA_V1_14["properties"].pop("uuid")

_AGGREGATES_LIST_SCHEMA = {
    "type": "array",
    "items": {"type": "string", "format": "uuid"},
    "uniqueItems": True,
}
PUT_AGGREGATES_SCHEMA_V1_1 = copy.deepcopy(_AGGREGATES_LIST_SCHEMA)
PUT_AGGREGATES_SCHEMA_V1_19 = {
    "type": "object",
    "properties": {
        "aggregates": copy.deepcopy(_AGGREGATES_LIST_SCHEMA),
        "resource_provider_generation": {"type": "integer"},
    },
    "required": ["aggregates", "resource_provider_generation"],
    "additionalProperties": False,
}

def placement(schema):
    def check(instance):
        try:
            jsonschema.validate(instance, schema, format_checker=checker)
        except jsonschema.ValidationError as e:
            return e.message
        return None
    return check

TRAIT = {"type": "string", "minLength": 1, "maxLength": 255}
CUSTOM_TRAIT = copy.deepcopy(TRAIT)
CUSTOM_TRAIT.update({"pattern": "^CUSTOM_[A-Z0-9_]+$"})
PUT_TRAITS_SCHEMA = {
    "type": "object",
    "properties": {"traits": {"type": "array", "items": CUSTOM_TRAIT}},
    "required": ["traits"],
    "additionalProperties": False,
}
SET_TRAITS_FOR_RP_SCHEMA = copy.deepcopy(PUT_TRAITS_SCHEMA)
SET_TRAITS_FOR_RP_SCHEMA["properties"]["traits"]["items"] = TRAIT
SET_TRAITS_FOR_RP_SCHEMA["properties"]["resource_provider_generation"] = {"type": "integer"}
SET_TRAITS_FOR_RP_SCHEMA["required"].append("resource_provider_generation")

GET_RPS_SCHEMA_1_18 = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "uuid": {"type": "string", "format": "uuid"},
        "member_of": {"type": "string"},
        "resources": {"type": "string"},
        "in_tree": {"type": "string", "format": "uuid"},
        "required": {"type": "string"},
    },
    "additionalProperties": False,
}

SCHEMAS = {
    "list_query_v1_18": placement(GET_RPS_SCHEMA_1_18),
    "traits": placement(SET_TRAITS_FOR_RP_SCHEMA),
    "provider_create": placement(POST_RESOURCE_PROVIDER_SCHEMA),
    "provider_update": placement(PUT_RESOURCE_PROVIDER_SCHEMA),
    "provider_create_v1_14": placement(POST_RP_SCHEMA_V1_14),
    "provider_update_v1_14": placement(PUT_RP_SCHEMA_V1_14),
    "aggregates_v1_1": placement(PUT_AGGREGATES_SCHEMA_V1_1),
    "aggregates_v1_19": placement(PUT_AGGREGATES_SCHEMA_V1_19),
}
`

// TestSchemasAgainstJSONSchema compares the error of Placement's body
// schemas with Python's jsonschema on generated bodies.
func TestSchemasAgainstJSONSchema(t *testing.T) {
	python := jsonschematest.Python(t, "jsonschema", "oslo_utils.uuidutils")
	const u1, u2 = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	schemas := []struct {
		name  string
		s     js.Schema
		seeds []string
	}{
		{"provider_create", providerSchema(placement.V(0), true), []string{`{"name": "p", "uuid": "` + u1 + `"}`}},
		{"provider_update", providerSchema(placement.V(0), false), []string{`{"name": "p"}`}},
		{"provider_create_v1_14", providerSchema(placement.V(14), true),
			[]string{`{"name": "p", "uuid": "` + u1 + `", "parent_provider_uuid": "` + u2 + `"}`}},
		{"provider_update_v1_14", providerSchema(placement.V(39), false),
			[]string{`{"name": "p", "parent_provider_uuid": null}`, `{"name": "p", "parent_provider_uuid": "` + u2 + `"}`}},
		{"aggregates_v1_1", aggregateList, []string{`["` + u1 + `", "` + u2 + `"]`, `[]`}},
		{"list_query_v1_18", listQuerySchema(placement.V(18)),
			[]string{`{"name": "p", "uuid": "` + u1 + `", "member_of": "in:` + u2 + `", "in_tree": "` + u2 + `", "required": "CUSTOM_X"}`}},
		{"traits", traitsSchema, []string{`{"traits": ["HW_CPU_X86_AVX2", "CUSTOM_GOLD"], "resource_provider_generation": 1}`}},
		{"aggregates_v1_19", aggregatesSchema119, []string{`{"aggregates": ["` + u1 + `"], "resource_provider_generation": 3}`}},
	}
	pool := []any{"CUSTOM_X", strings.Repeat("T", 256), u1, u2, []any{u1, u1}, []any{u1, pycompat.Int{Lit: "1"}}, pycompat.Float(3), pycompat.Float(1e300)}
	var cases []jsonschematest.Case
	for i, sc := range schemas {
		for _, b := range append(jsonschematest.Mutations(sc.seeds, pool, 700, int64(i)), sc.seeds...) {
			cases = append(cases, jsonschematest.Case{Schema: sc.name, Instance: b})
		}
	}
	answers := jsonschematest.Ask(t, python, placementSchemas, cases)
	byName := map[string]js.Schema{}
	for _, sc := range schemas {
		byName[sc.name] = sc.s
	}
	failures, deviations := 0, 0
	for i, c := range cases {
		a := answers[i]
		if a.Raised != "" {
			t.Fatalf("%s %s: python raised %s", c.Schema, c.Instance, a.Raised)
		}
		v, _ := pycompat.DecodeJSON([]byte(c.Instance))
		got := ""
		if e := js.Placement.Validate(byName[c.Schema], v); e != nil {
			got = e.Msg
		}
		want := ""
		if a.Message != nil {
			want = *a.Message
		}
		if got != want && c.Schema[:3] == "agg" && holdsLongUUID(v) {
			deviations++ // corral refuses aggregate uuids longer than 36 characters
			continue
		}
		if got != want {
			t.Errorf("%s %s:\n got       %q\n jsonschema %q", c.Schema, c.Instance, got, want)
			if failures++; failures > 20 {
				t.Fatal("too many differences")
			}
		}
	}
	t.Logf("%d bodies compared with jsonschema; %d hold aggregate uuids corral cannot store", len(cases), deviations)
}

func holdsLongUUID(v any) bool {
	switch t := v.(type) {
	case string:
		return len(t) > 36 && placement.IsUUIDLike(t)
	case []any:
		for _, x := range t {
			if holdsLongUUID(x) {
				return true
			}
		}
	case *pycompat.Object:
		for _, x := range t.Vals {
			if holdsLongUUID(x) {
				return true
			}
		}
	}
	return false
}
