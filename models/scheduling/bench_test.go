package scheduling

import (
	"runtime"
	"strings"
	"sync"
	"testing"

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
	var passed int
	for b.Loop() {
		tr, err := s.Run(spec)
		if err != nil {
			b.Fatal(err)
		}
		passed = tr.Summary.HostsPassed
	}
	b.ReportMetric(float64(passed), "hosts-passed")
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
