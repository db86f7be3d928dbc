package query

import (
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"corral/views"
)

// FuzzParseMatrixFilter feeds the host matrix filter any query string: it
// never panics, keeps the page in range and the texts bounded, clean and
// trimmed, and what it reads survives the page's own links unchanged.
func FuzzParseMatrixFilter(f *testing.F) {
	for _, seed := range []string{
		"hfail=1&hstage=placement&hname=cn1&hpage=3",
		"hpage=0", "hpage=-4", "hpage=99999999999999999999", "hpage=+7", "hpage= 2 ",
		"hname=" + strings.Repeat("é", 200), "hstage=%00%ff%fe", "hname=%20%20x%20",
		"hfail=&hfail=1", "hstage=AggregateInstanceExtraSpecsFilter&hstage=capacity",
		"hname=\u2028\u00a0", "hpage=2001", "hpage=2000",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, _ := url.ParseQuery(raw)
		mf := parseMatrixFilter(q)
		if mf.Page != 0 && (mf.Page < 2 || mf.Page > maxHostPage) {
			t.Fatalf("page %d out of range", mf.Page)
		}
		for field, s := range map[string]string{"stage": mf.Stage, "name": mf.Name} {
			if len(s) > maxFilterText || !utf8.ValidString(s) || s != strings.TrimSpace(s) ||
				strings.IndexFunc(s, unicode.IsControl) >= 0 {
				t.Fatalf("%s %q: not bounded, valid, trimmed and free of control characters", field, s)
			}
		}
		if mf.Failed != (q.Get("hfail") != "") {
			t.Fatalf("failed only %t for hfail %q", mf.Failed, q.Get("hfail"))
		}
		// The page's links carry the filter; following one reads it back.
		form := views.QueryForm{HostsFailed: mf.Failed, HostsStage: mf.Stage, HostsName: mf.Name, HostsPage: mf.Page}
		u, err := url.Parse(form.QueryURL())
		if err != nil {
			t.Fatalf("link %q: %v", form.QueryURL(), err)
		}
		again := parseMatrixFilter(u.Query())
		if again != mf {
			t.Fatalf("read %+v, through a link %+v", mf, again)
		}
	})
}
