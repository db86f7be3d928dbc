package query

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
	"corral/models/scheduling"
	"corral/views"
)

// Inline impact: every console form that changes where servers may land
// (an aggregate's metadata, tenant and reservation tags, members and zone;
// a flavor's extra specs; the settings) carries views.InlineImpact, which
// posts the form here as it is typed in. The form becomes the draft
// changes it would make, and the answer is what those do: hosts gained and
// lost per project × flavor, and the running servers and server groups
// they would strand. "Stage as draft" posts the same form to
// /drafts/stage, which saves those changes as a new draft instead.

// Form kinds the inline impact reads (the impact_form field).
const (
	inlineMetadata      = "metadata"
	inlineTenants       = "tenants"
	inlineReservations  = "reservations"
	inlineMembers       = "members"
	inlineMembersRemove = "members-remove"
	inlineZone          = "zone"
	inlineFlavor        = "flavor"
	inlineSettings      = "settings"
)

// inlineRows and inlineNames cap what the fragment lists.
const (
	inlineRows  = 12
	inlineNames = 5
)

func registerInline(console *echo.Group, h *Handler, admin echo.MiddlewareFunc) {
	console.POST("/impact/inline", h.InlineImpact)
	console.POST("/drafts/stage", h.StageDraft, admin)
}

// inlineChanges turns a submitted console form into the draft changes it
// would make to live data, and a name for them.
func inlineChanges(live *state, form url.Values) (string, []scheduling.Change, error) {
	target := strings.TrimSpace(form.Get("impact_target"))
	kind := form.Get("impact_form")
	var agg *models.Aggregate
	if kind != inlineSettings && kind != inlineFlavor {
		a, ok := live.snap.Aggregate(target)
		if !ok {
			return "", nil, models.E(models.Invalid, "impact_target", "no aggregate %q", target)
		}
		agg = a
	}
	var out []scheduling.Change
	switch kind {
	case inlineMetadata:
		st := live.world.Settings
		want := map[string]string{}
		keys, vals := form["key"], form["value"]
		for i, k := range keys {
			k = strings.TrimSpace(k)
			if k == "" || typedKey(k, st) {
				continue
			}
			v := ""
			if i < len(vals) {
				v = vals[i]
			}
			want[k] = v
		}
		for _, k := range slices.Sorted(maps.Keys(agg.Metadata)) {
			if _, ok := want[k]; !ok && !typedKey(k, st) {
				out = append(out, scheduling.Change{Op: scheduling.OpUnsetMetadata, Aggregate: agg.Name, Key: k})
			}
		}
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if v, ok := agg.Metadata[k]; !ok || v != want[k] {
				out = append(out, scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: agg.Name, Key: k, Value: want[k]})
			}
		}
		return "Metadata of " + agg.Name, out, nil
	case inlineTenants:
		for _, p := range strings.FieldsFunc(form.Get("project"), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
			out = append(out, scheduling.Change{Op: scheduling.OpAddTenant, Aggregate: agg.Name, Project: p})
		}
		return "Tenants of " + agg.Name, out, nil
	case inlineReservations:
		if r := strings.TrimSpace(form.Get("reservation")); r != "" {
			out = append(out, scheduling.Change{Op: scheduling.OpAddReservation, Aggregate: agg.Name, Reservation: r})
		}
		return "Reservations of " + agg.Name, out, nil
	case inlineMembers, inlineMembersRemove:
		refs := slices.Clone(form["provider"])
		refs = append(refs, strings.FieldsFunc(form.Get("bulk"), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })...)
		op := scheduling.OpAddMember
		if kind == inlineMembersRemove {
			op = scheduling.OpRemoveMember
		}
		seen := map[string]bool{}
		for _, ref := range refs {
			p, ok := live.snap.Provider(strings.TrimSpace(ref))
			if !ok || seen[p.UUID] {
				continue
			}
			seen[p.UUID] = true
			member := slices.Contains(agg.Members, p.UUID)
			if member == (op == scheduling.OpRemoveMember) {
				out = append(out, scheduling.Change{Op: op, Aggregate: agg.Name, Provider: p.Name})
			}
		}
		return "Members of " + agg.Name, out, nil
	case inlineZone:
		z := strings.TrimSpace(form.Get("availability_zone"))
		cur := ""
		if agg.AvailabilityZone != nil {
			cur = *agg.AvailabilityZone
		}
		if z != cur {
			out = append(out, scheduling.Change{Op: scheduling.OpSetZone, Aggregate: agg.Name, AvailabilityZone: &z})
		}
		return "Zone of " + agg.Name, out, nil
	case inlineFlavor:
		f, ok := live.snap.Flavor(target)
		if !ok {
			return "", nil, models.E(models.Invalid, "impact_target", "no flavor %q", target)
		}
		want := map[string]string{}
		keys, vals := form["key"], form["value"]
		for i, k := range keys {
			if k = strings.TrimSpace(k); k != "" && i < len(vals) {
				want[k] = vals[i]
			}
		}
		for _, k := range slices.Sorted(maps.Keys(f.ExtraSpecs)) {
			if _, ok := want[k]; !ok {
				out = append(out, scheduling.Change{Op: scheduling.OpUnsetExtraSpec, Flavor: f.Name, Key: k})
			}
		}
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if v, ok := f.ExtraSpecs[k]; !ok || v != want[k] {
				out = append(out, scheduling.Change{Op: scheduling.OpSetExtraSpec, Flavor: f.Name, Key: k, Value: want[k]})
			}
		}
		return "Extra specs of " + f.Name, out, nil
	case inlineSettings:
		st := live.world.Settings
		next := st
		next.LimitTenantsToPlacementAggregate = form.Get("limit_tenants_to_placement_aggregate") != ""
		next.PlacementAggregateRequiredForTenants = form.Get("placement_aggregate_required_for_tenants") != ""
		next.EnableIsolatedAggregateFiltering = form.Get("enable_isolated_aggregate_filtering") != ""
		next.QueryPlacementForAvailabilityZone = form.Get("query_placement_for_availability_zone") != ""
		next.RequiredMemberPrefix = strings.TrimSpace(form.Get("required_member_prefix"))
		next.DefaultForbiddenMemberPrefix = strings.TrimSpace(form.Get("default_forbidden_member_prefix"))
		if _, ok := form["filter"]; ok || form.Has("generation") {
			next.EnabledFilters = enabledFilters(form)
		}
		for name, dst := range map[string]*float64{"soft_affinity_weight_multiplier": &next.SoftAffinityWeightMultiplier,
			"soft_anti_affinity_weight_multiplier": &next.SoftAntiAffinityWeightMultiplier} {
			if v, err := strconv.ParseFloat(strings.TrimSpace(form.Get(name)), 64); err == nil && v >= 0 {
				*dst = v
			}
		}
		out = append(out, scheduling.ChangesBetween(&models.World{Settings: st}, &models.World{Settings: next})...)
		return "Settings", out, nil
	}
	return "", nil, models.E(models.Invalid, "impact_form", "unknown form %q", kind)
}

// enabledFilters reads the settings form's ticked filters in the order
// typed next to them, as the settings page does.
func enabledFilters(form url.Values) []string {
	on := map[string]bool{}
	for _, f := range form["filter"] {
		on[f] = true
	}
	type pos struct {
		name     string
		order, i int
	}
	var rows []pos
	for i, name := range scheduling.HostFilterNames() {
		if !on[name] {
			continue
		}
		n := 1000 + i
		fmt.Sscan(strings.TrimSpace(form.Get("order_"+name)), &n)
		rows = append(rows, pos{name, n, i})
	}
	slices.SortStableFunc(rows, func(a, b pos) int { return a.order - b.order })
	out := []string{}
	for _, r := range rows {
		out = append(out, r.name)
	}
	return out
}

// typedKey reports whether the aggregate metadata key has a field of its
// own (zone, tenant and reservation tags), which the raw editor leaves be.
func typedKey(k string, st models.Settings) bool {
	prefix := st.RequiredMemberPrefix
	if prefix == "" {
		prefix = models.DefaultSettings().RequiredMemberPrefix
	}
	return k == "availability_zone" || scheduling.IsTenantKey(k) || strings.HasPrefix(k, prefix)
}

// inlineImpactOn reads a console form against live and says what it does.
func inlineImpactOn(live *state, form url.Values) (*views.InlineImpactProps, error) {
	_, changes, err := inlineChanges(live, form)
	if err != nil {
		return &views.InlineImpactProps{Error: message(err)}, nil
	}
	return inlineImpact(live, changes)
}

// inlineImpact computes what changes do: the matrix over the first
// projects and flavors (and any other project), and the strandings.
func inlineImpact(live *state, changes []scheduling.Change) (*views.InlineImpactProps, error) {
	props := &views.InlineImpactProps{Changes: len(changes)}
	for _, c := range changes {
		props.Described = append(props.Described, scheduling.DescribeChange(c))
	}
	if len(changes) == 0 {
		return props, nil
	}
	w, err := scheduling.ApplyChanges(live.world, changes)
	if err != nil {
		props.Error = message(err)
		return props, nil
	}
	ds, err := draftSnapshot(live, w, changes)
	if err != nil {
		props.Error = message(err)
		return props, nil
	}
	projects := slices.Clone(capList(live.options().Projects, defaultMatrixProjects))
	flavors := slices.Clone(capList(live.options().Flavors, defaultMatrixFlavors))
	// The flavors and projects the changes name are in the matrix even
	// beyond the first ones: a flavor's own edit must show.
	for _, c := range changes {
		if c.Flavor != "" && !slices.Contains(flavors, c.Flavor) {
			flavors = append(flavors, c.Flavor)
		}
		if c.Project != "" && !slices.Contains(projects, c.Project) {
			projects = append(projects, c.Project)
		}
	}
	projects = append(projects, scheduling.AnyOtherProject)
	m, err := scheduling.ComputeImpact(live.snap, ds, projects, flavors)
	if err != nil {
		return nil, err
	}
	st, err := scheduling.Strandings(live.snap, ds)
	if err != nil {
		return nil, err
	}
	props.Pairs, props.Dropped, props.Stranded = len(projects)*len(flavors), m.Dropped, m.Stranded
	for i := range m.Cells {
		for _, c := range m.Cells[i] {
			if c.LostCount == 0 && c.GainedCount == 0 {
				continue
			}
			props.Gained += min(c.GainedCount, 1)
			if len(props.Rows) < inlineRows {
				props.Rows = append(props.Rows, views.InlineImpactRow{Project: c.Project, Flavor: c.Flavor,
					Live: c.Live, Draft: c.Draft, Lost: capList(c.Lost, inlineNames), Gained: capList(c.Gained, inlineNames),
					LostCount: c.LostCount, GainedCount: c.GainedCount})
			} else {
				props.More++
			}
		}
	}
	for i, s := range st.Servers {
		if i == inlineRows {
			break
		}
		props.Servers = append(props.Servers, views.StrandedServer{Name: s.Name, Project: s.Project, Host: s.Host, Reason: s.Reason})
	}
	props.ServersStranded = len(st.Servers)
	for _, g := range st.Groups {
		props.Groups = append(props.Groups, views.BrokenGroup{Name: g.Name, Project: g.Project, Policy: g.Policy, Reason: g.Reason})
	}
	return props, nil
}

// InlineImpact is POST /impact/inline: the fragment that shows, under a
// console form, what saving it would do. Bad input is a message in the
// fragment (htmx swaps only 2xx answers).
func (h *Handler) InlineImpact(c echo.Context) error {
	ctx := c.Request().Context()
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	live, _, err := h.liveState(ctx)
	if err != nil {
		return err
	}
	props, err := inlineImpactOn(live, form)
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.InlineImpactResult(*props))
}

// StageDraft is POST /drafts/stage: the console form's changes saved as a
// new draft instead of applied, to preview, review and apply later.
func (h *Handler) StageDraft(c echo.Context) error {
	ctx := c.Request().Context()
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	back := c.Request().Referer()
	if u, perr := url.Parse(back); perr != nil || u.Path == "" || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		back = "/drafts"
	} else {
		back = u.Path
	}
	live, _, err := h.liveState(ctx)
	if err != nil {
		return err
	}
	title, changes, err := inlineChanges(live, form)
	if err == nil && len(changes) == 0 {
		err = models.E(models.Invalid, "", "the form changes nothing yet")
	}
	if err == nil {
		_, err = scheduling.ApplyChanges(live.world, changes)
	}
	if err != nil {
		if models.KindOf(err) == models.Internal {
			return err
		}
		handlers.AddFlash(c, views.FlashError, "Nothing was staged: "+message(err))
		return handlers.SeeOther(c, back)
	}
	d, err := h.env.Store.CreateDraft(ctx, handlers.Actor(c), title+" (staged)")
	if err == nil {
		d, err = h.env.Store.SetDraftChanges(ctx, handlers.Actor(c), d.ID, d.Version, changes)
	}
	if err != nil {
		if models.KindOf(err) == models.Internal {
			return err
		}
		handlers.AddFlash(c, views.FlashError, "Nothing was staged: "+message(err))
		return handlers.SeeOther(c, back)
	}
	handlers.AddFlash(c, views.FlashSuccess, fmt.Sprintf("Staged as draft %q; nothing live changed. Preview it, then apply it.", d.Name))
	return handlers.SeeOther(c, "/drafts/"+d.ID)
}

// draftSnapshot indexes w, the live world with changes applied: for
// changes to aggregates alone it builds on the live snapshot
// (Snapshot.WithAggregates), a fraction of a whole new snapshot.
func draftSnapshot(live *state, w *models.World, changes []scheduling.Change) (*scheduling.Snapshot, error) {
	only, refs := scheduling.OnlyAggregates(changes)
	if !only {
		return scheduling.NewSnapshot(w)
	}
	changed := map[string]bool{}
	for _, ref := range refs {
		if a, ok := live.snap.Aggregate(ref); ok {
			changed[a.UUID] = true
		}
		for i := range w.Aggregates {
			if a := &w.Aggregates[i]; a.UUID == ref || a.Name == ref {
				changed[a.UUID] = true
			}
		}
	}
	return live.snap.WithAggregates(w, changed)
}
