package console

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"corral/models"
	"corral/models/scheduling"
	cv "corral/views/console"
)

// This file is the glue between the pages and the scheduling package's
// rules: what a metadata key or extra spec means is decided there; here it
// only becomes messages next to the right field.

func isTenantKey(k string) bool { return scheduling.IsTenantKey(k) }

// specProblems checks a flavor's extra specs.
func specProblems(specs map[string]string, st models.Settings) []cv.Problem {
	return toProblems(scheduling.ValidateExtraSpecsFor(specs, st))
}

func toProblems(ps []scheduling.Problem) []cv.Problem {
	out := make([]cv.Problem, 0, len(ps))
	for _, p := range ps {
		out = append(out, cv.Problem{Key: p.Key, Message: upperFirst(p.Message) + ".", Warning: p.Severity != scheduling.SeverityError})
	}
	return out
}

// tenantKeyOrder sorts filter_tenant_id, filter_tenant_id2, …, filter_tenant_id10
// in the order people number them.
func tenantKeyOrder(a, b string) int {
	sa, sb := strings.TrimPrefix(a, scheduling.TenantKeyPrefix), strings.TrimPrefix(b, scheduling.TenantKeyPrefix)
	na, ea := strconv.Atoi(sa)
	nb, eb := strconv.Atoi(sb)
	switch {
	case sa == "" && sb == "":
		return 0
	case sa == "":
		return -1
	case sb == "":
		return 1
	case ea == nil && eb == nil:
		return na - nb
	case ea == nil:
		return -1
	case eb == nil:
		return 1
	}
	return strings.Compare(a, b)
}

func tenantKeys(md map[string]string) []string {
	var keys []string
	for k := range md {
		if isTenantKey(k) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, tenantKeyOrder)
	return keys
}

// tenantTags lists the projects an aggregate's tenant keys name, one tag
// per project, noting those in comma lists.
func tenantTags(md map[string]string) []cv.Tag {
	var out []cv.Tag
	for _, k := range tenantKeys(md) {
		parts := splitComma(md[k])
		for _, p := range parts {
			t := cv.Tag{Value: p, Key: k}
			if len(parts) > 1 {
				t.Note = "in a comma list: only the post-filter sees it"
			}
			out = append(out, t)
		}
	}
	return out
}

func splitComma(v string) []string { return scheduling.TenantProjects(v) }

func tagValues(ts []cv.Tag) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		if !slices.Contains(out, t.Value) {
			out = append(out, t.Value)
		}
	}
	return out
}

// tenantWarnings explains comma lists, which Placement's pre-filter cannot
// see (it matches a whole value against the project id).
func tenantWarnings(md map[string]string) []string {
	var out []string
	for _, k := range tenantKeys(md) {
		if len(splitComma(md[k])) > 1 {
			out = append(out, fmt.Sprintf("%s holds a comma list (%s): the AggregateMultiTenancyIsolation filter sees these projects, "+
				"but Placement's tenant pre-filter (limit_tenants_to_placement_aggregate) does not. Any change here rewrites it as one key per project; “Split into one key per project” does only that.", k, md[k]))
		} else if len(splitComma(md[k])) == 0 {
			out = append(out, fmt.Sprintf("%s is empty: it restricts these hosts to no project at all.", k))
		}
	}
	return out
}

// reservationIDs lists the reservation ids an aggregate is tagged with.
func reservationIDs(md map[string]string, prefix string) []string {
	return scheduling.ReservationTags(md, prefix)
}
