package placementapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"corral/models"
	"corral/models/store"
)

// BenchmarkCandidatesVsPlacement runs corral and the real Placement side
// by side on one world of compute nodes with inventories and usage, at
// 10,000 and at 100,000 providers (CORRAL_BENCH_PROVIDERS, a comma list,
// changes the sizes), and prints, per query and client count, each one's
// mean latency and the ratio. Answers are checked to be the same (the
// count, and without limit the allocation requests as sets) before timing.
// Placement gets CORRAL_BENCH_PLACEMENT_BUDGET (default 4m) per
// measurement: when one request takes longer, or the samples would, the
// table says how far it got instead of a ratio. It runs under `make bench`
// only; it is skipped without python3-placement.
func BenchmarkCandidatesVsPlacement(b *testing.B) {
	sizes := []int{10000, 100000}
	if s := os.Getenv("CORRAL_BENCH_PROVIDERS"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			var n int
			if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err != nil || n < 10 {
				b.Fatalf("CORRAL_BENCH_PROVIDERS=%q: want a comma list of sizes of at least 10", s)
			}
			sizes = append(sizes, n)
		}
	}
	budget := 4 * time.Minute
	if s := os.Getenv("CORRAL_BENCH_PLACEMENT_BUDGET"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			b.Fatalf("CORRAL_BENCH_PLACEMENT_BUDGET=%q: want a duration", s)
		}
		budget = d
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("providers=%d", n), func(b *testing.B) { benchCandidatesAt(b, n, budget) })
	}
}

func benchCandidatesAt(b *testing.B, n int, budget time.Duration) {
	w, forbidden := benchCandidatesWorld(n)
	st := openSQLite(b)
	t0 := time.Now()
	if err := st.ImportWorld(context.Background(), store.Actor{Name: "bench", Via: "cli"}, w, true); err != nil {
		b.Fatal(err)
	}
	a := startApp(b, st)
	corralReady := time.Since(t0)
	t0 = time.Now()
	real := startRealPlacementWith(b, func(db string) { loadPlacementDB(b, db, w) })
	fmt.Printf("\nGET /allocation_candidates on %d providers (microversion 1.39): corral loaded in %s, Placement in %s\n",
		n, corralReady.Round(time.Second), time.Since(t0).Round(time.Second))
	peers := []peer{{"corral", a.URL, a.Admin}, {"placement", real, "admin"}}
	queries := []struct{ name, q string }{
		{"limit=1000", "resources=VCPU:1,MEMORY_MB:512&member_of=!" + forbidden + "&limit=1000"},
		{"no limit", "resources=VCPU:1,MEMORY_MB:512&member_of=!" + forbidden},
		{"numbered+isolate", "resources=VCPU:1,MEMORY_MB:512&member_of=!" + forbidden + "&resources1=DISK_GB:10&group_policy=isolate&limit=1000"},
	}
	fmt.Printf("%-18s %8s %10s %14s %14s %8s\n", "query", "clients", "requests", "corral", "placement", "ratio")
	corralSamples := 200
	if n > 20000 {
		corralSamples = 40
	}
	for _, q := range queries {
		path := "/allocation_candidates?" + q.q
		r := peers[0].do(b, "GET", path, "1.39", nil)
		if r.status != 200 {
			b.Fatalf("corral %s: %d %s", q.name, r.status, r.body)
		}
		var cb candidatesBody
		if err := json.Unmarshal(r.body, &cb); err != nil {
			b.Fatal(err)
		}
		// One request to Placement, within the budget: its answer is
		// compared, and its time says how many more fit.
		start := time.Now()
		pr, err := getWithin(peers[1], path, budget)
		probe := time.Since(start)
		if err != nil {
			fmt.Printf("%-18s %8s %10d %14s %14s %8s\n", q.name, "-", len(cb.Requests), "-",
				"> "+budget.String(), "-")
			fmt.Printf("  Placement gave no answer within %s (%v)", budget, err)
			// It is still computing the answer, and serves one request at
			// a time: its root answers once it is done.
			if _, ierr := getWithin(peer{peers[1].name, peers[1].base, ""}, "/", 4*budget); ierr == nil {
				fmt.Printf("; it finished that request after %s", time.Since(start).Round(time.Second))
			}
			fmt.Printf("; corral alone:\n")
			for _, clients := range []int{1, 8} {
				c := timeRequests(b, peers[0], path, clients, corralSamples)
				fmt.Printf("%-18s %8d %10d %14s %14s %8s\n", q.name, clients, len(cb.Requests), c.Round(time.Microsecond), "-", "-")
			}
			continue
		}
		var pb candidatesBody
		if err := json.Unmarshal(pr, &pb); err != nil {
			b.Fatalf("placement %s: %v: %.300s", q.name, err, pr)
		}
		if len(cb.Requests) != len(pb.Requests) {
			b.Errorf("%s: corral %d requests, placement %d", q.name, len(cb.Requests), len(pb.Requests))
		}
		if !strings.Contains(q.q, "limit=") {
			cs, ps := requestSet(b, cb), requestSet(b, pb)
			for k := range ps {
				if !cs[k] {
					b.Errorf("%s: only placement has %s", q.name, k)
					break
				}
			}
			for k := range cs {
				if !ps[k] {
					b.Errorf("%s: only corral has %s", q.name, k)
					break
				}
			}
		}
		for _, clients := range []int{1, 8} {
			c := timeRequests(b, peers[0], path, clients, corralSamples)
			// Placement serves one request at a time: 8 clients' 8
			// requests take 8 of its request times.
			total := 8
			if clients == 1 {
				total = int(min(8, max(1, int64(budget/probe))))
			}
			if time.Duration(total)*probe > 2*budget {
				fmt.Printf("%-18s %8d %10d %14s %14s %8s\n", q.name, clients, len(cb.Requests), c.Round(time.Microsecond),
					fmt.Sprintf("~%s", probe.Round(time.Second)), "-")
				// Served one after the other, the clients would wait
				// (1+…+total)/total request times on average.
				est := probe * time.Duration(total+1) / 2
				fmt.Printf("  (%d concurrent requests would take Placement about %s; measured one: %s; estimated mean %s, about %.0fx corral's)\n",
					total, (time.Duration(total) * probe).Round(time.Second), probe.Round(time.Millisecond), est.Round(time.Second), float64(est)/float64(c))
				continue
			}
			p := timeRequests(b, peers[1], path, clients, total)
			fmt.Printf("%-18s %8d %10d %14s %14s %7.0fx\n", q.name, clients, len(cb.Requests), c.Round(time.Microsecond), p.Round(time.Millisecond), float64(p)/float64(c))
		}
	}
	for b.Loop() {
		// The table above is the result; the loop times one corral request.
		peers[0].do(b, "GET", "/allocation_candidates?"+queries[0].q, "1.39", nil)
	}
}

// getWithin is one GET to p that gives up after d.
func getWithin(p peer, path string, d time.Duration) ([]byte, error) {
	req, err := http.NewRequest("GET", p.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Auth-Token", p.token)
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	res, err := (&http.Client{Timeout: d}).Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d: %.300s", res.StatusCode, body)
	}
	return body, err
}

// timeRequests sends total requests from clients goroutines and returns
// the mean latency one client sees.
func timeRequests(b *testing.B, p peer, path string, clients, total int) time.Duration {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sum time.Duration
	per := max(total/clients, 1)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				start := time.Now()
				req, _ := http.NewRequest("GET", p.base+path, nil)
				req.Header.Set("X-Auth-Token", p.token)
				req.Header.Set("OpenStack-API-Version", "placement 1.39")
				res, err := http.DefaultClient.Do(req)
				if err == nil {
					res.Body.Close()
				}
				mu.Lock()
				sum += time.Since(start)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return sum / time.Duration(per*clients)
}

// benchCandidatesWorld is n compute nodes with VCPU, MEMORY_MB and DISK_GB,
// part used (one in ten full on VCPU), and an aggregate holding one in
// five, whose uuid is returned for member_of=!.
func benchCandidatesWorld(n int) (*models.World, string) {
	w := &models.World{Settings: models.DefaultSettings()}
	agg := models.Aggregate{UUID: "fb000000-0000-4000-8000-000000000001", Name: "forbidden", Metadata: map[string]string{}}
	for i := 0; i < n; i++ {
		u := fmt.Sprintf("%08x-0000-4000-8000-%012x", 0xbe000000+i, i)
		used := map[string]int64{"VCPU": int64(i*7) % 100, "MEMORY_MB": int64(i*4099) % 100000, "DISK_GB": int64(i*3) % 500}
		if i%10 == 0 {
			used["VCPU"] = 128
		}
		p := models.Provider{UUID: u, Name: fmt.Sprintf("bench-cn%05d", i), RootUUID: u, Traits: []string{},
			Inventories: map[string]models.Inventory{
				"VCPU":      {Total: 32, AllocationRatio: 4, MinUnit: 1, MaxUnit: 32, StepSize: 1},
				"MEMORY_MB": {Total: 131072, Reserved: 2048, AllocationRatio: 1, MinUnit: 1, MaxUnit: 131072, StepSize: 1},
				"DISK_GB":   {Total: 1000, AllocationRatio: 1, MinUnit: 1, MaxUnit: 1000, StepSize: 1},
			}, Usages: used}
		w.Providers = append(w.Providers, p)
		if i%5 == 0 {
			agg.Members = append(agg.Members, u)
		}
	}
	w.Aggregates = []models.Aggregate{agg}
	return w, agg.UUID
}

// loadPlacementDB writes w into Placement's freshly synced SQLite file, as
// its own API would have stored it: providers, inventories, aggregates and
// one consumer per provider holding its usage.
func loadPlacementDB(b *testing.B, db string, w *models.World) {
	type prov struct {
		UUID, Name string
		Inv        map[string][]float64
		Used       map[string]int64
		Agg        bool
	}
	inAgg := map[string]bool{}
	for _, m := range w.Aggregates[0].Members {
		inAgg[m] = true
	}
	var ps []prov
	for _, p := range w.Providers {
		inv := map[string][]float64{}
		classes := make([]string, 0, len(p.Inventories))
		for rc := range p.Inventories {
			classes = append(classes, rc)
		}
		sort.Strings(classes)
		for _, rc := range classes {
			i := p.Inventories[rc]
			inv[rc] = []float64{float64(i.Total), float64(i.Reserved), float64(i.MinUnit), float64(i.MaxUnit), float64(i.StepSize), i.AllocationRatio}
		}
		ps = append(ps, prov{UUID: p.UUID, Name: p.Name, Inv: inv, Used: p.Usages, Agg: inAgg[p.UUID]})
	}
	data, err := json.Marshal(map[string]any{"providers": ps, "aggregate": w.Aggregates[0].UUID})
	if err != nil {
		b.Fatal(err)
	}
	script := `
import json, sqlite3, sys
d = json.load(sys.stdin)
c = sqlite3.connect(sys.argv[1])
# Placement numbers the standard classes by their place in
# os-resource-classes and writes them at start-up.
import os_resource_classes
rc = {n: i for i, n in enumerate(os_resource_classes.STANDARDS)}
c.execute("insert into projects (id, external_id) values (1, 'bench')")
c.execute("insert into users (id, external_id) values (1, 'bench')")
c.execute("insert into placement_aggregates (id, uuid) values (1, ?)", (d["aggregate"],))
for i, p in enumerate(d["providers"], start=1):
    c.execute("insert into resource_providers (id, uuid, name, generation, root_provider_id) values (?,?,?,1,?)", (i, p["UUID"], p["Name"], i))
    for cls, v in p["Inv"].items():
        c.execute("insert into inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio) values (?,?,?,?,?,?,?,?)",
                  (i, rc[cls], int(v[0]), int(v[1]), int(v[2]), int(v[3]), int(v[4]), v[5]))
    if p["Agg"]:
        c.execute("insert into resource_provider_aggregates (resource_provider_id, aggregate_id) values (?, 1)", (i,))
    used = {k: v for k, v in (p["Used"] or {}).items() if v}
    if used:
        cu = "c%07d-0000-4000-8000-000000000000" % i
        c.execute("insert into consumers (uuid, project_id, user_id, generation) values (?,1,1,1)", (cu,))
        for cls, v in used.items():
            c.execute("insert into allocations (resource_provider_id, consumer_id, resource_class_id, used) values (?,?,?,?)", (i, cu, rc[cls], v))
c.commit()
`
	cmd := exec.Command("/usr/bin/python3", "-c", script, db)
	cmd.Stdin = strings.NewReader(string(data))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("loading Placement's database: %v\n%s", err, out)
	}
}
