package query_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/models"
)

// The query page takes the scheduler hints by server name and the image's
// properties: same_host keeps the hosts running the named server,
// different_host drops them, an image trait reaches the Placement query,
// and every field keeps its value in the shareable URL.
func TestQueryPageHintsAndImage(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	st, gen, err := c.app.Store.GetSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.EnabledFilters = append(st.EnabledFilters, models.FilterSameHost, models.FilterDifferentHost)
	if err := c.app.Store.UpdateSettings(ctx, models.Actor{Name: "admin", Role: models.RoleAdmin}, gen, st); err != nil {
		t.Fatal(err)
	}
	eligible := func(doc *goquery.Document) []string {
		var out []string
		doc.Find(`[data-testid="host-eligible"]`).Each(func(_ int, s *goquery.Selection) {
			n, _ := s.Attr("data-host")
			out = append(out, n)
		})
		slices.Sort(out)
		return out
	}
	// db-1 and db-2 run on cn4.
	doc := c.page("/query?project=acme&same_host=db-1,+db-2")
	if got := eligible(doc); !slices.Equal(got, []string{"cn4"}) {
		t.Errorf("same_host db-1, db-2: eligible %v, want [cn4]", got)
	}
	if v, _ := doc.Find(`[data-testid="q-same-host"]`).Attr("value"); v != "db-1, db-2" {
		t.Errorf("same_host input %q", v)
	}
	doc = c.page("/query?project=acme&different_host=db-1")
	if got := eligible(doc); slices.Contains(got, "cn4") || len(got) == 0 {
		t.Errorf("different_host db-1: eligible %v, want hosts other than cn4", got)
	}
	doc, _ = c.fragment(url.Values{"same_host": {"no-such-server"}})
	if got := doc.Find(`#err-same_host`).Text(); !strings.Contains(got, `no server named "no-such-server"`) {
		t.Errorf("same_host error slot %q", got)
	}
	doc = c.page("/query?project=acme&image=trait%3ACUSTOM_GPU%3Drequired&bfv=1")
	if got := doc.Find(`[data-testid="share-link"]`).Text(); !strings.Contains(got, "bfv=1") || !strings.Contains(got, "image=trait%3ACUSTOM_GPU%3Drequired") {
		t.Errorf("share link %q", got)
	}
	if doc.Find(`[data-testid="q-bfv"][checked]`).Length() != 1 {
		t.Error("boot from volume is not ticked")
	}
	if !strings.Contains(doc.Text(), "required=CUSTOM_GPU") {
		t.Error("the image's trait is not in the Placement query the page shows")
	}
	doc, _ = c.fragment(url.Values{"image": {"gpu"}})
	if got := doc.Find(`#err-image`).Text(); !strings.Contains(got, "key=value") {
		t.Errorf("image error slot %q", got)
	}
}
