package compute

import (
	"strings"
	"testing"

	js "corral/handlers/jsonschema"
	"corral/handlers/jsonschema/jsonschematest"
	"corral/models/pycompat"
)

// novaSchemas runs nova-api's own validator and schemas.
const novaSchemas = `
from nova import exception
from nova.api.validation import validators
from nova.api.openstack.compute.schemas import server_groups as sg, quota_sets as qs, aggregates as ag

def nova(schema):
    validator = validators._SchemaValidator(schema)
    def check(instance):
        try:
            validator.validate(instance)
        except exception.ValidationError as e:
            return e.format_message()
        return None
    return check

SCHEMAS = {
    "sg_create_v21": nova(sg.create), "sg_create_v215": nova(sg.create_v215), "sg_create_v264": nova(sg.create_v264),
    "quota_update_v21": nova(qs.update), "quota_update_v236": nova(qs.update_v236), "quota_update_v257": nova(qs.update_v257),
    "agg_create": nova(ag.create), "agg_update": nova(ag.update), "agg_add_host": nova(ag.add_host),
    "agg_set_metadata": nova(ag.set_metadata),
}
`

// TestSchemasAgainstNova compares the first error of the server-group,
// quota-set and aggregate schemas with nova-api's validator on thousands
// of generated bodies and the fuzz corpora.
func TestSchemasAgainstNova(t *testing.T) {
	python := jsonschematest.Python(t, "jsonschema", "nova.api.validation.validators")
	schemas := []struct {
		name  string
		s     js.Schema
		seeds []string
	}{
		{"sg_create_v21", sgCreateV21, []string{`{"server_group": {"name": "g", "policies": ["affinity"]}}`}},
		{"sg_create_v215", sgCreateV215, []string{`{"server_group": {"name": "g", "policies": ["soft-affinity"]}}`}},
		{"sg_create_v264", sgCreateV264, []string{
			`{"server_group": {"name": "g", "policy": "anti-affinity", "rules": {"max_server_per_host": 3}}}`,
			`{"server_group": {"name": "g", "policy": "affinity"}}`}},
		{"quota_update_v21", quotaUpdateV21, []string{`{"quota_set": {"instances": 10, "cores": "20", "force": true}}`}},
		{"quota_update_v236", quotaUpdateV236, []string{`{"quota_set": {"ram": -1, "server_groups": "5", "force": "yes"}}`}},
		{"quota_update_v257", quotaUpdateV257, []string{`{"quota_set": {"server_group_members": 1, "key_pairs": "0"}}`}},
		{"agg_create", aggCreate, []string{`{"aggregate": {"name": "a", "availability_zone": "z"}}`}},
		{"agg_update", aggUpdate, []string{`{"aggregate": {"name": " a ", "availability_zone": null}}`}},
		{"agg_add_host", aggAddHost, []string{`{"add_host": {"host": "cn-1.example"}}`}},
		{"agg_set_metadata", aggSetMetadata, []string{`{"set_metadata": {"metadata": {"ssd": "true", "k:x": null}}}`}},
	}
	pool := []any{"anti-affinity", "affinity", "soft-affinity", []any{"affinity"}, []any{"anti-affinity", "x"},
		"-1", "2147483647", "1\n", "name\n", "TRUE", "On", "k/2", strings.Repeat("n", 256), " " + strings.Repeat("n", 255)}
	var cases []jsonschematest.Case
	corpus := append(jsonschematest.Corpus(t, "FuzzParseServerGroupCreate"), jsonschematest.Corpus(t, "FuzzParseQuotaSetUpdate")...)
	for i, sc := range schemas {
		bodies := append(jsonschematest.Mutations(sc.seeds, pool, 600, int64(i)), sc.seeds...)
		bodies = append(bodies, corpus...)
		for _, b := range bodies {
			if _, err := pycompat.DecodeJSON([]byte(b)); err != nil {
				continue // not JSON: refused before any schema
			}
			cases = append(cases, jsonschematest.Case{Schema: sc.name, Instance: b})
		}
	}
	answers := jsonschematest.Ask(t, python, novaSchemas, cases)
	byName := map[string]js.Schema{}
	for _, sc := range schemas {
		byName[sc.name] = sc.s
	}
	failures, raised, deviations := 0, 0, 0
	for i, c := range cases {
		a := answers[i]
		if a.Raised != "" {
			raised++ // nova itself crashes (a 500): nothing to agree with
			continue
		}
		v, _ := pycompat.DecodeJSON([]byte(c.Instance))
		if strings.HasPrefix(c.Schema, "quota_update") && quotaSetNotObject(v) {
			// Nova's schema puts its "type": "object" among the properties,
			// so nova takes any quota_set and then fails with a 500; corral
			// refuses it with the 400 the schema meant.
			deviations++
			continue
		}
		got := ""
		if e := js.Nova.Validate(byName[c.Schema], v); e != nil {
			got = bodyMessage(e)
		}
		want := ""
		if a.Message != nil {
			want = *a.Message
		}
		if got != want {
			t.Errorf("%s %s:\n got  %q\n nova %q", c.Schema, c.Instance, got, want)
			if failures++; failures > 20 {
				t.Fatal("too many differences")
			}
		}
	}
	t.Logf("%d bodies compared with nova's validator; nova raised on %d; %d quota sets not objects", len(cases), raised, deviations)
}

func quotaSetNotObject(v any) bool {
	o, ok := v.(*pycompat.Object)
	if !ok {
		return false
	}
	qs, ok := o.Get("quota_set")
	_, isObj := qs.(*pycompat.Object)
	return ok && !isObj
}
