package query

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"corral/handlers/forms"
	"corral/models"
	"corral/models/cloudgen"
	"corral/models/scheduling"
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
		if _, err := scheduling.ComputeImpact(ls.snap, ds.snap, projects, flavors); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var m *scheduling.Impact
	for i := 0; i < b.N; i++ {
		if cold {
			b.StopTimer()
			ls, ds = mustState(b, lw), mustState(b, dw)
			b.StartTimer()
		}
		var err error
		if m, err = scheduling.ComputeImpact(ls.snap, ds.snap, projects, flavors); err != nil {
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

// BenchmarkQueryMatrixPage is the query page with its host × stage matrix
// on the 100,000-provider cloud: the request run, a page of the matrix
// (failed hosts only, page 3) built and the whole page rendered. It
// reports the median (p50-ms), the figure the page is held to (≤ 100 ms).
func BenchmarkQueryMatrixPage(b *testing.B) {
	lw, _ := benchWorlds(b)
	st := mustState(b, lw)
	h := &Handler{}
	q := url.Values{"project": {"project-1"}, "flavor": {cloudgen.FlavorSSD}, "member_of": {"!" + cloudgen.FreePool},
		"hfail": {"1"}, "hpage": {"3"}}
	var took []time.Duration
	b.ResetTimer()
	var bytes, rows int
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		f := parseForm(q)
		res, err := h.evaluateOn(&f, st, nil, views.QueryResult{})
		if err != nil || res.Trace == nil || res.Trace.Matrix == nil {
			b.Fatalf("evaluate: %v %+v", err, res)
		}
		var buf strings.Builder
		if err := views.QueryPage(views.Page{Title: "Live query"}, f, st.options(), res).Render(context.Background(), &buf); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(t0))
		bytes, rows = buf.Len(), len(res.Trace.Matrix.Rows)
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(bytes), "page-bytes")
	b.ReportMetric(float64(rows), "rows")
}

// BenchmarkInlineImpactOfAnAggregateEdit is what the aggregate page does
// as an admin types a reservation tag on the 100,000-provider cloud: the
// form read as changes, the draft world built, the impact matrix over the
// first 100 projects × 20 flavors (and any other project) and the
// strandings of 50,000 servers. Held to ≤ 300 ms.
func BenchmarkInlineImpactOfAnAggregateEdit(b *testing.B) {
	lw, _ := benchWorlds(b)
	st := mustState(b, lw)
	zone := ""
	for _, a := range lw.Aggregates {
		if a.AvailabilityZone != nil {
			zone = a.UUID
			break
		}
	}
	form := url.Values{"impact_form": {"reservations"}, "impact_target": {zone}, "reservation": {"drain"}}
	benchInlineImpact(b, st, form)
}

// BenchmarkInlineImpactOfAFlavorEdit is the flavor page's inline impact as
// an admin gives a flavor an extra spec on the 100,000-provider cloud.
func BenchmarkInlineImpactOfAFlavorEdit(b *testing.B) {
	lw, _ := benchWorlds(b)
	st := mustState(b, lw)
	form := url.Values{"impact_form": {"flavor"}, "impact_target": {cloudgen.FlavorSmall},
		"key": {"aggregate_instance_extra_specs:ssd"}, "value": {"true"}}
	benchInlineImpact(b, st, form)
}

// benchInlineImpact times the inline impact of one form and reports its
// p50 and what it found.
func benchInlineImpact(b *testing.B, st *state, form url.Values) {
	var took []time.Duration
	b.ResetTimer()
	var dropped, stranded int
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		props, err := inlineImpactOn(st, form, forms.Who{})
		if err != nil || props.Error != "" {
			b.Fatalf("inline impact: %v %+v", err, props)
		}
		took = append(took, time.Since(t0))
		dropped, stranded = props.Dropped, props.ServersStranded
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(dropped), "dropped-pairs")
	b.ReportMetric(float64(stranded), "stranded-servers")
}
