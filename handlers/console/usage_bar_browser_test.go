package console_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"corral/models/placement"
	"corral/web/webtest"
)

// drawnBars measures, in the browser, each inventory row's capacity bar:
// the width of its used part and of the whole bar, in CSS pixels.
const drawnBars = `Object.fromEntries(Array.from(document.querySelectorAll('[data-testid="inventory-row"]')).map(r => {
	const bar = r.querySelector('[data-testid="usage-bar"]');
	const fill = bar && (bar.querySelector('[data-testid="usage-fill"]') || bar.firstElementChild);
	return [r.querySelector('td').textContent.trim(), {
		bar: bar ? bar.getBoundingClientRect().width : -1,
		used: fill ? fill.getBoundingClientRect().width : -1,
	}];
}))`

type drawnBar struct {
	Bar  float64 `json:"bar"`
	Used float64 `json:"used"`
}

// TestBrowserUsageBarsDrawTheirUsage measures the capacity bars Chromium
// draws under the page's CSP: each bar's used part is its class's used
// share of capacity of the bar's width, within a pixel and a half (an
// inline style="width:N%" is refused by style-src 'self' and drew every
// bar full).
func TestBrowserUsageBarsDrawTheirUsage(t *testing.T) {
	a := newApp(t)
	b := webtest.NewBrowser(t, a.App)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	checked, partial := 0, 0
	for _, name := range []string{"cn1", "cn2", "numa3_1"} {
		p, err := a.Store.GetProvider(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
		err = chromedp.Do(ctx, chromedp.Navigate(a.URL+"/providers/"+p.UUID), chromedp.WaitVisible(webtest.TestID("inventory-table")))
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		bars, err := chromedp.Run(b.Ctx, chromedp.Evaluate[map[string]drawnBar](drawnBars))
		if err != nil {
			t.Fatal(err)
		}
		if len(bars) != len(p.Inventories) {
			t.Errorf("%s: %d bars for %d classes", name, len(bars), len(p.Inventories))
		}
		for rc, inv := range p.Inventories {
			got, ok := bars[rc]
			if !ok || got.Bar <= 0 || got.Used < 0 {
				t.Errorf("%s %s: no bar measured (%+v)", name, rc, got)
				continue
			}
			capacity := placement.Capacity(placement.Normalized(inv))
			share := 1.0
			if capacity > 0 {
				share = math.Min(1, float64(p.Usages[rc])/float64(capacity))
			} else if p.Usages[rc] == 0 {
				share = 0
			}
			want := share * got.Bar
			if math.Abs(got.Used-want) > 1.5 {
				t.Errorf("%s %s: %d of %d used, bar draws %.1f of %.1f px; want %.1f", name, rc, p.Usages[rc], capacity, got.Used, got.Bar, want)
			}
			checked++
			if share > 0 && share < 0.9 {
				partial++
			}
		}
	}
	// The demo must hold bars that are neither empty nor full, or a bar
	// drawn full could pass.
	if checked == 0 || partial == 0 {
		t.Fatalf("%d bars checked, %d partly used: the demo no longer tests the drawing", checked, partial)
	}
	t.Logf("%d bars measured, %d of them partly used", checked, partial)
}
