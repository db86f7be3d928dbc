package compute

import (
	"fmt"
	"math"
	"math/big"
	"net/http"
	"net/url"
	"strings"

	"corral/models"
	"corral/models/pycompat"
)

// maxLimit is Nova's [api] max_limit default.
const maxLimit = 1000

// ServerGroupSpec is a validated create request.
type ServerGroupSpec struct {
	Name   string
	Policy string
	Rules  map[string]int
}

// ParseServerGroupCreate validates a POST /os-server-groups body for
// microversion v, with Nova's schema and its post-schema checks.
func ParseServerGroupCreate(v Version, raw []byte) (ServerGroupSpec, error) {
	root, f := validateBody(serverGroupCreateSchema(v), raw)
	if f != nil {
		return ServerGroupSpec{}, f
	}
	sgv, _ := root.Get("server_group")
	sg := sgv.(*pycompat.Object)
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
	rules := rv.(*pycompat.Object)
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
func ruleInt(x any) (int, error) {
	var n *big.Int
	switch t := x.(type) {
	case pycompat.Int:
		n, _ = new(big.Int).SetString(t.Lit, 10)
	case string:
		// The pattern lets one final newline through, which Python's
		// int() ignores; a bare newline is no number (Nova then fails).
		digits := strings.TrimSuffix(t, "\n")
		if digits == "" {
			return 0, faultf(http.StatusBadRequest, fmt.Sprintf(
				"Invalid input for field/attribute %s. Value: %s. %s is not an integer",
				models.RuleMaxServerPerHost, pycompat.Str(x), pycompat.Repr(x)))
		}
		n, _ = new(big.Int).SetString(digits, 10)
	case pycompat.Float:
		n, _ = big.NewFloat(float64(t)).Int(nil)
	}
	if n == nil || !n.IsInt64() || n.Int64() > math.MaxInt32 {
		return 0, faultf(http.StatusBadRequest, fmt.Sprintf(
			"Invalid input for field/attribute %s. Value: %s. %s is greater than the maximum of %d",
			models.RuleMaxServerPerHost, pycompat.Str(x), pycompat.Repr(x), math.MaxInt32))
	}
	return int(n.Int64()), nil
}

// ServerGroupListParams is a validated GET /os-server-groups query.
type ServerGroupListParams struct {
	AllProjects bool // all_projects was present (any value)
	Offset      int
	Limit       int // already resolved against maxLimit, never 0
}

// ParseServerGroupList validates the index query for version v and applies
// Nova's pagination rules: the last value of a repeated parameter wins,
// limit=0 or above the maximum means the maximum.
func ParseServerGroupList(v Version, q url.Values) (ServerGroupListParams, error) {
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
func pageInt(name, s string) (int, error) {
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
func ParseServerGroupShowQuery(v Version, q url.Values) error {
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
func groupNotFound(id string) error {
	return faultf(http.StatusNotFound, fmt.Sprintf("Instance group %s could not be found.", id))
}
