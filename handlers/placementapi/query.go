package placementapi

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	js "corral/handlers/jsonschema"
	"corral/models"
	"corral/models/placement"
	"corral/models/pycompat"
)

// queryParam is one query-string parameter, in the order sent.
type queryParam struct {
	key    string
	values []string
}

// MaxRepeatedParam bounds how often one query parameter may be repeated.
// Placement sets no bound of its own; Nova repeats member_of and required
// once per filter, a handful of times, so a thousand is generous while
// keeping a hostile query's cost small (Go's own parser stops at 10,000
// parameters in all).
const MaxRepeatedParam = 1000

// orderedQuery parses a raw query keeping the order in which keys first
// appear, as dict(req.GET) does; the values it quotes come in that order.
func orderedQuery(raw string) ([]queryParam, url.Values, *Error) {
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return nil, nil, badRequest("Invalid query string parameters: " + err.Error())
	}
	for k, vs := range vals {
		if len(vs) > MaxRepeatedParam {
			return nil, nil, badRequest(fmt.Sprintf(
				"Invalid query string parameters: '%s' may be repeated at most %d times; got %d", k, MaxRepeatedParam, len(vs)))
		}
	}
	var out []queryParam
	seen := map[string]bool{}
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, _, _ := strings.Cut(part, "=")
		k, err := url.QueryUnescape(k)
		if err != nil || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, queryParam{key: k, values: vals[k]})
	}
	return out, vals, nil
}

// listParams are GET /resource_providers' parameters and the microversion
// that introduced each (schemas/resource_provider.py).
var listParams = []struct {
	name  string
	since int
	uuid  bool
}{
	{"name", 0, false},
	{"uuid", 0, true},
	{"member_of", 3, false},
	{"resources", 4, false},
	{"in_tree", 14, true},
	{"required", 18, false},
}

// listQuerySchema is GET_RPS_SCHEMA_1_x: the parameters of v, each a
// string, uuid and in_tree in the uuid format.
func listQuerySchema(v placement.Version) js.Schema {
	var props []js.Prop
	var names []string
	for _, p := range listParams {
		if !v.AtLeast(p.since) {
			continue
		}
		s := js.Schema{js.Type("string")}
		if p.uuid {
			s = uuidString()
		}
		props = append(props, js.Prop{Name: p.name, Schema: s})
		names = append(names, p.name)
	}
	return js.Schema{js.Type("object"), js.Properties(props...), js.NoAdditional(names)}
}

// lastValues is dict(req.GET): each parameter once, in the order first
// sent, with its last value.
func lastValues(params []queryParam) *pycompat.Object {
	q := &pycompat.Object{Vals: make(map[string]any, len(params))}
	for _, p := range params {
		if len(p.values) > 0 {
			q.Keys = append(q.Keys, p.key)
			q.Vals[p.key] = p.values[len(p.values)-1]
		}
	}
	return q
}

// listQueryValid is true when q passes listQuerySchema(v), decided
// without building the schema: most queries are valid, and the schema is
// needed for its exact messages only when one is not. Every value of a
// query string is a string, so the schema asks only that each name be
// known at v and that uuid and in_tree look like uuids.
func listQueryValid(q *pycompat.Object, v placement.Version) bool {
	for _, k := range q.Keys {
		known := false
		for _, p := range listParams {
			if p.name == k && v.AtLeast(p.since) {
				known = true
				if p.uuid {
					s, ok := q.Vals[k].(string)
					known = ok && placement.IsUUIDLike(s)
				}
				break
			}
		}
		if !known {
			return false
		}
	}
	return true
}

// providerFilter is a validated GET /resource_providers query.
type providerFilter struct {
	name, uuid, inTree *string
	memberOf           *placement.Terms
	requiredAny        [][]string // AND of ORs
	forbiddenTraits    []string
	resources          []resourceAmount
}

type resourceAmount struct {
	class  string
	amount int64
}

// parseListQuery validates the query as Placement does: the JSON schema of
// the microversion first (unknown parameters, uuid formats), then member_of,
// then required, then resources.
func parseListQuery(raw string, v placement.Version) (*providerFilter, *Error) {
	params, vals, perr := orderedQuery(raw)
	if perr != nil {
		return nil, perr
	}
	q := lastValues(params)
	if !listQueryValid(q, v) {
		if e := js.Placement.Validate(listQuerySchema(v), q); e != nil {
			return nil, badRequest("Invalid query string parameters: " + e.Msg)
		}
	}
	f := &providerFilter{}
	last := func(k string) *string {
		vs := vals[k]
		if len(vs) == 0 {
			return nil
		}
		s := vs[len(vs)-1]
		return &s
	}
	f.name, f.uuid, f.inTree = last("name"), last("uuid"), last("in_tree")
	if mv, ok := vals["member_of"]; ok {
		t, err := placement.ParseMemberOf("member_of", mv, v)
		if err != nil {
			return nil, badRequest(errMsg(err))
		}
		f.memberOf = &t
	}
	if rv, ok := vals["required"]; ok {
		if e := f.parseRequired(rv, v); e != nil {
			return nil, e
		}
	}
	if s := last("resources"); s != nil {
		res, e := parseResources(*s)
		if e != nil {
			return nil, e
		}
		f.resources = res
	}
	return f, nil
}

func errMsg(err error) string {
	if ce, ok := err.(*models.Error); ok && ce.Msg != "" {
		return ce.Msg
	}
	return err.Error()
}

// parseRequired follows util.normalize_traits_qs_params: forbidden traits
// from 1.22, `in:` lists and repeated parameters from 1.39 (before that only
// the last value counts).
func (f *providerFilter) parseRequired(values []string, v placement.Version) *Error {
	allowForbidden, allowAny := v.AtLeast(22), v.AtLeast(39)
	if !allowAny {
		values = values[len(values)-1:]
	}
	seenForb := map[string]bool{}
	for _, val := range values {
		if strings.HasPrefix(val, "in:") {
			if !allowAny {
				return badRequest("Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: " + val)
			}
			var anyOf []string
			for _, t := range strings.Split(val[3:], ",") {
				t = strings.TrimSpace(t)
				if t == "" {
					return badRequest("Invalid query string parameters: Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: " + val)
				}
				anyOf = append(anyOf, t)
			}
			for _, t := range anyOf {
				if strings.HasPrefix(t, "!") {
					return badRequest("Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: " + val)
				}
			}
			f.requiredAny = append(f.requiredAny, anyOf)
			continue
		}
		var req, forb []string
		empty := false
		for _, t := range strings.Split(val, ",") {
			t = strings.TrimSpace(t)
			if t == "" {
				empty = true
				continue
			}
			if strings.HasPrefix(t, "!") {
				// Upstream strips any number of leading '!' (a known quirk).
				ft := strings.TrimLeft(t, "!")
				if ft == "" {
					empty = true
				}
				forb = append(forb, ft)
				continue
			}
			req = append(req, t)
		}
		if empty {
			form := "HW_CPU_X86_VMX,CUSTOM_MAGIC"
			if allowForbidden {
				form = "HW_CPU_X86_VMX,!CUSTOM_MAGIC"
			}
			return badRequest("Invalid query string parameters: Expected 'required' parameter value of the form: " + form + ". Got an empty trait in: " + val)
		}
		if len(forb) > 0 && !allowForbidden {
			return badRequest("Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: " + val)
		}
		for _, t := range req {
			f.requiredAny = append(f.requiredAny, []string{t})
		}
		for _, t := range forb {
			if !seenForb[t] {
				seenForb[t] = true
				f.forbiddenTraits = append(f.forbiddenTraits, t)
			}
		}
	}
	return nil
}

const resourcesForm = "Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: "

// parseResources follows util.normalize_resources_qs_param.
func parseResources(qs string) ([]resourceAmount, *Error) {
	if strings.TrimSpace(qs) == "" {
		return nil, badRequest(resourcesForm + "empty string.")
	}
	var out []resourceAmount
	pos := map[string]int{}
	for _, rt := range strings.Split(qs, ",") {
		parts := strings.Split(rt, ":")
		if len(parts) != 2 {
			return nil, badRequest(resourcesForm + rt + ".")
		}
		rc := parts[0]
		n, err := strconv.ParseInt(strings.TrimSpace(parts[1]), 10, 64)
		if err != nil {
			return nil, badRequest(fmt.Sprintf("Requested resource %s expected positive integer amount. Got: %s.", rc, parts[1]))
		}
		if n < 1 {
			return nil, badRequest(fmt.Sprintf("Requested resource %s requires amount >= 1. Got: %d.", rc, n))
		}
		// A repeated class keeps the last amount, as the Python dict does.
		if i, ok := pos[rc]; ok {
			out[i].amount = n
			continue
		}
		pos[rc] = len(out)
		out = append(out, resourceAmount{class: rc, amount: n})
	}
	return out, nil
}

// hasCapacity is Placement's test for GET /resource_providers?resources=:
// capacity left after usage, and the amount within min_unit, max_unit and
// step_size (the core's per-class check).
func hasCapacity(p *models.Provider, rc string, amount int64) bool {
	return !placement.Check(p, rc, amount).Short
}
