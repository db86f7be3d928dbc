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
    ServerGroupAntiAffinityFilter, ImagePropertiesFilter
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
	// Nova's filters corral does not model are kept, and named.
	want.EnabledFilters = []string{models.FilterCompute, models.FilterAggregateMultiTenancy, models.FilterServerGroupAntiAffinity, "ImagePropertiesFilter"}
	want.SoftAntiAffinityWeightMultiplier = 2.5
	// weight_classes is not set: Nova's default, every weigher.
	want.WeightClasses = models.AllWeighers
	if !reflect.DeepEqual(st, want) {
		t.Errorf("settings\n got %+v\nwant %+v", st, want)
	}
	for _, note := range []string{
		"not modelled: this preview may differ from Nova: ImagePropertiesFilter",
		"not modelled: this preview may differ from Nova (weighers): PCIWeigher, MetricsWeigher, HypervisorVersionWeigher, ImagePropsWeigher",
		"[filter_scheduler] weight_classes not set: Nova's default nova.scheduler.weights.all_weighers",
	} {
		if !strings.Contains(strings.Join(notes, "\n"), note) {
			t.Errorf("notes lack %q: %q", note, notes)
		}
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

// A real nova.conf without corral's reservation prefixes turns the seed's
// reservation filter off; options corral does not read are named; the
// release follows the weighers (Zed has no NumInstancesWeigher).
func TestSettingsFromRealNovaConf(t *testing.T) {
	conf, err := ParseNovaConf(strings.NewReader(`[filter_scheduler]
enabled_filters = ComputeFilter,ComputeCapabilitiesFilter,ImagePropertiesFilter,NoSuchFilter
ram_weight_multiplier = -1.5
host_subset_size = 3
shuffle_best_same_weighed_hosts = true
weight_classes = nova.scheduler.weights.all_weighers
track_instance_changes = false
[scheduler]
max_placement_results = 50
`))
	if err != nil {
		t.Fatal(err)
	}
	cur := models.DefaultSettings()
	cur.NovaRelease = "zed"
	st, notes, err := SettingsFromNovaConf(cur, conf)
	if err != nil {
		t.Fatal(err)
	}
	if st.RequiredMemberPrefix != "" || st.DefaultForbiddenMemberPrefix != "" {
		t.Errorf("reservation prefixes %q %q, want off", st.RequiredMemberPrefix, st.DefaultForbiddenMemberPrefix)
	}
	if st.RAMWeightMultiplier != -1.5 || st.HostSubsetSize != 3 || !st.ShuffleBestSameWeighedHosts || st.MaxPlacementResults != 50 || st.NovaRelease != "zed" {
		t.Errorf("settings %+v", st)
	}
	want := []string{"ComputeFilter", models.FilterComputeCapabilities, "ImagePropertiesFilter"}
	if !reflect.DeepEqual(st.EnabledFilters, want) {
		t.Errorf("filters %v, want %v", st.EnabledFilters, want)
	}
	text := strings.Join(notes, "\n")
	for _, note := range []string{"unknown to corral (left out): NoSuchFilter", "[filter_scheduler] track_instance_changes",
		"(weighers): PCIWeigher, MetricsWeigher\n"} {
		if !strings.Contains(text+"\n", note) {
			t.Errorf("notes lack %q: %s", note, text)
		}
	}
}
