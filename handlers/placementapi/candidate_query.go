package placementapi

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"corral/models/placement"
)

// Placement's error codes for query values (placement/errors.py).
const (
	CodeQueryMissingValue = "placement.query.missing_value"
	CodeQueryBadValue     = "placement.query.bad_value"
	CodeQueryDuplicateKey = "placement.query.duplicate_key"
)

var (
	groupKey     = regexp.MustCompile(`^(resources|required|member_of|in_tree)([1-9][0-9]*)?$`)
	groupKey133  = regexp.MustCompile(`^(resources|required|member_of|in_tree)([a-zA-Z0-9_-]{1,64})?$`)
	limitPattern = regexp.MustCompile(`^[1-9][0-9]*$`)
)

// candidateSchema is schemas/allocation_candidate.py for microversion v:
// the named properties, in the schema's order, and the group-key patterns
// that replace resources/required/member_of from 1.25.
func candidateSchema(v placement.Version) (props []string, patterns []string, pattern *regexp.Regexp) {
	if !v.AtLeast(25) {
		props = []string{"resources"}
		if v.AtLeast(16) {
			props = append(props, "limit")
		}
		if v.AtLeast(17) {
			props = append(props, "required")
		}
		if v.AtLeast(21) {
			props = append(props, "member_of")
		}
		return props, nil, nil
	}
	props = []string{"limit", "group_policy"}
	if v.AtLeast(35) {
		props = append(props, "root_required")
	}
	if v.AtLeast(36) {
		props = append(props, "same_subtree")
	}
	groups := []string{"resources", "required", "member_of"}
	if v.AtLeast(31) {
		groups = append(groups, "in_tree")
	}
	pat := `[1-9][0-9]*`
	pattern = groupKey
	if v.AtLeast(33) {
		pat = `[a-zA-Z0-9_-]{1,64}`
		pattern = groupKey133
	}
	for _, g := range groups {
		patterns = append(patterns, "^"+g+"("+pat+")?$")
	}
	sort.Strings(patterns)
	return props, patterns, pattern
}

// validateCandidateQuery is util.validate_query_params with the version's
// schema: jsonschema reports the shallowest error first (a missing
// resources, then unexpected keys), then limit and group_policy values.
// Messages stop where jsonschema starts dumping the schema.
func validateCandidateQuery(params []queryParam, v placement.Version) *Error {
	props, patterns, _ := candidateSchema(v)
	known := map[string]bool{}
	for _, p := range props {
		known[p] = true
	}
	var patRes []*regexp.Regexp
	for _, p := range patterns {
		patRes = append(patRes, regexp.MustCompile(p))
	}
	last := map[string]string{}
	var extras []string
	for _, p := range params {
		last[p.key] = p.values[len(p.values)-1]
		if known[p.key] {
			continue
		}
		matched := false
		for _, re := range patRes {
			if re.MatchString(p.key) {
				matched = true
				break
			}
		}
		if !matched {
			extras = append(extras, p.key)
		}
	}
	if !v.AtLeast(25) {
		if _, ok := last["resources"]; !ok {
			return badRequest("Invalid query string parameters: 'resources' is a required property")
		}
	}
	if len(extras) > 0 {
		if patterns == nil {
			reprs := make([]string, len(extras))
			for i, e := range extras {
				reprs[i] = pyRepr(e)
			}
			verb := "was"
			if len(extras) > 1 {
				verb = "were"
			}
			return badRequest(fmt.Sprintf("Invalid query string parameters: Additional properties are not allowed (%s %s unexpected)", strings.Join(reprs, ", "), verb))
		}
		sorted := append([]string(nil), extras...)
		sort.Strings(sorted)
		reprs := make([]string, len(sorted))
		for i, e := range sorted {
			reprs[i] = pyRepr(e)
		}
		pats := make([]string, len(patterns))
		for i, p := range patterns {
			pats[i] = pyRepr(p)
		}
		verb := "does"
		if len(sorted) > 1 {
			verb = "do"
		}
		return badRequest(fmt.Sprintf("Invalid query string parameters: %s %s not match any of the regexes: %s",
			strings.Join(reprs, ", "), verb, strings.Join(pats, ", ")))
	}
	for _, p := range props {
		val, ok := last[p]
		if !ok {
			continue
		}
		switch p {
		case "limit":
			if !limitPattern.MatchString(val) {
				return badRequest(fmt.Sprintf("Invalid query string parameters: %s does not match '^[1-9][0-9]*$'", pyRepr(val)))
			}
		case "group_policy":
			if val != "none" && val != "isolate" {
				return badRequest(fmt.Sprintf("Invalid query string parameters: %s is not one of ['none', 'isolate']", pyRepr(val)))
			}
		}
	}
	return nil
}

// candidateRequest is a parsed GET /allocation_candidates.
type candidateRequest struct {
	q         placement.CandidateQuery
	requested map[string]bool // every requested class, for pre-1.27 summaries
}

// parseCandidateQuery follows lib.RequestWideParams.from_request and
// lib.RequestGroup.dict_from_request, in their order and with their
// messages: the request-wide parameters, then the groups, then the checks
// across groups.
func parseCandidateQuery(raw string, v placement.Version) (*candidateRequest, *Error) {
	params, vals, perr := orderedQuery(raw)
	if perr != nil {
		return nil, perr
	}
	if e := validateCandidateQuery(params, v); e != nil {
		return nil, e
	}
	out := &candidateRequest{requested: map[string]bool{}}
	q := &out.q
	q.NestedAware = v.AtLeast(29)
	subtreeSuffixes, e := parseRequestWideParams(q, vals, v)
	if e != nil {
		return nil, e
	}
	groups, e := parseRequestGroups(q, params, vals, v)
	if e != nil {
		return nil, e
	}
	for _, g := range q.Groups {
		for _, r := range g.Resources {
			out.requested[r.Class] = true
		}
	}
	if v.AtLeast(36) {
		e = checkResourcelessGroups(q, subtreeSuffixes, groups.bySuffix)
	} else {
		e = checkGroupsHaveResources(q, groups.hasRequired)
	}
	if e != nil {
		return nil, e
	}
	if v.AtLeast(22) {
		if e := checkGroupTraitConflicts(q); e != nil {
			return nil, e
		}
	}
	if e := checkGroupPolicyGiven(q); e != nil {
		return nil, e
	}
	return out, nil
}

// parseRequestWideParams reads limit, group_policy, root_required and
// same_subtree into q, and returns the suffixes same_subtree names.
func parseRequestWideParams(q *placement.CandidateQuery, vals map[string][]string, v placement.Version) (map[string]bool, *Error) {
	if l := vals["limit"]; len(l) > 0 {
		n, err := strconv.Atoi(l[0])
		if err != nil || n < 1 {
			return nil, badRequest(fmt.Sprintf("Invalid query string parameters: %s does not match '^[1-9][0-9]*$'", pyRepr(l[0])))
		}
		q.Limit = n
	}
	if gp := vals["group_policy"]; len(gp) > 0 {
		q.GroupPolicy = gp[0]
	}
	if rr, ok := vals["root_required"]; ok && v.AtLeast(35) {
		if e := parseRootRequired(q, rr); e != nil {
			return nil, e
		}
	}
	subtreeSuffixes := map[string]bool{}
	if ss, ok := vals["same_subtree"]; ok && v.AtLeast(36) {
		if e := parseSameSubtree(q, ss, subtreeSuffixes); e != nil {
			return nil, e
		}
	}
	return subtreeSuffixes, nil
}

// parseRootRequired reads the single root_required value into the root's
// required and forbidden traits, refusing a trait that is both.
func parseRootRequired(q *placement.CandidateQuery, rr []string) *Error {
	if len(rr) > 1 {
		return &Error{Status: http.StatusBadRequest, Code: CodeQueryDuplicateKey,
			Msg: "Query parameter 'root_required' may be specified only once."}
	}
	req, forb, e := parseTraitValues([]string{rr[0]}, true, false)
	if e != nil {
		return e
	}
	for _, any := range req {
		q.RootRequired = append(q.RootRequired, any[0])
	}
	q.RootRequired = dedupStrings(q.RootRequired)
	q.RootForbidden = forb
	var conflicts []string
	for _, t := range q.RootForbidden {
		for _, r := range q.RootRequired {
			if r == t {
				conflicts = append(conflicts, t)
			}
		}
	}
	if len(conflicts) > 0 {
		return &Error{Status: http.StatusBadRequest, Code: CodeQueryBadValue,
			Msg: "Conflicting required and forbidden traits found in root_required: " + strings.Join(conflicts, ", ")}
	}
	return nil
}

// parseSameSubtree reads each same_subtree value as a set of group
// suffixes, recording every suffix named in subtreeSuffixes.
func parseSameSubtree(q *placement.CandidateQuery, ss []string, subtreeSuffixes map[string]bool) *Error {
	for _, val := range ss {
		var set []string
		seen := map[string]bool{}
		for _, s := range strings.Split(val, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				return &Error{Status: http.StatusBadRequest, Code: CodeQueryBadValue,
					Msg: "Empty string (unsuffixed group) can not be specified in `same_subtree` "}
			}
			if !seen[s] {
				seen[s] = true
				set = append(set, s)
			}
			subtreeSuffixes[s] = true
		}
		q.SameSubtree = append(q.SameSubtree, set)
	}
	return nil
}

// requestGroups indexes the groups parseRequestGroups built: each suffix's
// position in q.Groups, and whether its required traits were non-empty.
type requestGroups struct {
	bySuffix    map[string]int
	hasRequired map[string]bool
}

// parseRequestGroups builds q.Groups in the order their keys first appear;
// each key's values are parsed when the key is met, as webob's items()
// walks them.
func parseRequestGroups(q *placement.CandidateQuery, params []queryParam, vals map[string][]string, v placement.Version) (requestGroups, *Error) {
	pattern := groupKey
	if v.AtLeast(33) {
		pattern = groupKey133
	}
	groups := requestGroups{bySuffix: map[string]int{}, hasRequired: map[string]bool{}}
	group := func(suffix string) *placement.Group {
		i, ok := groups.bySuffix[suffix]
		if !ok {
			i = len(q.Groups)
			groups.bySuffix[suffix] = i
			q.Groups = append(q.Groups, placement.Group{Suffix: suffix})
		}
		return &q.Groups[i]
	}
	for _, p := range params {
		m := pattern.FindStringSubmatch(p.key)
		if m == nil {
			continue
		}
		prefix, suffix := m[1], m[2]
		values := p.values
		if prefix == "member_of" || prefix == "required" {
			// These read every value of the key at once: parsing them once
			// per value made a repeated key cost quadratic time.
			values = values[:min(len(values), 1)]
		}
		for _, val := range values {
			g := group(suffix)
			if e := parseGroupValue(g, prefix, p.key, val, vals, v, groups.hasRequired); e != nil {
				return groups, e
			}
		}
	}
	return groups, nil
}

// parseGroupValue reads one value of a group key (resources, required,
// member_of or in_tree, with the group's suffix) into g.
func parseGroupValue(g *placement.Group, prefix, key, val string, vals map[string][]string, v placement.Version, hasRequired map[string]bool) *Error {
	switch prefix {
	case "resources":
		res, e := parseResources(val)
		if e != nil {
			return e
		}
		g.Resources = g.Resources[:0]
		for _, r := range res {
			g.Resources = append(g.Resources, placement.Amount{Class: r.class, Amount: r.amount})
		}
	case "required":
		values := vals[key]
		if !v.AtLeast(39) {
			values = values[len(values)-1:]
		}
		req, forb, e := parseTraitValues(values, v.AtLeast(22), v.AtLeast(39))
		if e != nil {
			return e
		}
		g.Required, g.Forbidden = req, forb
		hasRequired[g.Suffix] = len(req) > 0
	case "member_of":
		t, err := placement.ParseMemberOf(key, vals[key], v)
		if err != nil {
			return badRequest(errMsg(err))
		}
		g.MemberOf = t
	case "in_tree":
		s := strings.TrimSpace(val)
		if !placement.IsUUIDLike(s) {
			return badRequest("Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: " + val)
		}
		g.InTree = s
	}
	return nil
}

// checkResourcelessGroups is the 1.36 rule: at least one group asks for
// resources, every resourceless group is named in same_subtree, and
// same_subtree names only real groups.
func checkResourcelessGroups(q *placement.CandidateQuery, subtreeSuffixes map[string]bool, bySuffix map[string]int) *Error {
	var resourceless []string
	for _, g := range q.Groups {
		if len(g.Resources) == 0 {
			resourceless = append(resourceless, g.Suffix)
		}
	}
	if len(resourceless) == len(q.Groups) {
		return &Error{Status: http.StatusBadRequest, Code: CodeQueryMissingValue,
			Msg: "There must be at least one resources or resources[$S] parameter."}
	}
	var bad []string
	for _, s := range resourceless {
		if !subtreeSuffixes[s] {
			bad = append(bad, pyRepr(s))
		}
	}
	if len(bad) > 0 {
		return &Error{Status: http.StatusBadRequest, Code: CodeQueryBadValue,
			Msg: "Resourceless suffixed group request should be specified in `same_subtree` query param: bad group(s) - [" + strings.Join(bad, ", ") + "]."}
	}
	var notFound []string
	for _, st := range q.SameSubtree {
		for _, s := range st {
			if _, ok := bySuffix[s]; !ok {
				notFound = append(notFound, pyRepr(s))
			}
		}
	}
	if len(notFound) > 0 {
		all := make([]string, len(q.Groups))
		for i, g := range q.Groups {
			all[i] = pyRepr(g.Suffix)
		}
		return &Error{Status: http.StatusBadRequest, Code: CodeQueryBadValue,
			Msg: "Real suffixes should be specified in `same_subtree`: [" + strings.Join(dedupStrings(notFound), ", ") + "] not found in [" + strings.Join(all, ", ") + "]."}
	}
	return nil
}

// checkGroupsHaveResources is the rule before 1.36: no required or
// member_of without resources in the same group, and at least one group.
func checkGroupsHaveResources(q *placement.CandidateQuery, hasRequired map[string]bool) *Error {
	var orphans []string
	for _, g := range q.Groups {
		if hasRequired[g.Suffix] && len(g.Resources) == 0 {
			orphans = append(orphans, "required"+g.Suffix)
		}
	}
	if len(orphans) > 0 {
		return badRequest("All traits parameters must be associated with resources.  Found the following orphaned traits keys: " + strings.Join(orphans, ", "))
	}
	for _, g := range q.Groups {
		if len(g.Resources) == 0 && !g.MemberOf.Empty() {
			orphans = append(orphans, "member_of"+g.Suffix)
		}
	}
	if len(orphans) > 0 {
		return badRequest("All member_of parameters must be associated with resources. Found the following orphaned member_of keys: " + strings.Join(orphans, ", "))
	}
	for _, g := range q.Groups {
		if len(g.Resources) == 0 {
			return badRequest("All request groups must specify resources.")
		}
	}
	if len(q.Groups) == 0 {
		return badRequest("At least one request group (`resources` or `resources{$S}`) is required.")
	}
	return nil
}

// checkGroupTraitConflicts refuses, from 1.22, a group whose required
// any-of set is wholly forbidden in the same group.
func checkGroupTraitConflicts(q *placement.CandidateQuery) *Error {
	var conflicts []string
	for _, g := range q.Groups {
		forb := map[string]bool{}
		for _, t := range g.Forbidden {
			forb[t] = true
		}
		for _, any := range g.Required {
			all := true
			for _, t := range any {
				if !forb[t] {
					all = false
					break
				}
			}
			if all {
				s := append([]string(nil), any...)
				sort.Strings(s)
				conflicts = append(conflicts, "required"+g.Suffix+": ("+strings.Join(s, ", ")+")")
			}
		}
	}
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return badRequest("Conflicting required and forbidden traits found in the following traits keys: " + strings.Join(conflicts, ", "))
	}
	return nil
}

// checkGroupPolicyGiven requires group_policy when more than one suffixed
// group is requested.
func checkGroupPolicyGiven(q *placement.CandidateQuery) *Error {
	if q.GroupPolicy != "" {
		return nil
	}
	numbered := 0
	for _, g := range q.Groups {
		if g.Suffix != "" {
			numbered++
		}
	}
	if numbered > 1 {
		return badRequest(`The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.`)
	}
	return nil
}

func dedupStrings(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// parseTraitValues is util.normalize_traits_qs_params over the values
// given: the AND-of-ORs of required traits and the forbidden set.
func parseTraitValues(values []string, allowForbidden, allowAny bool) ([][]string, []string, *Error) {
	f := &providerFilter{}
	// parseRequired already applies the version rules given a version.
	v := placement.V(21)
	if allowForbidden {
		v = placement.V(22)
	}
	if allowAny {
		v = placement.V(39)
	}
	if e := f.parseRequired(values, v); e != nil {
		return nil, nil, e
	}
	return f.requiredAny, f.forbiddenTraits, nil
}
