package scheduling

import "corral/models"

// ComputeFilter is nova's filter of that name
// (nova/scheduler/filters/compute_filter.py): a host whose nova-compute
// service is disabled fails, and so does one the servicegroup API holds
// down (forced down, or no heartbeat within service_down_time). corral
// reads "down" as Nova's os-services API reported it at the last sync; a
// host whose service corral does not know passes, saying so.
type ComputeFilter struct{}

// Name implements HostFilter.
func (ComputeFilter) Name() string { return models.FilterCompute }

// Filter implements HostFilter.
func (ComputeFilter) Filter(h *HostState, _ *Request) Verdict {
	if h == nil || h.Provider == nil || !h.Provider.Compute.ServiceKnown() {
		return Verdict{Passed: true, Reason: "the host's compute service is not known to corral (a sync reads it): taken as enabled and up"}
	}
	s := h.Provider.Compute
	switch {
	case s.Disabled():
		reason := "the host's compute service is disabled"
		if s.DisabledReason != "" {
			return Verdict{Reason: reason + ", reason: " + s.DisabledReason, Summary: reason}
		}
		return Verdict{Reason: reason}
	case s.ForcedDown:
		return Verdict{Reason: "the host's compute service is forced down"}
	case s.Down():
		reason := "the host's compute service has not been heard from in a while (down at the last sync)"
		if s.LastSeen != "" {
			return Verdict{Reason: reason + "; last heartbeat " + s.LastSeen, Summary: reason}
		}
		return Verdict{Reason: reason}
	}
	return Verdict{Passed: true, Reason: "the host's compute service is enabled and up"}
}
