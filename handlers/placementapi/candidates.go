package placementapi

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/placement"
	"corral/models/pycompat"
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
// messages.
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
		if len(rr) > 1 {
			return nil, &Error{Status: http.StatusBadRequest, Code: CodeQueryDuplicateKey,
				Msg: "Query parameter 'root_required' may be specified only once."}
		}
		req, forb, e := parseTraitValues([]string{rr[0]}, true, false)
		if e != nil {
			return nil, e
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
			return nil, &Error{Status: http.StatusBadRequest, Code: CodeQueryBadValue,
				Msg: "Conflicting required and forbidden traits found in root_required: " + strings.Join(conflicts, ", ")}
		}
	}
	subtreeSuffixes := map[string]bool{}
	if ss, ok := vals["same_subtree"]; ok && v.AtLeast(36) {
		for _, val := range ss {
			var set []string
			seen := map[string]bool{}
			for _, s := range strings.Split(val, ",") {
				s = strings.TrimSpace(s)
				if s == "" {
					return nil, &Error{Status: http.StatusBadRequest, Code: CodeQueryBadValue,
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
	}

	// Groups, in the order their keys first appear; each key's values are
	// parsed when the key is met, as webob's items() walks them.
	pattern := groupKey
	if v.AtLeast(33) {
		pattern = groupKey133
	}
	bySuffix := map[string]int{}
	group := func(suffix string) *placement.Group {
		i, ok := bySuffix[suffix]
		if !ok {
			i = len(q.Groups)
			bySuffix[suffix] = i
			q.Groups = append(q.Groups, placement.Group{Suffix: suffix})
		}
		return &q.Groups[i]
	}
	hasRequired := map[string]bool{}
	for _, p := range params {
		m := pattern.FindStringSubmatch(p.key)
		if m == nil {
			continue
		}
		prefix, suffix := m[1], m[2]
		for _, val := range p.values {
			g := group(suffix)
			switch prefix {
			case "resources":
				res, e := parseResources(val)
				if e != nil {
					return nil, e
				}
				g.Resources = g.Resources[:0]
				for _, r := range res {
					g.Resources = append(g.Resources, placement.Amount{Class: r.class, Amount: r.amount})
				}
			case "required":
				values := vals[p.key]
				if !v.AtLeast(39) {
					values = values[len(values)-1:]
				}
				req, forb, e := parseTraitValues(values, v.AtLeast(22), v.AtLeast(39))
				if e != nil {
					return nil, e
				}
				g.Required, g.Forbidden = req, forb
				hasRequired[suffix] = len(req) > 0
			case "member_of":
				t, err := placement.ParseMemberOf(p.key, vals[p.key], v)
				if err != nil {
					return nil, badRequest(errMsg(err))
				}
				g.MemberOf = t
			case "in_tree":
				s := strings.TrimSpace(val)
				if !placement.IsUUIDLike(s) {
					return nil, badRequest("Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: " + val)
				}
				g.InTree = s
			}
		}
	}
	for _, g := range q.Groups {
		for _, r := range g.Resources {
			out.requested[r.Class] = true
		}
	}

	if v.AtLeast(36) {
		var resourceless []string
		for _, g := range q.Groups {
			if len(g.Resources) == 0 {
				resourceless = append(resourceless, g.Suffix)
			}
		}
		if len(resourceless) == len(q.Groups) {
			return nil, &Error{Status: http.StatusBadRequest, Code: CodeQueryMissingValue,
				Msg: "There must be at least one resources or resources[$S] parameter."}
		}
		var bad []string
		for _, s := range resourceless {
			if !subtreeSuffixes[s] {
				bad = append(bad, pyRepr(s))
			}
		}
		if len(bad) > 0 {
			return nil, &Error{Status: http.StatusBadRequest, Code: CodeQueryBadValue,
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
			return nil, &Error{Status: http.StatusBadRequest, Code: CodeQueryBadValue,
				Msg: "Real suffixes should be specified in `same_subtree`: [" + strings.Join(dedupStrings(notFound), ", ") + "] not found in [" + strings.Join(all, ", ") + "]."}
		}
	} else {
		var orphans []string
		for _, g := range q.Groups {
			if hasRequired[g.Suffix] && len(g.Resources) == 0 {
				orphans = append(orphans, "required"+g.Suffix)
			}
		}
		if len(orphans) > 0 {
			return nil, badRequest("All traits parameters must be associated with resources.  Found the following orphaned traits keys: " + strings.Join(orphans, ", "))
		}
		for _, g := range q.Groups {
			if len(g.Resources) == 0 && !g.MemberOf.Empty() {
				orphans = append(orphans, "member_of"+g.Suffix)
			}
		}
		if len(orphans) > 0 {
			return nil, badRequest("All member_of parameters must be associated with resources. Found the following orphaned member_of keys: " + strings.Join(orphans, ", "))
		}
		for _, g := range q.Groups {
			if len(g.Resources) == 0 {
				return nil, badRequest("All request groups must specify resources.")
			}
		}
		if len(q.Groups) == 0 {
			return nil, badRequest("At least one request group (`resources` or `resources{$S}`) is required.")
		}
	}
	if v.AtLeast(22) {
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
			return nil, badRequest("Conflicting required and forbidden traits found in the following traits keys: " + strings.Join(conflicts, ", "))
		}
	}
	if q.GroupPolicy == "" {
		numbered := 0
		for _, g := range q.Groups {
			if g.Suffix != "" {
				numbered++
			}
		}
		if numbered > 1 {
			return nil, badRequest(`The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.`)
		}
	}
	return out, nil
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

// catalog answers which classes and traits exist: the standard ones, the
// custom ones created through the API, and any a provider already uses.
type catalog struct {
	ix            *placement.Index
	loaded        bool
	classes       map[string]bool
	traits        map[string]bool
	customClasses func() ([]string, error)
	customTraits  func() ([]string, error)
	err           error
}

var (
	standardClassSet = setOf(placement.StandardResourceClasses)
	standardTraitSet = setOf(placement.StandardTraits)
)

func setOf(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

func (c *catalog) load() {
	if c.loaded {
		return
	}
	c.loaded = true
	c.classes, c.traits = map[string]bool{}, map[string]bool{}
	if names, err := c.customClasses(); err == nil {
		for _, n := range names {
			c.classes[n] = true
		}
	} else {
		c.err = err
	}
	if names, err := c.customTraits(); err == nil {
		for _, n := range names {
			c.traits[n] = true
		}
	} else {
		c.err = err
	}
	for i := 0; i < c.ix.Len(); i++ {
		p := c.ix.Provider(i)
		for rc := range p.Inventories {
			c.classes[rc] = true
		}
		for _, t := range p.Traits {
			c.traits[t] = true
		}
	}
}

func (c *catalog) HasClass(n string) bool {
	if standardClassSet[n] || len(c.ix.ProvidersWithClass(n)) > 0 {
		return true
	}
	c.load()
	return c.classes[n]
}

func (c *catalog) HasTrait(n string) bool {
	if standardTraitSet[n] {
		return true
	}
	c.load()
	return c.traits[n]
}

func (api *API) catalogFor(c echo.Context, ix *placement.Index) *catalog {
	ctx := c.Request().Context()
	return &catalog{ix: ix,
		customClasses: func() ([]string, error) { return api.env.Store.CustomResourceClasses(ctx) },
		customTraits:  func() ([]string, error) { return api.env.Store.CustomTraits(ctx) },
	}
}

type summaryResource struct {
	Capacity int64 `json:"capacity"`
	Used     int64 `json:"used"`
}

// listCandidates is GET /allocation_candidates (1.10 and above).
func (api *API) listCandidates(c echo.Context) error {
	v := version(c)
	if !v.AtLeast(10) {
		return &Error{Status: http.StatusNotFound}
	}
	req, perr := parseCandidateQuery(c.Request().URL.RawQuery, v)
	if perr != nil {
		return perr
	}
	snap, err := api.snapshot(c)
	if err != nil {
		return err
	}
	ix := snap.Index()
	cat := api.catalogFor(c, ix)
	res, err := ix.AllocationCandidates(req.q, cat)
	if cat.err != nil {
		return cat.err
	}
	if err != nil {
		var u *placement.Unknown
		if errors.As(err, &u) {
			if u.Trait {
				return badRequest(u.Error())
			}
			return badRequest("Invalid resource class in resources parameter: " + u.Error())
		}
		return err
	}
	buf := candidateBodies.Get().(*[]byte)
	body := appendCandidates((*buf)[:0], ix, api.encoded(ix), res, req, v)
	if v.AtLeast(15) {
		setLastModified(c, api.now())
	}
	err = c.JSONBlob(http.StatusOK, body)
	// The body has been written: its buffer serves the next answer, which
	// spares clearing and collecting megabytes per request.
	if cap(body) <= maxPooledBody {
		*buf = body
		candidateBodies.Put(buf)
	}
	return err
}

// candidateBodies are buffers for answers, reused across requests.
var candidateBodies = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody bounds the buffers kept: an answer with every candidate of
// a 100,000-provider cloud is tens of megabytes, and rare.
const maxPooledBody = 8 << 20

// appendCandidates renders the answer straight into JSON, appending to b:
// at thousands of candidates, maps of maps through encoding/json cost more
// than finding them. A test holds it equal to that encoding.
//
// enc, when not nil, holds the snapshot's summaries already encoded.
func appendCandidates(b []byte, ix *placement.Index, enc *encodedProviders, res *placement.Candidates, req *candidateRequest, v placement.Version) []byte {
	b = slices.Grow(b, 256*(len(res.Requests)+len(res.Summaries))+64)
	b = append(b, `{"allocation_requests":[`...)
	for i, cand := range res.Requests {
		if i > 0 {
			b = append(b, ',')
		}
		if v.AtLeast(12) {
			b = append(b, `{"allocations":{`...)
			for j := 0; j < len(cand.Allocs); {
				p := cand.Allocs[j].Provider
				if j > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, ix.Provider(p).UUID)
				b = append(b, `:{"resources":{`...)
				for k := j; j < len(cand.Allocs) && cand.Allocs[j].Provider == p; j++ {
					if j > k {
						b = append(b, ',')
					}
					b = appendJSONString(b, cand.Allocs[j].Class)
					b = append(b, ':')
					b = strconv.AppendInt(b, cand.Allocs[j].Amount, 10)
				}
				b = append(b, "}}"...)
			}
			b = append(b, '}')
			if v.AtLeast(34) {
				b = append(b, `,"mappings":{`...)
				for k, m := range cand.Mappings {
					if k > 0 {
						b = append(b, ',')
					}
					b = appendJSONString(b, m.Suffix)
					b = append(b, ":["...)
					for x, p := range m.Providers {
						if x > 0 {
							b = append(b, ',')
						}
						b = appendJSONString(b, ix.Provider(p).UUID)
					}
					b = append(b, ']')
				}
				b = append(b, '}')
			}
			b = append(b, '}')
			continue
		}
		b = append(b, `{"allocations":[`...)
		for j := 0; j < len(cand.Allocs); {
			p := cand.Allocs[j].Provider
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"resource_provider":{"uuid":`...)
			b = appendJSONString(b, ix.Provider(p).UUID)
			b = append(b, `},"resources":{`...)
			for k := j; j < len(cand.Allocs) && cand.Allocs[j].Provider == p; j++ {
				if j > k {
					b = append(b, ',')
				}
				b = appendJSONString(b, cand.Allocs[j].Class)
				b = append(b, ':')
				b = strconv.AppendInt(b, cand.Allocs[j].Amount, 10)
			}
			b = append(b, "}}"...)
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"provider_summaries":{`...)
	for i, pi := range res.Summaries {
		if i > 0 {
			b = append(b, ',')
		}
		if enc != nil && v.AtLeast(27) {
			// From 1.27 a summary lists every class: the same bytes for
			// every request on this snapshot.
			b = append(b, enc.summary(pi, v.AtLeast(29))...)
			continue
		}
		b = appendSummary(b, ix.Provider(pi), req, v)
	}
	b = append(b, "}}\n"...)
	return b
}

// appendSummary appends provider p's entry of provider_summaries:
// "uuid":{…}. Below 1.27 it lists the requested classes only.
func appendSummary(b []byte, p *models.Provider, req *candidateRequest, v placement.Version) []byte {
	b = appendJSONString(b, p.UUID)
	b = append(b, `:{"resources":{`...)
	classes := make([]string, 0, len(p.Inventories))
	for rc := range p.Inventories {
		if v.AtLeast(27) || req.requested[rc] {
			classes = append(classes, rc)
		}
	}
	sort.Strings(classes)
	for k, rc := range classes {
		if k > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, rc)
		b = append(b, `:{"capacity":`...)
		b = strconv.AppendInt(b, placement.Capacity(p.Inventories[rc]), 10)
		b = append(b, `,"used":`...)
		b = strconv.AppendInt(b, p.Usages[rc], 10)
		b = append(b, '}')
	}
	b = append(b, '}')
	if v.AtLeast(17) {
		b = append(b, `,"traits":[`...)
		for k, t := range p.Traits {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, t)
		}
		b = append(b, ']')
	}
	if v.AtLeast(29) {
		b = appendTreeFields(b, p)
	}
	return append(b, '}')
}

// pyRepr is Python's repr of a decoded value, for messages.
func pyRepr(v any) string { return pycompat.Repr(v) }
