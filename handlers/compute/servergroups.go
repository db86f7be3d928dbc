package compute

import (
	"fmt"
	"math"
	"math/big"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"corral/models"
)

// maxLimit is Nova's [api] max_limit default.
const maxLimit = 1000

// ServerGroupSpec is a validated create request.
type ServerGroupSpec struct {
	Name   string
	Policy string
	Rules  map[string]int
}

// decodeBody parses a request body; an empty body is JSON null, which the
// schemas then refuse with "None is not of type 'object'".
func decodeBody(raw []byte) (any, *Fault) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return nil, nil
	}
	v, err := DecodeOrdered(raw)
	if err != nil {
		return nil, faultf(http.StatusBadRequest, "Malformed request body")
	}
	return v, nil
}

func validateBody(s Schema, raw []byte) (*Object, *Fault) {
	v, f := decodeBody(raw)
	if f != nil {
		return nil, f
	}
	if e := s.Validate(v); e != nil {
		return nil, faultf(http.StatusBadRequest, e.BodyMessage())
	}
	o, ok := v.(*Object)
	if !ok { // every request schema requires an object; be safe anyway
		return nil, faultf(http.StatusBadRequest, "Malformed request body")
	}
	return o, nil
}

// ParseServerGroupCreate validates a POST /os-server-groups body for
// microversion v, with Nova's schema and its post-schema checks.
func ParseServerGroupCreate(v Version, raw []byte) (ServerGroupSpec, *Fault) {
	root, f := validateBody(serverGroupCreateSchema(v), raw)
	if f != nil {
		return ServerGroupSpec{}, f
	}
	sgv, _ := root.Get("server_group")
	sg := sgv.(*Object)
	name, _ := sg.Get("name")
	spec := ServerGroupSpec{Name: name.(string), Rules: map[string]int{}}
	if !v.AtLeast(2, 64) {
		pol, _ := sg.Get("policies")
		spec.Policy = pol.([]any)[0].(string)
		return spec, nil
	}
	pol, _ := sg.Get("policy")
	spec.Policy = pol.(string)
	rv, ok := sg.Get("rules")
	if !ok {
		return spec, nil
	}
	rules := rv.(*Object)
	// Which policies take rules is the core's rule; Nova checks it before
	// the values, so only the keys go in here.
	named := map[string]int{}
	for _, k := range rules.Keys {
		named[k] = 1
	}
	if e := models.CheckGroupRules(spec.Policy, named); e != nil {
		return ServerGroupSpec{}, faultf(http.StatusBadRequest, e.Msg)
	}
	if x, ok := rules.Get(models.RuleMaxServerPerHost); ok {
		n, f := ruleInt(x)
		if f != nil {
			return ServerGroupSpec{}, f
		}
		spec.Rules[models.RuleMaxServerPerHost] = n
	}
	return spec, nil
}

// ruleInt reads a schema-checked positive integer (number or digit string).
// Nova keeps arbitrarily large values; corral stores an int32-sized one and
// refuses anything bigger instead of overflowing.
func ruleInt(x any) (int, *Fault) {
	var n *big.Int
	switch t := x.(type) {
	case Int:
		n, _ = new(big.Int).SetString(t.Lit, 10)
	case string:
		n, _ = new(big.Int).SetString(t, 10)
	case Float:
		n, _ = big.NewFloat(float64(t)).Int(nil)
	}
	if n == nil || !n.IsInt64() || n.Int64() > math.MaxInt32 {
		return 0, faultf(http.StatusBadRequest, fmt.Sprintf(
			"Invalid input for field/attribute %s. Value: %s. %s is greater than the maximum of %d",
			models.RuleMaxServerPerHost, pyStr(x), pyRepr(x), math.MaxInt32))
	}
	return int(n.Int64()), nil
}

// ServerGroupListParams is a validated GET /os-server-groups query.
type ServerGroupListParams struct {
	AllProjects bool // all_projects was present (any value)
	Offset      int
	Limit       int // already resolved against maxLimit, never 0
}

// queryObject presents a query string the way Nova's query schemas see it:
// each parameter a list of its values (parameters sorted, for stable
// messages).
func queryObject(q url.Values) *Object {
	o := &Object{Vals: map[string]any{}}
	for k := range q {
		o.Keys = append(o.Keys, k)
	}
	sort.Strings(o.Keys)
	for _, k := range o.Keys {
		vals := make([]any, len(q[k]))
		for i, s := range q[k] {
			vals[i] = s
		}
		o.Vals[k] = vals
	}
	return o
}

func validateQuery(s Schema, q url.Values) *Fault {
	if e := s.Validate(queryObject(q)); e != nil {
		return faultf(http.StatusBadRequest, e.QueryMessage())
	}
	return nil
}

// ParseServerGroupList validates the index query for version v and applies
// Nova's pagination rules: the last value of a repeated parameter wins,
// limit=0 or above the maximum means the maximum.
func ParseServerGroupList(v Version, q url.Values) (ServerGroupListParams, *Fault) {
	s := sgIndexQueryV21
	if v.AtLeast(2, 75) {
		s = sgIndexQueryV275
	}
	if f := validateQuery(s, q); f != nil {
		return ServerGroupListParams{}, f
	}
	p := ServerGroupListParams{Limit: maxLimit}
	_, p.AllProjects = q["all_projects"]
	for _, name := range []string{"limit", "offset"} {
		vals, ok := q[name]
		if !ok {
			continue
		}
		n, f := pageInt(name, vals[len(vals)-1])
		if f != nil {
			return ServerGroupListParams{}, f
		}
		switch name {
		case "limit":
			if n > 0 && n < maxLimit {
				p.Limit = n
			}
		case "offset":
			p.Offset = n
		}
	}
	return p, nil
}

// pageInt is oslo's validate_integer(value, name, min_value=0); values
// beyond int range saturate (they only ever mean "past the end").
func pageInt(name, s string) (int, *Fault) {
	t := strings.TrimSpace(s)
	n, ok := new(big.Int).SetString(strings.TrimPrefix(t, "+"), 10)
	if !ok || t == "" {
		return 0, faultf(http.StatusBadRequest, fmt.Sprintf("Invalid input received: %s must be an integer", name))
	}
	if n.Sign() < 0 {
		return 0, faultf(http.StatusBadRequest, fmt.Sprintf("Invalid input received: %s must be >= 0", name))
	}
	if !n.IsInt64() || n.Int64() > math.MaxInt32 {
		return math.MaxInt32, nil
	}
	return int(n.Int64()), nil
}

// ParseServerGroupShowQuery: from 2.102 a show takes no query parameters.
func ParseServerGroupShowQuery(v Version, q url.Values) *Fault {
	if !v.AtLeast(2, 102) {
		return nil
	}
	return validateQuery(emptyQueryStrict, q)
}

// FormatServerGroup renders a group as microversion v shows it.
func FormatServerGroup(v Version, g *models.ServerGroup) any {
	members := g.Members
	if members == nil {
		members = []string{}
	}
	d := doc{{"id", g.UUID}, {"name", g.Name}}
	if v.AtLeast(2, 64) {
		rules := doc{}
		if n, ok := g.Rules[models.RuleMaxServerPerHost]; ok {
			rules = append(rules, kv{models.RuleMaxServerPerHost, n})
		}
		d = append(d, kv{"policy", g.Policy}, kv{"rules", rules})
	} else {
		policies := []string{}
		if g.Policy != "" {
			policies = append(policies, g.Policy)
		}
		d = append(d, kv{"policies", policies}, kv{"metadata", doc{}})
	}
	d = append(d, kv{"members", members})
	if v.AtLeast(2, 13) {
		d = append(d, kv{"project_id", g.ProjectID}, kv{"user_id", g.UserID})
	}
	return d
}

// groupNotFound is Nova's InstanceGroupNotFound.
func groupNotFound(id string) *Fault {
	return faultf(http.StatusNotFound, fmt.Sprintf("Instance group %s could not be found.", id))
}
