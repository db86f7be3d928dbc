package cloud_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/web/webtest"
)

// TestSyncNowRunsInTheBackground: "Sync now" answers at once while the
// sync runs (here held up at Placement's provider list), the page shows
// its progress and polls it, a second "Sync now" is told one is running,
// and once the sync is done the poll reloads the page, which shows the
// outcome.
func TestSyncNowRunsInTheBackground(t *testing.T) {
	c := cloudtest.Shared(t)
	target, _ := url.Parse(c.PlacementURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/resource_providers") {
			<-hold
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(held.Close)

	app := webtest.Start(t)
	app.Env.Cloud = &cloud.Syncer{Store: app.Store, Options: cloud.Options{ComputeURL: c.ComputeURL, PlacementURL: held.URL, Token: cloudtest.Token}}
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, base: app.URL, c: &http.Client{Jar: jar, Timeout: time.Minute}}
	b.post("/login", "/login", url.Values{"name": {app.AdminName}, "password": {app.AdminPassword}})

	started := time.Now()
	doc := b.post("/cloud/sync", "/cloud", url.Values{})
	if took := time.Since(started); took > 10*time.Second {
		t.Errorf("sync now took %s to answer", took)
	}
	card := doc.Find(`[data-testid="cloud-sync-progress"]`)
	if card.Find(`[data-testid="cloud-sync-running"]`).Length() != 1 || card.AttrOr("hx-get", "") != "/cloud/sync/progress" ||
		!strings.Contains(card.AttrOr("hx-trigger", ""), "every") {
		t.Fatalf("while the sync runs the page shows %q (hx-get %q)", card.Text(), card.AttrOr("hx-get", ""))
	}
	if step := card.Find(`[data-testid="cloud-sync-step"]`).Text(); !strings.Contains(step, "reading") {
		t.Errorf("progress step: %q", step)
	}
	doc = b.post("/cloud/sync", "/cloud", url.Values{})
	if w := doc.Find(".flash-warning").Text(); !strings.Contains(w, "already running") {
		t.Errorf("a second sync now says %q", w)
	}

	release()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		req, _ := http.NewRequest("GET", app.URL+"/cloud/sync/progress", nil)
		req.Header.Set("HX-Request", "true")
		resp, err := b.c.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.Header.Get("HX-Refresh") == "true" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background sync did not end within 2 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	out := b.get("/cloud").Find(`[data-testid="cloud-sync-outcome"]`).Text()
	if !strings.HasPrefix(out, "Synced: ") || !strings.Contains(out, "started by "+app.AdminName) {
		t.Errorf("after the sync the page says %q", out)
	}
}
