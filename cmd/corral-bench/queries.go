package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"corral/models"
)

// client sends requests to one server with its token.
type client struct {
	base, header, token string
	hc                  *http.Client
}

func newClient(base, header, token string, conns int) *client {
	return &client{base: base, header: header, token: token, hc: &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true},
		Timeout:   5 * time.Minute,
	}}
}

type answer struct {
	status int
	body   []byte
	took   time.Duration
}

func (c *client) get(path string) (answer, error) { return c.do(http.MethodGet, path, nil) }

// timeGet times path, reading the answer into nothing: keeping 80 MB
// answers would time the client's memory, not the server.
func (c *client) timeGet(path string) (time.Duration, int, error) {
	req, err := http.NewRequest(http.MethodGet, c.base+path, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set(c.header, c.token)
	req.Header.Set("OpenStack-API-Version", "placement 1.32")
	t := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(t), resp.StatusCode, err
}

func (c *client) do(method, path string, body []byte) (answer, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set(c.header, c.token)
	req.Header.Set("OpenStack-API-Version", "placement 1.32")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	t := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return answer{status: resp.StatusCode, body: data, took: time.Since(t)}, err
}

// listUUIDs lists the uuids of a GET /resource_providers answer, in order.
func (c *client) listUUIDs(path string) ([]string, error) {
	a, err := c.get(path)
	if err != nil {
		return nil, err
	}
	if a.status != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d: %.300s", path, a.status, a.body)
	}
	var doc struct {
		ResourceProviders []struct {
			UUID string `json:"uuid"`
		} `json:"resource_providers"`
	}
	if err := json.Unmarshal(a.body, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]string, len(doc.ResourceProviders))
	for i, p := range doc.ResourceProviders {
		out[i] = p.UUID
	}
	return out, nil
}

type tableQuery struct {
	name string
	path string
	big  bool // answers (nearly) every provider
	// each, when set, is asked instead of path: one after the other, none
	// twice, so that no answer can come from a cache.
	each []string
}

type queries struct {
	first  string // what the first answer after start is timed on
	table  []tableQuery
	checks []string
	w      *models.World
	// for previews
	projects, flavors, aggs []string
	inFive, notInFifty      string
}

// chooseQueries picks the queries on w: an aggregate of about 22
// providers, its negation, a five-aggregate any-of with it and fifty
// forbidden aggregates, and every provider; and more member_of queries for
// the answer check.
func chooseQueries(w *models.World) *queries {
	best := 0
	for a, agg := range w.Aggregates {
		d, bd := abs(len(agg.Members)-22), abs(len(w.Aggregates[best].Members)-22)
		if len(agg.Members) > 0 && d < bd {
			best = a
		}
	}
	agg := w.Aggregates[best]
	in := map[string]map[string]bool{} // provider → its aggregates
	for _, a := range w.Aggregates {
		for _, m := range a.Members {
			if in[m] == nil {
				in[m] = map[string]bool{}
			}
			in[m][a.UUID] = true
		}
	}
	var p string
	if len(agg.Members) > 0 {
		p = agg.Members[0]
	}
	// Five any-of aggregates of which p is in one or two; fifty forbidden
	// ones p is not in, none of them a zone-sized one (as reservation
	// aggregates are): a handful of providers' worth of answer.
	five := []string{agg.UUID}
	var others []string
	for u := range in[p] {
		if u != agg.UUID {
			others = append(others, u)
		}
	}
	sort.Strings(others)
	if len(others) > 0 {
		five = append(five, others[0])
	}
	var fifty []string
	for _, a := range w.Aggregates {
		if in[p][a.UUID] || len(a.Members) > max(len(w.Providers)/100, 1000) {
			continue
		}
		switch {
		case len(five) < 5:
			five = append(five, a.UUID)
		case len(fifty) < 50:
			fifty = append(fifty, a.UUID)
		}
	}
	sort.Strings(five)
	q := &queries{w: w, inFive: "in:" + strings.Join(five, ","), notInFifty: "!in:" + strings.Join(fifty, ",")}
	mo := func(vals ...string) string {
		v := url.Values{"member_of": vals}
		return "/resource_providers?" + v.Encode()
	}
	q.first = mo(agg.UUID)
	var each []string // aggregates of 15 to 30 providers, as agg
	for _, a := range w.Aggregates {
		if len(a.Members) >= 15 && len(a.Members) <= 30 && len(each) < 1000 {
			each = append(each, mo(a.UUID))
		}
	}
	q.table = []tableQuery{
		{"member_of=<agg>", mo(agg.UUID), false, nil},
		{"member_of=!<agg>", mo("!" + agg.UUID), true, nil},
		{"member_of=in:<5>&member_of=<agg>&member_of=!in:<50>", mo(q.inFive, agg.UUID, q.notInFifty), false, nil},
		{"all providers", "/resource_providers", true, nil},
	}
	if len(each) > 0 {
		q.table = append(q.table, tableQuery{"member_of=<agg>, another aggregate of 15–30 providers each time", each[0], false, each})
	}
	for _, t := range q.table {
		q.checks = append(q.checks, t.path)
	}
	step := max(1, len(w.Aggregates)/24)
	for a := 0; a < len(w.Aggregates); a += step {
		b := w.Aggregates[(a+7)%len(w.Aggregates)]
		q.checks = append(q.checks, mo(w.Aggregates[a].UUID), mo("in:"+w.Aggregates[a].UUID+","+b.UUID),
			mo(w.Aggregates[a].UUID, "!"+b.UUID))
	}
	q.checks = append(q.checks, mo("!in:"+strings.Join(fifty, ",")), "/resource_providers?name="+url.QueryEscape(w.Providers[len(w.Providers)/2].Name))

	seen := map[string]bool{}
	for _, s := range w.Servers {
		if !seen[s.ProjectID] {
			seen[s.ProjectID] = true
			q.projects = append(q.projects, s.ProjectID)
		}
	}
	if len(q.projects) == 0 {
		q.projects = []string{"project-0"}
	}
	for _, f := range w.Flavors {
		q.flavors = append(q.flavors, f.Name)
	}
	for _, a := range w.Aggregates {
		q.aggs = append(q.aggs, a.UUID)
	}
	return q
}

// preview is the i-th of a sequence of distinct preview requests: project
// and flavor vary (no pair repeats for projects × flavors requests), and so
// does one forbidden aggregate; five member_of terms, among them a
// fifty-aggregate !in:, and a limit of 200.
func (q *queries) preview(i int) []byte {
	np, nf := len(q.projects), max(1, len(q.flavors))
	req := map[string]any{
		"project_id": q.projects[i%np],
		"limit":      200,
		"placement": map[string]any{"member_of": []string{
			q.inFive, q.notInFifty, "!" + q.aggs[(i*31)%len(q.aggs)], "!" + q.aggs[(i*17+3)%len(q.aggs)], "!" + q.aggs[(i*7+5)%len(q.aggs)],
		}},
	}
	if len(q.flavors) > 0 {
		req["flavor"] = q.flavors[(i/np)%nf]
	}
	b, _ := json.Marshal(req)
	return b
}

func (q *queries) previews(offset int) func(i int) []byte {
	return func(i int) []byte { return q.preview(offset + i) }
}

// compareAnswers asks both servers every check and lists the differences.
func compareAnswers(corral, placement *client, checks []string) (int, []string) {
	var diffs []string
	for _, path := range checks {
		a, errA := corral.listUUIDs(path)
		b, errB := placement.listUUIDs(path)
		switch {
		case errA != nil || errB != nil:
			diffs = append(diffs, fmt.Sprintf("%.120s: corral %v, placement %v", path, errA, errB))
		case !slices.Equal(a, b):
			sa, sb := slices.Clone(a), slices.Clone(b)
			slices.Sort(sa)
			slices.Sort(sb)
			what := "order"
			if !slices.Equal(sa, sb) {
				what = "set"
			}
			diffs = append(diffs, fmt.Sprintf("%.120s: %s differs (corral %d providers, placement %d)", path, what, len(a), len(b)))
		}
	}
	return len(checks), diffs
}

type latency struct {
	corral, placement sample
	results           int
}

// sample is one side's latencies: the median and the spread around it.
type sample struct{ p10, p50, p90 time.Duration }

func sampleOf(d []time.Duration) sample {
	return sample{pct(d, 0.1), pct(d, 0.5), pct(d, 0.9)}
}

func (s sample) String() string {
	return fmt.Sprintf("%s (%s–%s)", ms(s.p50), ms(s.p10), ms(s.p90))
}

// compareLatency asks path of corral and placementPath of Placement n
// times each, in pairs whose order alternates, so that both sides see the
// same moments of a busy machine; a few warm-up pairs go first and are
// not counted. Both clients must be alike (one connection, the same
// transport), so that the client's own cost is the same on both sides.
func compareLatency(corral, placement timer, path, placementPath string, n int) (latency, error) {
	return compareEach(corral, placement, []string{path}, []string{placementPath}, n)
}

// compareEach is compareLatency asking paths[i] of corral and
// placementPaths[i] of Placement in the i-th pair, round and round.
func compareEach(corral, placement timer, paths, placementPaths []string, n int) (latency, error) {
	var cs, ps []time.Duration
	var res latency
	// The client's own garbage (the answers compared before, up to 80 MB
	// each) is collected first, so that its collector does not run into
	// the timed requests of either side.
	runtime.GC()
	warm := min(max(n/20, 2), 10)
	for i := -warm; i < n; i++ {
		k := (i + warm) % len(paths)
		sides := [2]struct {
			c    timer
			path string
			out  *[]time.Duration
		}{{corral, paths[k], &cs}, {placement, placementPaths[k], &ps}}
		if i%2 != 0 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, side := range sides {
			took, status, err := side.c.timeGet(side.path)
			if err != nil {
				return res, err
			}
			if status != http.StatusOK {
				return res, fmt.Errorf("status %d", status)
			}
			if i >= 0 {
				*side.out = append(*side.out, took)
			}
		}
	}
	res.corral, res.placement = sampleOf(cs), sampleOf(ps)
	return res, nil
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// resultsOf counts the providers of path's answer (0 when it fails).
func resultsOf(c *client, path string) int {
	a, err := c.get(path)
	if err != nil {
		return 0
	}
	return bytes.Count(a.body, []byte(`"uuid"`))
}
