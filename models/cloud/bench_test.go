package cloud_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/store/storetest"
)

// BenchmarkSyncPlacement syncs a real Placement holding 10,000 compute
// providers (inventories, one allocation each, memberships) into a fresh
// SQLite store, then syncs again unchanged. It reports the first sync's
// time and requests and the unchanged sync's requests.
// CORRAL_BENCH_SYNC_PROVIDERS changes the size.
func BenchmarkSyncPlacement(b *testing.B) {
	cloudtest.SkipOrFail(b)
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("CORRAL_BENCH_SYNC_PROVIDERS")); err == nil && v > 0 {
		n = v
	}
	dir := b.TempDir()
	c, err := cloudtest.Start(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	_, file, _, _ := callerDir()
	populate := exec.Command("/usr/bin/python3", filepath.Join(file, "cloudtest", "testdata", "populate_placement.py"),
		filepath.Join(dir, "placement", "placement.db"), strconv.Itoa(n), "bench-")
	if out, err := populate.CombinedOutput(); err != nil {
		b.Fatalf("populate: %v\n%s", err, out)
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st := storetest.Open(b)
		cl, err := cloud.Connect(ctx, cloud.Options{ComputeURL: c.ComputeURL, PlacementURL: c.PlacementURL, Token: cloudtest.Token})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		first, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "bench", Parallel: 4})
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		second, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "bench", Parallel: 4})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if first.Counts["providers"] != n || second.Stats.ProvidersRead != 0 {
			b.Fatalf("first sync saw %d providers, the unchanged one re-read %d", first.Counts["providers"], second.Stats.ProvidersRead)
		}
		b.ReportMetric(took.Seconds(), "s/first-sync")
		b.ReportMetric(float64(first.Stats.Requests), "requests/first-sync")
		b.ReportMetric(float64(second.Stats.Requests), "requests/unchanged-sync")
		b.ReportMetric(second.Stats.Duration.Seconds(), "s/unchanged-read")
		b.StartTimer()
	}
}

func callerDir() (uintptr, string, int, bool) {
	pc, file, line, ok := runtime.Caller(0)
	return pc, filepath.Dir(file), line, ok
}
