package scheduling

import (
	"corral/models"

	"corral/models/pycompat"
)

// Weigher names, as nova.conf's weight_classes spells them.
const (
	WeigherSoftAffinity     = "ServerGroupSoftAffinityWeigher"
	WeigherSoftAntiAffinity = "ServerGroupSoftAntiAffinityWeigher"
)

// Aggregate metadata keys that override the weigher multipliers per host
// (nova/scheduler/utils.py get_weight_multiplier).
const (
	KeySoftAffinityMultiplier     = "soft_affinity_weight_multiplier"
	KeySoftAntiAffinityMultiplier = "soft_anti_affinity_weight_multiplier"
)

// What the pipeline must do with these weighers, as nova's weigh handler
// (nova/weights.py) does:
//  1. Weigh every host that passed the filters: raw = w.Weigh(h, r).
//  2. Normalise the raw weights of that weigher over those hosts with
//     NormalizeWeigherWeights: (raw - min) / (max - min), all 0 when every
//     raw weight is equal (always the case for a group of another policy).
//  3. Add multiplier × normalised to the host's total, where multiplier is
//     w.Multiplier(settings), or, when the weigher implements
//     HostWeightMultiplier, w.HostMultiplier(h, settings) (an aggregate may
//     override it per host). The highest total wins.
//  4. For a multi-create request, call r.ConsumeGroupHost(picked) after each
//     pick and weigh again for the next instance.

// HostWeightMultiplier is implemented by weighers whose multiplier an
// aggregate of the host may override.
type HostWeightMultiplier interface {
	HostMultiplier(h *HostState, s models.Settings) float64
}

// ServerGroupSoftAffinityWeigher prefers hosts with more members of a
// soft-affinity group: the raw weight is the host's member count.
type ServerGroupSoftAffinityWeigher struct{}

// Name implements Weigher.
func (ServerGroupSoftAffinityWeigher) Name() string { return WeigherSoftAffinity }

// Weigh implements Weigher.
func (ServerGroupSoftAffinityWeigher) Weigh(h *HostState, r *Request) float64 {
	return float64(groupMembersOn(h, r, models.PolicySoftAffinity))
}

// Multiplier implements Weigher.
func (ServerGroupSoftAffinityWeigher) Multiplier(s models.Settings) float64 {
	return s.SoftAffinityWeightMultiplier
}

// HostMultiplier implements HostWeightMultiplier.
func (w ServerGroupSoftAffinityWeigher) HostMultiplier(h *HostState, s models.Settings) float64 {
	return aggregateMultiplier(h, KeySoftAffinityMultiplier, w.Multiplier(s))
}

// ServerGroupSoftAntiAffinityWeigher prefers hosts with fewer members of a
// soft-anti-affinity group: the raw weight is minus the member count.
type ServerGroupSoftAntiAffinityWeigher struct{}

// Name implements Weigher.
func (ServerGroupSoftAntiAffinityWeigher) Name() string { return WeigherSoftAntiAffinity }

// Weigh implements Weigher.
func (ServerGroupSoftAntiAffinityWeigher) Weigh(h *HostState, r *Request) float64 {
	return -float64(groupMembersOn(h, r, models.PolicySoftAntiAffinity))
}

// Multiplier implements Weigher.
func (ServerGroupSoftAntiAffinityWeigher) Multiplier(s models.Settings) float64 {
	return s.SoftAntiAffinityWeightMultiplier
}

// HostMultiplier implements HostWeightMultiplier.
func (w ServerGroupSoftAntiAffinityWeigher) HostMultiplier(h *HostState, s models.Settings) float64 {
	return aggregateMultiplier(h, KeySoftAntiAffinityMultiplier, w.Multiplier(s))
}

// groupMembersOn counts the request group's members on h when the group has
// the given policy; 0 otherwise, as in nova.
func groupMembersOn(h *HostState, r *Request, policy string) int {
	if h == nil || h.Provider == nil || r == nil || r.Group == nil || r.Group.Policy != policy {
		return 0
	}
	return r.GroupHosts[hfHostName(h)]
}

// aggregateMultiplier is nova's get_weight_multiplier: the smallest of the
// raw (not comma-split) values of key among h's aggregates, or def when
// none has the key or one of them is not a number (nova logs a warning and
// falls back).
func aggregateMultiplier(h *HostState, key string, def float64) float64 {
	if h == nil {
		return def
	}
	found := false
	least := 0.0
	for _, a := range h.Aggregates {
		if a == nil {
			continue
		}
		v, ok := a.Metadata[key]
		if !ok {
			continue
		}
		f, ok := pycompat.ParseFloat(v)
		if !ok {
			return def
		}
		if !found || f < least {
			least = f
		}
		found = true
	}
	if !found {
		return def
	}
	return least
}
