package scheduling

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"corral/models"
	"corral/models/pycompat"
)

// Seed 003's sentinels and reserved key (nfv-filters AggregateInstanceTypeFilter).
const (
	SentinelAny      = "*" // the key is present, with any value
	SentinelOptional = "~" // the key may be absent
	SentinelAbsent   = "!" // the key must be absent
	// KeyForceMetadataCheck, set to "True" on an aggregate, makes the
	// aggregate's metadata the requirement and the flavor the candidate.
	KeyForceMetadataCheck = "force_metadata_check"
)

// TypeRequirement is a value read with seed 003's grammar (reference
// aggregate_filters.md §3.3 item 2): "<or> a <or> b ..." lists alternatives
// (every word but the "<or>" separators); anything else is one alternative.
// Alternatives equal to *, ~ or ! are sentinels.
type TypeRequirement struct {
	Raw    string
	Or     bool // written as an "<or>" list
	Any    bool // *
	Opt    bool // ~
	Absent bool // !
	// Values are the alternatives that are not sentinels.
	Values []string
}

// ParseTypeRequirement reads a flavor extra-spec value (normal mode) or an
// aggregate metadata value (forced mode). It never fails; Err says what
// is wrong with a value the filter rejects.
func ParseTypeRequirement(s string) TypeRequirement {
	t := TypeRequirement{Raw: s}
	words := pycompat.Split(s)
	var alts []string
	if len(words) > 0 && words[0] == OpOr {
		t.Or = true
		for _, w := range words[1:] {
			if w != OpOr {
				alts = append(alts, w)
			}
		}
	} else {
		// Sentinels are recognised with surrounding whitespace too: such a
		// literal could never equal a stripped aggregate value anyway.
		if st := pycompat.Strip(s); st == SentinelAny || st == SentinelOptional || st == SentinelAbsent {
			alts = []string{st}
		} else {
			alts = []string{s}
		}
	}
	for _, a := range alts {
		switch a {
		case SentinelAny:
			t.Any = true
		case SentinelOptional:
			t.Opt = true
		case SentinelAbsent:
			t.Absent = true
		default:
			t.Values = append(t.Values, a)
		}
	}
	return t
}

// Err reports why the filter rejects any host for t: "!" combined with
// another alternative (the seed makes "!" exclusive; reference §3.4 A8
// extends that to literals), or an "<or>" without alternatives.
func (t TypeRequirement) Err() error {
	if t.Absent && (t.Any || t.Opt || len(t.Values) > 0) {
		return models.E(models.Invalid, "", "'!' (must be absent) cannot be combined with other alternatives in %q", t.Raw)
	}
	if t.Or && !t.Any && !t.Opt && !t.Absent && len(t.Values) == 0 {
		return models.E(models.Invalid, "", "'<or>' needs at least one alternative")
	}
	return nil
}

// typeOutcome is why a TypeRequirement was or was not satisfied.
type typeOutcome int

const (
	typePass      typeOutcome = iota
	typeMustLack              // "!" but the key is present
	typeMissing               // the key is absent and "~" is not allowed
	typeLoneTilde             // only "~", and the key is present
	typeNoMatch               // present, but no value satisfies the alternatives
	typeError                 // the requirement is invalid or nova's match would crash
)

// valueSource is where eval finds the candidate values: the united values
// of key on host h, or else the list. (A concrete type rather than an
// iterator function keeps eval free of allocations.)
type valueSource struct {
	h    *HostState
	key  string
	list []string
}

func (s valueSource) each(fn func(string) bool) {
	if s.h != nil {
		eachHostValue(s.h, s.key, fn)
		return
	}
	for _, v := range s.list {
		if !fn(v) {
			return
		}
	}
}

// eval applies t to a key that is present with candidate values vals, or
// absent (reference §3.3 item 3).
func (t TypeRequirement) eval(present bool, vals valueSource) (typeOutcome, error) {
	if err := t.Err(); err != nil {
		return typeError, err
	}
	switch {
	case t.Absent:
		if present {
			return typeMustLack, nil
		}
		return typePass, nil
	case !present:
		if t.Opt {
			return typePass, nil
		}
		return typeMissing, nil
	case t.Any:
		return typePass, nil
	case len(t.Values) == 0:
		return typeLoneTilde, nil
	}
	// An "<or>" list matches as nova's match would on the alternatives
	// rebuilt as "<or> a <or> b": by equality. A single alternative is the
	// raw value, read with nova's operators.
	var req Requirement
	if !t.Or {
		var err error
		if req, err = cachedRequirement(t.Raw); err != nil {
			return typeError, err
		}
	}
	matched := false
	var matchErr error
	vals.each(func(v string) bool {
		if t.Or {
			matched = matched || slices.Contains(t.Values, v)
			return !matched
		}
		ok, err := req.Match(v)
		if err != nil {
			matchErr = err
			return false
		}
		matched = matched || ok
		return true
	})
	if matchErr != nil {
		return typeError, matchErr
	}
	if matched {
		return typePass, nil
	}
	return typeNoMatch, nil
}

// AggregateInstanceTypeFilter is seed 003's filter, read as reference
// aggregate_filters.md §3.3 recommends where the seed is ambiguous.
//
// Normal mode (flavor-driven, like AggregateInstanceExtraSpecsFilter): each
// flavor extra spec is a requirement on the host's united aggregate metadata,
// with the sentinels * ~ !. Keys scoped "aggregate_instance_extra_specs:" are
// looked up without the scope and are mandatory, as are unscoped keys; keys
// with another scope are optional (skipped when the aggregates lack them,
// unless the requirement demands presence with *). Aggregate values are
// literal.
//
// Forced mode, when an aggregate of the host sets force_metadata_check to
// "True" (any case): the aggregate metadata is the requirement. Every
// aggregate key, namespaced or not, must be in the flavor and every value
// (comma pieces and several aggregates alike) must be satisfied by one of the
// flavor's "<or>" alternatives; flavor keys the aggregates do not mention
// are ignored. The reserved key itself is never compared.
type AggregateInstanceTypeFilter struct{}

// Name implements HostFilter.
func (AggregateInstanceTypeFilter) Name() string { return models.FilterAggregateInstanceType }

// Filter implements HostFilter.
func (AggregateInstanceTypeFilter) Filter(h *HostState, r *Request) Verdict {
	var specs map[string]string
	if r != nil && r.Flavor != nil {
		specs = r.Flavor.ExtraSpecs
	}
	forced := false
	eachHostValue(h, KeyForceMetadataCheck, func(v string) bool {
		forced = strings.EqualFold(v, "true")
		return !forced
	})
	if forced {
		md := HostAggregateMetadata(h)
		delete(md, KeyForceMetadataCheck)
		if problems := checkByAggregate(md, specs); len(problems) > 0 {
			return Verdict{Reason: "force_metadata_check: " + strings.Join(problems, "; ")}
		}
		return Verdict{Passed: true, Reason: "the flavor satisfies the aggregate metadata (force_metadata_check)"}
	}
	if problems := checkByFlavor(h, specs); len(problems) > 0 {
		sort.Strings(problems) // each starts with its key
		return Verdict{Reason: strings.Join(problems, "; ")}
	}
	return Verdict{Passed: true, Reason: "the aggregate metadata satisfies the flavor's extra specs"}
}

// checkByFlavor is normal mode.
func checkByFlavor(h *HostState, specs map[string]string) []string {
	var problems []string
	for key, spec := range specs {
		lookup, mandatory := key, true
		if rest, ok := strings.CutPrefix(key, ScopeExtra+":"); ok {
			lookup = rest
		} else if strings.Contains(key, ":") {
			mandatory = false
		}
		if lookup == KeyForceMetadataCheck {
			// The reserved key is never compared; as a flavor key no
			// aggregate can provide it.
			problems = append(problems, lookup+": reserved for aggregates; no aggregate provides it to a flavor")
			continue
		}
		t := cachedTypeRequirement(spec)
		present := eachHostValue(h, lookup, func(string) bool { return false })
		if !present && !mandatory && t.Err() == nil && !(t.Any && !t.Opt) {
			continue // an optional namespaced key the aggregates do not set
		}
		out, err := t.eval(present, valueSource{h: h, key: lookup})
		if out != typePass {
			problems = append(problems, typeReason(lookup, spec, out, err, "aggregate", hostValues(h, lookup)))
		}
	}
	return problems
}

// checkByAggregate is forced mode.
func checkByAggregate(md HostMetadata, specs map[string]string) []string {
	var problems []string
	for _, key := range hfSortedKeys(md) {
		lookup := strings.TrimPrefix(key, ScopeExtra+":")
		var alts []string
		present := false
		for _, fk := range []string{lookup, ScopeExtra + ":" + lookup} {
			fv, ok := specs[fk]
			if !ok {
				continue
			}
			present = true
			alts = append(alts, flavorAlternatives(fv)...)
		}
		alts = hfSortedUnique(alts)
		for _, av := range md[key] {
			out, err := cachedTypeRequirement(av).eval(present, valueSource{list: alts})
			if out != typePass {
				problems = append(problems, typeReason(lookup, av, out, err, "flavor", alts))
			}
		}
	}
	return problems
}

// typeRequirementCache memoises ParseTypeRequirement like requirementCache.
var typeRequirementCache = struct {
	sync.RWMutex
	m map[string]TypeRequirement
}{m: map[string]TypeRequirement{}}

func cachedTypeRequirement(s string) TypeRequirement {
	typeRequirementCache.RLock()
	t, ok := typeRequirementCache.m[s]
	typeRequirementCache.RUnlock()
	if ok {
		return t
	}
	t = ParseTypeRequirement(s)
	typeRequirementCache.Lock()
	if len(typeRequirementCache.m) >= requirementCacheSize {
		clear(typeRequirementCache.m)
	}
	typeRequirementCache.m[s] = t
	typeRequirementCache.Unlock()
	return t
}

// flavorAlternatives are the values a flavor offers for a key in forced
// mode: the words of an "<or>" list, or the whole (stripped) value.
func flavorAlternatives(v string) []string {
	words := pycompat.Split(v)
	if len(words) > 0 && words[0] == OpOr {
		var alts []string
		for _, w := range words[1:] {
			if w != OpOr {
				alts = append(alts, w)
			}
		}
		return alts
	}
	return []string{pycompat.Strip(v)}
}

// typeReason phrases an outcome; "" for a pass. who is "aggregate" (normal
// mode: the candidates are the host's aggregate values) or "flavor" (forced
// mode: the candidates are the flavor's alternatives).
func typeReason(key, req string, out typeOutcome, err error, who string, vals []string) string {
	switch out {
	case typeMustLack:
		return key + ": must be absent ('!') but " + who + " values are " + hfFormatValues(vals)
	case typeMissing:
		if who == "flavor" {
			return key + ": the flavor lacks this key (the aggregate requires '" + req + "')"
		}
		return key + ": no aggregate of the host has this key (required by '" + req + "')"
	case typeLoneTilde:
		return key + ": '~' alone accepts only an absent key, but " + who + " values are " + hfFormatValues(vals)
	case typeNoMatch:
		return key + ": " + who + " values " + hfFormatValues(vals) + " do not satisfy '" + req + "'"
	case typeError:
		return key + ": '" + req + "' cannot be evaluated: " + err.Error()
	}
	return ""
}
