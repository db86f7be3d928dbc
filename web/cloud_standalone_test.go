package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestCloudDraftPagesSayCorralIsStandalone: without a connected cloud the
// rollout pages are 404s that say why and where the draft is applied
// instead, on the page and in the JSON answer alike.
func TestCloudDraftPagesSayCorralIsStandalone(t *testing.T) {
	a, fx := newAuthzApp(t)
	admin := a.SignIn(t, "alice")
	want := "No cloud is connected"
	page := admin.Get("/cloud/drafts/"+fx.draft, "Accept", "text/html")
	if page.StatusCode != http.StatusNotFound || !strings.Contains(page.Body, want) || !strings.Contains(page.Body, "/drafts/"+fx.draft) {
		t.Errorf("GET /cloud/drafts/%s: status %d, want a 404 saying %q and naming the draft's page; body %.600s", fx.draft, page.StatusCode, want, page.Body)
	}
	api := a.Client(t)
	api.Token = a.Tokens["alice"]
	if r := api.Get("/cloud/drafts/"+fx.draft, "Accept", "application/json"); r.StatusCode != http.StatusNotFound || !strings.Contains(r.Body, want) {
		t.Errorf("GET /cloud/drafts/%s as JSON: status %d, body %.300s", fx.draft, r.StatusCode, r.Body)
	}
	r := admin.Submit("/drafts/"+fx.draft, "/cloud/drafts/"+fx.draft+"/rollout", url.Values{})
	if r.StatusCode != http.StatusNotFound || !strings.Contains(r.Body, want) {
		t.Errorf("POST rollout: status %d, want a 404 saying %q; body %.300s", r.StatusCode, want, r.Body)
	}
}
