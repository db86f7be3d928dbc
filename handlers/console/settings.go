package console

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/scheduling"
	cv "corral/views/console"
)

// settingsForm shows st: one section per group of the settings table,
// enabled filters first, in their order, then the others.
func settingsForm(st models.Settings, gen int64, canEdit bool) cv.SettingsForm {
	order := map[string]string{}
	pos := 1
	for _, name := range st.EnabledFilters {
		order[handlers.FilterOrderField(name)] = strconv.Itoa(pos)
		pos++
	}
	for _, hf := range models.HostFilters {
		if !slices.Contains(st.EnabledFilters, hf.Name) {
			order[handlers.FilterOrderField(hf.Name)] = strconv.Itoa(pos)
			pos++
		}
	}
	typed := map[string]string{}
	for _, row := range models.SettingTable {
		if row.Kind == models.SettingText || row.Kind == models.SettingNumber {
			typed[row.Name] = row.Format(row.Get(&st))
		}
	}
	f := settingsView(st, typed, order, true)
	f.Generation, f.CanEdit, f.NovaConf = gen, canEdit, models.NovaConfLines(st)
	return f
}

// settingsView lays out the settings table's rows: st's values, the text
// fields and filter positions as typed. Filters are listed in the order of
// their typed positions when sortFilters is set, in the table's otherwise.
func settingsView(st models.Settings, typed, order map[string]string, sortFilters bool) cv.SettingsForm {
	f := cv.SettingsForm{Errors: map[string]string{}}
	for _, g := range models.SettingGroups {
		sec := cv.SettingsSection{Title: g.Title, Help: g.Help}
		for _, row := range models.SettingTable {
			if row.Group != g {
				continue
			}
			r := cv.SettingRow{Name: row.Name, Label: row.Label, Help: row.Help}
			switch row.Kind {
			case models.SettingBool:
				r.On = row.Get(&st).(bool)
				sec.Toggles = append(sec.Toggles, r)
			case models.SettingFilters:
				sec.FiltersName = row.Name
				sec.Filters = filterRows(row.Get(&st).([]string), order, sortFilters)
			default:
				r.Value = typed[row.Name]
				sec.Fields = append(sec.Fields, r)
			}
		}
		f.Sections = append(f.Sections, sec)
	}
	return f
}

// filterRows are the host filter table's rows.
func filterRows(enabled []string, order map[string]string, sorted bool) []cv.FilterSetting {
	var rows []cv.FilterSetting
	for _, hf := range handlers.FilterRowsOf(enabled) {
		rows = append(rows, cv.FilterSetting{Name: hf.Name, Help: hf.Help, Enabled: slices.Contains(enabled, hf.Name),
			Order: order[handlers.FilterOrderField(hf.Name)], OrderField: handlers.FilterOrderField(hf.Name)})
	}
	if sorted {
		slices.SortStableFunc(rows, func(a, b cv.FilterSetting) int {
			x, _ := strconv.Atoi(a.Order)
			y, _ := strconv.Atoi(b.Order)
			return x - y
		})
	}
	return rows
}

// Settings shows the scheduler settings (GET /settings).
func (h *Handler) Settings(c echo.Context) error {
	if again, kept := retrying(c, "settings"); again && isAdmin(c) {
		_, f, _ := readSettingsForm(c)
		mergeErrors(f.Errors, kept)
		return h.renderSettings(c, http.StatusOK, f)
	}
	st, gen, err := h.store().GetSettings(c.Request().Context())
	if err != nil {
		return err
	}
	return h.renderSettings(c, http.StatusOK, settingsForm(st, gen, isAdmin(c)))
}

func (h *Handler) renderSettings(c echo.Context, status int, f cv.SettingsForm) error {
	if h.env.Cloud != nil {
		f.Connected = h.env.Cloud.Connection()
	}
	return handlers.Render(c, status, cv.SettingsPage(layout.Page(c, "Settings", "settings"), f))
}

// SettingsSave saves the settings (POST /settings) through the one write
// path: the form's one reader gives the set_settings change, which names
// the generation the form was read at, so that a stale form is a
// conflict, not an overwrite.
func (h *Handler) SettingsSave(c echo.Context) error {
	ctx := c.Request().Context()
	read, f, gen := readSettingsForm(c)
	// A refusal comes back to the settings page (post/redirect/get) with
	// what was typed; the page checks it again.
	if len(f.Errors) > 0 {
		return retryForm(c, "/settings", "settings", f.Errors, "")
	}
	live, _, err := h.store().GetSettings(ctx)
	if err != nil {
		return err
	}
	changes, err := read.Changes(live)
	if err == nil {
		if len(changes) == 0 {
			// Nothing differs: still check the form is not stale.
			changes = []scheduling.Change{{Op: scheduling.OpSetSettings, Settings: &scheduling.SettingsOverride{}}}
		}
		changes[0].Generation = &gen
		_, err = h.apply(c, changes)
	}
	if err != nil {
		if !userError(err) {
			return err
		}
		field := models.FieldOf(err)
		if isStale(err) {
			field = ""
		}
		return retryForm(c, "/settings", "settings", map[string]string{field: upperFirst(conflictMessage(err))}, "")
	}
	st := read.Settings
	return redirectFlash(c, handlers.FlashSuccess, fmt.Sprintf("Settings saved: %s enabled (%s).",
		pluralFilters(len(st.EnabledFilters)), strings.Join(st.EnabledFilters, " → ")), "/settings")
}

// readSettingsForm reads and checks the settings form (posted, or in the
// URL of a refused post shown again) with the one settings-form reader.
func readSettingsForm(c echo.Context) (handlers.SettingsForm, cv.SettingsForm, int64) {
	params, _ := c.FormParams()
	read := handlers.ReadSettingsForm(params)
	f := settingsView(read.Settings, read.Typed, read.Typed, false)
	f.CanEdit = true
	for field, msg := range read.Errors {
		f.Errors[field] = upperFirst(msg) + "."
	}
	gen, gerr := formGeneration(c)
	if gerr != nil {
		f.Errors[""] = errMsg(gerr)
	}
	f.Generation = gen
	return read, f, gen
}

func pluralFilters(n int) string {
	if n == 1 {
		return "1 host filter"
	}
	return strconv.Itoa(n) + " host filters"
}
