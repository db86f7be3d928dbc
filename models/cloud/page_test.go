package cloud_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
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
	build(t, c, "page-")
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
	doc = b.post("/cloud/sync", "/cloud", url.Values{})
	if doc.Find(`[data-testid="flash-success"]`).Length() != 1 {
		t.Fatalf("sync now: %s", doc.Find(`[data-testid="flashes"]`).Text())
	}
	if !strings.Contains(doc.Find(`[data-testid="cloud-changes"]`).Text(), "+ aggregate page-aggA") {
		t.Errorf("changes: %q", doc.Find(`[data-testid="cloud-changes"]`).Text())
	}
	dis := doc.Find(`[data-testid="cloud-disagreement"]`).Text()
	if !strings.Contains(dis, "page-cn2") || !strings.Contains(dis, "member_of sees it") {
		t.Errorf("disagreement warning: %q", dis)
	}
	// The standalone console says it is standalone.
	app.Env.Cloud = nil
	if b.get("/cloud").Find(`[data-testid="cloud-standalone"]`).Length() != 1 {
		t.Error("standalone console does not say so")
	}
}
