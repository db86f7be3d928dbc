package query_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"corral/web/webtest"
)

// The host × stage matrix in Chromium: every host a row, every stage a
// column; a failing cell opens its reason; the filter (failed only, by
// name) narrows the rows on the server without reloading the page.
func TestBrowserHostStageMatrix(t *testing.T) {
	app := webtest.Start(t)
	b := webtest.NewBrowser(t, app)
	if err := b.Login(b.Ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	row := func(host string) string { return `#host-matrix tr[data-host="` + host + `"]` }
	b.Do(
		chromedp.Navigate(app.URL+"/query?project=acme&flavor=m1.small"),
		chromedp.WaitVisible(webtest.TestID("host-matrix")),
	)
	rows, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#host-matrix tbody tr')).map(r => r.dataset.host + ':' + r.dataset.testid)`))
	if err != nil {
		t.Fatal(err)
	}
	want := "cn1:host-eligible cn2:host-eligible cn3:host-eligible cn4:host-eligible cn6:host-eligible cn5:host-excluded cn7:host-excluded cn8:host-excluded"
	if strings.Join(rows, " ") != want {
		t.Fatalf("matrix rows = %v, want %s", rows, want)
	}
	// cn5 is globex's: tenant isolation fails it, and that is its first
	// failure; its reason opens on click.
	first := row("cn5") + ` td.cell.fail.first[data-stage="AggregateMultiTenancyIsolation"]`
	b.Do(chromedp.WaitVisible(first))
	width := func() float64 {
		t.Helper()
		w, err := chromedp.Run(b.Ctx, chromedp.Evaluate[float64](`document.querySelector('`+first+`').getBoundingClientRect().width`))
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	closed := width()
	b.Do(
		chromedp.Click(first+` summary`),
		chromedp.WaitVisible(first+` [data-testid="cell-reason"]`),
	)
	// The reason opens over the matrix: the column keeps its width.
	if opened := width(); opened > closed+2 {
		t.Errorf("opening the reason widened its column from %.0f to %.0f px", closed, opened)
	}
	if got := b.Text(chromedp.CSS(first + ` [data-testid="cell-reason"]`)); !strings.Contains(got, `project "acme" is not among the host's tenants`) {
		t.Errorf("cn5's reason = %q", got)
	}
	// Every check shows, not only the first failure: cn7 fails at
	// placement (the free pool) and still shows tenant isolation passed.
	b.Do(
		chromedp.WaitVisible(row("cn7")+` td.cell.fail.first[data-stage="placement"]`),
		chromedp.WaitVisible(row("cn7")+` td.cell.pass[data-stage="AggregateMultiTenancyIsolation"]`),
	)
	if got := b.Text(webtest.TestID("weight-note")); !strings.Contains(got, "normalised weight is 0") {
		t.Errorf("weight note = %q", got)
	}
	if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`window.corralMarker = true`)); err != nil {
		t.Fatal(err)
	}

	// Failed only, then by name: the server pages the rows.
	// htmx hooks up swapped-in content when it settles, a moment after
	// the swap: typing before that would go unheard.
	settled := chromedp.Poll[chromedp.Void](`!document.querySelector('.htmx-added, .htmx-settling')`)
	b.Do(
		chromedp.Click(webtest.TestID("matrix-failed")),
		chromedp.WaitNotPresent(`#host-matrix tr[data-testid="host-eligible"]`),
		settled,
	)
	b.Do(
		chromedp.SendKeys(webtest.TestID("matrix-name"), "cn7"),
		chromedp.WaitNotPresent(row("cn5")),
		chromedp.WaitVisible(row("cn7")),
	)
	if got := b.Text(webtest.TestID("matrix-count")); !strings.Contains(got, "of 1") {
		t.Errorf("count with failed only and cn7 = %q", got)
	}
	marker, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`window.corralMarker === true`))
	if err != nil || !marker {
		t.Errorf("the page reloaded; the matrix filter must update in place (%v)", err)
	}
	// Two instances in the anti-affinity group web: the first lands on
	// cn4, the second finds no host, and cn4's row says in which round.
	b.Do(
		chromedp.Navigate(app.URL+"/query?project=acme&flavor=m1.ssd&num=2&group=web"),
		chromedp.WaitVisible(webtest.TestID("rounds")),
	)
	if got := b.Text(webtest.TestID("rounds")); !strings.Contains(got, "#1 cn4") {
		t.Errorf("rounds = %q", got)
	}
	if got := b.Text(chromedp.CSS(row("cn4") + ` th .badge`)); got != "round 2" {
		t.Errorf("cn4's round badge = %q", got)
	}
	// The form folds away and the result takes the width.
	before, err := chromedp.Run(b.Ctx, chromedp.Evaluate[float64](`document.querySelector('#preview').getBoundingClientRect().width`))
	if err != nil {
		t.Fatal(err)
	}
	b.Do(chromedp.Click(`details.form-fold > summary`))
	after, err := chromedp.Run(b.Ctx, chromedp.Evaluate[float64](`document.querySelector('#preview').getBoundingClientRect().width`))
	if err != nil || after < before+200 {
		t.Errorf("folding the form: preview %v px → %v px (%v), want it wider", before, after, err)
	}

	// Capacity is a column of its own: the full host cn3 passes member_of
	// and fails capacity for m1.large. At 1920 px the first failure's
	// reason reads inline in the last column and the matrix spans the
	// card; at 1280 px that column stays out and the matrix still fits.
	whyShown := `getComputedStyle(document.querySelector('` + row("cn3") + ` td.why-col')).display !== 'none'`
	fits := `(() => { const w = document.querySelector('#host-matrix .matrix-wrap'); return w.scrollWidth <= w.clientWidth + 1 })()`
	for _, size := range [][2]int64{{1920, 1080}, {1280, 900}} {
		b.Do(
			chromedp.EmulateViewport(size[0], size[1]),
			chromedp.Navigate(app.URL+"/query?project=acme&flavor=m1.large"),
			chromedp.WaitVisible(row("cn3")+` td.cell.fail.first[data-stage="capacity"]`),
			chromedp.WaitVisible(row("cn3")+` td.cell.pass[data-stage="placement"]`),
		)
		shown, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](whyShown))
		if err != nil || shown != (size[0] == 1920) {
			t.Errorf("%d px: reason column shown %v (%v)", size[0], shown, err)
		}
		if size[0] == 1920 {
			if got := b.Text(chromedp.CSS(row("cn3") + ` td.why-col`)); !strings.HasPrefix(got, "capacity: no allocation candidate") {
				t.Errorf("cn3's inline reason = %q", got)
			}
			ratio, err := chromedp.Run(b.Ctx, chromedp.Evaluate[float64](
				`document.querySelector('#host-matrix table.matrix').getBoundingClientRect().width / document.querySelector('#host-matrix').getBoundingClientRect().width`))
			if err != nil || ratio < 0.95 {
				t.Errorf("at 1920 px the matrix spans %.0f%% of its card (%v), want all of it", ratio*100, err)
			}
		}
		if ok, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](fits)); err != nil || !ok {
			t.Errorf("%d px: the matrix scrolls sideways (%v)", size[0], err)
		}
	}
}
