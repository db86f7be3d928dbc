package query

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
	"corral/views"
)

var (
	benchOnce             sync.Once
	benchLive, benchDraft *models.World
)

// benchWorlds is the generated 100,000-provider cloud and a draft of it
// that drains an availability zone by giving its aggregate a reservation
// key: every pair that could use the zone's hosts loses them.
func benchWorlds(b *testing.B) (*models.World, *models.World) {
	benchOnce.Do(func() {
		benchLive = cloudgen.Generate(cloudgen.Default())
		zone := ""
		for _, a := range benchLive.Aggregates {
			if a.AvailabilityZone != nil {
				zone = a.Name
				break
			}
		}
		benchDraft = editAggregate(b, benchLive, zone, func(a *models.Aggregate) { a.Metadata["reservation:drain"] = "true" })
	})
	return benchLive, benchDraft
}

func benchMatrix(b *testing.B, cold bool) {
	lw, dw := benchWorlds(b)
	ls, ds := mustState(b, lw), mustState(b, dw)
	projects, flavors := ls.options().Projects[:100], ls.options().Flavors[:20]
	if !cold {
		if _, err := ComputeMatrix(ls, ds, projects, flavors); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var m *Matrix
	for i := 0; i < b.N; i++ {
		if cold {
			b.StopTimer()
			ls, ds = mustState(b, lw), mustState(b, dw)
			b.StartTimer()
		}
		var err error
		if m, err = ComputeMatrix(ls, ds, projects, flavors); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(m.Dropped), "dropped-pairs")
}

// BenchmarkImpactMatrix is 100 projects × 20 flavors on the 100,000-provider
// cloud, live against a draft, with each world's matrix index built.
func BenchmarkImpactMatrix(b *testing.B) { benchMatrix(b, false) }

// BenchmarkImpactMatrixCold also builds both worlds' matrix indexes, as the
// first matrix after a write does.
func BenchmarkImpactMatrixCold(b *testing.B) { benchMatrix(b, true) }

// BenchmarkPreviewFragment is one keystroke's work on the 100,000-provider
// cloud: the request run, the three member_of modes compared, and the
// fragment rendered.
func BenchmarkPreviewFragment(b *testing.B) {
	lw, _ := benchWorlds(b)
	st := mustState(b, lw)
	h := &Handler{}
	b.ResetTimer()
	var bytes int
	for i := 0; i < b.N; i++ {
		f := parseForm(url.Values{"project": {"project-1"}, "flavor": {cloudgen.FlavorSSD}, "member_of": {"!" + cloudgen.FreePool}})
		res, err := h.evaluateOn(&f, st, nil, views.QueryResult{})
		if err != nil || res.Trace == nil {
			b.Fatalf("evaluate: %v %+v", err, res)
		}
		var buf strings.Builder
		if err := views.QueryPreviewResponse(f, res).Render(context.Background(), &buf); err != nil {
			b.Fatal(err)
		}
		bytes = buf.Len()
	}
	b.ReportMetric(float64(bytes), "fragment-bytes")
}
