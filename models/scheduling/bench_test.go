package scheduling

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"corral/models"
	"corral/models/cloudgen"
	"corral/models/placement"
)

// The benchmark cloud is generated once per test binary: 100,500 providers
// and 5,000 aggregates (cloudgen.Default).
var (
	benchOnce  sync.Once
	benchWorld *models.World
	benchSnap  *Snapshot
)

func benchSetup(b *testing.B) (*models.World, *Snapshot) {
	b.Helper()
	benchOnce.Do(func() {
		benchWorld = cloudgen.Generate(cloudgen.Default())
		s, err := NewSnapshot(benchWorld)
		if err != nil {
			panic(err)
		}
		benchSnap = s
	})
	return benchWorld, benchSnap
}

func BenchmarkSnapshotBuild(b *testing.B) {
	w, _ := benchSetup(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := NewSnapshot(w); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotAggregateUpdate is what a write to one aggregate costs
// the live snapshot of the 100,000-provider cloud: the aggregate side is
// indexed again, the provider side shared.
func BenchmarkSnapshotAggregateUpdate(b *testing.B) {
	w, s := benchSetup(b)
	nw := *w
	nw.Aggregates = append([]models.Aggregate(nil), w.Aggregates...)
	a := nw.Aggregates[len(nw.Aggregates)/2]
	a.Metadata = map[string]string{"filter_tenant_id": "project-7"}
	nw.Aggregates[len(nw.Aggregates)/2] = a
	changed := map[string]bool{a.UUID: true}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.WithAggregates(&nw, changed); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotMemory reports the heap a snapshot holds beyond the
// world it indexes.
func BenchmarkSnapshotMemory(b *testing.B) {
	w, _ := benchSetup(b)
	var keep *Snapshot
	var total uint64
	n := 0
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, err := NewSnapshot(w)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		keep = s
		if after.HeapAlloc > before.HeapAlloc {
			total += after.HeapAlloc - before.HeapAlloc
		}
		n++
	}
	runtime.KeepAlive(keep)
	b.ReportMetric(float64(total)/float64(n), "snapshot-bytes")
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc), "heap-bytes(world+snapshot)")
}

// benchTerms is 5 AND-ed terms plus a 50-aggregate forbidden list, each
// term an any-of list drawn from one kind of aggregate.
func benchTerms(w *models.World) placement.Terms {
	byPrefix := func(prefix string, n int) []string {
		var out []string
		for _, a := range w.Aggregates {
			if strings.HasPrefix(a.Name, prefix) && len(out) < n {
				out = append(out, a.UUID)
			}
		}
		return out
	}
	var forbidden []string
	for _, a := range w.Aggregates {
		if strings.HasPrefix(a.Name, "reservation-") && len(forbidden) < 50 {
			forbidden = append(forbidden, a.UUID)
		}
	}
	return placement.Terms{
		Required: [][]string{
			byPrefix("zone-", 6),
			byPrefix("storage-", 400),
			byPrefix("spec-", 2000),
			byPrefix("tenant-", 1500),
			byPrefix("", 5000),
		},
		Forbidden: forbidden,
	}
}

func BenchmarkMemberOf(b *testing.B) {
	w, s := benchSetup(b)
	terms := benchTerms(w)
	b.ResetTimer()
	var excluded int
	for b.Loop() {
		r := s.Index().Evaluate(terms, placement.Unnumbered)
		excluded = r.CountExcluded()
	}
	b.ReportMetric(float64(excluded), "excluded")
}

func BenchmarkPipeline(b *testing.B) {
	_, s := benchSetup(b)
	spec := &RequestSpec{
		ProjectID: cloudgen.ProjectPrefix + "7",
		Flavor:    FlavorRef{Name: cloudgen.FlavorSSD},
		Placement: PlacementSpec{MemberOf: []string{"!" + cloudgen.WindowsAggregate}},
		Limit:     200,
		Settings: &SettingsOverride{
			EnabledFilters: &[]string{models.FilterAggregateInstanceExtraSpecs, models.FilterAggregateMultiTenancy,
				models.FilterServerGroupAffinity, models.FilterServerGroupAntiAffinity},
		},
	}
	b.ResetTimer()
	var passed, n int
	cpu0 := cpuTime()
	for b.Loop() {
		tr, err := s.Run(spec)
		if err != nil {
			b.Fatal(err)
		}
		passed = tr.Summary.HostsPassed
		n++
	}
	b.ReportMetric(float64(passed), "hosts-passed")
	// CPU time per run: on a busy machine wall time measures the
	// neighbours too.
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n), "cpu-ns/op")
}

// BenchmarkPipelineNoFilters is the pipeline's own cost: request filters,
// placement, weighers and the trace, with no host filter enabled.
func BenchmarkPipelineNoFilters(b *testing.B) {
	_, s := benchSetup(b)
	spec := &RequestSpec{
		ProjectID: cloudgen.ProjectPrefix + "7",
		Flavor:    FlavorRef{Name: cloudgen.FlavorSSD},
		Placement: PlacementSpec{MemberOf: []string{"!" + cloudgen.WindowsAggregate}},
		Limit:     200,
		Settings:  &SettingsOverride{EnabledFilters: &[]string{}},
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Run(spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPipelineTenantIsolation: tenant isolation leaves a few dozen
// hosts, so nearly 100,000 providers are excluded at placement.
func BenchmarkPipelineTenantIsolation(b *testing.B) {
	_, s := benchSetup(b)
	spec := &RequestSpec{
		ProjectID: cloudgen.ProjectPrefix + "7",
		Flavor:    FlavorRef{Name: cloudgen.FlavorSmall},
		Limit:     200,
		Settings:  &SettingsOverride{LimitTenantsToPlacementAggregate: ptr(true)},
	}
	b.ResetTimer()
	var passed, excluded int
	for b.Loop() {
		tr, err := s.Run(spec)
		if err != nil {
			b.Fatal(err)
		}
		passed, excluded = tr.Summary.HostsPassed, tr.Summary.ProvidersExcluded
	}
	b.ReportMetric(float64(passed), "hosts-passed")
	b.ReportMetric(float64(excluded), "providers-excluded")
}

// BenchmarkPipelineParallel is BenchmarkPipeline's request from every CPU at
// once: the throughput a loaded preview endpoint sees (ns/op is per
// request, all CPUs together).
func BenchmarkPipelineParallel(b *testing.B) {
	_, s := benchSetup(b)
	spec := &RequestSpec{
		ProjectID: cloudgen.ProjectPrefix + "7",
		Flavor:    FlavorRef{Name: cloudgen.FlavorSSD},
		Placement: PlacementSpec{MemberOf: []string{"!" + cloudgen.WindowsAggregate}},
		Limit:     200,
		Settings: &SettingsOverride{
			EnabledFilters: &[]string{models.FilterAggregateInstanceExtraSpecs, models.FilterAggregateMultiTenancy,
				models.FilterServerGroupAffinity, models.FilterServerGroupAntiAffinity},
		},
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Run(spec); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkPipelineMultiCreate schedules 10 instances of an anti-affinity
// group one by one over the benchmark cloud, every host filter enabled.
func BenchmarkPipelineMultiCreate(b *testing.B) {
	w, s := benchSetup(b)
	group := ""
	for _, g := range w.ServerGroups {
		if g.Policy == models.PolicyAntiAffinity {
			group = g.UUID
			break
		}
	}
	spec := &RequestSpec{
		ProjectID:    cloudgen.ProjectPrefix + "7",
		Flavor:       FlavorRef{Name: cloudgen.FlavorGPU},
		ServerGroup:  group,
		NumInstances: 10,
		Limit:        200,
		Settings:     &SettingsOverride{EnabledFilters: ptr(HostFilterNames())},
	}
	b.ResetTimer()
	var placed int
	for b.Loop() {
		tr, err := s.Run(spec)
		if err != nil {
			b.Fatal(err)
		}
		placed = len(tr.Selections)
	}
	b.ReportMetric(float64(placed), "instances-placed")
}

// BenchmarkPipelineEightClients is the preview endpoint's load profile
// without HTTP: 8 clients sending a mix of requests back to back, each
// answer encoded as JSON. It reports the latency percentiles a client sees
// (ns/op is per request, all clients together).
func BenchmarkPipelineEightClients(b *testing.B) {
	_, s := benchSetup(b)
	docs := []string{
		`{"project_id":"project-7","flavor":"ssd.medium","placement":{"member_of":["!windows-licensed"]},"limit":200,
		  "settings":{"enabled_filters":["AggregateInstanceExtraSpecsFilter","AggregateMultiTenancyIsolation","ServerGroupAffinityFilter","ServerGroupAntiAffinityFilter"]}}`,
		`{"project_id":"project-3","flavor":"gpu.large","server_group":"group-2","limit":200,
		  "settings":{"enabled_filters":["AggregateInstanceExtraSpecsFilter","AggregateInstanceTypeFilter","AggregateMultiTenancyIsolation","ServerGroupAffinityFilter","ServerGroupAntiAffinityFilter"]}}`,
		`{"project_id":"project-9","flavor":"m1.small","limit":200,"settings":{"limit_tenants_to_placement_aggregate":true}}`,
		`{"project_id":"project-11","flavor":"reserved.large","server_group":"group-4","num_instances":3,"limit":200}`,
	}
	var specs []*RequestSpec
	for _, d := range docs {
		spec, err := DecodeRequestJSON([]byte(d), "")
		if err != nil {
			b.Fatal(err)
		}
		specs = append(specs, spec)
	}
	const clients = 8
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				start := time.Now()
				tr, err := s.Run(specs[i%int64(len(specs))])
				if err != nil {
					b.Error(err)
					return
				}
				if _, err := json.Marshal(tr); err != nil {
					b.Error(err)
					return
				}
				lat[i] = time.Since(start)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
}

// BenchmarkPreviewDistinct is POST /api/preview's work with every request
// different, as corral-bench sends them: the project, the flavor and three
// forbidden aggregates vary; five member_of terms, one of them a
// fifty-aggregate !in:; a limit of 200; decoding the request and encoding
// the trace included.
func BenchmarkPreviewDistinct(b *testing.B) {
	w, s := benchSetup(b)
	var five, fifty []string
	for i := 0; i < 5; i++ {
		five = append(five, w.Aggregates[i*37].UUID)
	}
	for i := 0; i < 50; i++ {
		fifty = append(fifty, w.Aggregates[1000+i*13].UUID)
	}
	body := func(i int) []byte {
		req := map[string]any{
			"project_id": fmt.Sprintf("%s%d", cloudgen.ProjectPrefix, i%2000),
			"flavor":     w.Flavors[(i/2000)%len(w.Flavors)].Name,
			"limit":      200,
			"placement": map[string]any{"member_of": []string{
				"in:" + strings.Join(five, ","), "!in:" + strings.Join(fifty, ","),
				"!" + w.Aggregates[(i*31)%len(w.Aggregates)].UUID, "!" + w.Aggregates[(i*17+3)%len(w.Aggregates)].UUID,
				"!" + w.Aggregates[(i*7+5)%len(w.Aggregates)].UUID,
			}},
		}
		out, _ := json.Marshal(req)
		return out
	}
	b.ResetTimer()
	i := 0
	var buf []byte
	cpu0 := cpuTime()
	defer func() {
		// CPU time per request: on a busy machine wall time measures the
		// neighbours too.
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(i), "cpu-ns/op")
	}()
	for b.Loop() {
		spec, err := DecodeRequestJSON(body(i), "")
		if err != nil {
			b.Fatal(err)
		}
		tr, err := s.Run(spec)
		if err != nil {
			b.Fatal(err)
		}
		// As the preview endpoint encodes it.
		if buf, err = tr.AppendJSON(buf[:0]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
