package query_test

import (
	"net/url"
	"strings"
	"testing"
)

// The preview names the Nova release it follows and shows the exact query
// Nova sends to GET /allocation_candidates, compute_status_filter's
// root_required included.
func TestPreviewNamesNovaReleaseAndQuery(t *testing.T) {
	c := newClient(t)
	doc, _ := c.fragment(url.Values{"member_of": {"!aggA"}})
	if got := doc.Find(`[data-testid="nova-release"]`).Text(); !strings.Contains(got, "(nova 33)") {
		t.Errorf("release %q, want the latest (nova 33) by default", got)
	}
	q := doc.Find(`[data-testid="nova-query"]`).Text()
	for _, part := range []string{"limit=1000", "root_required=%21COMPUTE_STATUS_DISABLED", "member_of=%21in%3A"} {
		if !strings.Contains(q, part) {
			t.Errorf("query %q lacks %s", q, part)
		}
	}
}
