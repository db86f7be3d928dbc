package query

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/views"
)

func registerDrafts(console *echo.Group, h *Handler, admin echo.MiddlewareFunc) {
	console.GET("/drafts", h.Drafts)
	handlers.Body(handlers.SmallForm, console.POST("/drafts", h.CreateDraft, admin))
	console.GET("/drafts/:id", h.Draft)
	handlers.Body(handlers.ListForm, console.POST("/drafts/:id/changes", h.AddChange, admin))
	handlers.Body(handlers.SmallForm, console.POST("/drafts/:id/changes/:n/delete", h.RemoveChange, admin))
	console.GET("/drafts/:id/apply", h.ConfirmDraft, admin)
	handlers.Body(handlers.SmallForm, console.POST("/drafts/:id/apply", h.ApplyDraft, admin))
	console.GET("/drafts/:id/rebase", h.RebaseForm, admin)
	handlers.Body(handlers.ListForm, console.POST("/drafts/:id/rebase", h.Rebase, admin))
	console.GET("/drafts/:id/discard", h.ConfirmDraft, admin)
	handlers.Body(handlers.SmallForm, console.POST("/drafts/:id/discard", h.DiscardDraft, admin))
	console.GET("/drafts/:id/stranded", h.Stranded)
	handlers.Body(handlers.ListForm, console.POST("/drafts/revert", h.RevertDraft, admin))
}

// recentApplied is how many applied drafts the list offers to revert.
const recentApplied = 10

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
		conflicts, cerr := h.env.Store.DraftConflicts(ctx, d)
		if cerr != nil {
			return cerr
		}
		props.Drafts = append(props.Drafts, views.DraftRow{ID: d.ID, Name: d.Name, Author: d.Author,
			Created: views.When(d.CreatedAt), Changes: len(cs), BaseRevision: d.BaseRevision, Stale: len(conflicts) > 0})
	}
	evs, _, err := h.env.Store.ListAudit(ctx, store.AuditQuery{ObjectType: "draft", Limit: 200})
	if err != nil {
		return err
	}
	for _, e := range evs {
		if e.Action != "apply" || len(props.Applied) == recentApplied {
			continue
		}
		var after struct {
			Changes []scheduling.Change  `json:"changes"`
			Revert  *[]scheduling.Change `json:"revert_changes"`
		}
		if json.Unmarshal([]byte(e.After), &after) != nil || after.Revert == nil {
			continue // applied before reverts were recorded
		}
		props.Applied = append(props.Applied, views.AppliedDraft{EventID: e.ID, Name: e.ObjectName, When: views.When(e.At),
			Actor: e.Actor, Changes: len(after.Changes)})
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

// Draft is GET /drafts/:id. After a refused change (retry=1 in the URL,
// which holds what was typed) the form shows the typed values again with
// the errors next to their fields: post/redirect/get, so that the address
// bar never holds a POST-only URL.
func (h *Handler) Draft(c echo.Context) error {
	if c.QueryParam("retry") == "" {
		return h.renderDraft(c, http.StatusOK, views.DraftChangeForm{Kind: scheduling.OpSetMetadata}, "")
	}
	form := changeForm(c)
	err := h.checkChange(c, form)
	if err == nil {
		return h.renderDraft(c, http.StatusOK, form, "")
	}
	errs, ok := handlers.FormErrors(err)
	if !ok {
		return err
	}
	form.Errors, _ = placeErrors(errs)
	return h.renderDraft(c, http.StatusOK, form, "")
}

// checkChange checks the change a form describes against the draft's
// other changes and live data, without saving it.
func (h *Handler) checkChange(c echo.Context, form views.DraftChangeForm) error {
	ctx := c.Request().Context()
	d, err := h.env.Store.GetDraft(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	ch, err := changeFormToChange(form)
	if err != nil {
		return err
	}
	changes, err := d.DraftChanges()
	if err != nil {
		return err
	}
	live, _, err := h.liveState(ctx)
	if err != nil {
		return err
	}
	_, err = scheduling.ApplyChanges(live.world, append(changes, ch))
	return err
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
		Aggregates: live.options().Aggregates, Flavors: live.options().Flavors, Policies: policyOptions,
		CanEdit: handlers.HasRole(c, models.RoleAdmin), Error: formErr,
	}
	for i, g := range live.world.ServerGroups {
		if i == maxAggregateOptions {
			break
		}
		props.Groups = append(props.Groups, g.Name)
	}
	for i, ch := range changes {
		props.Changes = append(props.Changes, views.DraftChangeRow{Index: i, Kind: ch.Op, Text: describe(ch)})
	}
	if len(changes) > 0 {
		g, gerr := h.draftGate(ctx, d)
		if gerr != nil && models.KindOf(gerr) == models.Internal {
			return gerr
		}
		if g != nil {
			gate := layout.GateProps(g, "")
			props.Gate = &gate
		}
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

// refuseChange sends the browser back to the draft's page with what was
// typed in the URL; that page checks the change again and shows each error
// next to the field at fault. An error no field shows (someone else edited
// the draft) comes as a flash.
func (h *Handler) refuseChange(c echo.Context, form views.DraftChangeForm, err error) error {
	errs, ok := handlers.FormErrors(err)
	if !ok {
		return err
	}
	if _, general := placeErrors(errs); general != "" {
		handlers.AddFlash(c, views.FlashError, general)
	}
	q := url.Values{"retry": {"1"}}
	for k, v := range map[string]string{"kind": form.Kind, "aggregate": form.Aggregate, "key": form.Key, "value": form.Value,
		"provider": form.Provider, "project": form.Project, "az": form.AZ, "setting": form.Setting, "flavor": form.Flavor,
		"group": form.Group, "server": form.Server, "policy": form.Policy, "trait": form.Trait, "class": form.Class, "total": form.Total} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return handlers.SeeOther(c, "/drafts/"+c.Param("id")+"?"+q.Encode()+"#add-change")
}

// placeErrors puts errors next to the form field they name; errors of the
// whole change list ("changes[3].aggregate") go next to the field they
// name, and the rest is returned as one general message.
func placeErrors(errs map[string]string) (map[string]string, string) {
	out := map[string]string{}
	general := ""
	for field, msg := range errs {
		if i := strings.LastIndex(field, "."); i >= 0 {
			field = field[i+1:]
		}
		switch field {
		case "aggregate", "key", "value", "project", "provider", "az", "setting", "kind", "flavor", "server", "policy", "trait", "total":
			out[field] = msg
		case "reservation":
			out["value"] = msg
		case "server_group":
			out["group"] = msg
		case "resource_class":
			out["class"] = msg
		case "inventory":
			out["total"] = msg
		default:
			general = msg
		}
	}
	return out, general
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

// ConfirmDraft is GET /drafts/:id/apply and GET /drafts/:id/discard: what
// the action does, and the button that does it.
func (h *Handler) ConfirmDraft(c echo.Context) error {
	ctx := c.Request().Context()
	d, err := h.env.Store.GetDraft(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	changes, err := d.DraftChanges()
	if err != nil {
		return err
	}
	action := "discard"
	if strings.HasSuffix(c.Path(), "/apply") {
		action = "apply"
	}
	props := views.DraftConfirmProps{ID: d.ID, Name: d.Name, Version: d.Version, Action: action}
	for i, ch := range changes {
		props.Changes = append(props.Changes, views.DraftChangeRow{Index: i, Kind: ch.Op, Text: describe(ch)})
	}
	if action == "apply" {
		if props.Conflicts, err = h.env.Store.DraftConflicts(ctx, d); err != nil {
			return err
		}
		g, err := h.draftGate(ctx, d)
		if err != nil && models.KindOf(err) == models.Internal {
			return err
		}
		if g != nil {
			props.Stranded, props.Broken = len(g.Servers), len(g.Groups)
			gate := layout.GateProps(g, c.QueryParam(layout.ConfirmField))
			props.Gate = &gate
		}
	}
	title := "Apply " + d.Name
	if action == "discard" {
		title = "Discard " + d.Name
	}
	return handlers.Render(c, http.StatusOK, views.DraftConfirm(layout.Page(c, title, "drafts"), props))
}

// Stranded is GET /drafts/:id/stranded.
func (h *Handler) Stranded(c echo.Context) error {
	st, d, err := h.strandings(c, c.Param("id"))
	if err != nil {
		return err
	}
	props := views.StrandedProps{ID: d.ID, Name: d.Name, Checked: st.Checked}
	for _, s := range st.Servers {
		props.Servers = append(props.Servers, views.StrandedServer{Name: s.Name, Project: h.env.ProjectLabel(c, s.Project), Host: s.Host, Reason: s.Reason})
	}
	for _, g := range st.Groups {
		props.Groups = append(props.Groups, views.BrokenGroup{Name: g.Name, Project: h.env.ProjectLabel(c, g.Project), Policy: g.Policy, Reason: g.Reason})
	}
	return handlers.Render(c, http.StatusOK, views.Stranded(layout.Page(c, "Stranded by "+d.Name, "drafts"), props))
}

// RevertDraft is POST /drafts/revert: a new draft undoing the applied
// draft of audit event "event".
func (h *Handler) RevertDraft(c echo.Context) error {
	ev, err := strconv.ParseInt(c.FormValue("event"), 10, 64)
	if err != nil || ev <= 0 {
		handlers.AddFlash(c, views.FlashError, "Choose an applied draft to revert.")
		return handlers.SeeOther(c, "/drafts")
	}
	d, err := h.env.Store.RevertDraftApply(c.Request().Context(), handlers.Actor(c), ev)
	if err != nil {
		if models.KindOf(err) == models.Internal {
			return err
		}
		handlers.AddFlash(c, views.FlashError, message(err))
		return handlers.SeeOther(c, "/drafts")
	}
	handlers.AddFlash(c, views.FlashSuccess, fmt.Sprintf("Draft %q holds the values from before; preview it, then apply it.", d.Name))
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
	if h.env.Cloud != nil {
		// Connected: the cloud is the truth, so a draft is applied by
		// rolling it out; its plan page lists the calls first.
		handlers.AddFlash(c, views.FlashWarning, "corral is connected to a cloud: review the calls, then roll the draft out.")
		return handlers.SeeOther(c, "/cloud/drafts/"+d.ID)
	}
	version, _ := strconv.ParseInt(c.FormValue("version"), 10, 64)
	// The safety gate: a draft that strands servers, breaks groups or
	// leaves a pair with no host is applied only with the confirmation of
	// exactly those consequences.
	// A stale version or a conflict is the write path's to refuse, with
	// its own message.
	g, err := h.applyGate(ctx, id, version)
	if err != nil {
		return err
	}
	if g != nil && !g.Confirmed(c.FormValue(layout.ConfirmField)) {
		handlers.AddFlash(c, views.FlashError, "Nothing was applied: "+message(g.Refusal(layout.ConfirmField))+" (tick the box below).")
		return handlers.SeeOther(c, "/drafts/"+id+"/apply")
	}
	if _, err := h.env.Writer.ApplyDraft(ctx, handlers.Actor(c), id, version); err != nil {
		if models.KindOf(err) == models.Internal {
			return err
		}
		handlers.AddFlash(c, views.FlashError, "Nothing was applied. "+message(err))
		return handlers.SeeOther(c, "/drafts/"+id)
	}
	h.forgetDraft(id)
	handlers.AddFlash(c, views.FlashSuccess, fmt.Sprintf("Draft %q applied. To undo it, revert it under Recently applied.", d.Name))
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
	{Value: scheduling.OpSetZone, Label: "Put an aggregate in a zone (empty clears it)"},
	{Value: scheduling.OpRenameAggregate, Label: "Rename an aggregate (value = new name)"},
	{Value: scheduling.OpSetSettings, Label: "Change a setting (setting = value)"},
	{Value: scheduling.OpSetExtraSpec, Label: "Set a flavor extra spec (key = value)"},
	{Value: scheduling.OpUnsetExtraSpec, Label: "Remove a flavor extra spec (key)"},
	{Value: scheduling.OpCreateServerGroup, Label: "Create a server group (name, project, policy)"},
	{Value: scheduling.OpDeleteServerGroup, Label: "Delete a server group"},
	{Value: scheduling.OpAddGroupMember, Label: "Add a server to a server group"},
	{Value: scheduling.OpRemoveGroupMember, Label: "Remove a server from a server group"},
	{Value: scheduling.OpAddTrait, Label: "Add a trait to a provider"},
	{Value: scheduling.OpRemoveTrait, Label: "Remove a trait from a provider"},
	{Value: scheduling.OpSetInventory, Label: "Set a provider's inventory (resource class, total)"},
	{Value: scheduling.OpDeleteInventory, Label: "Remove a provider's inventory"},
}

// policyOptions are the server group policies.
var policyOptions = []views.Option{
	{Value: models.PolicyAntiAffinity, Label: "anti-affinity"},
	{Value: models.PolicyAffinity, Label: "affinity"},
	{Value: models.PolicySoftAntiAffinity, Label: "soft-anti-affinity"},
	{Value: models.PolicySoftAffinity, Label: "soft-affinity"},
}

// settingOptions are the settings a draft may change: every row of the
// settings table, with what its value takes.
var settingOptions = func() []views.Option {
	out := []views.Option{{Value: "", Label: "(for setting changes)"}}
	for _, row := range models.SettingTable {
		label := row.Name
		switch row.Kind {
		case models.SettingBool:
			label += " (true/false)"
		case models.SettingFilters:
			label += " (comma-separated, in order)"
		}
		out = append(out, views.Option{Value: row.Name, Label: label})
	}
	return out
}()

func changeForm(c echo.Context) views.DraftChangeForm {
	v := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	return views.DraftChangeForm{Kind: v("kind"), Aggregate: v("aggregate"), Key: v("key"), Value: v("value"),
		Provider: v("provider"), Project: v("project"), AZ: v("az"), Setting: v("setting"),
		Flavor: v("flavor"), Group: v("group"), Server: v("server"), Policy: v("policy"),
		Trait: v("trait"), Class: v("class"), Total: v("total")}
}

// need names the first empty field among the required ones.
func need(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return models.E(models.Invalid, pairs[i], "this change needs %s %s", article(pairs[i]), pairs[i])
		}
	}
	return nil
}

// article is "a" or "an" for a field name.
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
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
	case scheduling.OpSetZone:
		err = need("aggregate", f.Aggregate)
		az := f.AZ
		ch.AvailabilityZone = &az
	case scheduling.OpRenameAggregate:
		err = need("aggregate", f.Aggregate, "value", f.Value)
		ch.Value = f.Value
	case scheduling.OpSetSettings:
		ch.Aggregate = ""
		ch.Settings, err = settingChange(f.Setting, f.Value)
	case scheduling.OpSetExtraSpec, scheduling.OpUnsetExtraSpec:
		ch.Aggregate = ""
		err = need("flavor", f.Flavor, "key", f.Key)
		ch.Flavor, ch.Key = f.Flavor, f.Key
		if f.Kind == scheduling.OpSetExtraSpec {
			ch.Value = f.Value
		}
	case scheduling.OpCreateServerGroup:
		ch.Aggregate = ""
		err = need("group", f.Group, "project", f.Project, "policy", f.Policy)
		ch.ServerGroup, ch.Project, ch.Policy = f.Group, f.Project, f.Policy
	case scheduling.OpDeleteServerGroup:
		ch.Aggregate = ""
		err = need("group", f.Group)
		ch.ServerGroup = f.Group
	case scheduling.OpAddGroupMember, scheduling.OpRemoveGroupMember:
		ch.Aggregate = ""
		err = need("group", f.Group, "server", f.Server)
		ch.ServerGroup, ch.Server = f.Group, f.Server
	case scheduling.OpAddTrait, scheduling.OpRemoveTrait:
		ch.Aggregate = ""
		err = need("provider", f.Provider, "trait", f.Trait)
		ch.Provider, ch.Trait = f.Provider, f.Trait
	case scheduling.OpSetInventory:
		ch.Aggregate = ""
		err = need("provider", f.Provider, "class", f.Class, "total", f.Total)
		ch.Provider, ch.ResourceClass = f.Provider, f.Class
		if err == nil {
			total, perr := strconv.ParseInt(f.Total, 10, 64)
			if perr != nil || total < 1 {
				return ch, models.E(models.Invalid, "total", "the total is a whole number of at least 1, not %q", f.Total)
			}
			ch.Inventory = &models.Inventory{Total: total, AllocationRatio: 1}
		}
	case scheduling.OpDeleteInventory:
		ch.Aggregate = ""
		err = need("provider", f.Provider, "class", f.Class)
		ch.Provider, ch.ResourceClass = f.Provider, f.Class
	default:
		err = models.E(models.Invalid, "kind", "unknown change %q", f.Kind)
	}
	return ch, err
}

// settingChange turns "setting = value" into a settings override, read
// and checked as the settings table says.
func settingChange(name, value string) (*scheduling.SettingsOverride, error) {
	if name == "" {
		return nil, models.E(models.Invalid, "setting", "choose the setting to change")
	}
	row, ok := models.LookupSetting(name)
	if !ok {
		return nil, models.E(models.Invalid, "setting", "unknown setting %q", name)
	}
	v, err := row.Parse(value)
	if err != nil {
		return nil, models.E(models.Invalid, "value", "%s: %s", name, message(err))
	}
	o := &scheduling.SettingsOverride{}
	o.Set(name, v)
	return o, nil
}

// describe says what a change does, for a person.
func describe(c scheduling.Change) string { return scheduling.DescribeChange(c) }
