package handlers

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"corral/models"
	"corral/models/scheduling"
)

// The settings form has one reader, used by the settings page's save, the
// inline impact and "Stage as draft", so that what the preview shows is
// what the save writes. Its fields are the rows of models.SettingTable, by
// name: a checkbox per switch (ticked when it has any value), a text field
// per string or number, and for the host filters a "filter" checkbox per
// filter with its position in "order_<filter>".

// FilterOrderField is the form field holding a host filter's position.
func FilterOrderField(filter string) string { return "order_" + filter }

// SettingsForm is the settings form as read: the settings it asks for,
// the text fields as typed (for showing the form again), and, by setting
// name, why a field is refused (a message to show next to it).
type SettingsForm struct {
	Settings models.Settings
	Typed    map[string]string // text and number fields, and FilterOrderField positions
	Ticked   map[string]bool   // the host filters ticked
	Errors   map[string]string
}

// ReadSettingsForm reads the settings form, checking every setting as
// models.SettingTable says.
func ReadSettingsForm(form url.Values) SettingsForm {
	f := SettingsForm{Typed: map[string]string{}, Ticked: map[string]bool{}, Errors: map[string]string{}}
	for i := range models.SettingTable {
		row := &models.SettingTable[i]
		var v any
		switch row.Kind {
		case models.SettingBool:
			v = form.Get(row.Name) != ""
		case models.SettingFilters:
			v = f.readFilters(form, row.Name)
		default:
			typed := strings.TrimSpace(form.Get(row.Name))
			if _, given := form[row.Name]; !given && (row.Kind == models.SettingNumber || row.Canon != nil) {
				// A form (or script) that does not name a number or a
				// checked text setting leaves it at its default, not at a
				// refused empty value.
				typed = row.Format(row.Default)
			}
			f.Typed[row.Name] = typed
			x, err := row.Parse(typed)
			if err != nil {
				f.Errors[row.Name] = errMessage(err)
				continue
			}
			v = x
		}
		if err := row.Check(v); err != nil {
			f.Errors[row.Name] = errMessage(err)
		}
		row.Set(&f.Settings, v)
	}
	return f
}

// readFilters reads the ticked host filters, ordered by the position typed
// next to each (ties keep the table's order).
func (f *SettingsForm) readFilters(form url.Values, field string) []string {
	for _, name := range form["filter"] {
		if !models.KnownHostFilter(name) {
			f.Errors[field] = fmt.Sprintf("unknown host filter %q", name)
			continue
		}
		f.Ticked[name] = true
	}
	type pos struct {
		name  string
		order int
	}
	var rows []pos
	for i, hf := range FilterRowsOf(nil) {
		typed := strings.TrimSpace(form.Get(FilterOrderField(hf.Name)))
		f.Typed[FilterOrderField(hf.Name)] = typed
		if !f.Ticked[hf.Name] {
			continue
		}
		n, err := strconv.Atoi(typed)
		if err != nil || n < 1 {
			f.Errors[field] = fmt.Sprintf("give %s a position of 1 or more", hf.Name)
			n = 1000 + i
		}
		rows = append(rows, pos{hf.Name, n})
	}
	slices.SortStableFunc(rows, func(a, b pos) int { return a.order - b.order })
	out := []string{}
	for _, r := range rows {
		out = append(out, r.name)
	}
	return out
}

// Err is the Invalid error naming the first refused field, in the table's
// order, its message saying which setting ("soft-affinity multiplier:
// must not be negative"); nil when the form is valid.
func (f SettingsForm) Err() error {
	for _, row := range models.SettingTable {
		if msg, ok := f.Errors[row.Name]; ok {
			return models.E(models.Invalid, row.Name, "%s: %s", row.Label, msg)
		}
	}
	return nil
}

// Changes are what the form asks of the live settings: one set_settings
// naming the settings that differ, none when none does, or the form's
// error.
func (f SettingsForm) Changes(live models.Settings) ([]scheduling.Change, error) {
	if err := f.Err(); err != nil {
		return nil, err
	}
	o := scheduling.SettingsOverrideBetween(live, f.Settings)
	if o == nil {
		return nil, nil
	}
	return []scheduling.Change{{Op: scheduling.OpSetSettings, Settings: o}}, nil
}

// SettingsFormChanges reads the settings form and returns the changes it
// asks of live, or an Invalid error naming the refused field.
func SettingsFormChanges(form url.Values, live models.Settings) ([]scheduling.Change, error) {
	return ReadSettingsForm(form).Changes(live)
}

func errMessage(err error) string {
	var ce *models.Error
	if errors.As(err, &ce) && ce.Msg != "" {
		return ce.Msg
	}
	return err.Error()
}

// FilterRowsOf are the host filters the settings form lists: those the
// core models, then Nova's filters it does not model that enabled names
// (nil: all of them), each saying it is not modelled.
func FilterRowsOf(enabled []string) []models.HostFilterInfo {
	rows := slices.Clone(models.HostFilters)
	for _, name := range models.NotModelledFilters {
		if enabled == nil || slices.Contains(enabled, name) {
			rows = append(rows, models.HostFilterInfo{Name: name, Help: models.NotModelledHelp})
		}
	}
	return rows
}
