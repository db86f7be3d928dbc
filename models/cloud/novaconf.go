package cloud

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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

// SettingsFromNovaConf applies the options conf sets to st (options it
// does not set keep st's values) and says, line by line, what it took and
// what it left out. The options are those of models.SettingTable; host
// filters corral does not model are listed as left out.
func SettingsFromNovaConf(st models.Settings, conf NovaConf) (models.Settings, []string, error) {
	out := st
	out.EnabledFilters = slices.Clone(st.EnabledFilters)
	var notes []string
	for i := range models.SettingTable {
		row := &models.SettingTable[i]
		v, ok := conf[row.Section][row.Option]
		if !ok {
			continue
		}
		where := fmt.Sprintf("[%s] %s", row.Section, row.Option)
		switch row.Kind {
		case models.SettingFilters:
			var known, ignored []string
			for _, f := range models.SplitFilterList(v) {
				switch {
				case !models.KnownHostFilter(f):
					ignored = append(ignored, f)
				case !slices.Contains(known, f):
					known = append(known, f)
				}
			}
			row.Set(&out, known)
			notes = append(notes, fmt.Sprintf("%s: %s", where, strings.Join(known, ", ")))
			if len(ignored) > 0 {
				notes = append(notes, fmt.Sprintf("not modelled by corral (left out): %s", strings.Join(ignored, ", ")))
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
