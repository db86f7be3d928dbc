package query_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/models"
	"corral/models/store"
	"corral/web/webtest"
)

// client talks to a running app with an admin's API token, which the
// console accepts in place of a session (and exempts from CSRF, as it
// carries no ambient credential).
type client struct {
	t     *testing.T
	app   *webtest.App
	token string
}

func newClient(t *testing.T) *client {
	t.Helper()
	app := webtest.Start(t)
	return &client{t: t, app: app, token: app.NewToken(t, app.AdminName)}
}

// do sends one request with the client's token; the response's body is
// read already and can be read again.
func (c *client) do(method, path string, body io.Reader, header map[string]string) *http.Response {
	c.t.Helper()
	var hdr []string
	for k, v := range header {
		hdr = append(hdr, k, v)
	}
	web := c.app.Client(c.t)
	web.Token = c.token
	r := web.Request(method, path, body, hdr...)
	r.Response.Body = io.NopCloser(strings.NewReader(r.Body))
	return r.Response
}

// fragment GETs the preview as htmx does and parses it.
func (c *client) fragment(q url.Values) (*goquery.Document, *http.Response) {
	c.t.Helper()
	resp := c.do("GET", "/query/preview?"+q.Encode(), nil, map[string]string{"HX-Request": "true"})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("GET /query/preview?%s: status %d: %s", q.Encode(), resp.StatusCode, b)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return doc, resp
}

func (c *client) page(path string) *goquery.Document {
	c.t.Helper()
	resp := c.do("GET", path, nil, nil)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("GET %s: status %d: %s", path, resp.StatusCode, b)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return doc
}

// excluded lists the providers the preview marks excluded, with reasons.
func excluded(doc *goquery.Document) map[string]string {
	out := map[string]string{}
	doc.Find(`#preview [data-testid="excluded-row"]`).Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("data-provider")
		out[name] = strings.TrimSpace(s.Find(`[data-testid="provider-reason"]`).Text())
	})
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// newlyExcluded is what adding terms excludes beyond the request without
// them (the demo's reservation aggregates are forbidden for every flavor
// without a reservation key, whatever the terms).
func newlyExcluded(c *client, base, with url.Values) map[string]string {
	b, _ := c.fragment(base)
	w, _ := c.fragment(with)
	before, after := excluded(b), excluded(w)
	out := map[string]string{}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			out[k] = v
		}
	}
	return out
}

// Seed 000's worked examples, through the page: a forbidden aggregate on a
// root spans its tree in the unnumbered group, not in a numbered one.
func TestPreviewFragmentMarksExcludedProviders(t *testing.T) {
	c := newClient(t)
	cases := []struct {
		name string
		q    url.Values
		want []string
		why  map[string]string
	}{
		{"!aggA unnumbered", url.Values{"member_of": {"!aggA"}},
			[]string{"cn1", "numa1_1", "numa1_2"},
			map[string]string{"cn1": "in forbidden aggregate aggA", "numa1_1": "root cn1 is in forbidden aggregate aggA"}},
		{"!aggB unnumbered", url.Values{"member_of": {"!aggB"}},
			[]string{"cn2", "numa2_1", "numa2_2", "ss1"}, nil},
		{"!aggC unnumbered", url.Values{"member_of": {"!aggC"}},
			[]string{"numa1_1", "ss2"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := newlyExcluded(c, url.Values{}, tc.q)
			if !slices.Equal(keys(got), tc.want) {
				t.Errorf("newly excluded = %v, want %v", keys(got), tc.want)
			}
			for p, reason := range tc.why {
				if !strings.Contains(got[p], reason) {
					t.Errorf("reason for %s = %q, want it to say %q", p, got[p], reason)
				}
			}
		})
	}
}

func TestPreviewFragmentNumberedGroupDoesNotSpan(t *testing.T) {
	c := newClient(t)
	doc, _ := c.fragment(url.Values{"gn": {"1"}, "gm": {"!aggA"}})
	hosts := map[string]string{}
	doc.Find(`[data-testid="host-excluded"]`).Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("data-host")
		hosts[name] = s.Text()
	})
	// member_of1=!aggA: cn1 itself is out, but its NUMA children are not,
	// so the host's tree still satisfies the group.
	if _, ok := hosts["cn1"]; ok {
		t.Errorf("cn1 excluded by a numbered !aggA: %q; numbered groups judge each provider directly", hosts["cn1"])
	}
	if got := doc.Find(`[data-testid="placement-query"]`).Text(); !strings.Contains(got, "member_of1=!") {
		t.Errorf("placement query %q lacks the numbered group", got)
	}
}

func TestPreviewShowsModesSideBySide(t *testing.T) {
	c := newClient(t)
	doc, _ := c.fragment(url.Values{"member_of": {"!aggA"}})
	rows := map[string][3]string{}
	doc.Find(`[data-testid="mode-row"]`).Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("data-provider")
		var v [3]string
		s.Find("td").Slice(1, 4).Each(func(i int, td *goquery.Selection) { v[i] = strings.TrimSpace(td.Text()) })
		rows[name] = v
	})
	// Direct and numbered judge numa1_x by their own (empty) aggregates;
	// the unnumbered group excludes them through their root cn1.
	for _, p := range []string{"numa1_1", "numa1_2"} {
		v, ok := rows[p]
		if !ok {
			t.Errorf("no mode row for %s; rows: %v", p, rows)
			continue
		}
		if v[0] != "kept" || v[2] != "kept" || !strings.Contains(v[1], "root cn1") {
			t.Errorf("modes for %s = %q, want kept / excluded via root cn1 / kept", p, v)
		}
	}
	if _, ok := rows["cn1"]; ok {
		t.Errorf("cn1 listed although all three modes exclude it")
	}
}

func TestPreviewParseErrorShowsNextToTheTerm(t *testing.T) {
	c := newClient(t)
	q := url.Values{"member_of": {"aggA", "in:aggA,!aggB", ""}}
	doc, resp := c.fragment(q)
	if got := doc.Find(`#mo-err-1[hx-swap-oob]`).Text(); !strings.Contains(got, "Expected 'member_of' parameter to contain valid UUID(s)") {
		t.Errorf("error slot of the bad term = %q, want Placement's message", got)
	}
	if got := doc.Find(`#mo-err-0`).Text(); got != "" {
		t.Errorf("error slot of the good term = %q, want empty", got)
	}
	if doc.Find(`[data-testid="preview-error"]`).Length() != 1 {
		t.Errorf("no error in the preview pane")
	}
	if got := resp.Header.Get("HX-Replace-Url"); !strings.HasPrefix(got, "/query?") || !strings.Contains(got, "member_of=aggA") {
		t.Errorf("HX-Replace-Url = %q, want the shareable query URL", got)
	}
}

func TestPreviewUnknownFlavorIsAFieldError(t *testing.T) {
	c := newClient(t)
	doc, _ := c.fragment(url.Values{"flavor": {"no-such-flavor"}})
	if got := doc.Find(`#err-flavor`).Text(); !strings.Contains(got, "no-such-flavor") {
		t.Errorf("flavor error slot = %q, want it to name the flavor", got)
	}
	doc, _ = c.fragment(url.Values{"extra_specs": {"ssd"}})
	if got := doc.Find(`#err-extra_specs`).Text(); !strings.Contains(got, "key=value") {
		t.Errorf("extra specs error slot = %q", got)
	}
}

func TestQueryPageHoldsTheQueryInItsURL(t *testing.T) {
	c := newClient(t)
	doc := c.page("/query?project=acme&flavor=m1.ssd&member_of=%21aggB")
	if v, _ := doc.Find(`[data-testid="q-project"]`).Attr("value"); v != "acme" {
		t.Errorf("project input = %q, want acme", v)
	}
	if v, _ := doc.Find(`[data-testid="q-flavor"] option[selected]`).Attr("value"); v != "m1.ssd" {
		t.Errorf("selected flavor = %q, want m1.ssd", v)
	}
	var terms []string
	doc.Find(`[data-testid="member-of-input"]`).Each(func(_ int, s *goquery.Selection) {
		if v, _ := s.Attr("value"); v != "" {
			terms = append(terms, v)
		}
	})
	if !slices.Equal(terms, []string{"!aggB"}) {
		t.Errorf("member_of inputs = %q", terms)
	}
	// m1.ssd needs an aggregate with ssd=true: cn4 and cn5; acme is isolated
	// to cn3, cn4 by AggregateMultiTenancyIsolation, and globex holds cn5.
	var eligible []string
	doc.Find(`[data-testid="host-eligible"]`).Each(func(_ int, s *goquery.Selection) {
		n, _ := s.Attr("data-host")
		eligible = append(eligible, n)
	})
	if !slices.Equal(eligible, []string{"cn4"}) {
		t.Errorf("eligible hosts = %v, want [cn4]", eligible)
	}
	if got := doc.Find(`[data-testid="share-link"]`).Text(); got != "/query?flavor=m1.ssd&member_of=%21aggB&project=acme" {
		t.Errorf("share link = %q", got)
	}
	if doc.Find(`[data-testid="funnel-step"]`).Length() < 4 {
		t.Errorf("funnel has %d steps, want providers, placement, hosts, each filter, weighed", doc.Find(`[data-testid="funnel-step"]`).Length())
	}
}

func TestAPIPreview(t *testing.T) {
	c := newClient(t)
	post := func(path, body string) (int, map[string]any) {
		resp := c.do("POST", path, strings.NewReader(body), map[string]string{"Content-Type": "application/json"})
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("POST %s: response is not JSON: %v", path, err)
		}
		return resp.StatusCode, out
	}
	code, tr := post("/api/preview", `{"placement": {"member_of": ["!aggB"]}, "flavor": "r1.reserved"}`)
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, tr)
	}
	var got []string
	for _, p := range tr["providers"].([]any) {
		e := p.(map[string]any)
		if e["excluded"] == true {
			got = append(got, e["name"].(string))
		}
	}
	sort.Strings(got)
	// r1.reserved requires the reservation's aggregate (cn8's tree) and
	// !aggB takes out cn2's tree and ss1.
	want := []string{"cn1", "cn2", "cn3", "cn4", "cn5", "cn6", "cn7", "numa1_1", "numa1_2", "numa2_1", "numa2_2",
		"numa3_1", "numa3_2", "numa4_1", "numa4_2", "numa5_1", "numa5_2", "numa6_1", "numa6_2", "numa7_1", "numa7_2", "ss1", "ss2"}
	if !slices.Equal(got, want) {
		t.Errorf("excluded = %v\nwant       %v", got, want)
	}

	for _, bad := range []struct{ body, field string }{
		{`{"placement": {"member_of": ["in:aggA,!aggB"]}}`, "placement.member_of"},
		{`{"flavor": "nope"}`, "flavor"},
		{`{"colour": "red"}`, "colour"},
		{`{"num_instances": 0}`, "num_instances"},
	} {
		code, out := post("/api/preview", bad.body)
		msg, _ := json.Marshal(out)
		if code != http.StatusBadRequest || !strings.Contains(string(msg), bad.field) {
			t.Errorf("POST %s = %d %s, want 400 naming %s", bad.body, code, msg, bad.field)
		}
	}
	if code, out := post("/api/preview?draft=no-such-draft", `{}`); code != http.StatusNotFound {
		t.Errorf("unknown draft = %d %v, want 404", code, out)
	}
}

// Answers are reused only while the world is the same: a write in between
// must change the answer to the same request.
func TestAPIPreviewAnswersFollowWrites(t *testing.T) {
	c := newClient(t)
	body := `{"placement": {"member_of": ["aggA"]}, "limit": 5}`
	passed := func() float64 {
		resp := c.do("POST", "/api/preview", strings.NewReader(body), nil)
		defer resp.Body.Close()
		var tr struct {
			Summary struct {
				HostsPassed float64 `json:"hosts_passed"`
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("preview: %d %v", resp.StatusCode, err)
		}
		return tr.Summary.HostsPassed
	}
	before := passed()
	if again := passed(); again != before {
		t.Fatalf("same request, same world: %v then %v", before, again)
	}
	ctx := context.Background()
	a, err := c.app.Store.GetAggregate(ctx, "aggA")
	if err != nil {
		t.Fatal(err)
	}
	cn2, err := c.app.Store.GetProvider(ctx, "cn2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.app.Store.UpdateAggregate(ctx, store.Actor{Name: "test"}, a.UUID, a.Generation, func(x *models.Aggregate) error {
		x.Members = append(x.Members, cn2.UUID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if after := passed(); after != before+1 {
		t.Errorf("hosts passing member_of=aggA: %v before adding cn2 to aggA, %v after; want one more", before, after)
	}
}
