package console

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/forms"
	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/views"
	cv "corral/views/console"
)

// An aggregate's members: the picker that searches providers to add
// (GET /aggregates/{id}/picker) and the forms that add and remove them.

// pickerLimit caps the providers the picker lists for one search.
const pickerLimit = 25

// resolveProviders finds providers by name or uuid; unknown refs are
// returned in missing.
func (h *Handler) resolveProviders(c echo.Context, refs []string) (found []*models.Provider, missing []string, err error) {
	for _, r := range refs {
		p, err := h.store().GetProvider(c.Request().Context(), r)
		if err != nil {
			if models.KindOf(err) == models.NotFound {
				missing = append(missing, r)
				continue
			}
			return nil, nil, err
		}
		found = append(found, p)
	}
	return found, missing, nil
}

func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
}

func pageOf(s []string, offset, limit int) []string {
	if offset >= len(s) {
		return nil
	}
	end := len(s)
	if limit > 0 && offset+limit < end {
		end = offset + limit
	}
	return s[offset:end]
}

// AggregatePicker is the picker's search, for htmx (GET /aggregates/:id/picker).
func (h *Handler) AggregatePicker(c echo.Context) error {
	agg, err := h.loadAggregate(c)
	if err != nil {
		return err
	}
	pk := cv.PickerProps{AggUUID: agg.UUID, Generation: agg.Generation, Query: strings.TrimSpace(c.QueryParam("pq")), ReadOnly: !isAdmin(c)}
	if !handlers.IsHTMX(c) {
		return handlers.SeeOther(c, "/aggregates/"+agg.UUID+"?pq="+urlQueryEscape(pk.Query)+"#picker")
	}
	if pk.Query != "" {
		if err := h.fillPicker(c, agg, &pk); err != nil {
			return err
		}
	}
	return handlers.Render(c, http.StatusOK, cv.Picker(handlers.CSRFToken(c), pk))
}

// fillPicker lists the providers matching the picker's search. A matching
// host is followed by its children, so that a child can be picked from its
// tree without knowing its name.
func (h *Handler) fillPicker(c echo.Context, agg *models.Aggregate, pk *cv.PickerProps) error {
	ctx := c.Request().Context()
	provs, total, err := h.store().ListProviders(ctx, store.ProviderQuery{Search: pk.Query, Limit: pickerLimit})
	if err != nil {
		return err
	}
	res := newResolver(h, c)
	for i := range provs {
		res.cache[provs[i].UUID] = &provs[i]
	}
	listed := map[string]bool{}
	add := func(p *models.Provider) error {
		if listed[p.UUID] {
			return nil
		}
		listed[p.UUID] = true
		m, err := res.row(p)
		if err != nil {
			return err
		}
		m.Member = slices.Contains(agg.Members, p.UUID)
		pk.Results = append(pk.Results, m)
		return nil
	}
	for i := range provs {
		p := &provs[i]
		if err := add(p); err != nil {
			return err
		}
		if !p.IsHost() || len(pk.Results) >= 2*pickerLimit {
			continue
		}
		tree, _, err := h.store().ListProviders(ctx, store.ProviderQuery{InTree: p.UUID, Limit: pickerLimit})
		if err != nil {
			return err
		}
		for j := range tree {
			if tree[j].UUID != p.UUID {
				res.cache[tree[j].UUID] = &tree[j]
				if err := add(&tree[j]); err != nil {
					return err
				}
			}
		}
	}
	pk.More = total > len(provs)
	return nil
}

// MembersAdd adds the ticked and pasted providers in one step
// (POST /aggregates/:id/members), read by forms.MembersAdd.
func (h *Handler) MembersAdd(c echo.Context) error {
	agg, err := h.loadAggregate(c)
	if err != nil {
		return err
	}
	snap, err := h.snapshot(c)
	if err != nil {
		return err
	}
	params, _ := c.FormParams()
	// A refusal comes back to the picker (post/redirect/get) with the
	// ticked and pasted providers in its box and the message beside it.
	back := "/aggregates/" + agg.UUID
	refuse := func(msg string) error {
		return retryForm(c, back, "members", map[string]string{"": msg}, "#picker")
	}
	gen, gerr := formGeneration(c)
	if gerr != nil {
		return refuse(errMsg(gerr))
	}
	read := forms.MembersAdd(params, agg, snap)
	if read.Refused() {
		return refuse(read.FirstError())
	}
	if len(read.Changes) == 0 {
		return redirectFlash(c, handlers.FlashWarning, "Nothing added: "+strings.Join(read.Skipped, ", ")+" already in “"+agg.Name+"”.", back)
	}
	err = forms.CheckGeneration("aggregate", agg.Name, gen, agg.Generation)
	if err == nil {
		_, err = h.apply(c, read.Changes)
	}
	if err != nil {
		if !userError(err) {
			return err
		}
		return refuse(upperFirst(conflictMessage(err)))
	}
	names := providerNames(snap, read.Changes)
	msg := fmt.Sprintf("Added %s to “%s”: %s.", views.Plural(len(names), "provider", "providers"), agg.Name, listSome(names, 10))
	if len(read.Skipped) > 0 {
		msg += " Already members: " + listSome(read.Skipped, 10) + "."
	}
	return redirectFlash(c, handlers.FlashSuccess, msg, back)
}

// providerNames names the providers changes add or remove.
func providerNames(snap *scheduling.Snapshot, changes []scheduling.Change) []string {
	var out []string
	for _, ch := range changes {
		if p, ok := snap.Provider(ch.Provider); ok {
			out = append(out, p.Name)
		} else {
			out = append(out, ch.Provider)
		}
	}
	return out
}

// MembersRemove removes the ticked members (POST /aggregates/:id/members/remove),
// read by forms.MembersRemove.
func (h *Handler) MembersRemove(c echo.Context) error {
	agg, err := h.loadAggregate(c)
	if err != nil {
		return err
	}
	snap, err := h.snapshot(c)
	if err != nil {
		return err
	}
	params, _ := c.FormParams()
	back := "/aggregates/" + agg.UUID
	// A refusal comes back to the member list (post/redirect/get) with the
	// same members ticked and the message above them.
	refuse := func(msg string) error {
		return retryForm(c, back, "members-remove", map[string]string{"": msg}, "#members")
	}
	gen, gerr := formGeneration(c)
	if gerr != nil {
		return refuse(errMsg(gerr))
	}
	read := forms.MembersRemove(params, agg, snap)
	if read.Refused() {
		return refuse(read.FirstError())
	}
	if len(read.Changes) == 0 {
		return redirectFlash(c, handlers.FlashWarning, "Nothing removed: the ticked providers are no longer members.", back)
	}
	err = forms.CheckGeneration("aggregate", agg.Name, gen, agg.Generation)
	if err == nil {
		_, err = h.apply(c, read.Changes)
	}
	if err != nil {
		if !userError(err) {
			return err
		}
		return refuse(upperFirst(conflictMessage(err)))
	}
	names := providerNames(snap, read.Changes)
	return redirectFlash(c, handlers.FlashSuccess, fmt.Sprintf("Removed %s from “%s”: %s.",
		views.Plural(len(names), "provider", "providers"), agg.Name, listSome(names, 10)), back)
}
