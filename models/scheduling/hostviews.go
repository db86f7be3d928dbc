package scheduling

import (
	"encoding/binary"
	"sort"
	"strings"
	"sync"

	"corral/models"
)

// Most host filters read nothing of a host but a few keys of its
// aggregates' metadata, and 25,000 hosts are mostly in a handful of
// distinct situations as far as those keys are concerned. The pipeline
// therefore judges one representative host per situation (a view) and
// gives its verdict to every host in the same view. Interning whole
// aggregate sets would not do: availability-zone aggregates alone make
// nearly every host's set distinct.

// filterScope is what a built-in host filter or weigher reads of a host.
type filterScope int

const (
	// scopeHost: anything; judged host by host.
	scopeHost filterScope = iota
	// scopeTenantKeys: the values of the filter_tenant_id* keys.
	scopeTenantKeys
	// scopeFlavorKeys: the values of the keys the flavor's extra specs name.
	scopeFlavorKeys
	// scopeFlavorKeysUnlessForced: as scopeFlavorKeys, except on a host
	// with force_metadata_check set, where every key counts.
	scopeFlavorKeysUnlessForced
	// scopeGroup: the request group's member count on the host (and the
	// request); hosts holding no member all get the same answer.
	scopeGroup
)

// scoped is implemented by the built-in filters and weighers whose verdict
// depends on less than the whole host.
type scoped interface{ scope() filterScope }

func (AggregateMultiTenancyIsolation) scope() filterScope     { return scopeTenantKeys }
func (AggregateInstanceExtraSpecsFilter) scope() filterScope  { return scopeFlavorKeys }
func (AggregateInstanceTypeFilter) scope() filterScope        { return scopeFlavorKeysUnlessForced }
func (ServerGroupAffinityFilter) scope() filterScope          { return scopeGroup }
func (ServerGroupAntiAffinityFilter) scope() filterScope      { return scopeGroup }
func (ServerGroupSoftAffinityWeigher) scope() filterScope     { return scopeGroup }
func (ServerGroupSoftAntiAffinityWeigher) scope() filterScope { return scopeGroup }

func scopeOf(x any) filterScope {
	if s, ok := x.(scoped); ok {
		return s.scope()
	}
	return scopeHost
}

// hostViews partitions the hosts by what some metadata keys say. Two hosts
// share a view when their aggregates, taken in the host's aggregate order
// and skipping repeats, carry the same values under those keys; a filter
// that reads only those keys (through eachHostValue and friends, which
// visit aggregates in that order) then cannot tell them apart, reasons
// included.
type hostViews struct {
	of   []int32 // each host's view
	reps []int32 // the first host of each view
}

// buildViews computes the views of s's hosts for the keys relevant accepts.
func buildViews(s *Snapshot, relevant func(key string) bool) *hostViews {
	// Each aggregate's class: 0 when it has no relevant key, else the
	// same number for aggregates with the same relevant key/values.
	nAgg := s.ix.NumAggregates()
	class := make([]int32, nAgg)
	classes := map[string]int32{}
	var kv []string
	var sb strings.Builder
	for a := 0; a < nAgg; a++ {
		kv = kv[:0]
		for k := range s.ix.Aggregate(a).Metadata {
			if relevant(k) {
				kv = append(kv, k)
			}
		}
		if len(kv) == 0 {
			continue
		}
		sort.Strings(kv)
		sb.Reset()
		md := s.ix.Aggregate(a).Metadata
		for _, k := range kv {
			sb.WriteString(k)
			sb.WriteByte(0)
			sb.WriteString(md[k])
			sb.WriteByte(0)
		}
		c, ok := classes[sb.String()]
		if !ok {
			c = int32(len(classes) + 1)
			classes[sb.String()] = c
		}
		class[a] = c
	}

	hostIdx := s.ix.Hosts()
	v := &hostViews{of: make([]int32, len(hostIdx))}
	views := map[string]int32{}
	var seq []int32
	var key []byte
	for i, h := range hostIdx {
		seq, key = seq[:0], key[:0]
	next:
		for _, a := range s.novaAggregatesOf(int(h)) {
			c := class[a]
			if c == 0 {
				continue
			}
			for _, have := range seq {
				if have == c {
					continue next
				}
			}
			seq = append(seq, c)
			key = binary.LittleEndian.AppendUint32(key, uint32(c))
		}
		id, ok := views[string(key)]
		if !ok {
			id = int32(len(v.reps))
			views[string(key)] = id
			v.reps = append(v.reps, int32(i))
		}
		v.of[i] = id
	}
	return v
}

// flavorLookupKeys are the aggregate metadata keys the extra-spec and
// instance-type filters read for these extra specs (in normal mode), sorted
// and unique: an "aggregate_instance_extra_specs:" key without its scope,
// any other key as it is.
func flavorLookupKeys(specs map[string]string) []string {
	keys := make([]string, 0, len(specs))
	for k := range specs {
		if rest, ok := strings.CutPrefix(k, ScopeExtra+":"); ok {
			k = rest
		}
		keys = append(keys, k)
	}
	return hfSortedUnique(keys)
}

// keyViewCacheSize bounds the views cached per snapshot: one per distinct
// key set (flavors of the world, inline flavors of previews).
const keyViewCacheSize = 64

// keyViews caches views by key set for a snapshot.
type keyViews struct {
	mu sync.Mutex
	m  map[string]*hostViews
}

// viewsForKeys returns the views of s's hosts for the given sorted keys,
// building them on first use.
func (s *Snapshot) viewsForKeys(keys []string) *hostViews {
	id := strings.Join(keys, "\x00")
	s.keyViews.mu.Lock()
	v := s.keyViews.m[id]
	s.keyViews.mu.Unlock()
	if v != nil {
		return v
	}
	// Built outside the lock: two runs may build the same views, which is
	// cheaper than making every other flavor wait.
	set := make(map[string]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	v = buildViews(s, func(k string) bool { return set[k] })
	s.keyViews.mu.Lock()
	if s.keyViews.m == nil || len(s.keyViews.m) >= keyViewCacheSize {
		s.keyViews.m = map[string]*hostViews{}
	}
	s.keyViews.m[id] = v
	s.keyViews.mu.Unlock()
	return v
}

// forcesMetadataCheck reports whether aggregate a switches the instance
// type filter of its hosts to forced mode, as that filter decides it.
func forcesMetadataCheck(a *models.Aggregate) bool {
	v, ok := a.Metadata[KeyForceMetadataCheck]
	if !ok {
		return false
	}
	forced := false
	eachPiece(v, func(p string) bool {
		forced = strings.EqualFold(p, "true")
		return !forced
	})
	return forced
}
