package console_test

import (
	"context"
	"testing"

	"corral/models/scheduling"
)

// The flavor page's per-project answer is the whole pipeline's (the
// query page's own run for that project and flavor), with its X-ray.
func TestFlavorFitsPerProjectRunTheWholePipeline(t *testing.T) {
	a := newApp(t)
	c := a.as("rita")
	fl, err := a.Store.GetFlavor(t.Context(), "m1.ssd")
	if err != nil {
		t.Fatal(err)
	}
	snap, _, err := a.Store.Live().Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	doc := c.Get("/flavors/" + fl.ID).Doc(t)
	rows := doc.Find(sel("flavor-fit-row"))
	if rows.Length() < 2 {
		t.Fatalf("%d project rows", rows.Length())
	}
	seen := map[string]bool{}
	for i := range rows.Length() {
		r := rows.Eq(i)
		project := r.AttrOr("data-project", "")
		seen[project] = true
		if project == scheduling.AnyOtherProject {
			continue
		}
		tr, err := snap.Run(&scheduling.RequestSpec{ProjectID: project, Flavor: scheduling.FlavorRef{Name: fl.Name}})
		if err != nil {
			t.Fatal(err)
		}
		want := "none"
		if tr.Error == nil {
			want = itoa(tr.Summary.HostsPassed)
		}
		got := r.Find(sel("flavor-fit-passed")).Text()
		if got == "" {
			got = "none"
		}
		if got != want {
			t.Errorf("%s: the page says %s hosts, the pipeline %s", project, got, want)
		}
		if href := r.Find(sel("flavor-fit-xray")).AttrOr("href", ""); href != "/query?flavor=m1.ssd&project="+project {
			t.Errorf("%s: X-ray link %q", project, href)
		}
	}
	if !seen["acme"] || !seen[scheduling.AnyOtherProject] {
		t.Errorf("projects shown %v, want acme and any other project", seen)
	}
}
