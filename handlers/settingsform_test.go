package handlers

import (
	"math/rand/v2"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"corral/models"
	"corral/models/scheduling"
)

func TestReadSettingsFormRefusals(t *testing.T) {
	live := models.DefaultSettings()
	base := func() url.Values {
		return url.Values{"required_member_prefix": {"reservation:"}, "default_forbidden_member_prefix": {"reservation:"},
			"soft_affinity_weight_multiplier": {"1"}, "soft_anti_affinity_weight_multiplier": {"1"}, "default_availability_zone": {"nova"}}
	}
	for _, tc := range []struct {
		edit  func(url.Values)
		field string
		says  string
	}{
		{func(v url.Values) { v.Set("soft_affinity_weight_multiplier", "lots") }, "soft_affinity_weight_multiplier", `soft-affinity multiplier: "lots" is not a number`},
		{func(v url.Values) { v.Set("soft_affinity_weight_multiplier", "") }, "soft_affinity_weight_multiplier", "is not a number"},
		{func(v url.Values) { v.Set("soft_anti_affinity_weight_multiplier", "-0.5") }, "soft_anti_affinity_weight_multiplier", "must not be negative"},
		{func(v url.Values) { v.Set("soft_anti_affinity_weight_multiplier", "NaN") }, "soft_anti_affinity_weight_multiplier", "finite"},
		{func(v url.Values) { v.Add("filter", "NoSuchFilter") }, "enabled_filters", `unknown host filter "NoSuchFilter"`},
		{func(v url.Values) {
			v.Add("filter", models.FilterServerGroupAffinity)
			v.Set("order_"+models.FilterServerGroupAffinity, "0")
		}, "enabled_filters", "position of 1 or more"},
	} {
		v := base()
		tc.edit(v)
		changes, err := SettingsFormChanges(v, live)
		if changes != nil || models.KindOf(err) != models.Invalid || models.FieldOf(err) != tc.field || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: got %v %v, want Invalid %s %q", v, changes, err, tc.field, tc.says)
		}
	}
	// Nothing ticked and nothing typed differently: switches off, no
	// filters — a change from the defaults, not an error.
	changes, err := SettingsFormChanges(base(), live)
	if err != nil || len(changes) != 1 || changes[0].Op != scheduling.OpSetSettings ||
		describe(changes[0]) != "change settings: query_placement_for_availability_zone=false, enabled_filters=" {
		t.Errorf("empty form: %+v %v", changes, err)
	}
}

func describe(c scheduling.Change) string { return scheduling.DescribeChange(c) }

// Property: for random forms, the reader either refuses naming a setting
// of the table, or its change turns live into exactly the settings it
// read, which validate.
func TestReadSettingsFormRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 19))
	texts := []string{"", " ", "reservation:", "resv:", "1", "0", "2.5", " 3 ", "-1", "lots", "1e400", "1,2", "cn1;cn2", "\t7\n"}
	pick := func() string { return texts[r.IntN(len(texts))] }
	for range 2000 {
		live := models.DefaultSettings()
		live.SoftAffinityWeightMultiplier = float64(r.IntN(3))
		v := url.Values{}
		for _, row := range models.SettingTable {
			switch row.Kind {
			case models.SettingBool:
				if r.IntN(2) == 0 {
					v.Set(row.Name, pick())
				}
			case models.SettingFilters:
				for _, hf := range models.HostFilters {
					if r.IntN(2) == 0 {
						v.Add("filter", hf.Name)
					}
					v.Set("order_"+hf.Name, pick())
				}
				if r.IntN(10) == 0 {
					v.Add("filter", "ComputeFilter")
				}
			default:
				v.Set(row.Name, pick())
			}
		}
		read := ReadSettingsForm(v)
		changes, err := read.Changes(live)
		if err != nil {
			if _, ok := models.LookupSetting(models.FieldOf(err)); !ok || models.KindOf(err) != models.Invalid {
				t.Fatalf("%v: refusal %v names no setting", v, err)
			}
			continue
		}
		got, aerr := scheduling.ApplyChanges(&models.World{Settings: live}, changes)
		if aerr != nil || !reflect.DeepEqual(normal(got.Settings), normal(read.Settings)) {
			t.Fatalf("%v: changes %+v make %+v (%v), the form read %+v", v, changes, got.Settings, aerr, read.Settings)
		}
		if verr := got.Settings.Validate(); verr != nil {
			t.Fatalf("%v: accepted settings do not validate: %v", v, verr)
		}
	}
}

func normal(s models.Settings) models.Settings {
	if len(s.EnabledFilters) == 0 {
		s.EnabledFilters = nil
	}
	return s
}
