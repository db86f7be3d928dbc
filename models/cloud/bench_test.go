package cloud_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
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
// Placement runs as a production cloud runs it: under uWSGI with several
// worker processes (CORRAL_BENCH_PLACEMENT_PROCESSES, default 4; 1 is
// Debian's single-process placement-api). It also measures the ceiling:
// how many of the cheapest per-provider GETs Placement answers a second at
// the sync's parallelism, and so the least time any sync making that many
// requests can take. CORRAL_BENCH_SYNC_PROVIDERS changes the size.
func BenchmarkSyncPlacement(b *testing.B) {
	cloudtest.SkipOrFail(b)
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("CORRAL_BENCH_SYNC_PROVIDERS")); err == nil && v > 0 {
		n = v
	}
	processes := 4
	if v, err := strconv.Atoi(os.Getenv("CORRAL_BENCH_PLACEMENT_PROCESSES")); err == nil && v > 0 {
		processes = v
	}
	const parallel = 8
	dir := b.TempDir()
	c, err := cloudtest.StartServed(dir, processes)
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
		cpuBefore, err := c.PlacementCPU()
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		first, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "bench", Parallel: parallel})
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		cpuAfter, err := c.PlacementCPU()
		if err != nil {
			b.Fatal(err)
		}
		second, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "bench", Parallel: parallel})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cl.Close()
		if first.Counts["providers"] != n || second.Stats.ProvidersRead != 0 {
			b.Fatalf("first sync saw %d providers, the unchanged one re-read %d", first.Counts["providers"], second.Stats.ProvidersRead)
		}
		b.ReportMetric(took.Seconds(), "s/first-sync")
		b.ReportMetric(float64(first.Stats.Requests), "requests/first-sync")
		b.ReportMetric(float64(second.Stats.Requests), "requests/unchanged-sync")
		b.ReportMetric(second.Stats.Duration.Seconds(), "s/unchanged-read")
		b.ReportMetric(float64(first.Stats.Requests)/float64(n), "requests/provider")
		// Placement's own processor time per request: what bounds a sync
		// on a machine of given cores, whatever else runs on it.
		perRequest := (cpuAfter - cpuBefore).Seconds() / float64(first.Stats.Requests)
		b.ReportMetric(perRequest*1000, "placement-cpu-ms/request")
		b.ReportMetric(perRequest*float64(first.Stats.Requests)/float64(runtime.NumCPU()), "s/first-sync-placement-cpu-bound")
		rate := ceiling(b, c, parallel, 10*time.Second)
		b.ReportMetric(rate, "ceiling-req/s")
		b.ReportMetric(float64(first.Stats.Requests)/rate, "s/first-sync-at-ceiling")
		b.StartTimer()
	}
}

// ceiling is how many GET /resource_providers/{uuid}/inventories Placement
// answers a second with parallel clients, over the given time.
func ceiling(b *testing.B, c *cloudtest.Cloud, parallel int, d time.Duration) float64 {
	var list struct {
		ResourceProviders []struct {
			UUID string `json:"uuid"`
		} `json:"resource_providers"`
	}
	if err := c.Call("placement", "GET", "resource_providers", nil, &list, 200); err != nil {
		b.Fatal(err)
	}
	var done atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; time.Since(start) < d; i += parallel {
				rp := list.ResourceProviders[i%len(list.ResourceProviders)].UUID
				if err := c.Call("placement", "GET", "resource_providers/"+rp+"/inventories", nil, nil, 200); err != nil {
					b.Error(err)
					return
				}
				done.Add(1)
			}
		}(w)
	}
	wg.Wait()
	return float64(done.Load()) / time.Since(start).Seconds()
}

func callerDir() (uintptr, string, int, bool) {
	pc, file, line, ok := runtime.Caller(0)
	return pc, filepath.Dir(file), line, ok
}
