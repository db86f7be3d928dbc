package models

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The settings table: every field of Settings, once, with what each
// consumer needs — the settings page, drafts' set_settings, the inline
// impact, nova.conf import and export, validation and the defaults. A new
// setting is a field of Settings (and of scheduling.SettingsOverride) and
// a row here; the tests refuse a field without a row.

// SettingKind says how a setting is typed, read and written.
type SettingKind int

// The kinds of settings.
const (
	SettingBool    SettingKind = iota // true or false; a checkbox
	SettingText                       // a string, trimmed
	SettingNumber                     // a finite float64, not negative
	SettingFilters                    // host filter names, in the order they run
)

// SettingGroup is the part of the scheduler a setting tunes: a section of
// the settings page.
type SettingGroup struct {
	Title string
	Help  string
}

// The groups of settings, in the order the settings page shows them.
var (
	GroupNova           = &SettingGroup{"Nova release", "The Nova release the preview follows: its scheduler's behaviour changes between releases. A sync sets it from the compute API's maximum microversion."}
	GroupRequestFilters = &SettingGroup{"Request filters", "They run before Placement and turn the request into member_of terms."}
	GroupHostFilters    = &SettingGroup{"Host filters", "Enabled filters run in the order given (lowest first) on the hosts Placement returned."}
	GroupWeighers       = &SettingGroup{"Weighers", "They order the hosts that passed, as Nova's weighers do: each weight normalised over the hosts, times its multiplier (an aggregate's metadata of the same name overrides it)."}
	SettingGroups       = []*SettingGroup{GroupNova, GroupRequestFilters, GroupHostFilters, GroupWeighers}
)

// The nova.conf sections corral's settings mirror.
const (
	// NovaSectionCorral holds what nova.conf has no option for (the
	// release); Nova ignores a section it does not know.
	NovaSectionCorral          = "corral"
	NovaSectionScheduler       = "scheduler"
	NovaSectionFilterScheduler = "filter_scheduler"
	NovaSectionDefault         = "DEFAULT"
)

// Setting is one row of the settings table.
type Setting struct {
	Name    string // the JSON, form and draft field name
	Kind    SettingKind
	Group   *SettingGroup
	Label   string // what the settings page calls it
	Help    string // one line for the settings page
	Default any    // bool, string, float64 or []string, by Kind
	// Section and Option name it in nova.conf.
	Section, Option string
	// Signed allows a negative number (Nova's resource weighers stack
	// with one).
	Signed bool
	// Canon, when set, checks a text setting and gives its canonical
	// spelling.
	Canon func(string) (string, error)
}

// HostFilterInfo is a host filter the core implements, with what it does.
type HostFilterInfo struct {
	Name, Help string
}

// HostFilters are the host filters the core implements, in their default
// order (scheduling's registry has the same names in the same order).
var HostFilters = []HostFilterInfo{
	{Name: FilterAggregateInstanceExtraSpecs, Help: "Flavor extra specs (aggregate_instance_extra_specs:…) must be satisfied by the host's aggregate metadata, with Nova's operators."},
	{Name: FilterAggregateInstanceType, Help: "Reads flavor extra specs against aggregate metadata with the sentinels * (present), ~ (optional) and ! (absent); an aggregate with force_metadata_check=True makes its metadata a requirement on flavors."},
	{Name: FilterAggregateMultiTenancy, Help: "Hosts in aggregates with filter_tenant_id… keys accept only those projects (keeps others out, not the tenant in)."},
	{Name: FilterServerGroupAffinity, Help: "Members of an affinity group go to the host the group already uses."},
	{Name: FilterServerGroupAntiAffinity, Help: "A host passes while it holds fewer members of the anti-affinity group than max_server_per_host (default 1)."},
	{Name: FilterComputeCapabilities, Help: "Flavor extra specs without a scope, or scoped capabilities:, must match the host's state (free_ram_mb, vcpus_total, …) with Nova's operators; a key the host state lacks (ssd=true) fails every host."},
	{Name: FilterCompute, Help: "A host whose nova-compute service is disabled, forced down or not heard from in time (as Nova reported it at the last sync) gets nothing."},
	{Name: FilterAvailabilityZone, Help: "Deprecated in Nova: with a zone requested, a host passes when its zone aggregates name the zone (or, in none, when the zone is the default zone)."},
	{Name: FilterNumInstances, Help: "A host holding max_instances_per_host instances takes no more."},
	{Name: FilterAggregateNumInstances, Help: "As NumInstancesFilter, with the smallest max_instances_per_host of the host's aggregates where one sets it."},
	{Name: FilterSameHost, Help: "With the same_host hint, only the hosts running one of the servers it names."},
	{Name: FilterDifferentHost, Help: "With the different_host hint, only the hosts running none of the servers it names."},
}

// NotModelledHelp is what the settings page and the preview say of a
// filter or weigher corral does not model.
const NotModelledHelp = "not modelled: this preview may differ from Nova"

// NotModelledFilters are Nova's host filters corral knows by name only
// (nova/scheduler/filters at 26.0.0 … 33.0.0): enabled_filters may hold
// them (a nova.conf import keeps them); they pass every host, and the
// settings page and the preview name them as not modelled.
var NotModelledFilters = []string{
	"ImagePropertiesFilter", "IoOpsFilter", "AggregateIoOpsFilter", "IsolatedHostsFilter",
	"AggregateImagePropertiesIsolation", "JsonFilter", "PciPassthroughFilter", "NUMATopologyFilter", "MetricsFilter",
	"SimpleCIDRAffinityFilter", "AllHostsFilter", "AggregateTypeAffinityFilter",
}

// ModelledHostFilter reports whether the core models the host filter
// (an unknown name is not modelled either).
func ModelledHostFilter(name string) bool {
	return slices.ContainsFunc(HostFilters, func(f HostFilterInfo) bool { return f.Name == name })
}

// KnownHostFilter reports whether enabled_filters may name the filter:
// one the core implements, or one of Nova's it does not model.
func KnownHostFilter(name string) bool {
	return ModelledHostFilter(name) || slices.Contains(NotModelledFilters, name)
}

func hostFilterNames() []string {
	names := make([]string, len(HostFilters))
	for i, f := range HostFilters {
		names[i] = f.Name
	}
	return names
}

// SettingTable is every setting, in the order the settings page, nova.conf
// and validation list them. Read it, do not change it.
var SettingTable = []Setting{
	{Name: "nova_release", Kind: SettingText, Group: GroupNova, Canon: checkNovaRelease,
		Label: "Nova release", Default: NovaLatest, Section: NovaSectionCorral, Option: "nova_release",
		Help: "zed, antelope, bobcat, caracal, dalmatian, epoxy, flamingo or gazpacho (or the series, such as 2022.2)."},
	{Name: "limit_tenants_to_placement_aggregate", Kind: SettingBool, Group: GroupRequestFilters,
		Label: "Tenant isolation in Placement", Default: false, Section: NovaSectionScheduler, Option: "limit_tenants_to_placement_aggregate",
		Help: "Send each project only to the aggregates whose filter_tenant_id… keys name it (when it has any)."},
	{Name: "placement_aggregate_required_for_tenants", Kind: SettingBool, Group: GroupRequestFilters,
		Label: "Require a tenant aggregate", Default: false, Section: NovaSectionScheduler, Option: "placement_aggregate_required_for_tenants",
		Help: "With tenant isolation on, a project named by no aggregate gets “no hosts available” instead of every host."},
	{Name: "enable_isolated_aggregate_filtering", Kind: SettingBool, Group: GroupRequestFilters,
		Label: "Isolated aggregates", Default: false, Section: NovaSectionScheduler, Option: "enable_isolated_aggregate_filtering",
		Help: "Keep requests away from aggregates with trait:<T>=required unless the flavor requires every such trait."},
	{Name: "query_placement_for_availability_zone", Kind: SettingBool, Group: GroupRequestFilters,
		Label: "Availability zones in Placement", Default: true, Section: NovaSectionScheduler, Option: "query_placement_for_availability_zone",
		Help: "Turn a requested zone into a member_of group of the zone's aggregates."},
	{Name: "required_member_prefix", Kind: SettingText, Group: GroupRequestFilters,
		Label: "Required member prefix", Default: "reservation:", Section: NovaSectionScheduler, Option: "placement_req_required_member_prefix",
		Help: "A flavor extra spec starting with it requires the aggregates carrying the same key (reservations). Empty turns it off."},
	{Name: "default_forbidden_member_prefix", Kind: SettingText, Group: GroupRequestFilters,
		Label: "Default-forbidden member prefix", Default: "reservation:", Section: NovaSectionScheduler, Option: "placement_req_default_forbidden_member_prefix",
		Help: "A flavor without such a key is kept off every aggregate carrying one (member_of=!in:…). Empty turns it off."},
	{Name: "enabled_filters", Kind: SettingFilters, Group: GroupHostFilters,
		Label: "Host filters", Section: NovaSectionFilterScheduler, Option: "enabled_filters",
		Default: []string{FilterAggregateInstanceExtraSpecs, FilterAggregateMultiTenancy, FilterServerGroupAffinity, FilterServerGroupAntiAffinity},
		Help:    "The host filters that run, in order."},
	{Name: "max_instances_per_host", Kind: SettingNumber, Group: GroupHostFilters,
		Label: "Instances per host", Default: 50.0, Section: NovaSectionFilterScheduler, Option: "max_instances_per_host",
		Help: "NumInstancesFilter and AggregateNumInstancesFilter: a host with this many instances takes no more."},
	{Name: "default_availability_zone", Kind: SettingText, Group: GroupHostFilters,
		Label: "Default zone", Default: "nova", Section: NovaSectionDefault, Option: "default_availability_zone",
		Help: "The zone of a host in no zone aggregate, as AvailabilityZoneFilter reads it."},
	{Name: "soft_affinity_weight_multiplier", Kind: SettingNumber, Group: GroupWeighers,
		Label: "soft-affinity multiplier", Default: 1.0, Section: NovaSectionFilterScheduler, Option: "soft_affinity_weight_multiplier",
		Help: "How strongly soft-affinity groups pack onto hosts already holding members (0 ignores the policy)."},
	{Name: "soft_anti_affinity_weight_multiplier", Kind: SettingNumber, Group: GroupWeighers,
		Label: "soft-anti-affinity multiplier", Default: 1.0, Section: NovaSectionFilterScheduler, Option: "soft_anti_affinity_weight_multiplier",
		Help: "How strongly soft-anti-affinity groups spread away from hosts holding members (0 ignores the policy)."},
	{Name: "max_placement_results", Kind: SettingNumber, Group: GroupRequestFilters,
		Label: "Placement results", Default: 1000.0, Section: NovaSectionScheduler, Option: "max_placement_results",
		Help: "How many allocation candidates Nova asks Placement for (limit=); with more hosts than this, Nova sees a subset."},
	{Name: "weight_classes", Kind: SettingText, Group: GroupWeighers, Canon: checkWeightClasses,
		Label: "Weighers", Default: NovaDefaultWeightClasses, Section: NovaSectionFilterScheduler, Option: "weight_classes",
		Help: "Nova's weight_classes: nova.scheduler.weights.all_weighers or weigher classes separated by commas."},
	{Name: "ram_weight_multiplier", Kind: SettingNumber, Group: GroupWeighers, Signed: true,
		Label: "RAM multiplier", Default: 1.0, Section: NovaSectionFilterScheduler, Option: "ram_weight_multiplier",
		Help: "Positive spreads onto hosts with more free RAM, negative stacks."},
	{Name: "cpu_weight_multiplier", Kind: SettingNumber, Group: GroupWeighers, Signed: true,
		Label: "CPU multiplier", Default: 1.0, Section: NovaSectionFilterScheduler, Option: "cpu_weight_multiplier",
		Help: "Positive spreads onto hosts with more free VCPUs (total × allocation ratio − used), negative stacks."},
	{Name: "disk_weight_multiplier", Kind: SettingNumber, Group: GroupWeighers, Signed: true,
		Label: "Disk multiplier", Default: 1.0, Section: NovaSectionFilterScheduler, Option: "disk_weight_multiplier",
		Help: "Positive spreads onto hosts with more free disk, negative stacks."},
	{Name: "io_ops_weight_multiplier", Kind: SettingNumber, Group: GroupWeighers, Signed: true,
		Label: "I/O ops multiplier", Default: -1.0, Section: NovaSectionFilterScheduler, Option: "io_ops_weight_multiplier",
		Help: "Negative prefers hosts with fewer instances in I/O-heavy task states (corral counts none)."},
	{Name: "num_instances_weight_multiplier", Kind: SettingNumber, Group: GroupWeighers, Signed: true,
		Label: "Instances multiplier", Default: 0.0, Section: NovaSectionFilterScheduler, Option: "num_instances_weight_multiplier",
		Help: "Nova 2023.2 and later: positive prefers hosts with more instances, negative fewer."},
	{Name: "build_failure_weight_multiplier", Kind: SettingNumber, Group: GroupWeighers, Signed: true,
		Label: "Build failure multiplier", Default: 1000000.0, Section: NovaSectionFilterScheduler, Option: "build_failure_weight_multiplier",
		Help: "Hosts with recent build failures sink (corral knows of none)."},
	{Name: "host_subset_size", Kind: SettingNumber, Group: GroupWeighers,
		Label: "Host subset size", Default: 1.0, Section: NovaSectionFilterScheduler, Option: "host_subset_size",
		Help: "Nova picks at random among this many best-weighed hosts."},
	{Name: "shuffle_best_same_weighed_hosts", Kind: SettingBool, Group: GroupWeighers,
		Label: "Shuffle equal best hosts", Default: false, Section: NovaSectionFilterScheduler, Option: "shuffle_best_same_weighed_hosts",
		Help: "With a subset of 1, Nova picks at random among the hosts that share the best weight."},
}

// settingFields maps a setting's name to its field of Settings (by the
// field's JSON name).
var settingFields = func() map[string]int {
	out := map[string]int{}
	t := reflect.TypeFor[Settings]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = i
	}
	return out
}()

// LookupSetting finds a setting by name.
func LookupSetting(name string) (*Setting, bool) {
	for i := range SettingTable {
		if SettingTable[i].Name == name {
			return &SettingTable[i], true
		}
	}
	return nil, false
}

func (s *Setting) field(st *Settings) reflect.Value {
	i, ok := settingFields[s.Name]
	if !ok {
		panic("models: setting " + s.Name + " has no field in Settings")
	}
	return reflect.ValueOf(st).Elem().Field(i)
}

// Get is the setting's value in st: a bool, string, float64 or []string.
func (s *Setting) Get(st *Settings) any { return s.field(st).Interface() }

// Set sets the setting in st to v (a list is copied). v must have the
// setting's type.
func (s *Setting) Set(st *Settings, v any) {
	if l, ok := v.([]string); ok {
		v = slices.Clone(l)
	}
	s.field(st).Set(reflect.ValueOf(v))
}

// Equal reports whether a and b agree on the setting.
func (s *Setting) Equal(a, b *Settings) bool {
	return reflect.DeepEqual(s.Get(a), s.Get(b)) ||
		s.Kind == SettingFilters && len(s.Get(a).([]string)) == 0 && len(s.Get(b).([]string)) == 0
}

// Format writes a value of the setting as text, as nova.conf and the
// settings form have it: true/false, the number's shortest form, filter
// names separated by commas.
func (s *Setting) Format(v any) string {
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []string:
		return strings.Join(x, ",")
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// Parse reads a value of the setting from text (a draft's "setting =
// value", a nova.conf option) and checks it. A boolean is true/false,
// yes/no, on/off or 1/0; host filters are separated by commas or new
// lines. Errors are Invalid and name the setting.
func (s *Setting) Parse(text string) (any, error) {
	text = strings.TrimSpace(text)
	var v any
	switch s.Kind {
	case SettingBool:
		b, ok := ParseSettingBool(text)
		if !ok {
			return nil, E(Invalid, s.Name, "%q is not a boolean (true or false)", text)
		}
		v = b
	case SettingNumber:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, E(Invalid, s.Name, "%q is not a number (such as 1.0)", text)
		}
		v = f
	case SettingFilters:
		v = SplitFilterList(text)
	default:
		v = text
		if s.Canon != nil {
			c, err := s.Canon(text)
			if err != nil {
				return nil, err
			}
			v = c
		}
	}
	return v, s.Check(v)
}

// ParseSettingBool reads a boolean as oslo.config and strconv do.
func ParseSettingBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on", "t":
		return true, true
	case "false", "0", "no", "off", "f":
		return false, true
	}
	return false, false
}

// SplitFilterList splits a list of host filter names at commas and new
// lines, dropping empty names.
func SplitFilterList(v string) []string {
	out := []string{}
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '\n' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Check validates a value of the setting: a number finite and not
// negative (nova refuses negative soft-affinity multipliers), host
// filters known and each listed once. Errors are Invalid and name the
// setting.
func (s *Setting) Check(v any) error {
	switch x := v.(type) {
	case string:
		if s.Canon != nil {
			_, err := s.Canon(x)
			return err
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return E(Invalid, s.Name, "must be a finite number")
		}
		if x < 0 && !s.Signed {
			return E(Invalid, s.Name, "must not be negative")
		}
	case []string:
		seen := map[string]bool{}
		for _, f := range x {
			if !KnownHostFilter(f) {
				return E(Invalid, s.Name, "unknown host filter %q (known: %s)", f, strings.Join(hostFilterNames(), ", "))
			}
			if seen[f] {
				return E(Invalid, s.Name, "host filter %q is listed twice", f)
			}
			seen[f] = true
		}
	}
	return nil
}

// Validate checks every setting of st, in the table's order.
func (st *Settings) Validate() error {
	for i := range SettingTable {
		s := &SettingTable[i]
		if err := s.Check(s.Get(st)); err != nil {
			return err
		}
	}
	return nil
}

// DefaultSettings is what a new console starts with (FORMATS.md's example):
// every setting's default.
func DefaultSettings() Settings {
	var st Settings
	for i := range SettingTable {
		SettingTable[i].Set(&st, SettingTable[i].Default)
	}
	return st
}

// NovaConfLines are the nova.conf lines that say what st says: each
// section once, with its options, in the table's order. enabled_filters
// lists corral's filters only: a real nova.conf adds its others
// (ComputeFilter, …) around them.
func NovaConfLines(st Settings) []string {
	var out, sections []string
	for _, s := range SettingTable {
		if !slices.Contains(sections, s.Section) {
			sections = append(sections, s.Section)
		}
	}
	for _, section := range sections {
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, "["+section+"]")
		for i := range SettingTable {
			s := &SettingTable[i]
			if s.Section == section {
				out = append(out, s.Option+" = "+s.Format(s.Get(&st)))
			}
		}
	}
	return out
}
