package cloud

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"corral/models"
)

// The nova.conf options corral's settings mirror, as [section] option.
const (
	secScheduler       = "scheduler"
	secFilterScheduler = "filter_scheduler"
)

// MaxNovaConf bounds a nova.conf read (real ones are tens of KiB).
const MaxNovaConf = 4 << 20

// NovaConf is an oslo.config file: section → option → value. Later
// occurrences win, as oslo.config reads them.
type NovaConf map[string]map[string]string

// ParseNovaConf reads an oslo.config INI file: [section] headers, "key =
// value" (or "key: value"), '#' and ';' comments, indented continuation
// lines. Errors name the line.
func ParseNovaConf(r io.Reader) (NovaConf, error) {
	conf := NovaConf{}
	sc := bufio.NewScanner(io.LimitReader(r, MaxNovaConf+1))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	section, lastKey := "", ""
	n, size := 0, 0
	for sc.Scan() {
		n++
		line := sc.Text()
		size += len(line) + 1
		if size > MaxNovaConf {
			return nil, models.E(models.Invalid, "nova.conf", "larger than %d bytes", MaxNovaConf)
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';':
			continue
		case (line[0] == ' ' || line[0] == '\t') && lastKey != "":
			conf[section][lastKey] += "\n" + trimmed
			continue
		case trimmed[0] == '[':
			if !strings.HasSuffix(trimmed, "]") {
				return nil, models.E(models.Invalid, "nova.conf", "line %d: a section header needs a closing ]", n)
			}
			section = strings.TrimSpace(trimmed[1 : len(trimmed)-1])
			if conf[section] == nil {
				conf[section] = map[string]string{}
			}
			lastKey = ""
			continue
		}
		if section == "" {
			return nil, models.E(models.Invalid, "nova.conf", "line %d: an option before any [section]", n)
		}
		i := strings.IndexAny(trimmed, "=:")
		if i <= 0 {
			return nil, models.E(models.Invalid, "nova.conf", "line %d: expected key = value", n)
		}
		lastKey = strings.TrimSpace(trimmed[:i])
		conf[section][lastKey] = strings.TrimSpace(trimmed[i+1:])
	}
	if err := sc.Err(); err != nil {
		return nil, models.E(models.Invalid, "nova.conf", "line %d: %v", n+1, err)
	}
	return conf, nil
}

func parseBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on":
		return true, true
	case "false", "0", "no", "off":
		return false, true
	}
	return false, false
}

// SettingsFromNovaConf applies the options conf sets to st (options it
// does not set keep st's values) and says, line by line, what it took and
// what it left out.
func SettingsFromNovaConf(st models.Settings, conf NovaConf) (models.Settings, []string, error) {
	out := st
	out.EnabledFilters = slices.Clone(st.EnabledFilters)
	var notes []string
	bools := []struct {
		opt string
		dst *bool
	}{
		{"limit_tenants_to_placement_aggregate", &out.LimitTenantsToPlacementAggregate},
		{"placement_aggregate_required_for_tenants", &out.PlacementAggregateRequiredForTenants},
		{"enable_isolated_aggregate_filtering", &out.EnableIsolatedAggregateFiltering},
		{"query_placement_for_availability_zone", &out.QueryPlacementForAvailabilityZone},
	}
	for _, b := range bools {
		if v, ok := conf[secScheduler][b.opt]; ok {
			x, valid := parseBool(v)
			if !valid {
				return st, nil, models.E(models.Invalid, "nova.conf", "[scheduler] %s = %q is not a boolean", b.opt, v)
			}
			*b.dst = x
			notes = append(notes, fmt.Sprintf("[scheduler] %s = %t", b.opt, x))
		}
	}
	for opt, dst := range map[string]*string{
		"placement_req_required_member_prefix":          &out.RequiredMemberPrefix,
		"placement_req_default_forbidden_member_prefix": &out.DefaultForbiddenMemberPrefix,
	} {
		if v, ok := conf[secScheduler][opt]; ok {
			*dst = strings.Trim(strings.TrimSpace(v), `'"[]`)
			notes = append(notes, fmt.Sprintf("[scheduler] %s = %s", opt, *dst))
		}
	}
	for opt, dst := range map[string]*float64{
		"soft_affinity_weight_multiplier":      &out.SoftAffinityWeightMultiplier,
		"soft_anti_affinity_weight_multiplier": &out.SoftAntiAffinityWeightMultiplier,
	} {
		if v, ok := conf[secFilterScheduler][opt]; ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return st, nil, models.E(models.Invalid, "nova.conf", "[filter_scheduler] %s = %q is not a number", opt, v)
			}
			*dst = f
			notes = append(notes, fmt.Sprintf("[filter_scheduler] %s = %s", opt, v))
		}
	}
	if v, ok := conf[secFilterScheduler]["enabled_filters"]; ok {
		out.EnabledFilters = nil
		var ignored []string
		for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '\n' }) {
			f = strings.TrimSpace(f)
			switch {
			case f == "":
			case slices.Contains(knownFilters, f):
				if !slices.Contains(out.EnabledFilters, f) {
					out.EnabledFilters = append(out.EnabledFilters, f)
				}
			default:
				ignored = append(ignored, f)
			}
		}
		notes = append(notes, fmt.Sprintf("[filter_scheduler] enabled_filters: %s", strings.Join(out.EnabledFilters, ", ")))
		if len(ignored) > 0 {
			notes = append(notes, fmt.Sprintf("not modelled by corral (left out): %s", strings.Join(ignored, ", ")))
		}
	}
	if len(notes) == 0 {
		notes = append(notes, "nova.conf sets none of the options corral's settings mirror; nothing changes")
	}
	return out, notes, nil
}

var knownFilters = []string{
	models.FilterAggregateInstanceExtraSpecs, models.FilterAggregateInstanceType, models.FilterAggregateMultiTenancy,
	models.FilterServerGroupAffinity, models.FilterServerGroupAntiAffinity,
}

// NovaConfLines are the nova.conf lines that say what st says, for the
// Settings page: what to put in the cloud's nova.conf so that it and
// corral agree. enabled_filters lists corral's filters only: a real
// nova.conf adds its others (ComputeFilter, …) around them.
func NovaConfLines(st models.Settings) []string {
	b := func(x bool) string { return strconv.FormatBool(x) }
	return []string{
		"[scheduler]",
		"limit_tenants_to_placement_aggregate = " + b(st.LimitTenantsToPlacementAggregate),
		"placement_aggregate_required_for_tenants = " + b(st.PlacementAggregateRequiredForTenants),
		"enable_isolated_aggregate_filtering = " + b(st.EnableIsolatedAggregateFiltering),
		"query_placement_for_availability_zone = " + b(st.QueryPlacementForAvailabilityZone),
		"placement_req_required_member_prefix = " + st.RequiredMemberPrefix,
		"placement_req_default_forbidden_member_prefix = " + st.DefaultForbiddenMemberPrefix,
		"",
		"[filter_scheduler]",
		"enabled_filters = " + strings.Join(st.EnabledFilters, ","),
		"soft_affinity_weight_multiplier = " + strconv.FormatFloat(st.SoftAffinityWeightMultiplier, 'g', -1, 64),
		"soft_anti_affinity_weight_multiplier = " + strconv.FormatFloat(st.SoftAntiAffinityWeightMultiplier, 'g', -1, 64),
	}
}
