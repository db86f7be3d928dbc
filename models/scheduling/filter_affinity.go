package scheduling

import (
	"fmt"

	"corral/models"
)

// ServerGroupAffinityFilter is nova's filter for "affinity" groups: once the
// group has a live member somewhere, only the hosts holding members pass;
// the first member may go anywhere.
type ServerGroupAffinityFilter struct{}

// Name implements HostFilter.
func (ServerGroupAffinityFilter) Name() string { return models.FilterServerGroupAffinity }

// Filter implements HostFilter.
func (ServerGroupAffinityFilter) Filter(h *HostState, r *Request) Verdict {
	if r == nil || r.Group == nil || r.Group.Policy != models.PolicyAffinity {
		return Verdict{Passed: true, Reason: "no affinity group in the request"}
	}
	if !groupHasMembers(r.GroupHosts) {
		return Verdict{Passed: true, Reason: fmt.Sprintf("group %s has no member yet: any host may take the first", groupLabel(r.Group))}
	}
	if r.GroupHosts[hfHostName(h)] > 0 {
		return Verdict{Passed: true, Reason: "host holds members of the affinity group"}
	}
	var hosts []string
	for name, n := range r.GroupHosts {
		if n > 0 {
			hosts = append(hosts, name)
		}
	}
	return Verdict{Reason: fmt.Sprintf("affinity group %s has its members on %s, not on this host", groupLabel(r.Group), hfFormatValues(hfSortedUnique(hosts)))}
}

func groupHasMembers(counts map[string]int) bool {
	for _, n := range counts {
		if n > 0 {
			return true
		}
	}
	return false
}

// ServerGroupAntiAffinityFilter is nova's filter for "anti-affinity" groups
// with the max_server_per_host rule (seed 002): a host passes while its
// count of live group members is below the limit (1 by default).
//
// Like nova it judges one instance at a time. For a multi-create request
// (NumInstances > 1) nova runs the filters again for each instance after
// counting the host picked for the previous one (ConsumeGroupHost), so a
// host that passes here can still take only AntiAffinityRoom more members.
type ServerGroupAntiAffinityFilter struct{}

// Name implements HostFilter.
func (ServerGroupAntiAffinityFilter) Name() string { return models.FilterServerGroupAntiAffinity }

// Filter implements HostFilter.
func (ServerGroupAntiAffinityFilter) Filter(h *HostState, r *Request) Verdict {
	if r == nil || r.Group == nil || r.Group.Policy != models.PolicyAntiAffinity {
		return Verdict{Passed: true, Reason: "no anti-affinity group in the request"}
	}
	limit := r.Group.MaxServerPerHost()
	count := r.GroupHosts[hfHostName(h)]
	if count >= limit {
		return Verdict{Reason: fmt.Sprintf("host already holds %d member(s) of anti-affinity group %s; max_server_per_host is %d",
			count, groupLabel(r.Group), limit)}
	}
	if room := limit - count; r.NumInstances > 1 && room < r.NumInstances {
		return Verdict{Passed: true, Reason: fmt.Sprintf("host holds %d of at most %d member(s) of anti-affinity group %s; it can take %d of the %d instances requested",
			count, limit, groupLabel(r.Group), room, r.NumInstances)}
	}
	// A constant reason: this runs for every host of every request.
	return Verdict{Passed: true, Reason: "host holds fewer members of the anti-affinity group than max_server_per_host"}
}

// ConsumeGroupHost records that one instance of the request was placed on
// host, as nova's scheduler does between the instances of a multi-create
// request (_consume_selected_host, bug 1781710): the group gains a member on
// that host, which the next instance's filters and weighers see. It writes
// to r.GroupHosts in place: copy the map first when it is shared.
func (r *Request) ConsumeGroupHost(host string) {
	if r == nil || r.Group == nil {
		return
	}
	if r.GroupHosts == nil {
		r.GroupHosts = map[string]int{}
	}
	r.GroupHosts[host]++
}

func groupLabel(g *models.ServerGroup) string {
	if g.Name != "" {
		return g.Name
	}
	return g.UUID
}

// hfHostName is h's name, or "" for a host without a provider, so that a
// malformed host fails or passes a filter instead of crashing it.
func hfHostName(h *HostState) string {
	if h == nil || h.Provider == nil {
		return ""
	}
	return h.Provider.Name
}
