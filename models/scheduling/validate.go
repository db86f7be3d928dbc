package scheduling

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"corral/models"
	"corral/models/pycompat"
)

// Problem is one finding about a metadata or extra-spec entry, for the
// console to show next to the field when an admin saves an aggregate or a
// flavor. Errors block saving; warnings explain a surprise.
type Problem struct {
	Key      string
	Severity string // SeverityError or SeverityWarning
	Message  string
}

// Problem severities.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Keys with a meaning of their own in aggregate metadata.
const (
	KeyAvailabilityZone = "availability_zone"
	// KeyBlazarReservation is Blazar's own aggregate key (reservation=<id>).
	KeyBlazarReservation = "reservation"
	traitKeyPrefix       = "trait:"
)

// nova's schema for aggregate metadata and flavor extra-spec keys
// (parameter_types.metadata): at most 255 of these characters; values at
// most 255 characters.
var metadataKeyRE = regexp.MustCompile(`^[a-zA-Z0-9-_:. ]{1,255}$`)

// traitNameRE is Placement's trait name syntax (standard and CUSTOM_ traits).
var traitNameRE = regexp.MustCompile(`^[A-Z0-9_]{1,255}$`)

type problems []Problem

func (ps *problems) add(key, sev, format string, args ...any) {
	*ps = append(*ps, Problem{Key: key, Severity: sev, Message: fmt.Sprintf(format, args...)})
}

func (ps *problems) checkSyntax(key, value, what string) bool {
	if !metadataKeyRE.MatchString(key) {
		if key == "" {
			ps.add(key, SeverityError, "%s keys must not be empty", what)
		} else {
			ps.add(key, SeverityError, "%s keys may hold only letters, digits, '-', '_', ':', '.' and spaces, at most 255 (nova rejects %q)", what, key)
		}
		return false
	}
	if n := len([]rune(value)); n > 255 {
		ps.add(key, SeverityError, "values may be at most 255 characters long (this one has %d)", n)
	}
	return true
}

func filterEnabled(s models.Settings, name string) bool {
	return slices.Contains(s.EnabledFilters, name)
}

// ValidateAggregateMetadata checks an aggregate's metadata as the console
// saves it, against the settings that give keys their meaning. Problems are
// ordered by key.
func ValidateAggregateMetadata(md map[string]string, s models.Settings) []Problem {
	var ps problems
	forced := false
	for _, piece := range strings.Split(md[KeyForceMetadataCheck], ",") {
		forced = forced || strings.EqualFold(pycompat.Strip(piece), "true")
	}
	for _, key := range hfSortedKeys(md) {
		v := md[key]
		if !ps.checkSyntax(key, v, "metadata") {
			continue
		}
		special := true
		switch {
		case key == KeyForceMetadataCheck:
			checkForceKey(&ps, key, v, s)
		case IsTenantKey(key):
			checkTenantKey(&ps, key, v, s)
		case key == KeyAvailabilityZone:
			checkAZKey(&ps, key, v)
		case strings.HasPrefix(key, traitKeyPrefix):
			checkAggregateTrait(&ps, key, v, s)
		case s.RequiredMemberPrefix != "" && strings.HasPrefix(key, s.RequiredMemberPrefix),
			s.DefaultForbiddenMemberPrefix != "" && strings.HasPrefix(key, s.DefaultForbiddenMemberPrefix):
			checkReservationKey(&ps, key, s)
		case key == KeySoftAffinityMultiplier || key == KeySoftAntiAffinityMultiplier:
			if f, ok := pycompat.ParseFloat(v); !ok {
				ps.add(key, SeverityWarning, "%q is not a number: nova ignores it and uses the configured multiplier", v)
			} else if f < 0 {
				ps.add(key, SeverityWarning, "a negative multiplier turns the soft policy around for these hosts")
			}
		default:
			special = false
		}
		if key == KeyBlazarReservation && s.RequiredMemberPrefix != "" {
			ps.add(key, SeverityWarning, "Blazar's convention reservation=<id> is not what corral's reservation filter reads; it looks for keys %s<id>", s.RequiredMemberPrefix)
		}
		if rest, ok := strings.CutPrefix(key, ScopeExtra+":"); ok {
			ps.add(key, SeverityWarning, "AggregateInstanceExtraSpecsFilter strips the scope from flavor keys, not from aggregate keys: name this key %q", rest)
		}
		if key == KeyForceMetadataCheck {
			continue
		}
		if forced {
			if special {
				ps.add(key, SeverityWarning, "with force_metadata_check=True, AggregateInstanceTypeFilter also requires every flavor to carry this key")
			}
			checkForcedValue(&ps, key, v)
		} else if !special {
			checkLiteralValue(&ps, key, v)
		}
	}
	return ps
}

func checkForceKey(ps *problems, key, v string, s models.Settings) {
	switch t := pycompat.Strip(v); {
	case strings.EqualFold(t, "true"):
		if !filterEnabled(s, models.FilterAggregateInstanceType) {
			ps.add(key, SeverityWarning, "only AggregateInstanceTypeFilter reads this key, and it is not enabled")
		}
	case strings.EqualFold(t, "false"):
	default:
		ps.add(key, SeverityError, "must be True or False, not %q", v)
	}
}

func checkTenantKey(ps *problems, key, v string, s models.Settings) {
	pieces := strings.Split(v, ",")
	switch {
	case pycompat.Strip(v) == "":
		ps.add(key, SeverityWarning, "an empty project admits no project at all: the hosts of this aggregate accept nobody")
		return
	case len(pieces) > 1:
		msg := "comma list: AggregateMultiTenancyIsolation sees each project, but Placement's pre-filter matches the whole value to one project; put one project per %s<suffix> key"
		if s.LimitTenantsToPlacementAggregate {
			msg += " (limit_tenants_to_placement_aggregate is on: none of these projects is sent to this aggregate)"
		}
		ps.add(key, SeverityWarning, msg, TenantKeyPrefix)
	case pycompat.Strip(v) != v:
		ps.add(key, SeverityWarning, "surrounding spaces: the post-filter strips them, Placement's pre-filter does not")
	}
	for _, p := range pieces {
		if pycompat.Strip(p) == "" && len(pieces) > 1 {
			ps.add(key, SeverityWarning, "the comma list has an empty entry")
			break
		}
	}
}

func checkAZKey(ps *problems, key, v string) {
	switch {
	case v == "":
		ps.add(key, SeverityError, "nova does not support an empty availability zone name")
	case strings.Contains(v, ":"):
		ps.add(key, SeverityError, "availability zone names may not contain ':'")
	case pycompat.Strip(v) != v:
		ps.add(key, SeverityError, "availability zone names may not start or end with spaces")
	default:
		ps.add(key, SeverityWarning, "set the availability zone with the aggregate's availability zone field; this key counts only while the field is empty")
	}
}

func checkAggregateTrait(ps *problems, key, v string, s models.Settings) {
	name := strings.TrimPrefix(key, traitKeyPrefix)
	if !traitNameRE.MatchString(name) {
		ps.add(key, SeverityError, "%q is not a trait name: upper-case letters, digits and '_' (custom traits start with CUSTOM_)", name)
		return
	}
	if v != "required" {
		ps.add(key, SeverityWarning, "isolated-aggregate filtering honours only the value 'required'; with %q this key has no effect", v)
		return
	}
	if !s.EnableIsolatedAggregateFiltering {
		ps.add(key, SeverityWarning, "enable_isolated_aggregate_filtering is off, so this key keeps no request out")
	}
}

func checkReservationKey(ps *problems, key string, s models.Settings) {
	for _, prefix := range []string{s.RequiredMemberPrefix, s.DefaultForbiddenMemberPrefix} {
		if prefix == "" || !strings.HasPrefix(key, prefix) {
			continue
		}
		id := key[len(prefix):]
		if strings.TrimSpace(id) == "" {
			ps.add(key, SeverityError, "a reservation key needs an id after %q", prefix)
			return
		}
		if strings.TrimSpace(id) != id {
			ps.add(key, SeverityWarning, "the reservation id %q has surrounding spaces; flavors must repeat them exactly", id)
			return
		}
	}
}

// checkForcedValue checks a value that AggregateInstanceTypeFilter reads as a
// requirement (force_metadata_check=True): each comma piece is one.
func checkForcedValue(ps *problems, key, v string) {
	for _, piece := range strings.Split(v, ",") {
		piece = pycompat.Strip(piece)
		t := ParseTypeRequirement(piece)
		if err := t.Err(); err != nil {
			ps.add(key, SeverityError, "%s", err.Error())
			continue
		}
		if !t.Or && !t.Any && !t.Opt && !t.Absent {
			if _, err := ParseRequirement(piece); err != nil {
				ps.add(key, SeverityError, "%s", err.Error())
			}
		}
	}
}

// checkLiteralValue warns about operators and sentinels in a value that is
// compared literally (no force_metadata_check).
func checkLiteralValue(ps *problems, key, v string) {
	for _, piece := range strings.Split(v, ",") {
		piece = pycompat.Strip(piece)
		words := pycompat.Split(piece)
		if len(words) == 0 {
			continue
		}
		if IsExtraSpecOp(words[0]) || piece == SentinelAny || piece == SentinelOptional || piece == SentinelAbsent {
			ps.add(key, SeverityWarning, "aggregate values are compared literally: %q is not read as an operator or sentinel unless force_metadata_check is True", piece)
			return
		}
	}
}

// ValidateExtraSpecsFor checks a flavor's extra specs: the operator syntax
// the aggregate filters read, seed 003's sentinels, trait and reservation
// keys. The settings say which filters run and the reservation prefix.
// Problems are ordered by key.
func ValidateExtraSpecsFor(specs map[string]string, s models.Settings) []Problem {
	var ps problems
	extraOn := filterEnabled(s, models.FilterAggregateInstanceExtraSpecs)
	for _, key := range hfSortedKeys(specs) {
		v := specs[key]
		if !ps.checkSyntax(key, v, "extra spec") {
			continue
		}
		scope, rest, scoped := strings.Cut(key, ":")
		switch {
		case scoped && scope == ScopeExtra && rest == "":
			ps.add(key, SeverityError, "the scope %s: needs a key after it", ScopeExtra)
			continue
		case scoped && scope != ScopeExtra && strings.EqualFold(scope, ScopeExtra):
			ps.add(key, SeverityWarning, "the scope is case-sensitive: AggregateInstanceExtraSpecsFilter skips this key (write %s:)", ScopeExtra)
		case key == KeyForceMetadataCheck || rest == KeyForceMetadataCheck && scope == ScopeExtra:
			ps.add(key, SeverityWarning, "force_metadata_check belongs in aggregate metadata; in a flavor no aggregate can satisfy it")
			continue
		case scope == "trait" && scoped:
			checkFlavorTrait(&ps, key, rest, v)
			continue
		case isResourcesKey(key):
			checkFlavorResource(&ps, key, v)
			continue
		case isNumberedTraitKey(key):
			checkFlavorTrait(&ps, key, rest, v)
			continue
		case key == "group_policy":
			if v != "none" && v != "isolate" {
				ps.add(key, SeverityError, "group_policy is 'none' or 'isolate', not %q", v)
			}
			continue
		case s.RequiredMemberPrefix != "" && strings.HasPrefix(key, s.RequiredMemberPrefix):
			if strings.TrimSpace(key[len(s.RequiredMemberPrefix):]) == "" {
				ps.add(key, SeverityError, "a reservation key needs an id after %q", s.RequiredMemberPrefix)
			}
			continue
		}
		if _, ok := ExtraSpecAggregateKey(key); ok {
			checkOperatorValue(&ps, key, v)
		}
		checkSentinels(&ps, key, v, extraOn)
	}
	return ps
}

func checkFlavorTrait(ps *problems, key, name, v string) {
	if !traitNameRE.MatchString(name) {
		ps.add(key, SeverityError, "%q is not a trait name: upper-case letters, digits and '_' (custom traits start with CUSTOM_)", name)
	}
	if v != "required" && v != "forbidden" {
		ps.add(key, SeverityError, "a trait extra spec is 'required' or 'forbidden', not %q", v)
	}
}

// checkOperatorValue checks a value AggregateInstanceExtraSpecsFilter reads.
func checkOperatorValue(ps *problems, key, v string) {
	r, err := ParseRequirement(v)
	if err != nil {
		ps.add(key, SeverityError, "%s", err.Error())
		return
	}
	if ign := r.Ignored(); len(ign) > 0 {
		if r.Op == OpOr {
			ps.add(key, SeverityWarning, "alternatives must be separated by '<or>': nova skips %s as separators", hfFormatValues(ign))
		} else {
			ps.add(key, SeverityWarning, "'%s' takes one operand: nova ignores %s", r.Op, hfFormatValues(ign))
		}
	}
	if r.Op != "" {
		return
	}
	words := pycompat.Split(v)
	switch {
	case len(words) > 1 && looksLikeOp(words[0]):
		ps.add(key, SeverityWarning, "%q is not an operator (operators are case-sensitive; there is no numeric > or <): the whole value is compared as a string", words[0])
	case v != pycompat.Strip(v) && pycompat.Strip(v) != "":
		ps.add(key, SeverityWarning, "surrounding spaces: aggregate values are stripped, so this value can never match")
	case strings.Contains(v, ","):
		ps.add(key, SeverityWarning, "aggregate values are split at commas, so a value with a comma can never match; use '<or> a <or> b'")
	}
}

// looksLikeOp reports a first word that was probably meant as an operator.
func looksLikeOp(w string) bool {
	for op := range extraSpecOps {
		if strings.EqualFold(w, op) {
			return true
		}
	}
	return strings.Trim(w, "<>=!") == "" || (len(w) > 1 && w[0] == 's' && strings.Trim(w[1:], "<>=!") == "")
}

// checkSentinels checks seed 003's sentinels in a flavor value.
func checkSentinels(ps *problems, key, v string, extraOn bool) {
	t := ParseTypeRequirement(v)
	if !t.Any && !t.Opt && !t.Absent {
		return
	}
	if err := t.Err(); err != nil {
		ps.add(key, SeverityError, "%s", err.Error())
		return
	}
	if _, ok := ExtraSpecAggregateKey(key); ok && extraOn {
		ps.add(key, SeverityWarning, "sentinels (*, ~, !) mean something only to AggregateInstanceTypeFilter; AggregateInstanceExtraSpecsFilter compares them literally")
	}
}
