package scheduling

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"corral/models"
	"corral/models/pycompat"
)

// The host filters of nova/scheduler/filters that read only what corral
// holds: a host's zone aggregates, its instances, a request's scheduler
// hints (nova 26.0.0 … 33.0.0). IoOpsFilter is not among them: Nova's
// scheduler counts its own recent picks into a host's I/O ops until the
// compute next reports, which no API shows.

// KeyMaxInstancesPerHost is the aggregate metadata key of
// AggregateNumInstancesFilter's limit.
const KeyMaxInstancesPerHost = "max_instances_per_host"

// AvailabilityZoneFilter is nova's deprecated zone filter: with a zone
// requested, a host passes when one of its zone aggregates names it (a
// comma list counts each item), or, in no zone aggregate, when the zone
// is default_availability_zone.
type AvailabilityZoneFilter struct{}

// Name implements HostFilter.
func (AvailabilityZoneFilter) Name() string { return models.FilterAvailabilityZone }

// Filter implements HostFilter.
func (AvailabilityZoneFilter) Filter(h *HostState, r *Request) Verdict {
	if r == nil || r.AvailabilityZone == "" {
		return Verdict{Passed: true, Reason: "no availability zone requested"}
	}
	// aggregate_metadata_get_by_host(key="availability_zone"): every
	// value of the aggregates carrying the key, split at commas (the
	// zone field where corral's world holds it without the key).
	var zones []string
	if h != nil {
		for _, a := range h.Aggregates {
			if a == nil {
				continue
			}
			v, ok := a.Metadata[KeyAvailabilityZone]
			if !ok && a.AvailabilityZone != nil {
				v, ok = *a.AvailabilityZone, true
			}
			if ok {
				eachPiece(v, func(z string) bool { zones = append(zones, z); return true })
			}
		}
	}
	if len(zones) == 0 {
		def := r.Settings.DefaultAvailabilityZone
		if r.AvailabilityZone == def {
			return Verdict{Passed: true, Reason: fmt.Sprintf("in no zone aggregate: the host is in default_availability_zone %s", def)}
		}
		return Verdict{Reason: fmt.Sprintf("zone %s requested; the host is in no zone aggregate, so in default_availability_zone %s", r.AvailabilityZone, def),
			Summary: fmt.Sprintf("zone %s requested; the host is in the default zone", r.AvailabilityZone)}
	}
	if slices.Contains(zones, r.AvailabilityZone) {
		return Verdict{Passed: true, Reason: "the host is in zone " + r.AvailabilityZone}
	}
	return Verdict{Reason: fmt.Sprintf("zone %s requested; the host's zone aggregates say %s", r.AvailabilityZone, hfFormatValues(hfSortedUnique(zones))),
		Summary: fmt.Sprintf("zone %s requested; the host is in another zone", r.AvailabilityZone)}
}

// NumInstancesFilter: a host with max_instances_per_host instances (this
// request's earlier ones counted) takes no more.
type NumInstancesFilter struct{}

// AggregateNumInstancesFilter is NumInstancesFilter with the smallest
// max_instances_per_host of the host's aggregates, where one sets it.
type AggregateNumInstancesFilter struct{}

// Name implements HostFilter.
func (NumInstancesFilter) Name() string { return models.FilterNumInstances }

// Name implements HostFilter.
func (AggregateNumInstancesFilter) Name() string { return models.FilterAggregateNumInstances }

// Filter implements HostFilter.
func (NumInstancesFilter) Filter(h *HostState, r *Request) Verdict {
	return numInstancesVerdict(h, r, r.Settings.MaxInstancesPerHost, "max_instances_per_host")
}

// Filter implements HostFilter.
func (AggregateNumInstancesFilter) Filter(h *HostState, r *Request) Verdict {
	limit, where := aggregateLimit(h, KeyMaxInstancesPerHost, r.Settings.MaxInstancesPerHost)
	return numInstancesVerdict(h, r, limit, where)
}

// The filters that read a multi-create's earlier instances, and that
// Nova runs again for each instance (no run_filter_once_per_request).
func (NumInstancesFilter) readsUse() bool          { return true }
func (AggregateNumInstancesFilter) readsUse() bool { return true }

func numInstancesVerdict(h *HostState, r *Request, limit float64, where string) Verdict {
	n := int64(h.instances()) + r.use(h).instances
	if float64(n) < limit {
		return Verdict{Passed: true, Reason: fmt.Sprintf("%d instances, fewer than %s %s", n, where, pyFloatOrInt(limit))}
	}
	return Verdict{Reason: fmt.Sprintf("the host has %d instances; %s is %s", n, where, pyFloatOrInt(limit)),
		Summary: "the host has as many instances as " + where + " allows"}
}

// aggregateLimit is validate_num_values(aggregate_values_from_key(key),
// def, int): the smallest of the host's aggregates' values, or def when
// none sets it or a value is no int (Nova logs it and keeps the default).
func aggregateLimit(h *HostState, key string, def float64) (float64, string) {
	if h == nil {
		return def, key
	}
	var vals []string // a set, as Nova's: whole values, not split
	for _, a := range h.Aggregates {
		if a == nil {
			continue
		}
		if v, ok := a.Metadata[key]; ok && !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return def, key
	}
	least := int64(0)
	for i, v := range vals {
		n, ok := pyInt(v)
		if !ok {
			return def, fmt.Sprintf("%s (an aggregate's %s=%q is no integer: Nova keeps the default)", key, key, v)
		}
		if i == 0 || n < least {
			least = n
		}
	}
	return float64(least), "the host's aggregate " + key
}

// pyInt is Python's int() of a string: surrounding space, a sign, digits
// with single underscores between them.
func pyInt(s string) (int64, bool) {
	s = pycompat.Strip(s)
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" || strings.HasPrefix(digits, "_") || strings.HasSuffix(digits, "_") || strings.Contains(digits, "__") {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:len(s)-len(digits)]+strings.ReplaceAll(digits, "_", ""), 10, 64)
	return n, err == nil
}

// SameHostFilter: with the same_host hint, a host passes when it runs one
// of the servers the hint names.
type SameHostFilter struct{}

// DifferentHostFilter: with the different_host hint, a host passes when it
// runs none of the servers the hint names.
type DifferentHostFilter struct{}

// Name implements HostFilter.
func (SameHostFilter) Name() string { return models.FilterSameHost }

// Name implements HostFilter.
func (DifferentHostFilter) Name() string { return models.FilterDifferentHost }

// Filter implements HostFilter.
func (SameHostFilter) Filter(h *HostState, r *Request) Verdict {
	if r == nil || r.SameHost == nil {
		return Verdict{Passed: true, Reason: "no same_host hint"}
	}
	if on := r.SameHost[hfHostName(h)]; len(on) > 0 {
		return Verdict{Passed: true, Reason: "the host runs " + strings.Join(on, ", ") + " (same_host)"}
	}
	return Verdict{Reason: "the host runs none of the same_host servers"}
}

// Filter implements HostFilter.
func (DifferentHostFilter) Filter(h *HostState, r *Request) Verdict {
	if r == nil || r.DifferentHost == nil {
		return Verdict{Passed: true, Reason: "no different_host hint"}
	}
	if on := r.DifferentHost[hfHostName(h)]; len(on) > 0 {
		return Verdict{Reason: "the host runs " + strings.Join(on, ", ") + " (different_host)", Summary: "the host runs a different_host server"}
	}
	return Verdict{Passed: true, Reason: "the host runs none of the different_host servers"}
}
