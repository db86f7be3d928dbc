package console_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"corral/models/cloudgen"
	"corral/models/store"
)

// BenchmarkPages100k measures the heaviest list pages on the benchmark
// cloud (cloudgen.Default: 100,500 providers, 5,000 aggregates) imported
// into a SQLite store, through the real app over loopback HTTP with a
// signed-in admin. Each sub-benchmark reports the median request time as
// p50-ms. The pages paginate on the server, so their cost does not grow
// with the cloud.
func BenchmarkPages100k(b *testing.B) {
	a := &app{App: startApp(b), t: nil}
	w := cloudgen.Generate(cloudgen.Default())
	start := time.Now()
	if err := a.Store.ImportWorld(context.Background(), store.Actor{Name: "bench", Via: "cli"}, w, true); err != nil {
		b.Fatalf("import: %v", err)
	}
	b.Logf("imported %d providers, %d aggregates in %v", len(w.Providers), len(w.Aggregates), time.Since(start).Round(time.Millisecond))

	largest := w.Aggregates[0]
	for _, ag := range w.Aggregates {
		if len(ag.Members) > len(largest.Members) {
			largest = ag
		}
	}
	b.Logf("largest aggregate %s has %d members", largest.Name, len(largest.Members))
	for _, page := range []struct{ name, path, testid string }{
		{"aggregate-detail-largest", "/aggregates/" + largest.UUID, "member-row"},
		{"aggregate-list", "/aggregates", "aggregate-row"},
		{"aggregate-search", "/aggregates?q=tenant&sort=name", "aggregate-row"},
		{"provider-tree", "/providers", "node-host"},
		{"provider-search", "/providers?q=cn0001", "provider-match"},
		{"provider-sharing", "/providers?kind=sharing", "node-sharing"},
		{"provider-children", "/providers?kind=child", "provider-match"},
		{"dashboard-host-map", "/", "map-row"},
		{"servers", "/servers", "server-row"},
		{"servers-one-host", "/servers?host=" + w.Servers[0].Host, "server-row"},
	} {
		b.Run(page.name, func(b *testing.B) {
			c := a.asTB(b, a.AdminName)
			// One checked request first: the page must show a full page of rows.
			r := c.Get(page.path)
			if r.StatusCode != http.StatusOK {
				b.Fatalf("GET %s: %d", page.path, r.StatusCode)
			}
			if n := r.Count(b, page.testid); n == 0 || n > 50 {
				b.Fatalf("GET %s shows %d rows", page.path, n)
			}
			var took []time.Duration
			for b.Loop() {
				t0 := time.Now()
				r := c.Get(page.path)
				took = append(took, time.Since(t0))
				if r.StatusCode != http.StatusOK {
					b.Fatalf("GET %s: %d", page.path, r.StatusCode)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		})
	}
}
