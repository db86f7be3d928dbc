package placementapi_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
	"corral/models/store"
)

// BenchmarkListMemberOf measures GET /resource_providers with member_of
// through the whole application (HTTP, token check, revision check, the
// core's Direct mode over the cached snapshot) on a cloud of 10,000
// providers and 500 aggregates.
func BenchmarkListMemberOf(b *testing.B) {
	a, w := benchApp(b)
	// One required aggregate and the reservation aggregates forbidden, as
	// nova's request filters send them.
	required := w.Aggregates[len(w.Aggregates)-1].UUID
	forbidden := ""
	for _, agg := range w.Aggregates[:20] {
		if forbidden != "" {
			forbidden += ","
		}
		forbidden += agg.UUID
	}
	// Each request forbids two more aggregates, a different pair each
	// time, so that none is answered from the small answers kept per
	// revision.
	n := len(w.Aggregates)
	path := func(i int) string {
		q := url.Values{"member_of": {"in:" + required, "!in:" + forbidden,
			"!in:" + w.Aggregates[i%n].UUID + "," + w.Aggregates[(i/n)%n].UUID}}
		return "/resource_providers?" + q.Encode()
	}
	a.must(http.StatusOK, "GET", path(0), "1.32", nil) // builds the snapshot
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := a.call("GET", path(i), "1.32", a.Admin, nil); r.Status != http.StatusOK {
			b.Fatalf("status %d: %s", r.Status, r.Body)
		}
	}
}

// BenchmarkListOneAggregate measures the smallest useful list through the
// whole application: member_of one aggregate of a cloud of 10,000
// providers. Its cost is nearly all per-request overhead.
func BenchmarkListOneAggregate(b *testing.B) {
	a, w := benchApp(b)
	path := "/resource_providers?member_of=" + w.Aggregates[len(w.Aggregates)/2].UUID
	a.must(http.StatusOK, "GET", path, "1.32", nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := a.call("GET", path, "1.32", a.Admin, nil); r.Status != http.StatusOK {
			b.Fatalf("status %d: %s", r.Status, r.Body)
		}
	}
}

// BenchmarkCandidates measures GET /allocation_candidates through the whole
// application on the candidate bench's world of 10,000 compute nodes: the
// three queries of BenchmarkCandidatesVsPlacement, corral alone.
func BenchmarkCandidates(b *testing.B) {
	w, forbidden := benchCandidatesWorld(10000)
	st := openSQLite(b)
	if err := st.ImportWorld(context.Background(), store.Actor{Name: "bench", Via: "cli"}, w, true); err != nil {
		b.Fatal(err)
	}
	a := startApp(b, st)
	for _, q := range []struct{ name, q string }{
		{"limit=1000", "resources=VCPU:1,MEMORY_MB:512&member_of=!" + forbidden + "&limit=1000"},
		{"no_limit", "resources=VCPU:1,MEMORY_MB:512&member_of=!" + forbidden},
		{"numbered+isolate", "resources=VCPU:1,MEMORY_MB:512&member_of=!" + forbidden + "&resources1=DISK_GB:10&group_policy=isolate&limit=1000"},
	} {
		path := "/allocation_candidates?" + q.q
		a.must(http.StatusOK, "GET", path, "1.39", nil) // builds the snapshot
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := a.call("GET", path, "1.39", a.Admin, nil); r.Status != http.StatusOK {
					b.Fatalf("status %d: %s", r.Status, r.Body)
				}
			}
		})
	}
}

// discardWriter is a ResponseWriter that keeps nothing but the status.
type discardWriter struct {
	h      http.Header
	status int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(s int)           { d.status = s }

// BenchmarkServeOneAggregate is BenchmarkListOneAggregate without the
// network and the client: the server's own work and allocations per
// request, from the router to the last byte.
func BenchmarkServeOneAggregate(b *testing.B) {
	a, w := benchApp(b)
	path := "/placement/resource_providers?member_of=" + w.Aggregates[len(w.Aggregates)/2].UUID
	req, err := http.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header.Set("X-Auth-Token", a.Admin)
	req.Header.Set("OpenStack-API-Version", "placement 1.32")
	d := &discardWriter{}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d.h, d.status = http.Header{}, 0
		a.web.Echo.ServeHTTP(d, req)
		if d.status != http.StatusOK {
			b.Fatalf("status %d", d.status)
		}
	}
}

// benchApp is the application on a generated cloud of 10,000 providers
// and 500 aggregates.
func benchApp(b *testing.B) (*app, *models.World) {
	cfg := cloudgen.Default()
	cfg.Hosts, cfg.SharingProviders, cfg.Aggregates = 2500, 50, 500
	cfg.TenantAggregates, cfg.ReservationAggregates, cfg.Servers, cfg.ServerGroups = 100, 30, 0, 0
	w := cloudgen.Generate(cfg)
	st := openSQLite(b)
	if err := st.ImportWorld(context.Background(), store.Actor{Name: "bench", Via: "cli"}, w, true); err != nil {
		b.Fatal(err)
	}
	return startApp(b, st), w
}
