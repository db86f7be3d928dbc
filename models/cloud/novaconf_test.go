package cloud

import (
	"reflect"
	"strings"
	"testing"

	"corral/models"
)

const sampleNovaConf = `[DEFAULT]
debug = False
# a comment
[scheduler]
limit_tenants_to_placement_aggregate = True
placement_aggregate_required_for_tenants: false
enable_isolated_aggregate_filtering = true
placement_req_required_member_prefix = reservation:
placement_req_default_forbidden_member_prefix = ['reservation:']

[filter_scheduler]
enabled_filters = ComputeFilter,AggregateMultiTenancyIsolation,
    ServerGroupAntiAffinityFilter, AvailabilityZoneFilter
soft_anti_affinity_weight_multiplier = 2.5
`

func TestSettingsFromNovaConf(t *testing.T) {
	conf, err := ParseNovaConf(strings.NewReader(sampleNovaConf))
	if err != nil {
		t.Fatal(err)
	}
	st, notes, err := SettingsFromNovaConf(models.DefaultSettings(), conf)
	if err != nil {
		t.Fatal(err)
	}
	want := models.DefaultSettings()
	want.LimitTenantsToPlacementAggregate = true
	want.EnableIsolatedAggregateFiltering = true
	want.EnabledFilters = []string{models.FilterAggregateMultiTenancy, models.FilterServerGroupAntiAffinity}
	want.SoftAntiAffinityWeightMultiplier = 2.5
	if !reflect.DeepEqual(st, want) {
		t.Errorf("settings\n got %+v\nwant %+v", st, want)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "not modelled by corral (left out): ComputeFilter, AvailabilityZoneFilter") {
		t.Errorf("notes do not name the filters left out: %q", notes)
	}
	// The Settings page's lines read back into the same settings.
	back, err := ParseNovaConf(strings.NewReader(strings.Join(models.NovaConfLines(st), "\n")))
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := SettingsFromNovaConf(models.Settings{}, back)
	if err != nil || !reflect.DeepEqual(again, st) {
		t.Errorf("round trip\n got %+v %v\nwant %+v", again, err, st)
	}
}

func TestParseNovaConfErrors(t *testing.T) {
	for in, want := range map[string]string{
		"key = v\n":                    "line 1: an option before any [section]",
		"[scheduler\n":                 "line 1: a section header needs a closing ]",
		"[scheduler]\nnot an option\n": "line 2: expected key = value",
		"[scheduler]\nlimit_tenants_to_placement_aggregate = maybe\n":     "is not a boolean",
		"[filter_scheduler]\nsoft_affinity_weight_multiplier = x\n":       "is not a number",
		"[filter_scheduler]\nsoft_anti_affinity_weight_multiplier = -1\n": "[filter_scheduler] soft_anti_affinity_weight_multiplier: must not be negative",
	} {
		conf, err := ParseNovaConf(strings.NewReader(in))
		if err == nil {
			_, _, err = SettingsFromNovaConf(models.DefaultSettings(), conf)
		}
		if err == nil || !strings.Contains(err.Error(), want) || models.KindOf(err) != models.Invalid {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func FuzzParseNovaConf(f *testing.F) {
	f.Add(sampleNovaConf)
	f.Add("[a]\n b\n")
	f.Fuzz(func(t *testing.T, in string) {
		conf, err := ParseNovaConf(strings.NewReader(in))
		if err != nil {
			if models.KindOf(err) != models.Invalid {
				t.Fatalf("error of kind %v: %v", models.KindOf(err), err)
			}
			return
		}
		if _, _, err := SettingsFromNovaConf(models.DefaultSettings(), conf); err != nil && models.KindOf(err) != models.Invalid {
			t.Fatalf("error of kind %v: %v", models.KindOf(err), err)
		}
	})
}
