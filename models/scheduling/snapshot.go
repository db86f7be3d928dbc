package scheduling

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"

	"corral/models"
	"corral/models/placement"
)

// Snapshot is an immutable, indexed view of a world: everything a request
// needs, built once and shared by any number of concurrent runs. It keeps
// pointers into the world it was built from, which must not be modified
// afterwards (a draft is a new world, see ApplyChanges).
type Snapshot struct {
	world *models.World
	ix    *placement.Index

	hosts   []HostState    // one per host, in provider order
	hostPos map[string]int // host name → position in hosts
	// nameRank is each host's position in name order, so that ties in
	// weight sort by name without comparing strings; byName is the
	// inverse, so that equal weights need no sort at all.
	nameRank []int32
	byName   []int32

	// tenantViews groups the hosts by their tenant-key metadata, which is
	// all tenant isolation reads; forcing marks the hosts with an
	// aggregate that forces the instance type filter's metadata check.
	tenantViews *hostViews
	forcing     []bool
	// keyViews caches host views by metadata key set (hostviews.go).
	keyViews keyViews
	// isolating lists the aggregates isolate_aggregates may forbid, and
	// prefixAggs caches the aggregates with a key prefix (request_filters.go).
	isolating  []isolatingAggregate
	prefixAggs struct {
		mu    sync.Mutex
		m     map[string][]int32
		texts map[string][2]string // forbiddenByPrefix's note and effect
	}
	// nameHeads are the distinct first two bytes of the host names (nil
	// when there are too many to be useful): a reason that contains none
	// of them names no host.
	nameHeads []string

	flavorByName map[string]*models.Flavor
	flavorByID   map[string]*models.Flavor
	groupByUUID  map[string]*models.ServerGroup
	groupsByName map[string][]*models.ServerGroup
	serverByUUID map[string]*models.Server

	// tenantAggs maps a project to the aggregates that carry it as the
	// exact value of a filter_tenant_id* key: what nova's placement
	// pre-filter finds (no comma split, unlike the post-filter).
	tenantAggs map[string][]int32
	// azAggs maps an availability zone to its aggregates.
	azAggs map[string][]int32

	// impact is the impact matrix's index of this snapshot (impact_index.go).
	impact impactCache

	// nova is where Nova's aggregate hosts differ from Placement's
	// aggregates (memberships.go); nil when they do not.
	nova *novaView
}

// NewSnapshot indexes w. A world with dangling references or parent cycles
// is an Invalid error.
func NewSnapshot(w *models.World) (*Snapshot, error) {
	ix, err := placement.NewIndex(w.Providers, w.Aggregates)
	if err != nil {
		return nil, models.Wrap("build snapshot", err)
	}
	s := &Snapshot{
		world:      w,
		ix:         ix,
		tenantAggs: map[string][]int32{},
		azAggs:     map[string][]int32{},
	}
	hostIdx := ix.Hosts()
	s.hosts = make([]HostState, len(hostIdx))
	s.hostPos = make(map[string]int, len(hostIdx))
	perHost := map[string]int{}
	for i := range w.Servers {
		if w.Servers[i].Host != "" {
			perHost[w.Servers[i].Host]++
		}
	}
	for i, h := range hostIdx {
		p := ix.Provider(int(h))
		s.hosts[i] = HostState{Provider: p, numInstances: perHost[p.Name]}
		s.hostPos[p.Name] = i
	}
	byName := make([]int32, len(s.hosts))
	for i := range byName {
		byName[i] = int32(i)
	}
	sort.Slice(byName, func(a, b int) bool { return s.hosts[byName[a]].Provider.Name < s.hosts[byName[b]].Provider.Name })
	s.nameRank = make([]int32, len(s.hosts))
	for rank, h := range byName {
		s.nameRank[h] = int32(rank)
	}
	s.byName = byName
	s.nameHeads = nameHeads(s.hosts)
	s.indexObjects()
	s.nova = buildNovaView(ix)
	s.indexAggregates(nil, nil)
	return s, nil
}

// WithAggregates returns a snapshot of w, a world that differs from the
// snapshot's only in its aggregates (their metadata, members, or which
// exist): changed names by UUID every aggregate whose members may differ.
// Everything about providers, flavors, servers and groups is shared with s,
// so this costs a fraction of NewSnapshot on a large cloud. A world that
// differs in more is an Internal error: build it with NewSnapshot.
//
// w's providers may also be a new slice of the same providers changed in
// place only (see placement.Index.WithWorld): their generations,
// inventories, usages.
func (s *Snapshot) WithAggregates(w *models.World, changed map[string]bool) (*Snapshot, error) {
	old := s.world
	same := func(a, b int, pa, pb any) bool { return a == b && (a == 0 || pa == pb) }
	var providers []models.Provider
	if !same(len(w.Providers), len(old.Providers), firstOf(w.Providers), firstOf(old.Providers)) {
		providers = w.Providers
	}
	if !same(len(w.Flavors), len(old.Flavors), firstOf(w.Flavors), firstOf(old.Flavors)) ||
		!same(len(w.Servers), len(old.Servers), firstOf(w.Servers), firstOf(old.Servers)) ||
		!same(len(w.ServerGroups), len(old.ServerGroups), firstOf(w.ServerGroups), firstOf(old.ServerGroups)) {
		return nil, models.E(models.Internal, "", "WithAggregates: the world differs in more than its aggregates")
	}
	ix, err := s.ix.WithWorld(providers, w.Aggregates, changed)
	if err != nil {
		return nil, models.Wrap("update snapshot", err)
	}
	ns := &Snapshot{
		world: w, ix: ix,
		hostPos: s.hostPos, nameRank: s.nameRank, byName: s.byName, nameHeads: s.nameHeads,
		flavorByName: s.flavorByName, flavorByID: s.flavorByID,
		groupByUUID: s.groupByUUID, groupsByName: s.groupsByName, serverByUUID: s.serverByUUID,
	}
	ns.hosts = make([]HostState, len(s.hosts))
	for i, h := range ix.Hosts() {
		ns.hosts[i] = HostState{Provider: ix.Provider(int(h)), numInstances: s.hosts[i].numInstances}
	}
	// The metadata keys the changes touched: host views over other keys
	// stay as they are. An aggregate with the same members touches the
	// keys whose values differ; one that gained or lost members (or
	// appeared or went) touches every key it has, before and after.
	touched := map[string]bool{}
	for u := range changed {
		oa, okOld := s.ix.AggregateByUUID(u)
		na, okNew := ix.AggregateByUUID(u)
		if okOld && okNew && slices.Equal(s.ix.Members(oa), ix.Members(na)) && sameDrift(s.ix.Aggregate(oa), ix.Aggregate(na)) {
			om, nm := s.ix.Aggregate(oa).Metadata, ix.Aggregate(na).Metadata
			for k, v := range om {
				if w, ok := nm[k]; !ok || w != v {
					touched[k] = true
				}
			}
			for k := range nm {
				if _, ok := om[k]; !ok {
					touched[k] = true
				}
			}
			continue
		}
		for _, x := range []*placement.Index{s.ix, ix} {
			if a, ok := x.AggregateByUUID(u); ok {
				for k := range x.Aggregate(a).Metadata {
					touched[k] = true
				}
			}
		}
	}
	ns.nova = buildNovaView(ix)
	ns.indexAggregates(s, touched)
	s.keyViews.mu.Lock()
	for id, v := range s.keyViews.m {
		if !anyTouched(strings.Split(id, "\x00"), touched) {
			if ns.keyViews.m == nil {
				ns.keyViews.m = map[string]*hostViews{}
			}
			ns.keyViews.m[id] = v
		}
	}
	s.keyViews.mu.Unlock()
	// The aggregates with a key prefix stay the same when no aggregate
	// came or went (positions hold) and no touched key has the prefix.
	samePlaces := ix.NumAggregates() == s.ix.NumAggregates()
	for u := range changed {
		oa, okOld := s.ix.AggregateByUUID(u)
		na, okNew := ix.AggregateByUUID(u)
		samePlaces = samePlaces && okOld && okNew && oa == na
	}
	if samePlaces {
		s.prefixAggs.mu.Lock()
		for prefix, aggs := range s.prefixAggs.m {
			hit := false
			for k := range touched {
				hit = hit || strings.HasPrefix(k, prefix)
			}
			if !hit {
				if ns.prefixAggs.m == nil {
					ns.prefixAggs.m = map[string][]int32{}
				}
				ns.prefixAggs.m[prefix] = aggs
			}
		}
		s.prefixAggs.mu.Unlock()
	}
	return ns, nil
}

func anyTouched(keys []string, touched map[string]bool) bool {
	for _, k := range keys {
		if touched[k] {
			return true
		}
	}
	return false
}

func firstOf[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// indexAggregates works out everything the snapshot derives from
// aggregates: each host's aggregates, the tenant views, the aggregates
// that force the metadata check or isolate, by tenant and by zone.
//
// With prev (the snapshot s updates) and the metadata keys its changed
// aggregates carry, the tenant views are taken over from prev when no
// tenant key was touched.
func (s *Snapshot) indexAggregates(prev *Snapshot, touched map[string]bool) {
	ix, w := s.ix, s.world
	s.tenantAggs = map[string][]int32{}
	s.azAggs = map[string][]int32{}
	// One backing array for every host's aggregate list keeps the snapshot
	// to a few allocations even with 25,000 hosts.
	hostIdx := ix.Hosts()
	total := 0
	for _, h := range hostIdx {
		total += len(s.novaAggregatesOf(int(h)))
	}
	backing := make([]*models.Aggregate, 0, total)
	for i, h := range hostIdx {
		start := len(backing)
		for _, a := range s.novaAggregatesOf(int(h)) {
			backing = append(backing, ix.Aggregate(int(a)))
		}
		s.hosts[i].Aggregates = backing[start:len(backing):len(backing)]
	}
	s.isolating = isolatingAggregates(s)
	tenantTouched := false
	for k := range touched {
		tenantTouched = tenantTouched || IsTenantKey(k)
	}
	if prev != nil && !tenantTouched {
		s.tenantViews = prev.tenantViews
		for i := range s.hosts {
			s.hosts[i].tenants = prev.hosts[i].tenants
		}
	} else {
		s.tenantViews = buildViews(s, IsTenantKey)
		tenants := make([]*hostTenants, len(s.tenantViews.reps))
		for v, rep := range s.tenantViews.reps {
			tenants[v] = newHostTenants(&s.hosts[rep])
		}
		for i, v := range s.tenantViews.of {
			s.hosts[i].tenants = tenants[v]
		}
	}
	forcingAgg := make([]bool, ix.NumAggregates())
	for a := range forcingAgg {
		forcingAgg[a] = forcesMetadataCheck(ix.Aggregate(a))
	}
	s.forcing = make([]bool, len(hostIdx))
	for i, h := range hostIdx {
		for _, a := range s.novaAggregatesOf(int(h)) {
			s.forcing[i] = s.forcing[i] || forcingAgg[a]
		}
	}
	for a := range w.Aggregates {
		agg := &w.Aggregates[a]
		seen := map[string]bool{}
		for k, v := range agg.Metadata {
			if IsTenantKey(k) && !seen[v] {
				seen[v] = true
				s.tenantAggs[v] = append(s.tenantAggs[v], int32(a))
			}
		}
		if az := aggregateAZ(agg); az != "" {
			s.azAggs[az] = append(s.azAggs[az], int32(a))
		}
	}
}

// maxNameHeads bounds nameHeads: beyond it a reason is checked host by host.
const maxNameHeads = 16

func nameHeads(hosts []HostState) []string {
	seen := map[string]bool{}
	var heads []string
	for i := range hosts {
		name := hosts[i].Provider.Name
		if name == "" {
			continue
		}
		head := name[:min(2, len(name))]
		if !seen[head] {
			if len(heads) == maxNameHeads {
				return nil
			}
			seen[head] = true
			heads = append(heads, head)
		}
	}
	return heads
}

// mayNameHost reports whether text may contain a host's name; false is
// certain.
func (s *Snapshot) mayNameHost(text string) bool {
	if s.nameHeads == nil {
		return true
	}
	for _, h := range s.nameHeads {
		if strings.Contains(text, h) {
			return true
		}
	}
	return false
}

// aggregateAZ is the aggregate's availability zone: the field, or nova's
// metadata key when only that is set.
func aggregateAZ(a *models.Aggregate) string {
	if a.AvailabilityZone != nil && *a.AvailabilityZone != "" {
		return *a.AvailabilityZone
	}
	return a.Metadata["availability_zone"]
}

// World is the world the snapshot was built from. Do not modify.
func (s *Snapshot) World() *models.World { return s.world }

// Index is the placement index of the snapshot's providers and aggregates.
func (s *Snapshot) Index() *placement.Index { return s.ix }

// Hosts returns every host's state, in provider order. Do not modify.
func (s *Snapshot) Hosts() []HostState { return s.hosts }

// Host finds a host's state by name.
func (s *Snapshot) Host(name string) (*HostState, bool) {
	i, ok := s.hostPos[name]
	if !ok {
		return nil, false
	}
	return &s.hosts[i], true
}

// Provider finds a provider by UUID or name.
func (s *Snapshot) Provider(ref string) (*models.Provider, bool) {
	i, ok := s.ix.LookupProvider(ref)
	if !ok {
		return nil, false
	}
	return s.ix.Provider(i), true
}

// Children returns every provider below the given root (by UUID or name),
// in provider order.
func (s *Snapshot) Children(root string) []*models.Provider {
	i, ok := s.ix.LookupProvider(root)
	if !ok {
		return nil
	}
	var out []*models.Provider
	for _, c := range s.ix.Descendants(i) {
		out = append(out, s.ix.Provider(int(c)))
	}
	return out
}

// Aggregate finds an aggregate by UUID or name.
func (s *Snapshot) Aggregate(ref string) (*models.Aggregate, bool) {
	if a, ok := s.ix.AggregateByUUID(ref); ok {
		return s.ix.Aggregate(a), true
	}
	if a, ok := s.ix.AggregateByName(ref); ok {
		return s.ix.Aggregate(a), true
	}
	return nil, false
}

// AggregatesOf returns the aggregates a provider (UUID or name) is directly in.
func (s *Snapshot) AggregatesOf(provider string) []*models.Aggregate {
	i, ok := s.ix.LookupProvider(provider)
	if !ok {
		return nil
	}
	var out []*models.Aggregate
	for _, a := range s.ix.AggregatesOf(i) {
		out = append(out, s.ix.Aggregate(int(a)))
	}
	return out
}

// AggregatesByPrefix returns the aggregates whose name starts with prefix,
// sorted by name, at most limit of them (0: all), for type-ahead.
func (s *Snapshot) AggregatesByPrefix(prefix string, limit int) []*models.Aggregate {
	var out []*models.Aggregate
	for a := 0; a < s.ix.NumAggregates(); a++ {
		if agg := s.ix.Aggregate(a); strings.HasPrefix(agg.Name, prefix) {
			out = append(out, agg)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// Flavor finds a flavor by name or flavor id.
func (s *Snapshot) Flavor(ref string) (*models.Flavor, bool) {
	if f, ok := s.flavorByName[ref]; ok {
		return f, true
	}
	f, ok := s.flavorByID[ref]
	return f, ok
}

// ServerGroup finds a server group by UUID, or by name; a name shared by
// several groups is resolved to the one of project when that is unique.
func (s *Snapshot) ServerGroup(ref, project string) (*models.ServerGroup, error) {
	if g, ok := s.groupByUUID[ref]; ok {
		return g, nil
	}
	gs := s.groupsByName[ref]
	switch len(gs) {
	case 0:
		return nil, models.E(models.Invalid, "server_group", "no server group named %q", ref)
	case 1:
		return gs[0], nil
	}
	var mine []*models.ServerGroup
	for _, g := range gs {
		if g.ProjectID == project {
			mine = append(mine, g)
		}
	}
	if len(mine) == 1 {
		return mine[0], nil
	}
	return nil, models.E(models.Invalid, "server_group", "%d server groups are named %q; use the uuid", len(gs), ref)
}

// GroupHosts counts a group's members per host name (members without a
// host, or unknown to the world, are not counted).
func (s *Snapshot) GroupHosts(g *models.ServerGroup) map[string]int {
	out := map[string]int{}
	if g == nil {
		return out
	}
	for _, m := range g.Members {
		if srv, ok := s.serverByUUID[m]; ok && srv.Host != "" {
			out[srv.Host]++
		}
	}
	return out
}

// TenantAggregates returns the aggregates nova's placement pre-filter finds
// for project: a filter_tenant_id* key whose whole value is the project.
func (s *Snapshot) TenantAggregates(project string) []*models.Aggregate {
	var out []*models.Aggregate
	for _, a := range s.tenantAggs[project] {
		out = append(out, s.ix.Aggregate(int(a)))
	}
	return out
}

// MemberOfModes evaluates raw member_of values (aggregates by UUID or name)
// in the three modes side by side: Direct, Unnumbered, Numbered.
func (s *Snapshot) MemberOfModes(values []string) ([3]*placement.Result, error) {
	t, err := s.ResolveMemberOf("member_of", "member_of", values)
	if err != nil {
		return [3]*placement.Result{}, err
	}
	return s.ix.EvaluateAll(t), nil
}

// ResolveMemberOf parses raw member_of values at the latest microversion
// after replacing aggregate names by their UUIDs; key selects the group
// ("member_of", "member_of1", …) and field names the input in errors. A
// value Placement refuses only because it holds a name no aggregate has
// is reported as that name, not as Placement's "valid UUID(s)".
func (s *Snapshot) ResolveMemberOf(key, field string, values []string) (placement.Terms, error) {
	resolved := make([]string, len(values))
	var unknown []string
	for i, v := range values {
		resolved[i] = s.resolveValue(v, &unknown)
	}
	t, err := placement.ParseMemberOf(key, resolved, placement.Latest)
	if err != nil {
		if len(unknown) > 0 {
			return placement.Terms{}, models.E(models.Invalid, field, "no aggregate named %q (give an aggregate name or UUID)", unknown[0])
		}
		msg := err.Error()
		var ce *models.Error
		if errors.As(err, &ce) {
			msg = ce.Msg
		}
		return placement.Terms{}, models.E(models.Invalid, field, "%s", msg)
	}
	return t, nil
}

// resolveValue swaps aggregate names for UUIDs inside one value, keeping
// its prefix, so that Placement's own grammar then judges it; names that
// no aggregate has are added to unknown.
func (s *Snapshot) resolveValue(v string, unknown *[]string) string {
	prefix, rest := splitMemberOfPrefix(v)
	if prefix == "" || prefix == "!" {
		if strings.Contains(rest, ",") {
			return v // Placement rejects it with its own message
		}
	}
	elems := strings.Split(rest, ",")
	for i, e := range elems {
		if placement.IsUUIDLike(e) {
			continue
		}
		if a, ok := s.ix.AggregateByName(e); ok {
			elems[i] = s.ix.Aggregate(a).UUID
		} else if e != "" && !strings.HasPrefix(e, "!") {
			// "!x" inside a list is a grammar error: Placement says so.
			*unknown = append(*unknown, e)
		}
	}
	return prefix + strings.Join(elems, ",")
}
