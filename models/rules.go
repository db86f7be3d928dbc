package models

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Rules every door obeys. The store runs them inside its write transaction;
// adapters only word the refusals in their API's dialect.

// FreePoolName is Blazar's default name for its free pool aggregate
// ([nova] aggregate_freepool_name); its reservation id is the same word.
const FreePoolName = "freepool"

// CheckGroupRules is Nova's rule for a server group's rules: only
// anti-affinity takes rules, the only rule is max_server_per_host and its
// value is at least 1.
func CheckGroupRules(policy string, rules map[string]int) *Error {
	for _, k := range slices.Sorted(maps.Keys(rules)) {
		if policy != PolicyAntiAffinity {
			return E(Invalid, "rules", "Only anti-affinity policy supports rules.")
		}
		if k != RuleMaxServerPerHost {
			return E(Invalid, "rules", "unknown rule %q (only %s)", k, RuleMaxServerPerHost)
		}
		if v := rules[k]; v < 1 {
			return E(Invalid, "rules", "%s must be at least 1, not %d", k, v)
		}
	}
	return nil
}

// ZoneMembership says that a provider is a member of an aggregate in zone.
type ZoneMembership struct {
	Provider string // uuid
	Name     string // the provider's name, for messages
	Zone     string
}

// ZoneConflict is Nova's is_safe_to_update_az refusal: a host may be in at
// most one availability zone.
type ZoneConflict struct {
	Hosts []string // names of the hosts that would be in several zones
	Zones []string // the zones they would be in, other than the one asked for
}

func (z *ZoneConflict) Error() string {
	return fmt.Sprintf("host(s) %s would be in several availability zones: already in %s",
		strings.Join(z.Hosts, ", "), strings.Join(z.Zones, ", "))
}

// CheckZones applies the zone rule to the memberships of some providers in
// aggregates that have a zone. wanted is the zone of the aggregate being
// changed ("" when none is), so that the refusal names the other zones, as
// Nova's message does. The error is a Conflict on availability_zone that
// unwraps to a *ZoneConflict.
func CheckZones(ms []ZoneMembership, wanted string) error {
	zones := map[string]map[string]bool{}
	names := map[string]string{}
	for _, m := range ms {
		if m.Zone == "" {
			continue
		}
		if zones[m.Provider] == nil {
			zones[m.Provider] = map[string]bool{}
		}
		zones[m.Provider][m.Zone] = true
		names[m.Provider] = m.Name
	}
	var zc ZoneConflict
	others := map[string]bool{}
	for p, set := range zones {
		if len(set) < 2 {
			continue
		}
		zc.Hosts = append(zc.Hosts, names[p])
		for z := range set {
			if z != wanted {
				others[z] = true
			}
		}
	}
	if len(zc.Hosts) == 0 {
		return nil
	}
	slices.Sort(zc.Hosts)
	zc.Zones = slices.Sorted(maps.Keys(others))
	return &Error{Kind: Conflict, Field: "availability_zone", Msg: zc.Error(), Err: &zc}
}
