package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"corral/models/store"
	"corral/models/store/storetest"
)

// TestHostileBytesAre400s: NUL, invalid UTF-8 and over-long values in a
// path, a query, a form or a JSON string are a 400 naming the field on
// both databases, and nothing is stored.
func TestHostileBytesAre400s(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		w := newZoneWorld(t, st)
		admin := w.a.Client(t)
		login(admin, "alice")
		long := strings.Repeat("x", 200_000)
		search := strings.Repeat("y", 50_001)
		check := func(what string, r *response, field string) {
			t.Helper()
			if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, field) {
				t.Errorf("%s: status %d, want 400 naming %q; body:\n%.400s", what, r.StatusCode, field, r.Body)
			}
		}
		check("compute path NUL", w.api(http.MethodGet, "/compute/v2.1/os-server-groups/%00", "", "OpenStack-API-Version", "compute 2.64"), "path parameter id")
		check("compute path bad UTF-8", w.api(http.MethodGet, "/compute/v2.1/os-aggregates/%ff", ""), "path")
		check("impact path NUL", w.api(http.MethodGet, "/api/drafts/%00/impact", ""), "path parameter id")
		check("console path NUL", admin.Get("/aggregates/%00"), "path parameter id")
		check("query NUL", admin.Get("/providers?q=a%00b"), "query parameter q")
		check("query bad UTF-8", admin.Get("/aggregates?q=%ff%fe"), "query parameter q")
		check("long search", admin.Get("/providers?q="+search), "query parameter q")
		check("placement query NUL", w.api(http.MethodGet, "/placement/resource_providers?name=a%00", "", "OpenStack-API-Version", "placement 1.39"), "query parameter name")
		check("form NUL", admin.Submit("/tokens", "/tokens", url.Values{"name": {"ci\x00"}}), "form field name")
		check("form bad UTF-8", admin.Submit("/tokens", "/tokens", url.Values{"name": {"ci\xff"}}), "form field name")
		check("long token name", admin.Submit("/tokens", "/tokens", url.Values{"name": {long[:10_000]}}), "255")
		// Longer than the form's route takes: refused before it is read.
		if r := admin.Submit("/tokens", "/tokens", url.Values{"name": {long}}); r.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("200,000-character token name: status %d, want 413", r.StatusCode)
		}
		check("JSON NUL", w.api(http.MethodPost, "/placement/resource_providers", `{"name": "a\u0000b"}`, "OpenStack-API-Version", "placement 1.39"), "name")
		check("JSON bad UTF-8", w.api(http.MethodPost, "/compute/v2.1/os-aggregates", "{\"aggregate\": {\"name\": \"a\xffb\"}}"), "body")
		check("JSON nested NUL", w.api(http.MethodPost, "/compute/v2.1/os-server-groups", `{"server_group": {"name": "g\u0000", "policy": "affinity"}}`, "OpenStack-API-Version", "compute 2.64"), "server_group.name")
		check("JSON long string", w.api(http.MethodPost, "/api/preview", fmt.Sprintf(`{"flavor": %q}`, long)), "flavor")

		ctx := context.Background()
		alice, err := st.UserByName(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		toks, err := st.ListTokens(ctx, alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range toks {
			if tok.Name != "rules" {
				t.Errorf("a hostile token name was stored: %.40q", tok.Name)
			}
		}
	})
}

// TestAnonymousBodyIsBoundedBeforeParsing: an anonymous POST to /login
// with a large body is refused from its declared length without reading
// it, and a chunked one is cut at the anonymous limit.
func TestAnonymousBodyIsBoundedBeforeParsing(t *testing.T) {
	a := newApp(t)
	var read countingReader
	req, _ := http.NewRequest(http.MethodPost, a.URL+"/login", &read)
	req.ContentLength = 50 << 20
	req.Header.Set("Content-Type", "multipart/form-data; boundary=xyz")
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("declared 50 MB: status %d, want 413", resp.StatusCode)
		}
	}
	if read.n > 16<<20 {
		t.Errorf("declared 50 MB: the client sent %d bytes before the refusal", read.n)
	}

	chunked := &countingReader{limit: 50 << 20}
	req, _ = http.NewRequest(http.MethodPost, a.URL+"/login", chunked)
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = http.DefaultClient.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Errorf("chunked 50 MB: status %d, want a 4xx", resp.StatusCode)
		}
	}
	if chunked.n > 8<<20 {
		t.Errorf("chunked 50 MB: the server read %d bytes", chunked.n)
	}
}

// countingReader yields 'a's (forever, or up to limit) and counts them.
type countingReader struct {
	n, limit int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	if r.limit > 0 && r.n >= r.limit {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = 'a'
	}
	r.n += int64(len(p))
	return len(p), nil
}
