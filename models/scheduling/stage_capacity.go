package scheduling

import "strings"

// StageCapacity names the allocation-candidate half of the placement
// stage where a page shows it as a stage of its own: the trace records a
// host without a candidate as failing placement, with a reason that says
// so (IsCapacityReason).
const StageCapacity = "capacity"

// capacityPrefix opens every capacity reason (capacity.explain).
const capacityPrefix = "no allocation candidate: "

// IsCapacityReason reports whether a placement reason is capacity's (no
// allocation candidate) rather than member_of's.
func IsCapacityReason(reason string) bool {
	return strings.Contains(reason, capacityPrefix)
}
