package cloud

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"

	"corral/models"
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

// novaDefaults are Nova's own defaults where corral's differ: a nova.conf
// that does not set the option runs with these
// (nova/conf/scheduler.py at 26.0.0 … 33.0.0). The reservation prefixes
// are corral's seed feature, not Nova's: off unless the file sets them.
var novaDefaults = map[string]any{
	"enabled_filters": []string{"ComputeFilter", models.FilterComputeCapabilities, "ImagePropertiesFilter",
		models.FilterServerGroupAntiAffinity, models.FilterServerGroupAffinity},
	"weight_classes":                  models.AllWeighers,
	"required_member_prefix":          "",
	"default_forbidden_member_prefix": "",
}

// SettingsFromNovaConf applies conf to st and says, line by line, what it
// took and what it left out. An option of Nova's the file does not set
// takes Nova's default (the file is the whole of Nova's configuration);
// the release ([corral] nova_release, no option of Nova's) keeps st's
// value unless the file names it. Enabled filters and weighers corral
// does not model are kept and named as not modelled.
func SettingsFromNovaConf(st models.Settings, conf NovaConf) (models.Settings, []string, error) {
	out := st
	out.EnabledFilters = slices.Clone(st.EnabledFilters)
	var notes []string
	for i := range models.SettingTable {
		row := &models.SettingTable[i]
		v, ok := conf[row.Section][row.Option]
		where := fmt.Sprintf("[%s] %s", row.Section, row.Option)
		if !ok {
			if row.Section == models.NovaSectionCorral {
				continue
			}
			def, nova := novaDefaults[row.Name]
			if !nova {
				def = row.Default
			}
			if !reflect.DeepEqual(row.Get(&out), def) {
				row.Set(&out, def)
				notes = append(notes, fmt.Sprintf("%s not set: Nova's default %s", where, row.Format(def)))
			}
			continue
		}
		switch row.Kind {
		case models.SettingFilters:
			var known, ignored, unmodelled []string
			for _, f := range models.SplitFilterList(v) {
				switch {
				case !models.KnownHostFilter(f):
					ignored = append(ignored, f)
				case !slices.Contains(known, f):
					known = append(known, f)
					if !models.ModelledHostFilter(f) {
						unmodelled = append(unmodelled, f)
					}
				}
			}
			row.Set(&out, known)
			notes = append(notes, fmt.Sprintf("%s: %s", where, strings.Join(known, ", ")))
			if len(unmodelled) > 0 {
				notes = append(notes, fmt.Sprintf("%s: %s", models.NotModelledHelp, strings.Join(unmodelled, ", ")))
			}
			if len(ignored) > 0 {
				notes = append(notes, fmt.Sprintf("unknown to corral (left out): %s", strings.Join(ignored, ", ")))
			}
			continue
		case models.SettingText:
			// oslo.config lists may be written ['reservation:'].
			v = strings.Trim(strings.TrimSpace(v), `'"[]`)
		}
		x, err := row.Parse(v)
		if err != nil {
			return st, nil, novaConfError(where, err)
		}
		row.Set(&out, x)
		notes = append(notes, where+" = "+row.Format(x))
	}
	var weighers []string
	for _, w := range models.EnabledWeighers(out.WeightClasses, out.NovaRelease) {
		if w.NotModelled {
			weighers = append(weighers, w.Name)
		}
	}
	if len(weighers) > 0 {
		notes = append(notes, fmt.Sprintf("%s (weighers): %s", models.NotModelledHelp, strings.Join(weighers, ", ")))
	}
	notes = append(notes, unreadOptions(conf)...)
	if len(notes) == 0 {
		notes = append(notes, "nova.conf sets none of the options corral's settings mirror; nothing changes")
	}
	return out, notes, nil
}

// novaConfError says which option of nova.conf a setting refused.
func novaConfError(where string, err error) error {
	msg := err.Error()
	var ce *models.Error
	if errors.As(err, &ce) && ce.Msg != "" {
		msg = ce.Msg
	}
	return models.E(models.Invalid, "nova.conf", "%s: %s", where, msg)
}

// unreadOptions names the scheduling options the file sets that corral
// does not read: the preview may differ from Nova there.
func unreadOptions(conf NovaConf) []string {
	var out []string
	for _, section := range []string{models.NovaSectionScheduler, models.NovaSectionFilterScheduler, "metrics"} {
		for _, opt := range slices.Sorted(maps.Keys(conf[section])) {
			if !slices.ContainsFunc(models.SettingTable, func(s models.Setting) bool { return s.Section == section && s.Option == opt }) {
				out = append(out, fmt.Sprintf("[%s] %s", section, opt))
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return []string{"not read by corral (" + models.NotModelledHelp + "): " + strings.Join(out, ", ")}
}
