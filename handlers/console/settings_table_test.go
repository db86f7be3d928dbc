package console_test

import (
	"strings"
	"testing"

	"corral/models"
)

// The settings page has a control for every row of the settings table,
// labelled and explained as the table says, and its nova.conf card names
// every option.
func TestSettingsPageFromTable(t *testing.T) {
	a := newApp(t)
	r := a.as(a.AdminName).Get("/settings")
	doc := r.Doc(t)
	for _, row := range models.SettingTable {
		switch row.Kind {
		case models.SettingFilters:
			if n := doc.Find(`[data-testid="filter-row"]`).Length(); n != len(models.HostFilters) {
				t.Errorf("%s: %d filter rows, want %d", row.Name, n, len(models.HostFilters))
			}
		case models.SettingBool:
			if doc.Find(`input[type="checkbox"][name="`+row.Name+`"]`).Length() != 1 {
				t.Errorf("%s: no checkbox", row.Name)
			}
		default:
			if doc.Find(`input[name="`+row.Name+`"]`).Length() != 1 {
				t.Errorf("%s: no field", row.Name)
			}
		}
		if !strings.Contains(doc.Text(), row.Help) && row.Kind != models.SettingFilters {
			t.Errorf("%s: the page does not explain it (%q)", row.Name, row.Help)
		}
		if !strings.Contains(r.Text(t, "settings-novaconf-lines"), "\n"+row.Option+" = ") {
			t.Errorf("%s: nova.conf card lacks %s", row.Name, row.Option)
		}
	}
	for _, g := range models.SettingGroups {
		if doc.Find(`h2:contains("`+g.Title+`")`).Length() != 1 {
			t.Errorf("no section %q", g.Title)
		}
	}
}
