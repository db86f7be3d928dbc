package cloud_test

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/scheduling"
	"corral/web/webtest"
)

type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func (b *browser) get(path string) *goquery.Document {
	b.t.Helper()
	resp, err := b.c.Get(b.base + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	return doc
}

func (b *browser) post(path, from string, form url.Values) *goquery.Document {
	b.t.Helper()
	tok, _ := b.get(from).Find(`input[name="_csrf"]`).First().Attr("value")
	form.Set("_csrf", tok)
	resp, err := b.c.PostForm(b.base+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.t.Fatalf("POST %s: %d %v", path, resp.StatusCode, err)
	}
	return doc
}

// TestCloudPage: a connected console shows the connection, syncs on
// "Sync now", and shows what changed and where Nova and Placement disagree.
func TestCloudPage(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "page-")
	// cn1 is in Nova's aggA; take its provider out of Placement's copy.
	f.placementAggregates(t, f.cn1, []string{}...)
	app := webtest.Start(t)
	app.Env.Cloud = &cloud.Syncer{Store: app.Store, Options: cloud.Options{ComputeURL: c.ComputeURL, PlacementURL: c.PlacementURL, Token: cloudtest.Token}}
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, base: app.URL, c: &http.Client{Jar: jar, Timeout: 2 * time.Minute}}
	b.post("/login", "/login", url.Values{"name": {app.AdminName}, "password": {app.AdminPassword}})

	doc := b.get("/cloud")
	if got := doc.Find(`[data-testid="cloud-connection-name"]`).Text(); !strings.Contains(got, c.ComputeURL) || strings.Contains(doc.Text(), cloudtest.Token) {
		t.Errorf("connection shown as %q (or the token leaked)", got)
	}
	if doc.Find(`[data-testid="cloud-never"]`).Length() != 1 {
		t.Error("a console that never synced does not say so")
	}
	// "Sync now" answers at once; the page polls the sync's progress
	// until it is done.
	doc = b.post("/cloud/sync", "/cloud", url.Values{})
	if doc.Find(`[data-testid="cloud-sync-progress"]`).Length() != 1 {
		t.Fatalf("sync now shows no progress: %s", doc.Find("main").Text())
	}
	doc = waitForSync(t, b)
	if doc.Find(`[data-testid="cloud-sync-progress"].flash-success`).Length() != 1 {
		t.Fatalf("sync now: %s", doc.Find(`[data-testid="cloud-sync-progress"]`).Text())
	}
	if !strings.Contains(doc.Find(`[data-testid="cloud-changes"]`).Text(), "+ aggregate page-aggA") {
		t.Errorf("changes: %q", doc.Find(`[data-testid="cloud-changes"]`).Text())
	}
	dis := doc.Find(`[data-testid="cloud-disagreement"]`).Text()
	if !strings.Contains(dis, "page-cn2") || !strings.Contains(dis, "member_of sees it") {
		t.Errorf("disagreement warning: %q", dis)
	}
	// The aggregate list and pages warn of both kinds of disagreement.
	var row *goquery.Selection
	b.get("/aggregates?q=page-agg").Find(`[data-testid="aggregate-row"]`).Each(func(_ int, r *goquery.Selection) {
		if r.Find(`[data-testid="aggregate-name"]`).Text() == "page-aggA" {
			row = r
		} else if r.Find(`[data-testid="aggregate-disagreement"]`).Length() != 0 {
			t.Errorf("aggregate %s listed with a disagreement", r.Find(`[data-testid="aggregate-name"]`).Text())
		}
	})
	if row == nil {
		t.Fatal("page-aggA not listed")
	}
	if w := row.Find(`[data-testid="aggregate-disagreement"]`).Text(); !strings.Contains(w, "disagree on 2 hosts") {
		t.Errorf("list warning for page-aggA: %q", w)
	}
	items := b.get("/aggregates/" + f.aggA).Find(`[data-testid="aggregate-disagreements"] [data-testid="aggregate-disagreement-item"]`)
	var texts []string
	items.Each(func(_ int, li *goquery.Selection) { texts = append(texts, li.Text()) })
	all := strings.Join(texts, "\n")
	if items.Length() != 2 ||
		!strings.Contains(all, "host page-cn1 is in nova aggregate page-aggA but its provider page-cn1 is not in placement aggregate "+f.aggA+": member_of will not see it") ||
		!strings.Contains(all, "provider page-cn2 is in placement aggregate "+f.aggA+" but host page-cn2 is not in nova aggregate page-aggA: member_of sees it") {
		t.Errorf("aggregate page warnings:\n%s", all)
	}
	if b.get("/aggregates/"+f.aggB).Find(`[data-testid="aggregate-disagreements"]`).Length() != 0 {
		t.Error("page-aggB, where Nova and Placement agree, warns")
	}

	// The flavor pages show the private flavor's access list.
	fdoc := b.get("/flavors/" + f.flavorPv)
	if got := fdoc.Find(`[data-testid="flavor-access-project"]`).Text(); got != "p1" {
		t.Errorf("private flavor access shown as %q", got)
	}
	if b.get("/flavors/"+f.flavorPublic).Find(`[data-testid="flavor-access"]`).Length() != 0 {
		t.Error("a public flavor shows an access list")
	}
	var privateRows []string
	b.get("/flavors?q=page-").Find(`[data-testid="flavor-row"]`).Each(func(_ int, r *goquery.Selection) {
		if r.Find(`[data-testid="flavor-private"]`).Length() == 1 {
			privateRows = append(privateRows, r.Find(`[data-testid="flavor-name"]`).Text())
		}
	})
	if !slices.Equal(privateRows, []string{"page-private"}) {
		t.Errorf("flavors marked private: %v", privateRows)
	}

	// The live query page warns that member_of sees Placement's copy.
	if w := b.get("/query").Find(`[data-testid="preview-cloud-warning"]`).Text(); !strings.Contains(w, "page-cn2") {
		t.Errorf("query page warning: %q", w)
	}

	// A draft's plan page lists the calls with their openstack commands;
	// rolling it out from the page changes the cloud. Applying a draft
	// from the drafts page leads there: connected, nothing is applied to
	// corral alone.
	d := draft(t, app.Store, "page-plan", scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "page-aggB", Key: "owner", Value: "ops"})
	doc = b.post("/drafts/"+d.ID+"/apply", "/drafts/"+d.ID, url.Values{"version": {fmt.Sprint(d.Version)}})
	if doc.Find(`[data-testid="plan-openstack"]`).Length() != 1 {
		t.Errorf("applying a draft while connected did not lead to its rollout plan: %s", doc.Find("main").Text())
	}
	doc = b.get("/cloud/drafts/" + d.ID)
	if got := doc.Find(`[data-testid="plan-openstack"]`).Text(); got != "openstack aggregate set --property owner=ops page-aggB" {
		t.Errorf("plan: %q", got)
	}
	if got := doc.Find(`[data-testid="plan-call"]`).Text(); !strings.Contains(got, `/action {"set_metadata":{"metadata":{"owner":"ops"}}}`) {
		t.Errorf("plan call: %q", got)
	}
	doc = b.post("/cloud/drafts/"+d.ID+"/rollout", "/cloud/drafts/"+d.ID, url.Values{})
	if doc.Find(`[data-testid="rollout-done"] li`).Length() != 1 {
		t.Errorf("rollout page: %s", doc.Find("main").Text())
	}
	var agg struct {
		Aggregate struct {
			Metadata map[string]string `json:"metadata"`
		} `json:"aggregate"`
	}
	must(t, c.Call("compute", "GET", fmt.Sprintf("os-aggregates/%d", aggBID(t, c, "page-aggB")), nil, &agg, 200))
	if agg.Aggregate.Metadata["owner"] != "ops" {
		t.Errorf("after the rollout nova says %v", agg.Aggregate.Metadata)
	}

	// The standalone console says it is standalone, and warns of no
	// disagreement: there is no cloud to disagree with.
	app.Env.Cloud = nil
	if b.get("/aggregates/"+f.aggA).Find(`[data-testid="aggregate-disagreements"]`).Length() != 0 {
		t.Error("a standalone console warns of a cloud's disagreement")
	}
	if b.get("/cloud").Find(`[data-testid="cloud-standalone"]`).Length() != 1 {
		t.Error("standalone console does not say so")
	}
}

// waitForSync polls the progress card as the page does until the
// background sync is done, then returns the Cloud page.
func waitForSync(t *testing.T, b *browser) *goquery.Document {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for b.get("/cloud/sync/progress").Find(`[data-testid="cloud-sync-running"]`).Length() == 1 {
		if time.Now().After(deadline) {
			t.Fatal("the background sync did not end within 2 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	return b.get("/cloud")
}

func aggBID(t *testing.T, c *cloudtest.Cloud, name string) int {
	t.Helper()
	var out struct {
		Aggregates []struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
		} `json:"aggregates"`
	}
	must(t, c.Call("compute", "GET", "os-aggregates", nil, &out, 200))
	for _, a := range out.Aggregates {
		if a.Name == name {
			return a.ID
		}
	}
	t.Fatalf("no aggregate %s", name)
	return 0
}
