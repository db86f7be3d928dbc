package console

import (
	"fmt"
	"maps"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/forms"
	"corral/models"
	"corral/models/scheduling"
	cv "corral/views/console"
)

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

func tenantField(agg *models.Aggregate, readOnly bool) cv.TagProps {
	return cv.TagProps{
		AggUUID: agg.UUID, Generation: agg.Generation, Kind: "tenants",
		Tags: tenantTags(agg.Metadata), Warnings: tenantWarnings(agg.Metadata), ReadOnly: readOnly,
	}
}

func reservationField(agg *models.Aggregate, st models.Settings, readOnly bool) cv.TagProps {
	t := cv.TagProps{AggUUID: agg.UUID, Generation: agg.Generation, Kind: "reservations", Prefix: st.RequiredMemberPrefix, ReadOnly: readOnly}
	if st.RequiredMemberPrefix == "" {
		t.Disabled = "Reservation tags are off: set a required-member prefix in Settings to use them."
		return t
	}
	for _, id := range reservationIDs(agg.Metadata, st.RequiredMemberPrefix) {
		tag := cv.Tag{Value: id, Key: st.RequiredMemberPrefix + id}
		if id == models.FreePoolName || agg.Name == models.FreePoolName {
			tag.Note = "the free pool"
		}
		t.Tags = append(t.Tags, tag)
	}
	if st.DefaultForbiddenMemberPrefix != "" && st.DefaultForbiddenMemberPrefix != st.RequiredMemberPrefix {
		t.Warnings = append(t.Warnings, fmt.Sprintf("The default-forbidden prefix (%s) differs from the required prefix (%s): these tags make the aggregate required by matching flavors but do not keep other flavors away.",
			st.DefaultForbiddenMemberPrefix, st.RequiredMemberPrefix))
	}
	return t
}

// tagChange saves a tag form of the aggregate page (forms.Tenants,
// forms.Reservations) and reports the outcome; on a refusal the aggregate
// page comes back with the message next to the tag field.
func (h *Handler) tagChange(c echo.Context, kind string, remove bool) error {
	agg, err := h.loadAggregate(c)
	if err != nil {
		return err
	}
	snap, err := h.snapshot(c)
	if err != nil {
		return err
	}
	params, _ := c.FormParams()
	// The add forms name their field after what it holds; the remove
	// buttons send the tag as "value".
	field := "project"
	if kind == "reservations" {
		field = "reservation"
	}
	value := strings.TrimSpace(params.Get(field))
	if value == "" {
		value = strings.TrimSpace(params.Get("value"))
	}
	// A refused change goes back to the aggregate's page (post/redirect/
	// get). An add form's value rides in the URL and that page checks it
	// again, so the error shows next to the field; what a second look
	// cannot reproduce (a concurrent edit) comes as a flash.
	adding := params.Has(field)
	fail := func(msg string, again bool) error {
		back := "/aggregates/" + agg.UUID
		if adding && again {
			back += "?" + url.Values{"retry": {kind}, field: {value}}.Encode()
		} else {
			handlers.AddFlash(c, handlers.FlashError, msg)
		}
		return handlers.SeeOther(c, back+"#tags-"+kind)
	}
	gen, gerr := formGeneration(c)
	if gerr != nil {
		return fail(errMsg(gerr), false)
	}
	read := readTags(params, agg, snap, kind, remove)
	if read.Refused() {
		return fail(read.FirstError(), true)
	}
	err = forms.CheckGeneration("aggregate", agg.Name, gen, agg.Generation)
	if err == nil {
		_, err = h.apply(c, read.Changes)
	}
	if err != nil {
		if !userError(err) {
			return err
		}
		return fail(upperFirst(conflictMessage(err)), false)
	}
	return redirectFlash(c, handlers.FlashSuccess, tagMessage(agg, snap.World().Settings, kind, remove, params.Get("split") != "", value), "/aggregates/"+agg.UUID+"#tags-"+kind)
}

func readTags(params url.Values, agg *models.Aggregate, snap *scheduling.Snapshot, kind string, remove bool) forms.Read {
	if kind == "reservations" {
		return forms.Reservations(params, agg, snap, remove)
	}
	return forms.Tenants(params, agg, snap, remove)
}

// tagMessage says what a saved tag form did.
func tagMessage(agg *models.Aggregate, st models.Settings, kind string, remove, split bool, value string) string {
	switch {
	case kind == "reservations" && remove:
		return fmt.Sprintf("Reservation %s removed from “%s”.", value, agg.Name)
	case kind == "reservations":
		return fmt.Sprintf("Reservation %s added to “%s” (key %s).", value, agg.Name, st.RequiredMemberPrefix+value)
	case split:
		return fmt.Sprintf("Tenants of “%s” rewritten as one key per project.", agg.Name)
	case remove:
		next, _ := scheduling.RemoveTenantTag(maps.Clone(agg.Metadata), value)
		msg := fmt.Sprintf("Project %s removed from “%s”.", value, agg.Name)
		if len(scheduling.TenantTags(next)) == 0 {
			msg += " The aggregate no longer restricts tenants."
		}
		return msg
	}
	next := scheduling.AddTenantTag(maps.Clone(agg.Metadata), value)
	return fmt.Sprintf("Project %s added to “%s” (key %s).", value, agg.Name, tenantKeyOf(next, value))
}

// retryTag is the aggregate page after a refused tag (retry=tenants or
// retry=reservations in the URL with the typed value): the value back in
// its field, checked again, with the error next to it.
func (h *Handler) retryTag(c echo.Context, agg *models.Aggregate) (detailOpts, error) {
	kind := c.QueryParam("retry")
	field := "project"
	switch kind {
	case "tenants":
	case "reservations":
		field = "reservation"
	default:
		return nil, nil
	}
	value := strings.TrimSpace(c.QueryParam(field))
	snap, err := h.snapshot(c)
	if err != nil {
		return nil, err
	}
	read := readTags(url.Values{field: {value}}, agg, snap, kind, false)
	msg := read.FirstError()
	return func(d *cv.AggregateDetailProps) {
		f := &d.Tenants
		if kind == "reservations" {
			f = &d.Reservations
		}
		f.Error, f.Value = msg, value
	}, nil
}

// tenantKeyOf names the key that holds project p alone, after a write.
func tenantKeyOf(md map[string]string, p string) string {
	for _, k := range tenantKeys(md) {
		if md[k] == p {
			return k
		}
	}
	return scheduling.TenantKeyPrefix
}

// TenantAdd adds a project to an aggregate's tenants, or splits comma lists
// into one key per project (POST /aggregates/:id/tenants). Every write goes
// through scheduling.SetTenantTags: one project per key.
func (h *Handler) TenantAdd(c echo.Context) error {
	return h.tagChange(c, "tenants", false)
}

// TenantRemove removes a project (POST /aggregates/:id/tenants/remove).
func (h *Handler) TenantRemove(c echo.Context) error {
	return h.tagChange(c, "tenants", true)
}

// ReservationAdd tags the aggregate with a reservation id
// (POST /aggregates/:id/reservations).
func (h *Handler) ReservationAdd(c echo.Context) error {
	return h.tagChange(c, "reservations", false)
}

// ReservationRemove removes a reservation tag
// (POST /aggregates/:id/reservations/remove).
func (h *Handler) ReservationRemove(c echo.Context) error {
	return h.tagChange(c, "reservations", true)
}
