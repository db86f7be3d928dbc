package placementapi_test

import (
	"bytes"
	"net/http"
	"slices"
	"testing"

	"corral/models"
	"corral/models/store"
)

// TestRepeatedListsFollowWrites: asking the same small list again gives
// the same bytes until a write — through this API or another door of the
// store — changes it, and the microversion of each request, not of an
// earlier one, shapes its answer.
func TestRepeatedListsFollowWrites(t *testing.T) {
	forEachStore(t, func(t *testing.T, a *app) {
		a.loadProbeFixture()
		q := "/resource_providers?member_of=" + aggA
		first := a.must(http.StatusOK, http.MethodGet, q, "1.39", nil)
		for range 3 {
			again := a.must(http.StatusOK, http.MethodGet, q, "1.39", nil)
			if !bytes.Equal(again.Body, first.Body) || again.Header.Get("Last-Modified") != first.Header.Get("Last-Modified") {
				t.Fatalf("the same question answered differently:\n%s\n%s", first.Body, again.Body)
			}
		}
		// Each request's microversion decides: before 1.3 the question
		// is not valid, and 1.3 has no traits link and no Last-Modified.
		a.must(http.StatusBadRequest, http.MethodGet, q, "1.0", nil)
		old := a.must(http.StatusOK, http.MethodGet, q, "1.3", nil)
		if bytes.Contains(old.Body, []byte(`"traits"`)) || old.Header.Get("Last-Modified") != "" {
			t.Errorf("1.3 answer carries 1.6's traits link or 1.15's Last-Modified:\n%s", old.Body)
		}
		if again := a.must(http.StatusOK, http.MethodGet, q, "1.39", nil); !bytes.Equal(again.Body, first.Body) {
			t.Errorf("1.39 after 1.3: %s", again.Body)
		}

		// A write through the API: root2 joins A.
		agg := a.must(http.StatusOK, http.MethodGet, "/resource_providers/"+root2+"/aggregates", "1.39", nil).json(t)
		a.must(http.StatusOK, http.MethodPut, "/resource_providers/"+root2+"/aggregates", "1.39",
			map[string]any{"aggregates": []string{aggA, aggB}, "resource_provider_generation": agg["resource_provider_generation"]})
		if got := names(t, a.must(http.StatusOK, http.MethodGet, q, "1.39", nil)); !slices.Contains(got, "root2") {
			t.Errorf("after root2 joined A: %v", got)
		}
		// A write through another door of the store: root1 leaves A.
		actor := store.Actor{Name: "console", Via: "console", Role: models.RoleAdmin}
		if _, err := a.Store.SetProviderAggregates(t.Context(), actor, root1, store.AnyGeneration, nil); err != nil {
			t.Fatal(err)
		}
		if got := names(t, a.must(http.StatusOK, http.MethodGet, q, "1.39", nil)); !slices.Equal(got, []string{"root2"}) {
			t.Errorf("after root1 left A: %v, want [root2]", got)
		}
	})
}
