package models

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// Every field of Settings has exactly one row, of the kind its Go type
// says, with a label, help, a nova.conf option and a default of its type.
func TestSettingTableCoversSettings(t *testing.T) {
	kinds := map[reflect.Type]SettingKind{
		reflect.TypeFor[bool](): SettingBool, reflect.TypeFor[string](): SettingText,
		reflect.TypeFor[float64](): SettingNumber, reflect.TypeFor[[]string](): SettingFilters,
	}
	rows := map[string]int{}
	options := map[string]bool{}
	for _, s := range SettingTable {
		rows[s.Name]++
		if s.Label == "" || s.Help == "" || s.Group == nil || s.Section == "" || s.Option == "" {
			t.Errorf("%s: label, help, group and nova.conf option are required: %+v", s.Name, s)
		}
		if options[s.Section+"."+s.Option] {
			t.Errorf("%s: nova.conf [%s] %s is named twice", s.Name, s.Section, s.Option)
		}
		options[s.Section+"."+s.Option] = true
	}
	typ := reflect.TypeFor[Settings]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if rows[name] != 1 {
			t.Errorf("field %s (%s) has %d rows in SettingTable, want 1", f.Name, name, rows[name])
			continue
		}
		delete(rows, name)
		s, _ := LookupSetting(name)
		if kinds[f.Type] != s.Kind {
			t.Errorf("%s: kind %d for a %s", name, s.Kind, f.Type)
		}
		if reflect.TypeOf(s.Default) != f.Type {
			t.Errorf("%s: default %#v is not a %s", name, s.Default, f.Type)
		}
	}
	for name := range rows {
		t.Errorf("row %s names no field of Settings", name)
	}
}

// The table's defaults are the ones a new console has always started with.
func TestDefaultSettingsFromTable(t *testing.T) {
	want := Settings{
		NovaRelease:                       NovaLatest,
		QueryPlacementForAvailabilityZone: true,
		RequiredMemberPrefix:              "reservation:",
		DefaultForbiddenMemberPrefix:      "reservation:",
		EnabledFilters: []string{
			FilterAggregateInstanceExtraSpecs,
			FilterAggregateMultiTenancy,
			FilterServerGroupAffinity,
			FilterServerGroupAntiAffinity,
		},
		SoftAffinityWeightMultiplier:     1.0,
		SoftAntiAffinityWeightMultiplier: 1.0,
		// Nova's defaults for its options; the weighers corral always had.
		MaxPlacementResults: 1000, WeightClasses: NovaDefaultWeightClasses,
		RAMWeightMultiplier: 1, CPUWeightMultiplier: 1, DiskWeightMultiplier: 1, IoOpsWeightMultiplier: -1,
		BuildFailureWeightMultiplier: 1000000, HostSubsetSize: 1,
		MaxInstancesPerHost: 50, DefaultAvailabilityZone: "nova",
	}
	got := DefaultSettings()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults\n got %+v\nwant %+v", got, want)
	}
	// The defaults are copies: changing one console's list leaves the
	// table alone.
	got.EnabledFilters[0] = "changed"
	if DefaultSettings().EnabledFilters[0] != FilterAggregateInstanceExtraSpecs {
		t.Error("DefaultSettings shares its filter list with the table")
	}
	if err := want.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func TestSettingsValidate(t *testing.T) {
	for _, tc := range []struct {
		edit  func(*Settings)
		field string
		msg   string
	}{
		{func(s *Settings) { s.SoftAffinityWeightMultiplier = -1 }, "soft_affinity_weight_multiplier", "must not be negative"},
		{func(s *Settings) { s.SoftAntiAffinityWeightMultiplier = math.Inf(1) }, "soft_anti_affinity_weight_multiplier", "finite"},
		{func(s *Settings) { s.SoftAntiAffinityWeightMultiplier = math.NaN() }, "soft_anti_affinity_weight_multiplier", "finite"},
		{func(s *Settings) { s.EnabledFilters = []string{"NoSuchFilter"} }, "enabled_filters", `unknown host filter "NoSuchFilter"`},
		{func(s *Settings) { s.WeightClasses = "nova.scheduler.weights.NoSuchWeigher" }, "weight_classes", "unknown weigher class"},
		{func(s *Settings) { s.NovaRelease = "yoga" }, "nova_release", "unknown Nova release"},
		{func(s *Settings) {
			s.EnabledFilters = []string{FilterServerGroupAffinity, FilterServerGroupAffinity}
		}, "enabled_filters", "listed twice"},
	} {
		st := DefaultSettings()
		tc.edit(&st)
		err := st.Validate()
		if KindOf(err) != Invalid || FieldOf(err) != tc.field || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v, want Invalid %q", tc.field, err, tc.msg)
		}
	}
}

func TestSettingParse(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       any
		err        string
	}{
		{"limit_tenants_to_placement_aggregate", " True ", true, ""},
		{"limit_tenants_to_placement_aggregate", "off", false, ""},
		{"limit_tenants_to_placement_aggregate", "sometimes", nil, "is not a boolean"},
		{"required_member_prefix", " resv: ", "resv:", ""},
		{"enabled_filters", FilterServerGroupAffinity + ",\n " + FilterAggregateMultiTenancy + ",", []string{FilterServerGroupAffinity, FilterAggregateMultiTenancy}, ""},
		{"enabled_filters", "", []string{}, ""},
		{"enabled_filters", "NoSuchFilter", nil, "unknown host filter"},
		// Nova's filters corral does not model are kept, by name.
		{"enabled_filters", "ComputeFilter", []string{"ComputeFilter"}, ""},
		{"ram_weight_multiplier", "-2", -2.0, ""},
		{"weight_classes", " nova.scheduler.weights.all_weighers ,", "nova.scheduler.weights.all_weighers", ""},
		{"soft_affinity_weight_multiplier", "2.5", 2.5, ""},
		{"soft_affinity_weight_multiplier", "lots", nil, "is not a number"},
		{"soft_affinity_weight_multiplier", "-1", nil, "must not be negative"},
	} {
		s, ok := LookupSetting(tc.name)
		if !ok {
			t.Fatalf("no setting %s", tc.name)
		}
		v, err := s.Parse(tc.text)
		if tc.err != "" {
			if FieldOf(err) != tc.name || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %q: got %v, want %q", tc.name, tc.text, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(v, tc.want) {
			t.Errorf("%s %q: got %#v %v, want %#v", tc.name, tc.text, v, err, tc.want)
		}
	}
	if _, ok := LookupSetting("nope"); ok {
		t.Error("an unknown setting was found")
	}
}

func TestNovaConfLinesFromTable(t *testing.T) {
	st := DefaultSettings()
	st.SoftAntiAffinityWeightMultiplier = 2.5
	want := []string{
		"[corral]",
		"nova_release = gazpacho",
		"",
		"[scheduler]",
		"limit_tenants_to_placement_aggregate = false",
		"placement_aggregate_required_for_tenants = false",
		"enable_isolated_aggregate_filtering = false",
		"query_placement_for_availability_zone = true",
		"placement_req_required_member_prefix = reservation:",
		"placement_req_default_forbidden_member_prefix = reservation:",
		"max_placement_results = 1000",
		"",
		"[filter_scheduler]",
		"enabled_filters = " + strings.Join(st.EnabledFilters, ","),
		"max_instances_per_host = 50",
		"soft_affinity_weight_multiplier = 1",
		"soft_anti_affinity_weight_multiplier = 2.5",
		"weight_classes = " + NovaDefaultWeightClasses,
		"ram_weight_multiplier = 1",
		"cpu_weight_multiplier = 1",
		"disk_weight_multiplier = 1",
		"io_ops_weight_multiplier = -1",
		"num_instances_weight_multiplier = 0",
		"build_failure_weight_multiplier = 1e+06",
		"host_subset_size = 1",
		"shuffle_best_same_weighed_hosts = false",
		"",
		"[DEFAULT]",
		"default_availability_zone = nova",
	}
	if got := NovaConfLines(st); !reflect.DeepEqual(got, want) {
		t.Errorf("lines\n got %q\nwant %q", got, want)
	}
}
