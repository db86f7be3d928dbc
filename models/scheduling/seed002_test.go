package scheduling

import (
	"fmt"
	"strings"
	"testing"

	"corral/models"
)

// placeOneByOne schedules n instances of r on hosts as nova does for a
// multi-create request: run the filter for each instance, pick the first
// passing host (the order of hosts stands in for the weighers) and count
// the pick before the next instance. It returns the hosts picked and, when
// an instance finds no host, every host's reason.
func placeOneByOne(f HostFilter, hosts []*HostState, r *Request, n int) (picked []string, failure string) {
	for i := 0; i < n; i++ {
		var reasons []string
		chosen := ""
		for _, h := range hosts {
			v := f.Filter(h, r)
			if v.Passed {
				chosen = h.Name()
				break
			}
			reasons = append(reasons, h.Name()+": "+v.Reason)
		}
		if chosen == "" {
			return picked, fmt.Sprintf("instance %d: %s", i+1, strings.Join(reasons, "; "))
		}
		picked = append(picked, chosen)
		r.ConsumeGroupHost(chosen)
	}
	return picked, ""
}

func hfGroupRequest(policy string, rules map[string]int, n int) *Request {
	r := hfRequest(nil)
	r.Group = &models.ServerGroup{UUID: "g-uuid", Name: "web", Policy: policy, Rules: rules}
	r.GroupHosts = map[string]int{}
	r.NumInstances = n
	return r
}

// TestSeed002SixInstancesOnTwoHosts is the seed's example: a group of 6
// instances with anti-affinity on 2 hosts is rejected with the default
// limit of 1, and with {"max_server_per_host": 3} spreads 3 and 3; a 7th
// instance then finds no host.
func TestSeed002SixInstancesOnTwoHosts(t *testing.T) {
	hosts := []*HostState{hfHost("cn1"), hfHost("cn2")}
	f := ServerGroupAntiAffinityFilter{}

	r := hfGroupRequest(models.PolicyAntiAffinity, map[string]int{models.RuleMaxServerPerHost: 3}, 6)
	picked, failure := placeOneByOne(f, hosts, r, 6)
	if failure != "" {
		t.Fatalf("6 instances with max_server_per_host=3 on 2 hosts: %s (placed %v)", failure, picked)
	}
	if r.GroupHosts["cn1"] != 3 || r.GroupHosts["cn2"] != 3 {
		t.Fatalf("6 instances spread %v, want 3 per host", r.GroupHosts)
	}
	// A 7th member of the group has nowhere to go.
	seventh := hfGroupRequest(models.PolicyAntiAffinity, map[string]int{models.RuleMaxServerPerHost: 3}, 1)
	seventh.GroupHosts = r.GroupHosts
	for _, h := range hosts {
		v := f.Filter(h, seventh)
		want := "host already holds 3 member(s) of anti-affinity group web; max_server_per_host is 3"
		if v.Passed || v.Reason != want {
			t.Errorf("7th instance on %s: passed %v, %q; want a failure %q", h.Name(), v.Passed, v.Reason, want)
		}
	}

	// Without the rule (default limit 1) the third instance fails.
	r = hfGroupRequest(models.PolicyAntiAffinity, nil, 6)
	picked, failure = placeOneByOne(f, hosts, r, 6)
	if len(picked) != 2 || !strings.HasPrefix(failure, "instance 3: ") {
		t.Fatalf("default limit: placed %v, failure %q; want 2 placed and instance 3 failing", picked, failure)
	}
}

// TestSeed002AntiAffinityCountsAgainstNova encodes nova's answers (through
// nova_oracle.py) for member counts around the limit.
func TestSeed002AntiAffinityCountsAgainstNova(t *testing.T) {
	cases := []struct {
		policy string
		rules  map[string]int
		count  int
		pass   bool
	}{
		{models.PolicyAntiAffinity, map[string]int{models.RuleMaxServerPerHost: 3}, 2, true},
		{models.PolicyAntiAffinity, map[string]int{models.RuleMaxServerPerHost: 3}, 3, false},
		{models.PolicyAntiAffinity, nil, 1, false},
		{models.PolicyAntiAffinity, map[string]int{}, 0, true},
		{models.PolicySoftAntiAffinity, nil, 1, true}, // soft: never filtered
		{models.PolicyAffinity, nil, 5, true},         // another filter's policy
	}
	for _, c := range cases {
		r := hfGroupRequest(c.policy, c.rules, 1)
		r.GroupHosts["h1"] = c.count
		if v := (ServerGroupAntiAffinityFilter{}).Filter(hfHost("h1"), r); v.Passed != c.pass {
			t.Errorf("%s %v with %d members on the host: passed %v (%s), nova %v", c.policy, c.rules, c.count, v.Passed, v.Reason, c.pass)
		}
	}
	if v := (ServerGroupAntiAffinityFilter{}).Filter(hfHost("h1"), hfRequest(nil)); !v.Passed {
		t.Errorf("no group: %s", v.Reason)
	}
}

func TestSeed002MultiCreateReasonAndRoom(t *testing.T) {
	r := hfGroupRequest(models.PolicyAntiAffinity, map[string]int{models.RuleMaxServerPerHost: 3}, 4)
	r.GroupHosts["cn1"] = 1
	h := hfHost("cn1")
	v := ServerGroupAntiAffinityFilter{}.Filter(h, r)
	want := "host holds 1 of at most 3 member(s) of anti-affinity group web; it can take 2 of the 4 instances requested"
	if !v.Passed || v.Reason != want {
		t.Errorf("got %v %q, want pass %q", v.Passed, v.Reason, want)
	}
	if got := AntiAffinityRoom(h, r); got != 2 {
		t.Errorf("room = %d, want 2", got)
	}
	r.GroupHosts["cn1"] = 5
	if got := AntiAffinityRoom(h, r); got != 0 {
		t.Errorf("room over the limit = %d, want 0", got)
	}
	if got := AntiAffinityRoom(h, hfRequest(nil)); got != -1 {
		t.Errorf("room without a group = %d, want -1", got)
	}
}

// TestAffinityFilter follows nova: the first member goes anywhere, later
// ones only where members are (multi-create included).
func TestAffinityFilter(t *testing.T) {
	hosts := []*HostState{hfHost("cn1"), hfHost("cn2")}
	f := ServerGroupAffinityFilter{}
	r := hfGroupRequest(models.PolicyAffinity, nil, 3)
	r.GroupHosts["cn2"] = 0 // a host whose members were all deleted
	picked, failure := placeOneByOne(f, hosts, r, 3)
	if failure != "" || strings.Join(picked, ",") != "cn1,cn1,cn1" {
		t.Fatalf("placed %v (%s), want cn1 three times", picked, failure)
	}
	v := f.Filter(hosts[1], r)
	want := "affinity group web has its members on {cn1}, not on this host"
	if v.Passed || v.Reason != want {
		t.Errorf("cn2: %v %q, want failure %q", v.Passed, v.Reason, want)
	}
	// Other policies and requests without a group are not this filter's.
	for _, p := range []string{models.PolicyAntiAffinity, models.PolicySoftAffinity} {
		r := hfGroupRequest(p, nil, 1)
		r.GroupHosts["cn1"] = 1
		if v := f.Filter(hosts[1], r); !v.Passed {
			t.Errorf("policy %s: %s", p, v.Reason)
		}
	}
}

func TestConsumeGroupHostWithoutGroup(t *testing.T) {
	r := hfRequest(nil)
	r.ConsumeGroupHost("cn1")
	if r.GroupHosts != nil {
		t.Errorf("a request without a group counted %v", r.GroupHosts)
	}
	var nilReq *Request
	nilReq.ConsumeGroupHost("cn1") // must not panic
	g := hfGroupRequest(models.PolicyAntiAffinity, nil, 1)
	g.GroupHosts = nil
	g.ConsumeGroupHost("cn1")
	if g.GroupHosts["cn1"] != 1 {
		t.Errorf("GroupHosts = %v", g.GroupHosts)
	}
}
