// Command corral-bench measures corral against the real OpenStack Placement
// on the same generated cloud, side by side in one run: it generates the
// world (100,000 providers, 5,000 aggregates by default), stores it in
// corral's SQLite database and writes it straight into Placement's own
// SQLite tables (its API is far too slow to load 100,000 providers), starts
// `corral serve` and Debian's placement-api on free loopback ports, checks
// that both give identical answers (uuid sets and order), then prints each
// query's median latency on both, the ratio, corral's peak resident memory
// while clients list every provider, the preview's latency with every
// request distinct, the time to the first answer after start and the first
// preview after a write.
//
// -preview-only skips Placement and measures the previews alone; -baseline
// names a second corral binary (an earlier build) whose server runs on the
// same database and takes the same distinct previews in alternating slices,
// so that both builds are measured side by side under the same neighbours.
//
// It exits 1 when the answers differ or a target is missed, 2 on bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"corral/models"
	"corral/models/cloudgen"
)

func main() {
	if body := os.Getenv(floorServerEnv); body != "" {
		os.Exit(serveFloor(body, os.Stdout))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	small       bool
	hosts       int
	corral      string
	samples     int
	bigSamples  int
	clients     int
	listFor     time.Duration
	previewFor  time.Duration
	keep        bool
	noTargets   bool
	cpuProfile  string
	previewOnly bool
	baseline    string
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("corral-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.BoolVar(&o.small, "small", false, "a small world and few samples: checks the harness, measures nothing")
	fs.IntVar(&o.hosts, "hosts", 0, "hosts of the generated world (0: the default 25,000, i.e. 100,000 providers)")
	fs.StringVar(&o.corral, "corral", "", "the corral binary (default: built from this source tree)")
	fs.IntVar(&o.samples, "samples", 401, "requests per server for each small query")
	fs.IntVar(&o.bigSamples, "big-samples", 9, "requests per server for each query answering every provider")
	fs.IntVar(&o.clients, "clients", 8, "concurrent clients of the load phases")
	fs.DurationVar(&o.listFor, "list-for", 30*time.Second, "how long the clients list every provider while memory is watched")
	fs.DurationVar(&o.previewFor, "preview-for", 20*time.Second, "how long the clients send distinct previews")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary directory (databases, logs)")
	fs.BoolVar(&o.noTargets, "no-targets", false, "report the targets but do not fail on them")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of corral serve during the distinct previews to this file")
	fs.BoolVar(&o.previewOnly, "preview-only", false, "measure only the distinct previews (no Placement, no query table, no list load)")
	fs.StringVar(&o.baseline, "baseline", "", "a second corral binary whose previews are measured beside this one's, in alternating slices")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || o.samples < 1 || o.bigSamples < 1 || o.clients < 1 {
		fmt.Fprintln(stderr, "corral-bench: takes flags only; -samples, -big-samples and -clients must be positive")
		return 2
	}
	if !o.previewOnly && !placementInstalled() {
		fmt.Fprintln(stderr, "corral-bench: the real Placement is not installed (apt-get install python3-placement)")
		return 1
	}
	if err := bench(context.Background(), o, stdout); err != nil {
		fmt.Fprintln(stderr, "corral-bench:", err)
		return 1
	}
	return 0
}

func bench(ctx context.Context, o options, out io.Writer) error {
	dir, err := os.MkdirTemp("", "corral-bench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(out, "files in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	cfg := cloudgen.Default()
	if o.small {
		cfg = cloudgen.Small()
	}
	if o.hosts > 0 {
		// Fewer hosts, the same shape: aggregates and the rest scale down.
		f := float64(o.hosts) / float64(cfg.Hosts)
		cfg.Hosts = o.hosts
		cfg.SharingProviders = max(1, int(float64(cfg.SharingProviders)*f))
		cfg.Aggregates = max(10, int(float64(cfg.Aggregates)*f))
		cfg.TenantAggregates = max(2, int(float64(cfg.TenantAggregates)*f))
		cfg.ReservationAggregates = max(2, int(float64(cfg.ReservationAggregates)*f))
		cfg.Servers = max(10, int(float64(cfg.Servers)*f))
		cfg.ServerGroups = max(2, int(float64(cfg.ServerGroups)*f))
	}
	t0 := time.Now()
	world := cloudgen.Generate(cfg)
	fmt.Fprintf(out, "world: %d providers, %d aggregates, %d flavors, %d servers (generated in %s)\n",
		len(world.Providers), len(world.Aggregates), len(world.Flavors), len(world.Servers), since(t0))

	bin := o.corral
	if bin == "" {
		bin = filepath.Join(dir, "corral")
		t := time.Now()
		if b, berr := exec.CommandContext(ctx, "go", "build", "-o", bin, "corral/cmd/corral").CombinedOutput(); berr != nil {
			return fmt.Errorf("go build corral: %v: %s", berr, b)
		}
		fmt.Fprintf(out, "built corral in %s\n", since(t))
	}
	t := time.Now()
	token, stored, err := prepareCorral(ctx, filepath.Join(dir, "corral.db"), world)
	if err != nil {
		return fmt.Errorf("corral's database: %w", err)
	}
	world = stored
	fmt.Fprintf(out, "corral's database written in %s\n", since(t))
	if !o.previewOnly {
		t = time.Now()
		if err = preparePlacement(ctx, dir, world); err != nil {
			return fmt.Errorf("placement's database: %w", err)
		}
		fmt.Fprintf(out, "placement's database written in %s\n", since(t))
	}

	q := chooseQueries(world)
	pprofAddr := ""
	if o.cpuProfile != "" {
		port, perr := freePort()
		if perr != nil {
			return perr
		}
		pprofAddr = fmt.Sprintf("127.0.0.1:%d", port)
	}
	cs, err := startCorral(ctx, bin, filepath.Join(dir, "corral.db"), filepath.Join(dir, "corral.log"), token, q.first, pprofAddr)
	if err != nil {
		return err
	}
	defer cs.stop()
	fmt.Fprintf(out, "corral serve: first answer %s after start (pid %d)\n", ms(cs.firstAnswer), cs.pid())
	r := &report{o: o, out: out}
	r.target("first answer after start", cs.firstAnswer <= firstAnswerTarget, "%s (target ≤ %s)", ms(cs.firstAnswer), ms(firstAnswerTarget))
	servers := []*namedServer{{name: "corral", s: cs}}
	if o.baseline != "" {
		bs, berr := startCorral(ctx, o.baseline, filepath.Join(dir, "corral.db"), filepath.Join(dir, "baseline.log"), token, q.first, "")
		if berr != nil {
			return fmt.Errorf("baseline: %w", berr)
		}
		defer bs.stop()
		fmt.Fprintf(out, "baseline corral serve (%s): first answer %s after start (pid %d)\n", o.baseline, ms(bs.firstAnswer), bs.pid())
		servers = append(servers, &namedServer{name: "baseline", s: bs})
	}
	if !o.previewOnly {
		if err = placementPhases(ctx, o, r, dir, q, cs, token, len(world.Providers)); err != nil {
			return err
		}
	}
	if err = previewPhases(o, r, servers, q, world, token, pprofAddr); err != nil {
		return err
	}
	return r.finish()
}

// placementPhases starts the real Placement, compares the answers, times
// the query table side by side and watches corral's memory while clients
// list every provider.
func placementPhases(ctx context.Context, o options, r *report, dir string, q *queries, cs *corralServer, token string, providers int) error {
	out := r.out
	pl, err := startPlacement(ctx, dir)
	if err != nil {
		return err
	}
	defer pl.stop()
	fmt.Fprintf(out, "placement-api: answering at %s (pid %d)\n", pl.url, pl.cmd.Process.Pid)

	corralC := newClient(cs.url+"/placement", "X-Auth-Token", token, o.clients)
	placementC := newClient(pl.url, "X-Auth-Token", "admin", 1)
	// The latency table: one connection each, the same synchronous client.
	corralOne, err := newSyncClient(cs.url+"/placement", "X-Auth-Token", token)
	if err != nil {
		return err
	}
	placementOne, err := newSyncClient(pl.url, "X-Auth-Token", "admin")
	if err != nil {
		return err
	}
	defer corralOne.close()
	defer placementOne.close()

	// Identical answers first: a fast wrong answer is worth nothing.
	t := time.Now()
	n, diffs := compareAnswers(corralC, placementC, q.checks)
	fmt.Fprintf(out, "answers compared on %d queries in %s: %d differ\n", n, since(t), len(diffs))
	for _, d := range diffs {
		fmt.Fprintln(out, "  DIFFERS:", d)
	}
	if len(diffs) > 0 {
		r.problems = append(r.problems, fmt.Sprintf("%d of %d answers differ from Placement's", len(diffs), n))
	}

	fmt.Fprintln(out)
	fmt.Fprintf(out, "p50 of each side, its p10–p90 in brackets; requests in alternating pairs after a warm-up, each side on one\n"+
		"keep-alive connection of a client that writes a request and reads its answer in one goroutine\n\n")
	fmt.Fprintf(out, "| query | results | Placement p50 | corral p50 | ratio |\n|---|---|---|---|---|\n")
	if err = timeQueryTable(o, r, q, corralC, corralOne, placementOne); err != nil {
		return err
	}
	// The floors: requests that do no work, asked the same way. On a busy
	// machine waking the server after each pause dominates small answers.
	floorC, err := newSyncClient(cs.url, "X-Auth-Token", token)
	if err != nil {
		return err
	}
	defer floorC.close()
	if res, ferr := compareLatency(floorC, placementOne, "/healthz", "/", o.samples); ferr == nil {
		fmt.Fprintf(out, "| floor: corral `/healthz`, Placement `/` (no work) | - | %s | %s | %.1f× |\n",
			res.placement, res.corral, float64(res.placement.p50)/float64(res.corral.p50))
	}
	// The best any Go server could do on this machine: the first query's
	// answer, its bytes ready, from a plain net/http server in a process
	// of its own.
	if first, ferr := corralC.get(q.table[0].path); ferr == nil {
		fs, serr := startFloorServer(ctx, dir, first.body)
		if serr != nil {
			return serr
		}
		defer fs.stop()
		samples := o.samples
		if o.small {
			samples = min(samples, 5)
		}
		floorOne, ferr := newSyncClient(fs.url, "X-Auth-Token", token)
		if ferr != nil {
			return ferr
		}
		defer floorOne.close()
		if res, ferr := compareLatency(floorOne, placementOne, "/", q.table[0].path, samples); ferr == nil {
			fmt.Fprintf(out, "| floor: `%s` from a Go net/http server that only sends its bytes | %d | %s | %s | %.1f× |\n",
				q.table[0].name, resultsOf(corralC, q.table[0].path), res.placement, res.corral, float64(res.placement.p50)/float64(res.corral.p50))
		}
	}
	// The first query again, timed with Go's net/http client on both
	// sides, for comparison with earlier runs of this harness.
	if res, herr := compareLatency(newClient(cs.url+"/placement", "X-Auth-Token", token, 1), placementC, q.table[0].path, q.table[0].path, o.samples); herr == nil {
		fmt.Fprintf(out, "| `%s`, timed with Go's net/http client | %d | %s | %s | %.1f× |\n",
			q.table[0].name, resultsOf(corralC, q.table[0].path), res.placement, res.corral, float64(res.placement.p50)/float64(res.corral.p50))
	}
	fmt.Fprintln(out)
	for _, nr := range r.ratios {
		r.target("ratio "+nr.name, nr.ratio >= ratioTarget, "%.1f× (target ≥ %.0f×)", nr.ratio, ratioTarget)
	}

	// Memory while clients list every provider.
	listMemory(o, r, corralC, cs, providers)
	return nil
}

// timeQueryTable times each query of the table on both sides and writes
// its row; the queries' ratios go to the report.
func timeQueryTable(o options, r *report, q *queries, corralC *client, corralOne, placementOne *syncClient) error {
	out := r.out
	for _, tq := range q.table {
		samples := o.samples
		if tq.big {
			samples = o.bigSamples
		}
		if o.small {
			samples = min(samples, 5)
		}
		paths := []string{tq.path}
		if tq.each != nil {
			// Each asked once: the warm-up's and the samples'.
			paths = tq.each
			samples = min(samples, len(paths)-min(max(samples/20, 2), 10))
		}
		res, cerr := compareEach(corralOne, placementOne, paths, paths, samples)
		if cerr != nil {
			return fmt.Errorf("%s: %w", tq.name, cerr)
		}
		res.results = resultsOf(corralC, tq.path)
		ratio := float64(res.placement.p50) / float64(res.corral.p50)
		fmt.Fprintf(out, "| `%s` | %d | %s | %s | %.1f× |\n", tq.name, res.results, res.placement, res.corral, ratio)
		if tq.each == nil { // the queries; the others are for reading
			r.ratios = append(r.ratios, namedRatio{tq.name, ratio})
		}
	}
	return nil
}

// listMemory watches corral's resident memory while clients list every
// provider.
func listMemory(o options, r *report, corralC *client, cs *corralServer, providers int) {
	out := r.out
	lf := o.listFor
	if o.small {
		lf = min(lf, 2*time.Second)
	}
	ls := listLoad(corralC, "/resource_providers", o.clients, lf, cs.pid())
	fmt.Fprintf(out, "%d clients listing all %d providers for %s: %d lists (%.1f/s), %d refused with 503, %d failed; p50 %s p99 %s\n",
		o.clients, providers, since2(lf), ls.done, float64(ls.done)/lf.Seconds(), ls.refused, ls.failed, ms(ls.p50), ms(ls.p99))
	fmt.Fprintf(out, "corral serve resident memory: peak %s during the lists (sampled), high-water mark %s since start\n",
		mib(ls.peakRSS), mib(ls.hwm))
	r.target("peak resident memory", ls.peakRSS <= rssTarget && ls.failed == 0, "%s (target ≤ %s)", mib(ls.peakRSS), mib(rssTarget))
}

// namedServer is a corral server the previews are measured on.
type namedServer struct {
	name  string
	s     *corralServer
	c     *client
	stats previewStats
}

// previewSlices is how many turns each server takes when a baseline is
// measured beside corral.
const previewSlices = 4

// previewPhases sends distinct previews to each server (in alternating
// slices when there are two), then times the first preview after a write.
func previewPhases(o options, r *report, servers []*namedServer, q *queries, w *models.World, token, pprofAddr string) error {
	out := r.out
	pf := o.previewFor
	if o.small {
		pf = min(pf, 2*time.Second)
	}
	turns := 1
	if len(servers) > 1 {
		turns = previewSlices
	}
	for _, ns := range servers {
		ns.c = newClient(ns.s.url, "X-Auth-Token", token, o.clients)
	}
	profiled := make(chan error, 1)
	if o.cpuProfile != "" {
		// The profile covers corral's turns only when it runs alone.
		go func() { profiled <- profile(pprofAddr, o.cpuProfile, pf) }()
	} else {
		profiled <- nil
	}
	// Every request different, on every server: each slice continues the
	// sequence, and a baseline gets the same requests corral got.
	next := 0
	for range turns {
		n := 0
		for _, ns := range servers {
			st := previewLoad(ns.c, q.previews(0), next, o.clients, pf/time.Duration(turns), ns.s.pid())
			ns.stats.add(st)
			n = max(n, int(st.done+st.failed))
		}
		next += n + o.clients
	}
	if err := <-profiled; err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	for _, ns := range servers {
		ps := ns.stats
		fmt.Fprintf(out, "%s: POST /api/preview, every request distinct, %d clients: %d requests (%.0f/s), %d failed; p50 %s p90 %s p99 %s; peak resident memory %s\n",
			ns.name, o.clients, ps.done, float64(ps.done)/ps.elapsed.Seconds(), ps.failed, ms(ps.p50), ms(ps.p90), ms(ps.p99), mib(ps.peakRSS))
		if ps.firstErr != nil {
			fmt.Fprintln(out, "  first failure:", ps.firstErr)
		}
	}
	ps := servers[0].stats
	r.target("preview p50", ps.p50 <= previewP50Target && ps.failed == 0, "%s (target ≤ %s)", ms(ps.p50), ms(previewP50Target))
	r.target("preview p99", ps.p99 <= previewP99Target, "%s (target ≤ %s)", ms(ps.p99), ms(previewP99Target))

	// The first preview after a write to one aggregate, on each server.
	for _, ns := range servers {
		after, err := previewAfterWrite(ns.c, q, w)
		if err != nil {
			return fmt.Errorf("%s: %w", ns.name, err)
		}
		fmt.Fprintf(out, "%s: first preview after a one-aggregate write: median %s, worst %s of 9; the same previews without a write before: median %s, worst %s\n",
			ns.name, ms(after.median), ms(after.worst), ms(after.plainMedian), ms(after.plainWorst))
		if ns == servers[0] {
			r.target("first preview after a write", after.worst <= afterWriteTarget, "%s (target ≤ %s)", ms(after.worst), ms(afterWriteTarget))
		}
	}
	for _, ns := range servers {
		fmt.Fprintf(out, "%s serve resident memory at the end: %s (high-water mark %s)\n", ns.name, mib(rss(ns.s.pid(), "VmRSS")), mib(rss(ns.s.pid(), "VmHWM")))
	}
	return nil
}

// Targets.
const (
	ratioTarget       = 20.0
	rssTarget         = 1 << 30
	previewP50Target  = 10 * time.Millisecond
	previewP99Target  = 40 * time.Millisecond
	firstAnswerTarget = 2 * time.Second
	afterWriteTarget  = 50 * time.Millisecond
)

type namedRatio struct {
	name  string
	ratio float64
}

type report struct {
	o        options
	out      io.Writer
	ratios   []namedRatio
	problems []string
	missed   []string
}

func (r *report) target(name string, ok bool, format string, args ...any) {
	verdict := "met"
	if !ok {
		verdict = "MISSED"
		r.missed = append(r.missed, name)
	}
	fmt.Fprintf(r.out, "target %-32s %-6s %s\n", name, verdict, fmt.Sprintf(format, args...))
}

func (r *report) finish() error {
	if r.o.small {
		// A small world measures nothing; only wrong answers count.
		r.missed = nil
	}
	var all []string
	all = append(all, r.problems...)
	if len(r.missed) > 0 && !r.o.noTargets {
		all = append(all, "missed: "+strings.Join(r.missed, ", "))
	}
	if len(all) > 0 {
		return errors.New(strings.Join(all, "; "))
	}
	return nil
}

func since(t time.Time) string { return time.Since(t).Round(time.Millisecond).String() }

func since2(d time.Duration) string { return d.Round(time.Millisecond).String() }

func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
