// Command corral-load measures the preview endpoint the way a pipeline or a
// busy console would use it: it builds the generated 100,000-provider cloud
// into a temporary SQLite store, starts the real application on 127.0.0.1,
// runs concurrent clients against POST /api/preview for a bounded number of
// requests and time, prints latency percentiles and throughput, and exits.
//
// It exits 1 when a request fails or a latency target is missed, so that
// `make bench` reports a regression instead of a number nobody reads.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"corral/models"
	"corral/models/cloudgen"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/web"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	clients  int
	requests int
	duration time.Duration
	small    bool
	p50, p99 time.Duration
	profile  string
	distinct int
	db       string
	apis     bool
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("corral-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.IntVar(&o.clients, "clients", 8, "concurrent clients")
	fs.IntVar(&o.requests, "requests", 2000, "requests of the working-set phase")
	fs.IntVar(&o.distinct, "distinct", 200, "requests of the all-different phase (0: skip it)")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "stop each phase after this long")
	fs.BoolVar(&o.small, "small", false, "use the small generated cloud (a quick check, not a measurement)")
	fs.DurationVar(&o.p50, "p50", 50*time.Millisecond, "fail when the median latency is above this")
	fs.DurationVar(&o.p99, "p99", 150*time.Millisecond, "fail when the 99th percentile is above this")
	fs.StringVar(&o.profile, "cpuprofile", "", "write a CPU profile of the measured phase (server included) to this file")
	fs.StringVar(&o.db, "db", "", "a postgres:// URL to load into instead of a temporary SQLite file (its data is replaced)")
	fs.BoolVar(&o.apis, "apis", true, "also measure the compute and Placement APIs (GET, as an admin)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.clients < 1 || o.requests < 1 || o.duration <= 0 {
		fmt.Fprintln(stderr, "corral-load: -clients, -requests and -duration must be positive")
		return 2
	}
	if err := load(context.Background(), o, stdout); err != nil {
		fmt.Fprintln(stderr, "corral-load:", err)
		return 1
	}
	return 0
}

func load(ctx context.Context, o options, out io.Writer) error {
	dir, err := os.MkdirTemp("", "corral-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	cfg := cloudgen.Default()
	if o.small {
		cfg = cloudgen.Small()
	}
	t0 := time.Now()
	world := cloudgen.Generate(cfg)
	dsn := filepath.Join(dir, "corral.db")
	if o.db != "" {
		dsn = o.db
	}
	s, err := store.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer s.Close()
	actor := store.Actor{Name: "corral-load", Via: "cli"}
	if err = s.ImportWorld(ctx, actor, world, true); err != nil {
		return fmt.Errorf("import the generated cloud: %w", err)
	}
	if _, err = s.CreateUser(ctx, actor, "load", "load-password-1234", models.RoleReader, ""); err != nil {
		return err
	}
	token, _, err := s.CreateToken(ctx, actor, "load", "load test")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "world: %d providers, %d aggregates, %d flavors; stored in %s\n",
		len(world.Providers), len(world.Aggregates), len(world.Flavors), time.Since(t0).Round(time.Millisecond))

	app, err := web.NewApp(s, slog.New(slog.NewTextHandler(io.Discard, nil)), web.Config{})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: app, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	url := "http://" + ln.Addr().String() + "/api/preview"

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.clients}, Timeout: 2 * time.Minute}
	working := requestMix(world, 64, 0)
	distinct := requestMix(world, o.distinct, 64)

	// The first request builds the snapshot; it is reported, not counted.
	t1 := time.Now()
	if _, err := post(client, url, token, working[0]); err != nil {
		return fmt.Errorf("first request: %w", err)
	}
	fmt.Fprintf(out, "first request (snapshot build included): %s\n", time.Since(t1).Round(time.Millisecond))

	if o.profile != "" {
		f, err := os.Create(o.profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var problems []string
	// A working set of 64 requests asked over and over, as a console full
	// of admins and a few pipelines ask: answers are reused until the next
	// write. The latency targets apply here, to the steady state: each
	// request is asked once first (the misses are what the distinct phase
	// measures).
	warm := phase(client, url, token, working, len(working), o.clients, o.duration)
	if warm.failures > 0 {
		return fmt.Errorf("warming the working set: %v", warm.firstErr)
	}
	fmt.Fprintf(out, "working set warmed in %s\n", warm.elapsed.Round(time.Millisecond))
	ws := phase(client, url, token, working, o.requests, o.clients, o.duration)
	ws.print(out, "working set of 64 requests", o)
	problems = append(problems, ws.problems(o, !o.small)...)
	// Every request different: each one runs the whole pipeline.
	if o.apis {
		p, err := apiPhases(ctx, s, client, "http://"+ln.Addr().String(), world, o, out)
		if err != nil {
			return err
		}
		problems = append(problems, p...)
	}
	if o.distinct > 0 {
		ds := phase(client, url, token, distinct, len(distinct), o.clients, o.duration)
		ds.print(out, fmt.Sprintf("%d distinct requests (nothing reused)", len(distinct)), o)
		problems = append(problems, ds.problems(o, false)...)
	}
	// The impact matrix of a draft over the first 100 projects × 20
	// flavors: the first call builds the draft's world too.
	if !o.small {
		p, err := impact(ctx, s, client, "http://"+ln.Addr().String(), token, world, out)
		if err != nil {
			return err
		}
		problems = append(problems, p...)
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// impactTarget is what a matrix of 100 projects × 20 flavors may take.
const impactTarget = 2 * time.Second

// impact stages a draft that drains an availability zone (its aggregate
// gets a reservation key) and times GET /api/drafts/<id>/impact.
func impact(ctx context.Context, s *store.Store, client *http.Client, base, token string, w *models.World, out io.Writer) ([]string, error) {
	zone := ""
	for _, a := range w.Aggregates {
		if a.AvailabilityZone != nil {
			zone = a.Name
			break
		}
	}
	actor := store.Actor{Name: "corral-load", Via: "cli"}
	d, err := s.CreateDraft(ctx, actor, "drain a zone")
	if err != nil {
		return nil, err
	}
	if _, err := s.SetDraftChanges(ctx, actor, d.ID, d.Version, []scheduling.Change{
		{Op: scheduling.OpAddReservation, Aggregate: zone, Reservation: "drain"},
	}); err != nil {
		return nil, err
	}
	var problems []string
	for _, run := range []string{"first (draft world built)", "again"} {
		req, err := http.NewRequest(http.MethodGet, base+"/api/drafts/"+d.ID+"/impact", nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-Auth-Token", token)
		t := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		var m struct {
			Projects, Flavors []string
			Dropped, Stranded int
		}
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		took := time.Since(t)
		if err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("impact matrix: status %d: %v", resp.StatusCode, err)
		}
		fmt.Fprintf(out, "GET /api/drafts/<id>/impact, %s: %d projects × %d flavors in %s (%d pairs lose hosts, %d stranded)\n",
			run, len(m.Projects), len(m.Flavors), ms(took), m.Dropped, m.Stranded)
		if took > impactTarget {
			problems = append(problems, fmt.Sprintf("impact matrix (%s) took %s, above %s", run, ms(took), ms(impactTarget)))
		}
	}
	return problems, nil
}

type stats struct {
	latencies []time.Duration
	elapsed   time.Duration
	failures  int64
	firstErr  error
	clients   int
	bytes     int64 // response bodies received, to report the mean answer size
}

// phase runs clients concurrently over bodies (in turn) until n requests
// were sent or the time is up.
func phase(client *http.Client, url, token string, bodies [][]byte, n, clients int, limit time.Duration) *stats {
	return runPhase(n, clients, limit, func(i int) (int, error) {
		return post(client, url, token, bodies[i%len(bodies)])
	})
}

// runPhase runs clients concurrently, each calling send with the next
// request number, until n requests were sent or the time is up.
func runPhase(n, clients int, limit time.Duration, send func(i int) (int, error)) *stats {
	var (
		next     atomic.Int64
		failures atomic.Int64
		received atomic.Int64
		errOnce  sync.Once
		mu       sync.Mutex
		wg       sync.WaitGroup
	)
	st := &stats{clients: clients}
	deadline := time.Now().Add(limit)
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				i := next.Add(1) - 1
				if i >= int64(n) {
					break
				}
				t := time.Now()
				size, err := send(int(i))
				mine = append(mine, time.Since(t))
				received.Add(int64(size))
				if err != nil {
					failures.Add(1)
					errOnce.Do(func() { st.firstErr = err })
				}
			}
			mu.Lock()
			st.latencies = append(st.latencies, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	st.elapsed = time.Since(start)
	st.failures = failures.Load()
	st.bytes = received.Load()
	slices.Sort(st.latencies)
	return st
}

func (st *stats) pct(p float64) time.Duration {
	if len(st.latencies) == 0 {
		return 0
	}
	i := int(p*float64(len(st.latencies))+0.5) - 1
	return st.latencies[min(max(i, 0), len(st.latencies)-1)]
}

func (st *stats) print(out io.Writer, name string, o options) {
	if !strings.HasPrefix(name, "GET ") {
		name = "POST /api/preview, " + name
	}
	fmt.Fprintf(out, "%s: %d requests, %d clients, %s\n", name, len(st.latencies), st.clients, st.elapsed.Round(time.Millisecond))
	if len(st.latencies) == 0 {
		return
	}
	fmt.Fprintf(out, "  p50 %s  p90 %s  p99 %s  max %s\n", ms(st.pct(0.5)), ms(st.pct(0.9)), ms(st.pct(0.99)), ms(st.latencies[len(st.latencies)-1]))
	fmt.Fprintf(out, "  %.1f requests/s, %d failed, mean answer %.1f KiB\n", float64(len(st.latencies))/st.elapsed.Seconds(), st.failures,
		float64(st.bytes)/float64(len(st.latencies))/1024)
	verdict := "within"
	if st.pct(0.5) > o.p50 || st.pct(0.99) > o.p99 {
		verdict = "OUTSIDE"
	}
	fmt.Fprintf(out, "  %s the targets (p50 ≤ %s, p99 ≤ %s)\n", verdict, ms(o.p50), ms(o.p99))
}

// problems lists failed requests and, when targets is set, missed targets.
func (st *stats) problems(o options, targets bool) []string {
	var out []string
	if len(st.latencies) == 0 {
		return []string{"no request completed"}
	}
	if st.failures > 0 {
		out = append(out, fmt.Sprintf("%d requests failed (first: %v)", st.failures, st.firstErr))
	}
	if targets && st.pct(0.5) > o.p50 {
		out = append(out, fmt.Sprintf("p50 %s is above %s", ms(st.pct(0.5)), ms(o.p50)))
	}
	if targets && st.pct(0.99) > o.p99 {
		out = append(out, fmt.Sprintf("p99 %s is above %s", ms(st.pct(0.99)), ms(o.p99)))
	}
	return out
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

// requestMix is what a console full of admins asks: tenants with and
// without flavors, reservation flavors, raw forbidden and required terms,
// numbered groups. It returns n different requests, starting at offset in
// the sequence of combinations; lists are capped as pages and scripts cap
// them.
func requestMix(w *models.World, n, offset int) [][]byte {
	seen := map[string]bool{}
	var projects []string
	for _, s := range w.Servers {
		if !seen[s.ProjectID] {
			seen[s.ProjectID] = true
			projects = append(projects, s.ProjectID)
		}
	}
	if len(projects) == 0 {
		projects = []string{"project-0"}
	}
	var flavors []string
	for _, f := range w.Flavors {
		flavors = append(flavors, f.Name)
	}
	var aggs []string
	for i, a := range w.Aggregates {
		if i%97 == 0 {
			aggs = append(aggs, a.Name)
		}
	}
	if len(aggs) == 0 {
		aggs = []string{cloudgen.FreePool}
	}
	out := make([][]byte, 0, n)
	for k := offset; k < offset+n; k++ {
		// Projects vary fastest, so every request differs.
		req := map[string]any{"project_id": projects[k%len(projects)], "limit": 50}
		i := k / len(projects)
		if len(flavors) > 0 && (k+i)%4 != 3 {
			req["flavor"] = flavors[(k+i)%len(flavors)]
		}
		switch (k + i) % 5 {
		case 1:
			req["placement"] = map[string]any{"member_of": []string{"!" + aggs[k%len(aggs)]}}
		case 2:
			a, b := aggs[k%len(aggs)], aggs[(k+1)%len(aggs)]
			req["placement"] = map[string]any{"member_of": []string{"in:" + a + "," + b, "!" + cloudgen.FreePool}}
		case 3:
			req["placement"] = map[string]any{"groups": map[string]any{"1": map[string]any{"member_of": []string{"!" + aggs[k%len(aggs)]}}}}
		}
		b, _ := json.Marshal(req)
		out = append(out, b)
	}
	return out
}

// post sends one preview request and reports the size of the answer.
func post(c *http.Client, url, token string, body []byte) (int, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Auth-Token", token)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return len(data), fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(string(data[:min(len(data), 300)])))
	}
	if !json.Valid(data) {
		return len(data), errors.New("response is not JSON")
	}
	return len(data), nil
}

// apiPhases measures the compute and Placement APIs with GETs an operator's
// scripts send: a server group list, aggregates by id, providers by uuid
// and their aggregates. Every request must succeed; the latency targets
// are the preview's.
func apiPhases(ctx context.Context, s *store.Store, client *http.Client, base string, w *models.World, o options, out io.Writer) ([]string, error) {
	actor := store.Actor{Name: "corral-load", Via: "cli"}
	if _, err := s.CreateUser(ctx, actor, "load-admin", "load-password-1234", models.RoleAdmin, ""); err != nil {
		return nil, err
	}
	token, _, err := s.CreateToken(ctx, actor, "load-admin", "load test")
	if err != nil {
		return nil, err
	}
	aggs, _, err := s.ListAggregates(ctx, store.AggregateQuery{Limit: 200})
	if err != nil {
		return nil, err
	}
	var compute, placement []string
	compute = append(compute, "/compute/v2.1/os-server-groups?all_projects=True&limit=50")
	for i := range aggs {
		if len(aggs[i].Members) < 500 { // zone aggregates list thousands of hosts
			compute = append(compute, fmt.Sprintf("/compute/v2.1/os-aggregates/%d", aggs[i].ID))
		}
	}
	for i := 0; i < len(w.Providers) && len(placement) < 400; i += max(len(w.Providers)/200, 1) {
		p := w.Providers[i]
		placement = append(placement, "/placement/resource_providers/"+p.UUID, "/placement/resource_providers/"+p.UUID+"/aggregates")
	}
	get := func(path, version string) (int, error) {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("X-Auth-Token", token)
		req.Header.Set("OpenStack-API-Version", version)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return len(data), fmt.Errorf("GET %s: status %d: %s", path, resp.StatusCode, strings.TrimSpace(string(data[:min(len(data), 300)])))
		}
		return len(data), nil
	}
	var problems []string
	for _, api := range []struct {
		name, version string
		paths         []string
	}{
		{"GET compute API (server groups, aggregates)", "compute 2.64", compute},
		{"GET Placement API (providers, their aggregates)", "placement 1.39", placement},
	} {
		paths, version := api.paths, api.version
		send := func(i int) (int, error) { return get(paths[i%len(paths)], version) }
		// Once through first, as the preview's working set is warmed.
		if warm := runPhase(len(paths), o.clients, o.duration, send); warm.failures > 0 {
			return nil, fmt.Errorf("%s: %v", api.name, warm.firstErr)
		}
		st := runPhase(o.requests, o.clients, o.duration, send)
		st.print(out, api.name, o)
		problems = append(problems, st.problems(o, false)...)
	}
	return problems, nil
}
