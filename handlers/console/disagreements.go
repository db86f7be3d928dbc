package console

import "context"

// disagreements are, when corral is connected, the last sync's Nova and
// Placement membership disagreements by aggregate uuid: forbidden and
// required aggregates (member_of) act on Placement's copy only, so a host
// in Nova's aggregate and not in Placement's is invisible to them (and the
// reverse is seen by them only).
func (h *Handler) disagreements(ctx context.Context) (map[string][]string, error) {
	if h.env.Cloud == nil {
		return nil, nil
	}
	last, err := h.store().LastSuccessfulSync(ctx)
	if err != nil || last == nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, d := range last.Disagreements {
		out[d.AggregateUUID] = append(out[d.AggregateUUID], d.Message)
	}
	return out, nil
}
