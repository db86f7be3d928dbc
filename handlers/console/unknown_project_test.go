package console_test

import (
	"net/url"
	"strings"
	"testing"
)

// A tenant tag for a project nothing names is saved with a warning, and
// the inline impact warns before the save; a known project is not warned.
func TestUnknownProjectIsWarned(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)
	agg := a.aggregate("tenant-globex")
	path := "/aggregates/" + agg.UUID
	csrf := c.CSRF(path)
	inline := c.Post("/impact/inline", url.Values{"_csrf": {csrf}, "impact_form": {"tenants"}, "impact_target": {agg.UUID},
		"project": {"nosuchproject"}, "generation": {gen(agg.Generation)}})
	if got := inline.Text(t, "inline-unknown-project"); !strings.Contains(got, "nosuchproject") {
		t.Errorf("inline impact warns %q", got)
	}
	page := c.FollowConfirmed(path, path+"/tenants", url.Values{"project": {"nosuchproject"}, "generation": {gen(agg.Generation)}})
	if got := page.Text(t, "flash-warning"); !strings.Contains(got, "“nosuchproject” is not known") {
		t.Errorf("warning flash %q", got)
	}
	agg = a.aggregate(agg.UUID)
	page = c.FollowConfirmed(path, path+"/tenants", url.Values{"project": {"acme"}, "generation": {gen(agg.Generation)}})
	if page.Has(t, "flash-warning") {
		t.Errorf("a known project is warned: %q", page.Text(t, "flash-warning"))
	}
}
