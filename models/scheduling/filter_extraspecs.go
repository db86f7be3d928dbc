package scheduling

import (
	"fmt"
	"sort"
	"strings"

	"corral/models"
)

// AggregateInstanceExtraSpecsFilter is nova's filter of the same name: every
// flavor extra spec that is unscoped or scoped "aggregate_instance_extra_specs:"
// must be satisfied by at least one value of the host's united aggregate
// metadata (HostAggregateMetadata). Keys with any other scope (hw:, trait:,
// resources:, ...) belong to other filters and are skipped.
type AggregateInstanceExtraSpecsFilter struct{}

// Name implements HostFilter.
func (AggregateInstanceExtraSpecsFilter) Name() string {
	return models.FilterAggregateInstanceExtraSpecs
}

// ExtraSpecAggregateKey maps a flavor extra-spec key to the aggregate
// metadata key nova's filter compares it with, or ok=false when the filter
// skips it. Like nova it splits at the first colon only, so
// "aggregate_instance_extra_specs:a:b" compares key "a:b", and the scope is
// case-sensitive.
func ExtraSpecAggregateKey(key string) (aggKey string, ok bool) {
	scope, rest, scoped := strings.Cut(key, ":")
	if !scoped {
		return key, true
	}
	if scope != ScopeExtra {
		return "", false
	}
	return rest, true
}

// Filter implements HostFilter. Unlike nova, which stops at the first
// failing key, it reports every failing key so that a person sees all that
// would have to change.
func (f AggregateInstanceExtraSpecsFilter) Filter(h *HostState, r *Request) Verdict {
	if r == nil || r.Flavor == nil || len(r.Flavor.ExtraSpecs) == 0 {
		return Verdict{Passed: true, Reason: "the flavor has no extra specs"}
	}
	var problems []string
	checked := false
	for key, spec := range r.Flavor.ExtraSpecs {
		aggKey, ok := ExtraSpecAggregateKey(key)
		if !ok {
			continue
		}
		checked = true
		if msg := checkExtraSpec(h, aggKey, spec); msg != "" {
			problems = append(problems, msg)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems) // each starts with its key
		return Verdict{Reason: strings.Join(problems, "; ")}
	}
	if !checked {
		return Verdict{Passed: true, Reason: "no extra spec is for this filter"}
	}
	return Verdict{Passed: true, Reason: "the aggregate metadata satisfies the flavor's extra specs"}
}

// checkExtraSpec returns why the values of aggregate key aggKey on h do not
// satisfy spec, or "" when they do. A value nova would crash on fails the
// host even if another value matches: nova's outcome would then depend on
// Python's set iteration order.
func checkExtraSpec(h *HostState, aggKey, spec string) string {
	req, err := cachedRequirement(spec)
	if err != nil {
		return fmt.Sprintf("%s: extra spec %q cannot be evaluated: %s", aggKey, spec, err.Error())
	}
	matched := false
	var bad string
	var badErr error
	present := eachHostValue(h, aggKey, func(v string) bool {
		ok, err := req.Match(v)
		if err != nil {
			bad, badErr = v, err
			return false
		}
		matched = matched || ok
		return true
	})
	switch {
	case !present:
		return fmt.Sprintf("%s: no aggregate of the host has this key (required by %q)", aggKey, spec)
	case badErr != nil:
		return fmt.Sprintf("%s: aggregate value %q cannot be compared with '%s': %s", aggKey, bad, spec, badErr.Error())
	case !matched:
		return fmt.Sprintf("%s: aggregate values %s do not satisfy '%s'", aggKey, hfFormatValues(hostValues(h, aggKey)), spec)
	}
	return ""
}
