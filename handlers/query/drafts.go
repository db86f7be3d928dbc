package query

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
	"corral/views"
)

func registerDrafts(console *echo.Group, h *Handler, admin echo.MiddlewareFunc) {
	console.GET("/drafts", h.Drafts)
	console.POST("/drafts", h.CreateDraft, admin)
	console.GET("/drafts/:id", h.Draft)
	console.POST("/drafts/:id/changes", h.AddChange, admin)
	console.POST("/drafts/:id/changes/:n/delete", h.RemoveChange, admin)
	console.POST("/drafts/:id/apply", h.ApplyDraft, admin)
	console.GET("/drafts/:id/rebase", h.RebaseForm, admin)
	console.POST("/drafts/:id/rebase", h.Rebase, admin)
	console.POST("/drafts/:id/discard", h.DiscardDraft, admin)
}

// Drafts is GET /drafts: the list and the create form.
func (h *Handler) Drafts(c echo.Context) error {
	return h.renderDrafts(c, http.StatusOK, "", nil)
}

func (h *Handler) renderDrafts(c echo.Context, status int, name string, errs map[string]string) error {
	ctx := c.Request().Context()
	ds, err := h.env.Store.ListDrafts(ctx)
	if err != nil {
		return err
	}
	props := views.DraftsProps{NewName: name, Errors: errs, CanEdit: handlers.HasRole(c, models.RoleAdmin)}
	for i := range ds {
		d := &ds[i]
		cs, _ := d.DraftChanges()
		conflicts, err := h.env.Store.DraftConflicts(ctx, d)
		if err != nil {
			return err
		}
		props.Drafts = append(props.Drafts, views.DraftRow{ID: d.ID, Name: d.Name, Author: d.Author,
			Created: views.When(d.CreatedAt), Changes: len(cs), BaseRevision: d.BaseRevision, Stale: len(conflicts) > 0})
	}
	return handlers.Render(c, status, views.Drafts(layout.Page(c, "Drafts", "drafts"), props))
}

// CreateDraft is POST /drafts.
func (h *Handler) CreateDraft(c echo.Context) error {
	name := c.FormValue("name")
	d, err := h.env.Store.CreateDraft(c.Request().Context(), handlers.Actor(c), name)
	if err != nil {
		errs, ok := handlers.FormErrors(err)
		if !ok {
			return err
		}
		return h.renderDrafts(c, handlers.StatusOf(err), name, errs)
	}
	handlers.AddFlash(c, views.FlashSuccess, fmt.Sprintf("Draft %q created. Add changes, then preview them.", d.Name))
	return handlers.SeeOther(c, "/drafts/"+d.ID)
}

// Draft is GET /drafts/:id.
func (h *Handler) Draft(c echo.Context) error {
	return h.renderDraft(c, http.StatusOK, views.DraftChangeForm{Kind: scheduling.OpSetMetadata}, "")
}

func (h *Handler) renderDraft(c echo.Context, status int, form views.DraftChangeForm, formErr string) error {
	ctx := c.Request().Context()
	d, err := h.env.Store.GetDraft(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	changes, err := d.DraftChanges()
	if err != nil {
		return err
	}
	conflicts, err := h.env.Store.DraftConflicts(ctx, d)
	if err != nil {
		return err
	}
	live, _, err := h.liveState(ctx)
	if err != nil {
		return err
	}
	props := views.DraftProps{
		ID: d.ID, Name: d.Name, Author: d.Author, Created: views.When(d.CreatedAt),
		BaseRevision: d.BaseRevision, Version: d.Version, Conflicts: conflicts,
		Form: form, Kinds: changeKinds, Settings: settingOptions,
		Aggregates: live.options().Aggregates, CanEdit: handlers.HasRole(c, models.RoleAdmin), Error: formErr,
	}
	for i, ch := range changes {
		props.Changes = append(props.Changes, views.DraftChangeRow{Index: i, Kind: ch.Op, Text: describe(ch)})
	}
	for i, p := range live.world.Providers {
		if i == maxAggregateOptions {
			break
		}
		props.Providers = append(props.Providers, p.Name)
	}
	return handlers.Render(c, status, views.Draft(layout.Page(c, "Draft "+d.Name, "drafts"), props))
}

// AddChange is POST /drafts/:id/changes: the change is checked against live
// data together with the draft's other changes before it is saved.
func (h *Handler) AddChange(c echo.Context) error {
	ctx := c.Request().Context()
	form := changeForm(c)
	d, err := h.env.Store.GetDraft(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	ch, err := changeFormToChange(form)
	if err != nil {
		return h.refuseChange(c, form, err)
	}
	changes, err := d.DraftChanges()
	if err != nil {
		return err
	}
	changes = append(changes, ch)
	live, _, err := h.liveState(ctx)
	if err != nil {
		return err
	}
	if _, err := scheduling.ApplyChanges(live.world, changes); err != nil {
		return h.refuseChange(c, form, err)
	}
	version, _ := strconv.ParseInt(c.FormValue("version"), 10, 64)
	if _, err := h.env.Store.SetDraftChanges(ctx, handlers.Actor(c), d.ID, version, changes); err != nil {
		return h.refuseChange(c, form, err)
	}
	h.forgetDraft(d.ID)
	handlers.AddFlash(c, views.FlashSuccess, "Change added: "+describe(ch))
	return handlers.SeeOther(c, "/drafts/"+d.ID)
}

// refuseChange shows the draft again with the error next to the field at
// fault; errors of the whole change list ("changes[3].aggregate") go next
// to the field they name.
func (h *Handler) refuseChange(c echo.Context, form views.DraftChangeForm, err error) error {
	errs, ok := handlers.FormErrors(err)
	if !ok {
		return err
	}
	form.Errors = map[string]string{}
	general := ""
	for field, msg := range errs {
		if i := strings.LastIndex(field, "."); i >= 0 {
			field = field[i+1:]
		}
		switch field {
		case "aggregate", "key", "value", "project", "provider", "az", "setting", "kind":
			form.Errors[field] = msg
		case "reservation":
			form.Errors["value"] = msg
		default:
			general = msg
		}
	}
	return h.renderDraft(c, handlers.StatusOf(err), form, general)
}

// RemoveChange is POST /drafts/:id/changes/:n/delete.
func (h *Handler) RemoveChange(c echo.Context) error {
	ctx := c.Request().Context()
	d, err := h.env.Store.GetDraft(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	changes, err := d.DraftChanges()
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(c.Param("n"))
	if err != nil || n < 0 || n >= len(changes) {
		return models.E(models.NotFound, "change", "draft %s has no change %s", d.Name, c.Param("n"))
	}
	removed := changes[n]
	changes = slices.Delete(changes, n, n+1)
	version, _ := strconv.ParseInt(c.FormValue("version"), 10, 64)
	if _, err := h.env.Store.SetDraftChanges(ctx, handlers.Actor(c), d.ID, version, changes); err != nil {
		if models.KindOf(err) == models.Internal {
			return err
		}
		handlers.AddFlash(c, views.FlashError, message(err))
		return handlers.SeeOther(c, "/drafts/"+d.ID)
	}
	h.forgetDraft(d.ID)
	handlers.AddFlash(c, views.FlashSuccess, "Change removed: "+describe(removed))
	return handlers.SeeOther(c, "/drafts/"+d.ID)
}

// ApplyDraft is POST /drafts/:id/apply.
func (h *Handler) ApplyDraft(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	d, err := h.env.Store.GetDraft(ctx, id)
	if err != nil {
		return err
	}
	version, _ := strconv.ParseInt(c.FormValue("version"), 10, 64)
	if err := h.env.Store.ApplyDraft(ctx, handlers.Actor(c), id, version); err != nil {
		if models.KindOf(err) == models.Internal {
			return err
		}
		handlers.AddFlash(c, views.FlashError, "Nothing was applied. "+message(err))
		return handlers.SeeOther(c, "/drafts/"+id)
	}
	h.forgetDraft(id)
	handlers.AddFlash(c, views.FlashSuccess, fmt.Sprintf("Draft %q applied.", d.Name))
	return handlers.SeeOther(c, "/drafts")
}

// DiscardDraft is POST /drafts/:id/discard.
func (h *Handler) DiscardDraft(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	d, err := h.env.Store.GetDraft(ctx, id)
	if err != nil {
		return err
	}
	if err := h.env.Store.DiscardDraft(ctx, handlers.Actor(c), id); err != nil {
		return err
	}
	h.forgetDraft(id)
	handlers.AddFlash(c, views.FlashSuccess, fmt.Sprintf("Draft %q discarded; nothing live changed.", d.Name))
	return handlers.SeeOther(c, "/drafts")
}

// changeKinds are the changes the form offers.
var changeKinds = []views.Option{
	{Value: scheduling.OpSetMetadata, Label: "Set aggregate metadata (key = value)"},
	{Value: scheduling.OpUnsetMetadata, Label: "Unset aggregate metadata (key)"},
	{Value: scheduling.OpAddTenant, Label: "Tag aggregate for a project (tenant)"},
	{Value: scheduling.OpRemoveTenant, Label: "Untag a project from an aggregate"},
	{Value: scheduling.OpAddReservation, Label: "Add a reservation tag (value = reservation id)"},
	{Value: scheduling.OpRemoveReservation, Label: "Remove a reservation tag (value = reservation id)"},
	{Value: scheduling.OpAddMember, Label: "Add a host or provider to an aggregate"},
	{Value: scheduling.OpRemoveMember, Label: "Remove a host or provider from an aggregate"},
	{Value: scheduling.OpCreateAggregate, Label: "Create an aggregate (name, zone)"},
	{Value: scheduling.OpDeleteAggregate, Label: "Delete an aggregate"},
	{Value: scheduling.OpSetSettings, Label: "Change a setting (setting = value)"},
}

// settingOptions are the settings a draft may change.
var settingOptions = []views.Option{
	{Value: "", Label: "(for setting changes)"},
	{Value: "limit_tenants_to_placement_aggregate", Label: "limit_tenants_to_placement_aggregate (true/false)"},
	{Value: "placement_aggregate_required_for_tenants", Label: "placement_aggregate_required_for_tenants (true/false)"},
	{Value: "enable_isolated_aggregate_filtering", Label: "enable_isolated_aggregate_filtering (true/false)"},
	{Value: "query_placement_for_availability_zone", Label: "query_placement_for_availability_zone (true/false)"},
	{Value: "required_member_prefix", Label: "required_member_prefix"},
	{Value: "default_forbidden_member_prefix", Label: "default_forbidden_member_prefix"},
	{Value: "enabled_filters", Label: "enabled_filters (comma-separated, in order)"},
	{Value: "soft_affinity_weight_multiplier", Label: "soft_affinity_weight_multiplier"},
	{Value: "soft_anti_affinity_weight_multiplier", Label: "soft_anti_affinity_weight_multiplier"},
}

func changeForm(c echo.Context) views.DraftChangeForm {
	v := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	return views.DraftChangeForm{Kind: v("kind"), Aggregate: v("aggregate"), Key: v("key"), Value: v("value"),
		Provider: v("provider"), Project: v("project"), AZ: v("az"), Setting: v("setting")}
}

// need names the first empty field among the required ones.
func need(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return models.E(models.Invalid, pairs[i], "this change needs a %s", pairs[i])
		}
	}
	return nil
}

// changeFormToChange builds the core's change from the form.
func changeFormToChange(f views.DraftChangeForm) (scheduling.Change, error) {
	ch := scheduling.Change{Op: f.Kind, Aggregate: f.Aggregate}
	var err error
	switch f.Kind {
	case scheduling.OpSetMetadata:
		err = need("aggregate", f.Aggregate, "key", f.Key)
		ch.Key, ch.Value = f.Key, f.Value
	case scheduling.OpUnsetMetadata:
		err = need("aggregate", f.Aggregate, "key", f.Key)
		ch.Key = f.Key
	case scheduling.OpAddTenant, scheduling.OpRemoveTenant:
		err = need("aggregate", f.Aggregate, "project", f.Project)
		ch.Project = f.Project
	case scheduling.OpAddReservation, scheduling.OpRemoveReservation:
		err = need("aggregate", f.Aggregate, "value", f.Value)
		ch.Reservation = f.Value
	case scheduling.OpAddMember, scheduling.OpRemoveMember:
		err = need("aggregate", f.Aggregate, "provider", f.Provider)
		ch.Provider = f.Provider
	case scheduling.OpCreateAggregate:
		err = need("aggregate", f.Aggregate)
		if f.AZ != "" {
			az := f.AZ
			ch.AvailabilityZone = &az
		}
	case scheduling.OpDeleteAggregate:
		err = need("aggregate", f.Aggregate)
	case scheduling.OpSetSettings:
		ch.Aggregate = ""
		ch.Settings, err = settingChange(f.Setting, f.Value)
	default:
		err = models.E(models.Invalid, "kind", "unknown change %q", f.Kind)
	}
	return ch, err
}

// settingChange turns "setting = value" into a settings override.
func settingChange(name, value string) (*scheduling.SettingsOverride, error) {
	o := &scheduling.SettingsOverride{}
	boolean := func(dst **bool) error {
		b, err := strconv.ParseBool(value)
		if err != nil {
			return models.E(models.Invalid, "value", "%s takes true or false, not %q", name, value)
		}
		*dst = &b
		return nil
	}
	number := func(dst **float64) error {
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return models.E(models.Invalid, "value", "%s takes a number, not %q", name, value)
		}
		*dst = &f
		return nil
	}
	var err error
	switch name {
	case "limit_tenants_to_placement_aggregate":
		err = boolean(&o.LimitTenantsToPlacementAggregate)
	case "placement_aggregate_required_for_tenants":
		err = boolean(&o.PlacementAggregateRequiredForTenants)
	case "enable_isolated_aggregate_filtering":
		err = boolean(&o.EnableIsolatedAggregateFiltering)
	case "query_placement_for_availability_zone":
		err = boolean(&o.QueryPlacementForAvailabilityZone)
	case "required_member_prefix":
		o.RequiredMemberPrefix = &value
	case "default_forbidden_member_prefix":
		o.DefaultForbiddenMemberPrefix = &value
	case "enabled_filters":
		var fs []string
		for _, f := range strings.Split(value, ",") {
			if f = strings.TrimSpace(f); f != "" {
				if _, ok := scheduling.LookupHostFilter(f); !ok {
					return nil, models.E(models.Invalid, "value", "unknown host filter %q (known: %s)", f, strings.Join(scheduling.HostFilterNames(), ", "))
				}
				fs = append(fs, f)
			}
		}
		o.EnabledFilters = &fs
	case "soft_affinity_weight_multiplier":
		err = number(&o.SoftAffinityWeightMultiplier)
	case "soft_anti_affinity_weight_multiplier":
		err = number(&o.SoftAntiAffinityWeightMultiplier)
	case "":
		return nil, models.E(models.Invalid, "setting", "choose the setting to change")
	default:
		return nil, models.E(models.Invalid, "setting", "unknown setting %q", name)
	}
	return o, err
}

// describe says what a change does, for a person.
func describe(c scheduling.Change) string {
	switch c.Op {
	case scheduling.OpSetMetadata:
		return fmt.Sprintf("set %s=%s on aggregate %s", c.Key, c.Value, c.Aggregate)
	case scheduling.OpUnsetMetadata:
		return fmt.Sprintf("unset %s on aggregate %s", c.Key, c.Aggregate)
	case scheduling.OpAddTenant:
		return fmt.Sprintf("tag aggregate %s for project %s", c.Aggregate, c.Project)
	case scheduling.OpRemoveTenant:
		return fmt.Sprintf("untag project %s from aggregate %s", c.Project, c.Aggregate)
	case scheduling.OpAddReservation:
		return fmt.Sprintf("add reservation tag %s to aggregate %s", c.Reservation, c.Aggregate)
	case scheduling.OpRemoveReservation:
		return fmt.Sprintf("remove reservation tag %s from aggregate %s", c.Reservation, c.Aggregate)
	case scheduling.OpAddMember:
		return fmt.Sprintf("add %s to aggregate %s", c.Provider, c.Aggregate)
	case scheduling.OpRemoveMember:
		return fmt.Sprintf("remove %s from aggregate %s", c.Provider, c.Aggregate)
	case scheduling.OpCreateAggregate:
		if c.AvailabilityZone != nil {
			return fmt.Sprintf("create aggregate %s in zone %s", c.Aggregate, *c.AvailabilityZone)
		}
		return "create aggregate " + c.Aggregate
	case scheduling.OpDeleteAggregate:
		return "delete aggregate " + c.Aggregate
	case scheduling.OpSetSettings:
		return "change settings: " + describeSettings(c.Settings)
	}
	return c.Op
}

func describeSettings(o *scheduling.SettingsOverride) string {
	if o == nil {
		return "(none)"
	}
	var parts []string
	b := func(name string, v *bool) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s=%t", name, *v))
		}
	}
	s := func(name string, v *string) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s=%q", name, *v))
		}
	}
	f := func(name string, v *float64) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s=%g", name, *v))
		}
	}
	b("limit_tenants_to_placement_aggregate", o.LimitTenantsToPlacementAggregate)
	b("placement_aggregate_required_for_tenants", o.PlacementAggregateRequiredForTenants)
	b("enable_isolated_aggregate_filtering", o.EnableIsolatedAggregateFiltering)
	b("query_placement_for_availability_zone", o.QueryPlacementForAvailabilityZone)
	s("required_member_prefix", o.RequiredMemberPrefix)
	s("default_forbidden_member_prefix", o.DefaultForbiddenMemberPrefix)
	if o.EnabledFilters != nil {
		parts = append(parts, "enabled_filters="+strings.Join(*o.EnabledFilters, ","))
	}
	f("soft_affinity_weight_multiplier", o.SoftAffinityWeightMultiplier)
	f("soft_anti_affinity_weight_multiplier", o.SoftAntiAffinityWeightMultiplier)
	return strings.Join(parts, ", ")
}
