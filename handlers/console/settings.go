package console

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/cloud"
	"corral/models/scheduling"
	cv "corral/views/console"
)

// filterHelp is the one-line explanation of each host filter.
var filterHelp = map[string]string{
	models.FilterAggregateInstanceExtraSpecs: "Flavor extra specs (aggregate_instance_extra_specs:…) must be satisfied by the host's aggregate metadata, with Nova's operators.",
	models.FilterAggregateInstanceType:       "Reads flavor extra specs against aggregate metadata with the sentinels * (present), ~ (optional) and ! (absent); an aggregate with force_metadata_check=True makes its metadata a requirement on flavors.",
	models.FilterAggregateMultiTenancy:       "Hosts in aggregates with filter_tenant_id… keys accept only those projects (keeps others out, not the tenant in).",
	models.FilterServerGroupAffinity:         "Members of an affinity group go to the host the group already uses.",
	models.FilterServerGroupAntiAffinity:     "A host passes while it holds fewer members of the anti-affinity group than max_server_per_host (default 1).",
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// settingsForm shows st: enabled filters first, in their order, then the
// others.
func settingsForm(st models.Settings, gen int64, canEdit bool) cv.SettingsForm {
	f := cv.SettingsForm{Generation: gen, S: st, SoftAff: formatFloat(st.SoftAffinityWeightMultiplier),
		SoftAnti: formatFloat(st.SoftAntiAffinityWeightMultiplier), Errors: map[string]string{}, CanEdit: canEdit,
		NovaConf: cloud.NovaConfLines(st)}
	pos := 1
	for _, name := range st.EnabledFilters {
		f.Filters = append(f.Filters, cv.FilterSetting{Name: name, Help: filterHelp[name], Enabled: true, Order: strconv.Itoa(pos)})
		pos++
	}
	for _, name := range scheduling.HostFilterNames() {
		if !slices.Contains(st.EnabledFilters, name) {
			f.Filters = append(f.Filters, cv.FilterSetting{Name: name, Help: filterHelp[name], Order: strconv.Itoa(pos)})
			pos++
		}
	}
	return f
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
	return handlers.Render(c, status, cv.SettingsPage(layout.Page(c, "Settings", "settings"), f))
}

// SettingsSave saves the settings (POST /settings) in one audited write;
// a stale generation is a conflict, not an overwrite.
func (h *Handler) SettingsSave(c echo.Context) error {
	st, f, gen := readSettingsForm(c)
	// A refusal comes back to the settings page (post/redirect/get) with
	// what was typed; the page checks it again.
	if len(f.Errors) > 0 {
		return retryForm(c, "/settings", "settings", f.Errors, "")
	}
	if err := h.store().UpdateSettings(c.Request().Context(), handlers.Actor(c), gen, st); err != nil {
		if !userError(err) {
			return err
		}
		field := models.FieldOf(err)
		if isStale(err) {
			field = ""
		}
		return retryForm(c, "/settings", "settings", map[string]string{field: upperFirst(conflictMessage(err))}, "")
	}
	return redirectFlash(c, handlers.FlashSuccess, fmt.Sprintf("Settings saved: %s enabled (%s).",
		pluralFilters(len(st.EnabledFilters)), strings.Join(st.EnabledFilters, " → ")), "/settings")
}

// readSettingsForm reads and checks the settings form (posted, or in the
// URL of a refused post shown again).
func readSettingsForm(c echo.Context) (models.Settings, cv.SettingsForm, int64) {
	st := models.Settings{
		LimitTenantsToPlacementAggregate:     c.FormValue("limit_tenants_to_placement_aggregate") != "",
		PlacementAggregateRequiredForTenants: c.FormValue("placement_aggregate_required_for_tenants") != "",
		EnableIsolatedAggregateFiltering:     c.FormValue("enable_isolated_aggregate_filtering") != "",
		QueryPlacementForAvailabilityZone:    c.FormValue("query_placement_for_availability_zone") != "",
		RequiredMemberPrefix:                 strings.TrimSpace(c.FormValue("required_member_prefix")),
		DefaultForbiddenMemberPrefix:         strings.TrimSpace(c.FormValue("default_forbidden_member_prefix")),
	}
	f := settingsForm(st, 0, true)
	f.SoftAff = strings.TrimSpace(c.FormValue("soft_affinity_weight_multiplier"))
	f.SoftAnti = strings.TrimSpace(c.FormValue("soft_anti_affinity_weight_multiplier"))
	gen, gerr := formGeneration(c)
	if gerr != nil {
		f.Errors[""] = errMsg(gerr)
	}
	f.Generation = gen
	readMultiplier := func(field, v string, dst *float64) {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			f.Errors[field] = "A number, such as 1.0."
			return
		}
		*dst = x
	}
	readMultiplier("soft_affinity_weight_multiplier", f.SoftAff, &st.SoftAffinityWeightMultiplier)
	readMultiplier("soft_anti_affinity_weight_multiplier", f.SoftAnti, &st.SoftAntiAffinityWeightMultiplier)

	// Host filters: the ticked ones, ordered by the position typed next to
	// each (ties keep the page's order).
	params, _ := c.FormParams()
	on := map[string]bool{}
	for _, name := range params["filter"] {
		on[name] = true
	}
	type pos struct {
		name  string
		order int
		idx   int
	}
	var rows []pos
	f.Filters = nil
	for i, name := range scheduling.HostFilterNames() {
		o := strings.TrimSpace(c.FormValue("order_" + name))
		n, err := strconv.Atoi(o)
		if err != nil || n < 1 {
			if on[name] {
				f.Errors["enabled_filters"] = fmt.Sprintf("Give %s a position of 1 or more.", name)
			}
			n = 1000 + i
		}
		f.Filters = append(f.Filters, cv.FilterSetting{Name: name, Help: filterHelp[name], Enabled: on[name], Order: o})
		if on[name] {
			rows = append(rows, pos{name, n, i})
		}
		delete(on, name)
	}
	for name := range on {
		f.Errors["enabled_filters"] = fmt.Sprintf("Unknown host filter %q.", name)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].order < rows[j].order })
	st.EnabledFilters = []string{}
	for _, r := range rows {
		st.EnabledFilters = append(st.EnabledFilters, r.name)
	}
	f.S = st
	return st, f, gen
}

func pluralFilters(n int) string {
	if n == 1 {
		return "1 host filter"
	}
	return strconv.Itoa(n) + " host filters"
}
