package cloudview

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/views"
)

// A sync that failed before its first request is shown as a failure, not
// as a sync that took 0s and made 0 requests.
func TestFailedSyncRowShowsTheFailureNotZeros(t *testing.T) {
	props := Props{Connected: true, Recent: []Sync{
		{When: "2026-11-28 04:00:00 UTC", Duration: "0s", Error: "keystone: connection refused"},
		{When: "2026-11-28 03:00:00 UTC", Duration: "2.5s", Requests: 14, Error: "placement: 503"},
		{When: "2026-11-28 02:00:00 UTC", Duration: "1.2s", Requests: 12, Changes: []string{"x"}, Revision: 7},
	}}
	var buf bytes.Buffer
	if err := Page(views.Page{Title: "Cloud"}, props).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	doc.Find(`[data-testid="cloud-recent-row"]`).Each(func(_ int, tr *goquery.Selection) {
		var cells []string
		tr.Find("td").Each(func(_ int, td *goquery.Selection) {
			cells = append(cells, strings.Join(strings.Fields(td.Text()), " "))
		})
		rows = append(rows, cells)
	})
	if len(rows) != 3 {
		t.Fatalf("rows %q", rows)
	}
	want := [][]string{
		{"2026-11-28 04:00:00 UTC", "—", "none", "none", "Failed: keystone: connection refused"},
		{"2026-11-28 03:00:00 UTC", "2.5s", "14", "none", "Failed: placement: 503"},
		{"2026-11-28 02:00:00 UTC", "1.2s", "12", "1", "stored as revision 7"},
	}
	for i := range want {
		if strings.Join(rows[i], " | ") != strings.Join(want[i], " | ") {
			t.Errorf("row %d = %q, want %q", i, rows[i], want[i])
		}
	}
}
