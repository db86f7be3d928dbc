package compute_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"corral/models"
)

// TestAggregateMetadataIsBounded: Nova's schema bounds no key count, corral
// does: set_metadata that would leave an aggregate with more than
// models.MaxAggregateMetadataKeys keys is a 400 that says so, and nothing
// of it is kept.
func TestAggregateMetadataIsBounded(t *testing.T) {
	s := newServer(t, nil)
	const base = "/compute/v2.1/os-aggregates"
	r := must(t, s.req("POST", base, "admin", "2.41", `{"aggregate":{"name":"wide"}}`), 200)
	path := base + "/" + fmt.Sprint(aggOf(t, r)["id"])
	setMetadata := func(from, to int) response {
		md := map[string]string{}
		for i := from; i < to; i++ {
			md[fmt.Sprintf("k%d", i)] = "v"
		}
		b, _ := json.Marshal(map[string]any{"set_metadata": map[string]any{"metadata": md}})
		return s.req("POST", path+"/action", "admin", "2.41", string(b))
	}
	must(t, setMetadata(0, models.MaxAggregateMetadataKeys-1), 200)
	r = setMetadata(models.MaxAggregateMetadataKeys-1, models.MaxAggregateMetadataKeys+1)
	if r.Status != 400 || !strings.Contains(string(r.Body), "at most 1000 are allowed") {
		t.Fatalf("past the bound: %d %.200s", r.Status, r.Body)
	}
	r = must(t, s.req("GET", path, "admin", "2.41", ""), 200)
	if n := len(aggOf(t, r)["metadata"].(map[string]any)); n != models.MaxAggregateMetadataKeys-1 {
		t.Errorf("%d keys kept after the refusal, want %d", n, models.MaxAggregateMetadataKeys-1)
	}
}
