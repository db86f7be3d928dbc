package placementapi

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"corral/models/cloudgen"
	"corral/models/placement"
)

// TestDirectSparseMatchesEvaluate: the sparse answer is exactly the
// index's Direct evaluation, for random terms over a generated cloud
// (unknown aggregates, any-of lists, forbidden sets, contradictions).
func TestDirectSparseMatchesEvaluate(t *testing.T) {
	cfg := cloudgen.Small()
	cfg.Hosts, cfg.Aggregates = 300, 60
	w := cloudgen.Generate(cfg)
	ix, err := placement.NewIndex(w.Providers, w.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() string {
		if rng.IntN(10) == 0 {
			return "00000000-0000-0000-0000-00000000dead" // unknown
		}
		return w.Aggregates[rng.IntN(len(w.Aggregates))].UUID
	}
	sparseRuns := 0
	for round := 0; round < 3000; round++ {
		var terms placement.Terms
		for range rng.IntN(4) {
			term := []string{pick()}
			for range rng.IntN(3) {
				term = append(term, pick())
			}
			terms.Required = append(terms.Required, term)
		}
		for range rng.IntN(4) {
			terms.Forbidden = append(terms.Forbidden, pick())
		}
		got, ok := directSparse(ix, terms)
		if !ok {
			if len(terms.Required) > 0 {
				t.Fatalf("%+v: no sparse answer for a small cloud", terms)
			}
			continue
		}
		sparseRuns++
		var want []int32
		for _, i := range ix.Evaluate(terms, placement.Direct).Matching() {
			want = append(want, int32(i))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%+v:\nsparse   %v\nevaluate %v", terms, got, want)
		}
	}
	if sparseRuns < 1000 {
		t.Fatalf("only %d rounds took the sparse path", sparseRuns)
	}
}

// TestEncodingsSharedAcrossAggregateUpdates: a snapshot updated for its
// aggregates only keeps the providers' encodings; new provider objects
// get new ones.
func TestEncodingsSharedAcrossAggregateUpdates(t *testing.T) {
	w := cloudgen.Generate(cloudgen.Small())
	ix, err := placement.NewIndex(w.Providers, w.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	api := &API{}
	first := api.encoded(ix)
	first.shape(shapeOf(placement.Latest))
	aggs := slices.Clone(w.Aggregates)
	aggs[0].Metadata = map[string]string{"k": "v"}
	ix2, err := ix.WithAggregates(aggs, map[string]bool{aggs[0].UUID: true})
	if err != nil {
		t.Fatal(err)
	}
	if second := api.encoded(ix2); second.encodings != first.encodings || second.built(shapeOf(placement.Latest)) == nil {
		t.Fatal("an aggregate update dropped the providers' encodings")
	}
	ix3, err := placement.NewIndex(slices.Clone(w.Providers), w.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	if third := api.encoded(ix3); third.encodings == first.encodings {
		t.Fatal("new provider objects kept the old encodings")
	}
}

// TestSmallAnswersBuildTheShapeInTheBackground: after buildAfterSmall
// small answers encoded on the spot, the shared encoding gets built, and
// answers copied from it are byte for byte the ones encoded on the spot.
func TestSmallAnswersBuildTheShapeInTheBackground(t *testing.T) {
	w := cloudgen.Generate(cloudgen.Small())
	ix, err := placement.NewIndex(w.Providers, w.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	api := &API{} // below 1.15: no Last-Modified, no clock
	var sel selection
	for _, i := range []int{3, 4, 5, 9, 17} {
		sel.add(i)
	}
	answer := func() string {
		rec := httptest.NewRecorder()
		c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/resource_providers", nil), rec)
		if err := api.writeSelection(c, placement.V(14), ix, &sel, nil); err != nil {
			t.Fatal(err)
		}
		return rec.Body.String()
	}
	onTheSpot := answer()
	for range buildAfterSmall {
		if got := answer(); got != onTheSpot {
			t.Fatalf("small answers differ:\n%s\n%s", got, onTheSpot)
		}
	}
	sh := &api.encoded(ix).shapes[shapeOf(placement.V(14))]
	deadline := time.Now().Add(10 * time.Second)
	for !sh.ready.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the shape was not built after enough small answers")
		}
		time.Sleep(time.Millisecond)
	}
	if got := answer(); got != onTheSpot {
		t.Fatalf("copied from the shared encoding:\n%s\nencoded on the spot:\n%s", got, onTheSpot)
	}
}
