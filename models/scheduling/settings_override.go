package scheduling

import (
	"fmt"
	"reflect"
	"strings"

	"corral/models"
)

// SettingsOverride replaces, for one request or one set_settings change,
// the settings that it sets (nil fields keep the world's). It has one
// field per row of models.SettingTable, by the same JSON name, so that its
// wire format (docs/drafts.md, docs/formats.md) names settings as the
// world does; its methods loop over the table.
type SettingsOverride struct {
	NovaRelease                          *string   `json:"nova_release,omitempty"`
	LimitTenantsToPlacementAggregate     *bool     `json:"limit_tenants_to_placement_aggregate,omitempty"`
	PlacementAggregateRequiredForTenants *bool     `json:"placement_aggregate_required_for_tenants,omitempty"`
	EnableIsolatedAggregateFiltering     *bool     `json:"enable_isolated_aggregate_filtering,omitempty"`
	QueryPlacementForAvailabilityZone    *bool     `json:"query_placement_for_availability_zone,omitempty"`
	RequiredMemberPrefix                 *string   `json:"required_member_prefix,omitempty"`
	DefaultForbiddenMemberPrefix         *string   `json:"default_forbidden_member_prefix,omitempty"`
	EnabledFilters                       *[]string `json:"enabled_filters,omitempty"`
	SoftAffinityWeightMultiplier         *float64  `json:"soft_affinity_weight_multiplier,omitempty"`
	SoftAntiAffinityWeightMultiplier     *float64  `json:"soft_anti_affinity_weight_multiplier,omitempty"`
	MaxPlacementResults                  *float64  `json:"max_placement_results,omitempty"`
	WeightClasses                        *string   `json:"weight_classes,omitempty"`
	RAMWeightMultiplier                  *float64  `json:"ram_weight_multiplier,omitempty"`
	CPUWeightMultiplier                  *float64  `json:"cpu_weight_multiplier,omitempty"`
	DiskWeightMultiplier                 *float64  `json:"disk_weight_multiplier,omitempty"`
	IoOpsWeightMultiplier                *float64  `json:"io_ops_weight_multiplier,omitempty"`
	NumInstancesWeightMultiplier         *float64  `json:"num_instances_weight_multiplier,omitempty"`
	BuildFailureWeightMultiplier         *float64  `json:"build_failure_weight_multiplier,omitempty"`
	HostSubsetSize                       *float64  `json:"host_subset_size,omitempty"`
	ShuffleBestSameWeighedHosts          *bool     `json:"shuffle_best_same_weighed_hosts,omitempty"`
	MaxInstancesPerHost                  *float64  `json:"max_instances_per_host,omitempty"`
	DefaultAvailabilityZone              *string   `json:"default_availability_zone,omitempty"`
}

// overrideFields maps a setting's name to its field of SettingsOverride.
var overrideFields = func() map[string]int {
	out := map[string]int{}
	t := reflect.TypeFor[SettingsOverride]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = i
	}
	return out
}()

func (o *SettingsOverride) field(name string) reflect.Value {
	i, ok := overrideFields[name]
	if !ok {
		panic("scheduling: setting " + name + " has no field in SettingsOverride")
	}
	return reflect.ValueOf(o).Elem().Field(i)
}

// Value is what the override sets the setting to, and whether it sets it.
func (o *SettingsOverride) Value(name string) (any, bool) {
	if o == nil {
		return nil, false
	}
	f := o.field(name)
	if f.IsNil() {
		return nil, false
	}
	return f.Elem().Interface(), true
}

// Set makes the override set the setting to v (of the setting's type).
func (o *SettingsOverride) Set(name string, v any) {
	p := reflect.New(reflect.TypeOf(v))
	p.Elem().Set(reflect.ValueOf(v))
	o.field(name).Set(p)
}

// Apply returns base with the override's fields replaced.
func (o *SettingsOverride) Apply(base models.Settings) models.Settings {
	s := base
	for i := range models.SettingTable {
		row := &models.SettingTable[i]
		if v, ok := o.Value(row.Name); ok {
			row.Set(&s, v)
		}
	}
	return s
}

// SettingsOverrideBetween is the override that turns settings a into b,
// nil when they are equal.
func SettingsOverrideBetween(a, b models.Settings) *SettingsOverride {
	var o SettingsOverride
	changed := false
	for i := range models.SettingTable {
		row := &models.SettingTable[i]
		if !row.Equal(&a, &b) {
			v := row.Get(&b)
			if l, ok := v.([]string); ok {
				v = append([]string{}, l...)
			}
			o.Set(row.Name, v)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return &o
}

// describeSettings says what an override sets, in the table's order.
func describeSettings(o *SettingsOverride) string {
	if o == nil {
		return "(none)"
	}
	var parts []string
	for i := range models.SettingTable {
		row := &models.SettingTable[i]
		v, ok := o.Value(row.Name)
		if !ok {
			continue
		}
		if row.Kind == models.SettingText {
			parts = append(parts, fmt.Sprintf("%s=%q", row.Name, v))
		} else {
			parts = append(parts, row.Name+"="+row.Format(v))
		}
	}
	return strings.Join(parts, ", ")
}
