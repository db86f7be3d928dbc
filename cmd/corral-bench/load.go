package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"corral/models"
)

type listStats struct {
	done, refused, failed int64
	p50, p99              time.Duration
	peakRSS, hwm          int64
}

// listLoad has clients GET path over and over for d while it samples the
// server's resident memory.
func listLoad(c *client, path string, clients int, d time.Duration, pid int) listStats {
	var st listStats
	var done, refused, failed atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	stop := make(chan struct{})
	var peak atomic.Int64
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if r := rss(pid, "VmRSS"); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				took, status, err := c.timeGet(path)
				switch {
				case err != nil:
					failed.Add(1)
				case status == http.StatusServiceUnavailable:
					refused.Add(1)
					time.Sleep(100 * time.Millisecond)
				case status != http.StatusOK:
					failed.Add(1)
				default:
					done.Add(1)
					mine = append(mine, took)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(stop)
	sampler.Wait()
	st.done, st.refused, st.failed = done.Load(), refused.Load(), failed.Load()
	st.p50, st.p99 = pct(lat, 0.5), pct(lat, 0.99)
	st.peakRSS, st.hwm = peak.Load(), rss(pid, "VmHWM")
	return st
}

// rss reads a memory figure of /proc/<pid>/status, in bytes.
func rss(pid int, field string) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

type previewStats struct {
	done, failed  int64
	elapsed       time.Duration
	lat           []time.Duration
	p50, p90, p99 time.Duration
	peakRSS       int64
	firstErr      error
}

// add merges another slice of the same server's load into st.
func (st *previewStats) add(o previewStats) {
	st.done += o.done
	st.failed += o.failed
	st.elapsed += o.elapsed
	st.lat = append(st.lat, o.lat...)
	st.p50, st.p90, st.p99 = pct(st.lat, 0.5), pct(st.lat, 0.9), pct(st.lat, 0.99)
	st.peakRSS = max(st.peakRSS, o.peakRSS)
	if st.firstErr == nil {
		st.firstErr = o.firstErr
	}
}

// watchRSS samples pid's resident memory every 20 ms until the returned
// function is called, which reports the peak seen.
func watchRSS(pid int) func() int64 {
	stop := make(chan struct{})
	done := make(chan int64)
	go func() {
		var peak int64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, rss(pid, "VmRSS"))
			select {
			case <-stop:
				done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 { close(stop); return <-done }
}

// previewLoad has clients POST distinct previews (body(first), body(first+1), …)
// for d while the server's resident memory is sampled.
func previewLoad(c *client, body func(int) []byte, first, clients int, d time.Duration, pid int) previewStats {
	var st previewStats
	var next, failed atomic.Int64
	next.Store(int64(first))
	var mu sync.Mutex
	var lat []time.Duration
	var once sync.Once
	peak := watchRSS(pid)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				a, err := c.do(http.MethodPost, "/api/preview", body(int(next.Add(1)-1)))
				if err == nil && a.status != http.StatusOK {
					err = fmt.Errorf("status %d: %.300s", a.status, a.body)
				}
				if err != nil {
					failed.Add(1)
					once.Do(func() { st.firstErr = err })
					continue
				}
				mine = append(mine, a.took)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	st.elapsed = time.Since(start)
	st.peakRSS = peak()
	st.done, st.failed, st.lat = int64(len(lat)), failed.Load(), lat
	st.p50, st.p90, st.p99 = pct(lat, 0.5), pct(lat, 0.9), pct(lat, 0.99)
	return st
}

// afterWrite is the time of a preview right after a write to one
// aggregate, beside the same kind of preview (never asked before) without
// a write just before it: the difference is what the write costs the next
// preview.
type afterWrite struct {
	worst, median           time.Duration
	plainWorst, plainMedian time.Duration
}

// previewAfterWrite changes one aggregate's metadata through the compute
// API, then times the first preview; nine rounds, each also timing a
// distinct preview that follows no write.
func previewAfterWrite(c *client, q *queries, w *models.World) (afterWrite, error) {
	var res afterWrite
	a, err := c.get("/compute/v2.1/os-aggregates")
	if err != nil {
		return res, err
	}
	var doc struct {
		Aggregates []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"aggregates"`
	}
	if err := json.Unmarshal(a.body, &doc); err != nil || len(doc.Aggregates) == 0 {
		return res, fmt.Errorf("list aggregates: status %d: %v", a.status, err)
	}
	target := doc.Aggregates[len(doc.Aggregates)/2]
	preview := func(body []byte) (time.Duration, error) {
		p, err := c.do(http.MethodPost, "/api/preview", body)
		if err != nil {
			return 0, err
		}
		if p.status != http.StatusOK {
			return 0, errors.New("preview: status " + strconv.Itoa(p.status) + ": " + string(p.body[:min(300, len(p.body))]))
		}
		return p.took, nil
	}
	var after, plain []time.Duration
	for round := 0; round < 9; round++ {
		took, err := preview(q.preview(2_000_000 + round))
		if err != nil {
			return res, err
		}
		plain = append(plain, took)
		body, _ := json.Marshal(map[string]any{"set_metadata": map[string]any{"metadata": map[string]string{
			"bench_round": strconv.Itoa(round)}}})
		r, err := c.do(http.MethodPost, "/compute/v2.1/os-aggregates/"+strconv.FormatInt(target.ID, 10)+"/action", body)
		if err != nil {
			return res, err
		}
		if r.status != http.StatusOK {
			return res, fmt.Errorf("set_metadata on %s: status %d: %.300s", target.Name, r.status, r.body)
		}
		if took, err = preview(q.preview(1_000_000 + round)); err != nil {
			return res, err
		}
		after = append(after, took)
	}
	res.worst, res.median = pct(after, 1), pct(after, 0.5)
	res.plainWorst, res.plainMedian = pct(plain, 1), pct(plain, 0.5)
	return res, nil
}
