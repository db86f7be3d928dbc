package scheduling

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"corral/models"
)

// SettingsOverride has one field per row of the settings table, a pointer
// to the setting's type, so that set_settings and request overrides can
// name every setting.
func TestSettingsOverrideCoversTable(t *testing.T) {
	typ := reflect.TypeFor[SettingsOverride]()
	settings := reflect.TypeFor[models.Settings]()
	if typ.NumField() != len(models.SettingTable) {
		t.Errorf("SettingsOverride has %d fields, the table %d rows", typ.NumField(), len(models.SettingTable))
	}
	for _, row := range models.SettingTable {
		i, ok := overrideFields[row.Name]
		if !ok {
			t.Errorf("no SettingsOverride field for %s", row.Name)
			continue
		}
		if typ.Field(i).Type != reflect.PointerTo(reflect.TypeOf(row.Default)) {
			t.Errorf("%s: override field is a %s", row.Name, typ.Field(i).Type)
		}
	}
	if settings.NumField() != len(models.SettingTable) {
		t.Errorf("Settings has %d fields, the table %d rows", settings.NumField(), len(models.SettingTable))
	}
}

// The registry runs the host filters the table lists, in the same order.
func TestHostFilterRegistryMatchesTable(t *testing.T) {
	var names []string
	for _, f := range models.HostFilters {
		names = append(names, f.Name)
	}
	if got := HostFilterNames(); !slices.Equal(got, names) {
		t.Errorf("registry %v, table %v", got, names)
	}
}

// The override between two settings turns one into the other, names only
// what differs, and keeps its JSON names.
func TestSettingsOverrideBetween(t *testing.T) {
	a := models.DefaultSettings()
	if o := SettingsOverrideBetween(a, a); o != nil {
		t.Errorf("equal settings: %+v", o)
	}
	b := a
	b.LimitTenantsToPlacementAggregate = true
	b.RequiredMemberPrefix = "resv:"
	b.EnabledFilters = []string{models.FilterAggregateMultiTenancy}
	b.SoftAntiAffinityWeightMultiplier = 0
	o := SettingsOverrideBetween(a, b)
	if got := o.Apply(a); !reflect.DeepEqual(got, b) {
		t.Errorf("apply\n got %+v\nwant %+v", got, b)
	}
	data, _ := json.Marshal(o)
	want := `{"limit_tenants_to_placement_aggregate":true,"required_member_prefix":"resv:","enabled_filters":["AggregateMultiTenancyIsolation"],"soft_anti_affinity_weight_multiplier":0}`
	if string(data) != want {
		t.Errorf("json %s\nwant %s", data, want)
	}
	if got := describeSettings(o); got != `limit_tenants_to_placement_aggregate=true, required_member_prefix="resv:", enabled_filters=AggregateMultiTenancyIsolation, soft_anti_affinity_weight_multiplier=0` {
		t.Errorf("describe %q", got)
	}
	// Applying copies the list: the world does not share it with the change.
	got := o.Apply(a)
	got.EnabledFilters[0] = "changed"
	if (*o.EnabledFilters)[0] != models.FilterAggregateMultiTenancy {
		t.Error("Apply shares the override's filter list")
	}
	// An empty list and a missing one are the same settings.
	c := a
	c.EnabledFilters = nil
	d := a
	d.EnabledFilters = []string{}
	if o := SettingsOverrideBetween(c, d); o != nil {
		t.Errorf("nil and empty filter lists differ: %+v", o)
	}
	var nilOverride *SettingsOverride
	if got := nilOverride.Apply(a); !reflect.DeepEqual(got, a) || !strings.Contains(describeSettings(nil), "none") {
		t.Error("a nil override changes nothing")
	}
}
