package scheduling

import (
	"maps"

	"corral/models"
)

// WithObjects returns a snapshot of w, a world whose providers and
// aggregates are s's own (the same slices) and whose flavors, servers,
// server groups or settings may differ. Everything derived from providers
// and aggregates — the index, the hosts, their views — is shared with s;
// only the lookups of flavors, groups and servers are built again, which
// costs a few milliseconds where NewSnapshot re-indexes the whole cloud.
// A world whose providers or aggregates differ is an Internal error.
func (s *Snapshot) WithObjects(w *models.World) (*Snapshot, error) {
	old := s.world
	if len(w.Providers) != len(old.Providers) || firstOf(w.Providers) != firstOf(old.Providers) ||
		len(w.Aggregates) != len(old.Aggregates) || firstOf(w.Aggregates) != firstOf(old.Aggregates) {
		return nil, models.E(models.Internal, "", "WithObjects: the world differs in its providers or aggregates")
	}
	ns := &Snapshot{
		world: w, ix: s.ix,
		hosts: s.hosts, hostPos: s.hostPos, nameRank: s.nameRank, byName: s.byName, nameHeads: s.nameHeads,
		tenantViews: s.tenantViews, forcing: s.forcing, isolating: s.isolating,
		tenantAggs: s.tenantAggs, azAggs: s.azAggs,
	}
	ns.indexObjects()
	s.keyViews.mu.Lock()
	ns.keyViews.m = maps.Clone(s.keyViews.m)
	s.keyViews.mu.Unlock()
	s.prefixAggs.mu.Lock()
	ns.prefixAggs.m = maps.Clone(s.prefixAggs.m)
	s.prefixAggs.mu.Unlock()
	return ns, nil
}

// indexObjects builds the lookups of the world's flavors, server groups
// and servers.
func (s *Snapshot) indexObjects() {
	w := s.world
	s.flavorByName = make(map[string]*models.Flavor, len(w.Flavors))
	s.flavorByID = make(map[string]*models.Flavor, len(w.Flavors))
	s.groupByUUID = make(map[string]*models.ServerGroup, len(w.ServerGroups))
	s.groupsByName = make(map[string][]*models.ServerGroup, len(w.ServerGroups))
	s.serverByUUID = make(map[string]*models.Server, len(w.Servers))
	for i := range w.Flavors {
		f := &w.Flavors[i]
		s.flavorByName[f.Name] = f
		if f.ID != "" {
			s.flavorByID[f.ID] = f
		}
	}
	for i := range w.ServerGroups {
		g := &w.ServerGroups[i]
		s.groupByUUID[g.UUID] = g
		s.groupsByName[g.Name] = append(s.groupsByName[g.Name], g)
	}
	for i := range w.Servers {
		s.serverByUUID[w.Servers[i].UUID] = &w.Servers[i]
	}
}
