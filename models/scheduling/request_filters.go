package scheduling

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"corral/models"
	"corral/models/placement"
)

// Request filter names, as nova's request_filter.py names its functions
// (the reservation filter is seed 000's "Developer impact" flow).
const (
	RequestFilterTenant      = "require_tenant_aggregate"
	RequestFilterAZ          = "map_az_to_placement_aggregate"
	RequestFilterReservation = "reservation_aggregates"
	RequestFilterIsolate     = "isolate_aggregates"
)

// RequestFilterStep is what one request filter did: the Placement terms it
// added (Effect, "" when none) and why, for a person.
type RequestFilterStep struct {
	Name   string `json:"name"`
	Effect string `json:"effect"`
	Detail string `json:"detail"`
}

// requestFilterOutcome is the request filters' combined result. Failure is
// set when the request cannot be scheduled at all (nova's
// RequestFilterFailed → NoValidHost), with the stage that said so.
type requestFilterOutcome struct {
	steps     []RequestFilterStep
	terms     placement.Terms
	failStage string
	failure   string
}

// runRequestFilters turns the request into Placement terms, in nova's order.
func (s *Snapshot) runRequestFilters(r *Request) requestFilterOutcome {
	var out requestFilterOutcome
	st := r.Settings
	fail := func(stage, msg string) {
		if out.failure == "" {
			out.failStage, out.failure = stage, msg
		}
	}
	require := func(aggs []int32) string {
		uuids := make([]string, len(aggs))
		for i, a := range aggs {
			uuids[i] = s.ix.Aggregate(int(a)).UUID
		}
		t := placement.Terms{Required: [][]string{uuids}}
		out.terms = out.terms.And(t)
		return "member_of=" + t.Values()[0]
	}
	var forbidden []int32 // sorted and deduplicated at the end

	// require_tenant_aggregate
	step := RequestFilterStep{Name: RequestFilterTenant}
	switch aggs := s.tenantAggs[r.ProjectID]; {
	case !st.LimitTenantsToPlacementAggregate:
		step.Detail = "off (limit_tenants_to_placement_aggregate is false)"
	case len(aggs) > 0:
		step.Effect = require(aggs)
		step.Detail = fmt.Sprintf("project %s is the filter_tenant_id* value of %s", r.ProjectID, s.aggNames(aggs))
	case st.PlacementAggregateRequiredForTenants:
		step.Detail = fmt.Sprintf("no aggregate has a filter_tenant_id* key whose value is %q, and placement_aggregate_required_for_tenants is true", r.ProjectID)
		fail(RequestFilterTenant, fmt.Sprintf("no hosts available for tenant %s: no aggregate has a filter_tenant_id* key whose value is %q", r.ProjectID, r.ProjectID))
	default:
		step.Detail = fmt.Sprintf("no aggregate is tagged for project %q; the project is not restricted", r.ProjectID)
	}
	out.steps = append(out.steps, step)

	// map_az_to_placement_aggregate
	step = RequestFilterStep{Name: RequestFilterAZ}
	switch aggs := s.azAggs[r.AvailabilityZone]; {
	case !st.QueryPlacementForAvailabilityZone:
		step.Detail = "off (query_placement_for_availability_zone is false)"
	case r.AvailabilityZone == "":
		step.Detail = "no availability zone requested"
	case len(aggs) > 0:
		step.Effect = require(aggs)
		step.Detail = fmt.Sprintf("availability zone %s is %s", r.AvailabilityZone, s.aggNames(aggs))
	default:
		// nova adds nothing and does not fail here.
		step.Detail = fmt.Sprintf("no aggregate has availability zone %q; nothing added", r.AvailabilityZone)
	}
	out.steps = append(out.steps, step)

	// reservations (seed 000)
	step, reserved := s.reservationStep(r, require, fail)
	forbidden = append(forbidden, reserved...)
	out.steps = append(out.steps, step)

	// isolate_aggregates
	step = RequestFilterStep{Name: RequestFilterIsolate}
	if !st.EnableIsolatedAggregateFiltering {
		step.Detail = "off (enable_isolated_aggregate_filtering is false)"
	} else {
		var aggs []int32
		for _, ia := range s.isolating {
			for _, k := range ia.keys {
				if r.Flavor.ExtraSpecs[k] != "required" {
					aggs = append(aggs, ia.agg)
					break
				}
			}
		}
		forbidden = append(forbidden, aggs...)
		if len(aggs) > 0 {
			step.Effect = "member_of=" + placement.Terms{Forbidden: s.uuids(aggs)}.Values()[0]
			step.Detail = fmt.Sprintf("the flavor does not require every trait:<T>=required of %s", s.aggNames(aggs))
		} else {
			step.Detail = "no isolated aggregate excludes this flavor"
		}
	}
	out.steps = append(out.steps, step)

	if len(forbidden) > 0 {
		slices.Sort(forbidden)
		out.terms = out.terms.And(placement.Terms{Forbidden: s.uuids(slices.Compact(forbidden))})
	}
	return out
}

// reservationStep is seed 000's reservation filter: each flavor key with
// the required-member prefix requires the aggregates carrying that key, and
// without one the default-forbidden prefix's aggregates are forbidden. It
// returns the step and the aggregates it forbids.
func (s *Snapshot) reservationStep(r *Request, require func([]int32) string, fail func(stage, msg string)) (RequestFilterStep, []int32) {
	step := RequestFilterStep{Name: RequestFilterReservation}
	st := r.Settings
	var forbidden []int32
	var notes []string
	flavorKeys := slices.Sorted(maps.Keys(r.Flavor.ExtraSpecs))
	if p := st.RequiredMemberPrefix; p != "" {
		for _, k := range flavorKeys {
			if !strings.HasPrefix(k, p) {
				continue
			}
			var aggs []int32
			for a := 0; a < s.ix.NumAggregates(); a++ {
				if _, ok := s.ix.Aggregate(a).Metadata[k]; ok {
					aggs = append(aggs, int32(a))
				}
			}
			if len(aggs) == 0 {
				notes = append(notes, fmt.Sprintf("flavor key %s is carried by no aggregate", k))
				fail(RequestFilterReservation, fmt.Sprintf("no hosts available for reservation %s: no aggregate carries that key", k))
				continue
			}
			eff := require(aggs)
			step.Effect = joinEffect(step.Effect, eff)
			notes = append(notes, fmt.Sprintf("flavor key %s requires %s", k, s.aggNames(aggs)))
		}
	}
	if p := st.DefaultForbiddenMemberPrefix; p != "" {
		explicit := ""
		for _, k := range flavorKeys {
			if strings.HasPrefix(k, p) {
				explicit = k
				break
			}
		}
		if explicit != "" {
			notes = append(notes, fmt.Sprintf("flavor key %s names a reservation, so no %s aggregate is forbidden", explicit, p))
		} else {
			aggs, note, effect := s.forbiddenByPrefix(p)
			forbidden = append(forbidden, aggs...)
			notes = append(notes, note)
			if effect != "" {
				step.Effect = joinEffect(step.Effect, effect)
			}
		}
	}
	if st.RequiredMemberPrefix == "" && st.DefaultForbiddenMemberPrefix == "" {
		notes = append(notes, "off (both reservation prefixes are empty)")
	}
	step.Detail = strings.Join(notes, "; ")
	return step, forbidden
}

// isolatingAggregate is an aggregate with trait:<T>=required keys.
type isolatingAggregate struct {
	agg  int32
	keys []string
}

func isolatingAggregates(s *Snapshot) []isolatingAggregate {
	var out []isolatingAggregate
	for a := 0; a < s.ix.NumAggregates(); a++ {
		var keys []string
		for k, v := range s.ix.Aggregate(a).Metadata {
			if strings.HasPrefix(k, "trait:") && v == "required" {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			out = append(out, isolatingAggregate{int32(a), keys})
		}
	}
	return out
}

// prefixCacheSize bounds the key prefixes whose aggregates a snapshot
// remembers: the world's reservation prefix and a few overrides.
const prefixCacheSize = 16

// aggregatesWithKeyPrefix lists, in order, the aggregates with a metadata
// key starting with prefix. Do not modify the answer.
// forbiddenByPrefix is the reservation filter's default: the aggregates
// with a key starting with prefix, the note saying so and the member_of
// effect, the same for every request on the snapshot (kept beside the
// aggregates: hundreds of them make the texts costly).
func (s *Snapshot) forbiddenByPrefix(prefix string) (aggs []int32, note, effect string) {
	s.prefixAggs.mu.Lock()
	t, ok := s.prefixAggs.texts[prefix]
	s.prefixAggs.mu.Unlock()
	aggs = s.aggregatesWithKeyPrefix(prefix)
	if ok {
		return aggs, t[0], t[1]
	}
	if len(aggs) > 0 {
		note = fmt.Sprintf("the flavor has no %s key, so %s are forbidden", prefix, s.aggNames(aggs))
		effect = "member_of=" + placement.Terms{Forbidden: s.uuids(aggs)}.Values()[0]
	} else {
		note = fmt.Sprintf("no aggregate carries a %s key", prefix)
	}
	s.prefixAggs.mu.Lock()
	if s.prefixAggs.texts == nil || len(s.prefixAggs.texts) >= prefixCacheSize {
		s.prefixAggs.texts = map[string][2]string{}
	}
	s.prefixAggs.texts[prefix] = [2]string{note, effect}
	s.prefixAggs.mu.Unlock()
	return aggs, note, effect
}

func (s *Snapshot) aggregatesWithKeyPrefix(prefix string) []int32 {
	s.prefixAggs.mu.Lock()
	aggs, ok := s.prefixAggs.m[prefix]
	s.prefixAggs.mu.Unlock()
	if ok {
		return aggs
	}
	for a := 0; a < s.ix.NumAggregates(); a++ {
		for k := range s.ix.Aggregate(a).Metadata {
			if strings.HasPrefix(k, prefix) {
				aggs = append(aggs, int32(a))
				break
			}
		}
	}
	s.prefixAggs.mu.Lock()
	if s.prefixAggs.m == nil || len(s.prefixAggs.m) >= prefixCacheSize {
		s.prefixAggs.m = map[string][]int32{}
	}
	s.prefixAggs.m[prefix] = aggs
	s.prefixAggs.mu.Unlock()
	return aggs
}

func joinEffect(a, b string) string {
	if a == "" {
		return b
	}
	return a + "&" + b
}

func (s *Snapshot) uuids(aggs []int32) []string {
	out := make([]string, len(aggs))
	for i, a := range aggs {
		out[i] = s.ix.Aggregate(int(a)).UUID
	}
	return out
}

// aggNames names a few aggregates for a person ("aggregate aggA",
// "aggregates aggA, aggB and 40 more").
func (s *Snapshot) aggNames(aggs []int32) string {
	const show = 5
	names := make([]string, 0, min(len(aggs), show))
	for i, a := range aggs {
		if i == show {
			break
		}
		names = append(names, s.ix.Aggregate(int(a)).Name)
	}
	txt := strings.Join(names, ", ")
	if len(aggs) > show {
		txt += fmt.Sprintf(" and %d more", len(aggs)-show)
	}
	if len(aggs) == 1 {
		return "aggregate " + txt
	}
	return "aggregates " + txt
}

// placementQuery renders the query string nova would send to GET
// /allocation_candidates: the flavor's resources and required traits, and
// the member_of terms, parameters sorted as nova's to_querystring sorts
// them. It is shown unescaped so that a person can read it.
func placementQuery(f *models.Flavor, unnumbered []string, groups map[string]placement.Terms) string {
	type kv struct{ k, v string }
	var params []kv
	res := map[string]int{}
	if f.VCPUs > 0 {
		res["VCPU"] = f.VCPUs
	}
	if f.RAMMB > 0 {
		res["MEMORY_MB"] = f.RAMMB
	}
	if f.DiskGB > 0 {
		res["DISK_GB"] = f.DiskGB
	}
	var req, forb []string
	for k, v := range f.ExtraSpecs {
		if rc, ok := strings.CutPrefix(k, "resources:"); ok {
			if n, err := strconv.Atoi(v); err == nil {
				if n > 0 {
					res[rc] = n
				} else {
					delete(res, rc)
				}
			}
		}
		if t, ok := strings.CutPrefix(k, "trait:"); ok {
			switch v {
			case "required":
				req = append(req, t)
			case "forbidden":
				forb = append(forb, t)
			}
		}
	}
	if len(res) > 0 {
		parts := make([]string, 0, len(res))
		for rc, n := range res {
			parts = append(parts, fmt.Sprintf("%s:%d", rc, n))
		}
		sort.Strings(parts)
		params = append(params, kv{"resources", strings.Join(parts, ",")})
	}
	if len(req)+len(forb) > 0 {
		sort.Strings(req)
		sort.Strings(forb)
		for _, t := range forb {
			req = append(req, "!"+t)
		}
		params = append(params, kv{"required", strings.Join(req, ",")})
	}
	for _, v := range unnumbered {
		params = append(params, kv{"member_of", v})
	}
	for _, suffix := range slices.Sorted(maps.Keys(groups)) {
		for _, v := range groups[suffix].Values() {
			params = append(params, kv{"member_of" + suffix, v})
		}
	}
	sort.SliceStable(params, func(i, j int) bool {
		if params[i].k != params[j].k {
			return params[i].k < params[j].k
		}
		return params[i].v < params[j].v
	})
	parts := make([]string, len(params))
	for i, p := range params {
		parts[i] = p.k + "=" + p.v
	}
	return strings.Join(parts, "&")
}
