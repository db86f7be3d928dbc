package account_test

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"corral/web/webtest"
)

// The dashboard's host × aggregate map, as Chromium draws it: one row per
// host, a coloured cell exactly where the host is in the aggregate, each
// cell a visible square linking to its aggregate.
func TestHostMapMatchesTheWorld(t *testing.T) {
	app := webtest.Start(t)
	w, err := app.Store.ExportWorld(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{} // host → aggregates it is in
	hostNames := map[string]bool{}
	for _, p := range w.Providers {
		if p.IsHost() {
			hostNames[p.Name] = true
		}
	}
	byUUID := map[string]string{}
	for _, p := range w.Providers {
		byUUID[p.UUID] = p.Name
	}
	for _, a := range w.Aggregates {
		for _, m := range a.Members {
			if h := byUUID[m]; hostNames[h] {
				want[h] = append(want[h], a.Name)
			}
		}
	}

	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatal(err)
	}
	b.Do(chromedp.Navigate(app.URL+"/"), chromedp.WaitVisible(`[data-testid="map-table"]`))
	cells, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid=map-in]')).map(c => {
		const r = c.getBoundingClientRect(), bg = getComputedStyle(c).backgroundColor;
		return c.closest('tr').dataset.host + '|' + c.dataset.agg + '|' + Math.round(r.width) + '|' + bg + '|' + c.querySelector('a').getAttribute('href');
	})`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, c := range cells {
		f := strings.Split(c, "|")
		host, agg, width, bg, href := f[0], f[1], f[2], f[3], f[4]
		got[host] = append(got[host], agg)
		if w, _ := strconv.Atoi(width); w < 18 || bg == "rgba(0, 0, 0, 0)" {
			t.Errorf("cell %s/%s drawn %spx wide, background %s", host, agg, width, bg)
		}
		if !strings.HasPrefix(href, "/aggregates/") {
			t.Errorf("cell %s/%s links to %q", host, agg, href)
		}
	}
	rows, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid=map-row]')).map(r => r.dataset.host)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != min(len(hostNames), 40) {
		t.Errorf("map rows %v, want %d hosts", rows, len(hostNames))
	}
	for _, h := range rows {
		slices.Sort(got[h])
		slices.Sort(want[h])
		if !slices.Equal(got[h], want[h]) {
			t.Errorf("host %s: map shows %v, world has %v", h, got[h], want[h])
		}
	}
	if len(got) == 0 {
		t.Fatalf("no cell drawn; hosts %v", slices.Sorted(maps.Keys(hostNames)))
	}
}
