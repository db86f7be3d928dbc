package scheduling

import (
	"slices"
	"strings"

	"corral/models"
)

// GroupHostCount is how many members of a server group run on one host.
type GroupHostCount struct {
	Host  string
	Count int
	Limit int  // 0 when the policy sets no per-host limit
	Over  bool // the policy is violated on this host
}

// GroupViolation is one way a group's current placement breaks its
// policy: anti-affinity on Host with Count members over Limit, or
// affinity spread over Hosts.
type GroupViolation struct {
	Policy string
	Host   string
	Count  int
	Limit  int
	Hosts  []string
}

// CheckGroupPlacement counts a group's members per host (memberHosts holds
// each member's host, "" when it has none) and says how the placement
// breaks the policy: anti-affinity more members on a host than
// max_server_per_host, affinity members on more than one host. Soft
// policies are preferences (weighers) and are never violated. Counts are
// sorted by count, most first, then by host.
func CheckGroupPlacement(g *models.ServerGroup, memberHosts []string) ([]GroupHostCount, []GroupViolation) {
	counts := map[string]int{}
	for _, h := range memberHosts {
		if h != "" {
			counts[h]++
		}
	}
	limit := 0
	if g.Policy == models.PolicyAntiAffinity {
		limit = g.MaxServerPerHost()
	}
	hosts := make([]GroupHostCount, 0, len(counts))
	for host, n := range counts {
		hosts = append(hosts, GroupHostCount{Host: host, Count: n, Limit: limit, Over: limit > 0 && n > limit})
	}
	slices.SortFunc(hosts, func(a, b GroupHostCount) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Host, b.Host)
	})
	var out []GroupViolation
	switch g.Policy {
	case models.PolicyAntiAffinity:
		for _, hc := range hosts {
			if hc.Over {
				out = append(out, GroupViolation{Policy: g.Policy, Host: hc.Host, Count: hc.Count, Limit: limit})
			}
		}
	case models.PolicyAffinity:
		if len(hosts) > 1 {
			names := make([]string, len(hosts))
			for i, hc := range hosts {
				names[i] = hc.Host
			}
			slices.Sort(names)
			out = append(out, GroupViolation{Policy: g.Policy, Hosts: names})
		}
	}
	return hosts, out
}
