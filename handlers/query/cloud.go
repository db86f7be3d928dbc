package query

import (
	"context"
	"fmt"
)

// maxCloudWarnings bounds the disagreements a preview lists.
const maxCloudWarnings = 20

// cloudWarnings are, when corral is connected, the hosts whose aggregate
// membership Nova and Placement saw differently at the last sync: forbidden
// and required aggregates (member_of) act on Placement's copy only.
func (h *Handler) cloudWarnings(ctx context.Context) []string {
	if h.env.Cloud == nil {
		return nil
	}
	last, err := h.env.Store.LastSuccessfulSync(ctx)
	if err != nil || last == nil {
		return nil
	}
	dis := last.Disagreements
	var out []string
	for i, d := range dis {
		if i == maxCloudWarnings {
			out = append(out, fmt.Sprintf("and %d more (see the Cloud page)", len(dis)-i))
			break
		}
		out = append(out, d.Message)
	}
	return out
}
