package handlers

import "context"

// CloudIdentities is what a connected cloud link also tells: the cloud's
// own identifiers of the objects corral mirrors, as the last sync read
// them. The Nova- and Placement-compatible APIs answer with them when
// connected, so that a client pointed at corral sees the ids and
// generations the cloud has, and its generation-checked writes check
// against the cloud's.
type CloudIdentities interface {
	// AggregateIDs maps aggregate uuids to Nova's integer ids.
	AggregateIDs(ctx context.Context) (map[string]int64, error)
	// ProviderGenerations maps provider uuids to Placement's generations;
	// rev is corral's revision they go with.
	ProviderGenerations(ctx context.Context) (gens map[string]int64, rev int64, err error)
}

// CloudIdentities is the connected cloud's identifiers, nil when corral
// runs standalone (its own ids and generations are then the truth).
func (env *Env) CloudIdentities() CloudIdentities {
	ids, _ := env.Cloud.(CloudIdentities)
	return ids
}
