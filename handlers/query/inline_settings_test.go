package query_test

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"corral/models"
	"corral/models/scheduling"
)

// settingsFormOf is the settings page's form showing st.
func settingsFormOf(st models.Settings, gen string) url.Values {
	v := url.Values{"impact_form": {"settings"}, "generation": {gen}}
	for _, row := range models.SettingTable {
		switch row.Kind {
		case models.SettingBool:
			if row.Get(&st).(bool) {
				v.Set(row.Name, "1")
			}
		case models.SettingFilters:
			for i, f := range st.EnabledFilters {
				v.Add("filter", f)
				v.Set("order_"+f, string(rune('1'+i)))
			}
		default:
			v.Set(row.Name, row.Format(row.Get(&st)))
		}
	}
	return v
}

// Regression: the inline impact used to ignore a bad multiplier that the
// save refused, so the preview showed a change the save would not make.
// Now the preview, "Stage as draft" and the save read the form with the
// same reader and refuse it alike, naming the setting.
func TestInlineSettingsRefusesABadMultiplierAsTheSaveDoes(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	live, _, err := c.app.Store.GetSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ field, value, says string }{
		{"soft_affinity_weight_multiplier", "lots", "soft-affinity multiplier"},
		{"soft_anti_affinity_weight_multiplier", "-1", "must not be negative"},
	} {
		form := settingsFormOf(live, "0")
		form.Set("limit_tenants_to_placement_aggregate", "1")
		form.Set(bad.field, bad.value)
		doc := c.inline(form)
		if got := doc.Find(`[data-testid="inline-impact-error"]`).Text(); !strings.Contains(got, bad.says) {
			t.Errorf("%s = %q: preview %q, want an error saying %q", bad.field, bad.value, doc.Text(), bad.says)
		}
		if r := c.form("/drafts/stage", form); r.StatusCode != http.StatusSeeOther || strings.HasPrefix(r.Header.Get("Location"), "/drafts/") {
			t.Errorf("%s = %q: staged a draft (%d → %s)", bad.field, bad.value, r.StatusCode, r.Header.Get("Location"))
		}
		if r := c.form("/settings", form); r.StatusCode != http.StatusSeeOther || !strings.Contains(r.Header.Get("Location"), "retry=settings") {
			t.Errorf("%s = %q: the save was not refused (%d → %s)", bad.field, bad.value, r.StatusCode, r.Header.Get("Location"))
		}
		if st, gen, _ := c.app.Store.GetSettings(ctx); gen != 0 || !reflect.DeepEqual(st, live) {
			t.Fatalf("%s = %q: refused settings were saved: %+v gen %d", bad.field, bad.value, st, gen)
		}
	}

	// A good form: the preview names the change, the staged draft holds
	// it, and the save writes what the draft's change makes of live.
	form := settingsFormOf(live, "0")
	form.Set("limit_tenants_to_placement_aggregate", "1")
	form.Set("soft_affinity_weight_multiplier", " 2.5 ")
	form.Del("filter")
	form.Add("filter", models.FilterAggregateMultiTenancy)
	doc := c.inline(form)
	if got := doc.Find(`[data-testid="inline-impact-summary"]`).Text(); !strings.Contains(got, "limit_tenants_to_placement_aggregate=true") ||
		!strings.Contains(got, "soft_affinity_weight_multiplier=2.5") || !strings.Contains(got, "enabled_filters="+models.FilterAggregateMultiTenancy) {
		t.Errorf("preview %q does not name the form's changes", got)
	}
	r := c.form("/drafts/stage", form)
	d, err := c.app.Store.GetDraft(ctx, strings.TrimPrefix(r.Header.Get("Location"), "/drafts/"))
	if err != nil {
		t.Fatalf("stage: %d → %s: %v", r.StatusCode, r.Header.Get("Location"), err)
	}
	staged, _ := d.DraftChanges()
	if len(staged) != 1 || staged[0].Settings == nil || staged[0].Generation != nil {
		t.Fatalf("staged %+v", staged)
	}
	// Tenant isolation leaves pairs with no host: the save asks the
	// safety gate's confirmation of exactly those consequences first.
	if r := c.form("/settings", form); r.StatusCode != http.StatusConflict {
		t.Fatalf("save without the confirmation: %d → %s", r.StatusCode, r.Header.Get("Location"))
	}
	snap, _, err := c.app.Store.Live().Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gate, err := scheduling.GateOf(snap, staged)
	if err != nil || gate.Token == "" {
		t.Fatalf("gate %+v %v", gate, err)
	}
	form.Set("confirm_impact", gate.Token)
	if r := c.form("/settings", form); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/settings" {
		t.Fatalf("save: %d → %s", r.StatusCode, r.Header.Get("Location"))
	}
	saved, gen, _ := c.app.Store.GetSettings(ctx)
	if want := staged[0].Settings.Apply(live); gen != 1 || !reflect.DeepEqual(saved, want) {
		t.Errorf("saved %+v (gen %d), the preview's change makes %+v", saved, gen, want)
	}
	// The same form again is stale: refused, nothing written.
	if r := c.form("/settings", form); !strings.Contains(r.Header.Get("Location"), "retry=settings") {
		t.Errorf("stale save: %d → %s", r.StatusCode, r.Header.Get("Location"))
	}
	if _, gen, _ := c.app.Store.GetSettings(ctx); gen != 1 {
		t.Errorf("a stale form was saved: gen %d", gen)
	}
}
