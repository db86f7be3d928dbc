package cloud

import "context"

// identities are the cloud's own identifiers of the objects corral
// mirrors, as the last sync kept them, at corral's revision rev.
type identities struct {
	rev    int64
	aggIDs map[string]int64 // aggregate uuid → Nova's id
	gens   map[string]int64 // provider uuid → Placement's generation
}

// AggregateIDs maps aggregate uuids to Nova's ids, as the last sync read
// them (empty before the first sync).
func (s *Syncer) AggregateIDs(ctx context.Context) (map[string]int64, error) {
	ids, err := s.identities(ctx)
	if err != nil {
		return nil, err
	}
	return ids.aggIDs, nil
}

// ProviderGenerations maps provider uuids to Placement's generations, as
// the last sync read them, with corral's revision they go with.
func (s *Syncer) ProviderGenerations(ctx context.Context) (map[string]int64, int64, error) {
	ids, err := s.identities(ctx)
	if err != nil {
		return nil, 0, err
	}
	return ids.gens, ids.rev, nil
}

// identities reads what the last sync kept once per revision of corral's
// database (a sync moves it), not once per request.
func (s *Syncer) identities(ctx context.Context) (*identities, error) {
	rev := int64(-1)
	if r, ok := s.Store.(interface {
		Revision(ctx context.Context) (int64, error)
	}); ok {
		var err error
		if rev, err = r.Revision(ctx); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	cached := s.ids
	s.mu.Unlock()
	if cached != nil && rev >= 0 && cached.rev == rev {
		return cached, nil
	}
	kept, err := LoadKept(ctx, s.Store)
	if err != nil {
		return nil, err
	}
	ids := &identities{rev: rev, aggIDs: map[string]int64{}, gens: map[string]int64{}}
	if kept != nil {
		for _, a := range kept.Aggregates {
			ids.aggIDs[a.UUID] = a.ID
		}
		for u, p := range kept.Placement.Providers {
			ids.gens[u] = p.Generation
		}
	}
	s.mu.Lock()
	s.ids = ids
	s.mu.Unlock()
	return ids, nil
}
