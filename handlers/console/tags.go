package console

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
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

// tagChange applies one change to an aggregate's metadata and reports the
// outcome; on a refusal the aggregate page comes back with the message
// next to the tag field.
func (h *Handler) tagChange(c echo.Context, kind string, change func(agg *models.Aggregate, st models.Settings, md map[string]string, value string) (map[string]string, string, error)) error {
	ctx := c.Request().Context()
	agg, err := h.loadAggregate(c)
	if err != nil {
		return err
	}
	st, _, err := h.store().GetSettings(ctx)
	if err != nil {
		return err
	}
	// The add forms name their field after what it holds; the remove
	// buttons send the tag as "value".
	field := "project"
	if kind == "reservations" {
		field = "reservation"
	}
	value := strings.TrimSpace(c.FormValue(field))
	if value == "" {
		value = strings.TrimSpace(c.FormValue("value"))
	}
	// A refused change goes back to the aggregate's page (post/redirect/
	// get). An add form's value rides in the URL and that page checks it
	// again, so the error shows next to the field; what a second look
	// cannot reproduce (a concurrent edit) comes as a flash.
	_ = c.FormValue(field) // parses the form
	adding := c.Request().Form.Has(field)
	fail := func(_ int, msg string, again bool) error {
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
		return fail(http.StatusBadRequest, errMsg(gerr), false)
	}
	md := maps.Clone(agg.Metadata)
	if md == nil {
		md = map[string]string{}
	}
	next, msg, err := change(agg, st, md, value)
	if err != nil {
		return fail(http.StatusBadRequest, err.Error(), true)
	}
	_, err = h.store().UpdateAggregate(ctx, handlers.Actor(c), agg.UUID, gen, func(a *models.Aggregate) error {
		a.Metadata = next
		return nil
	})
	if err != nil {
		if !userError(err) {
			return err
		}
		return fail(handlers.StatusOf(err), upperFirst(conflictMessage(err)), false)
	}
	return redirectFlash(c, handlers.FlashSuccess, msg, "/aggregates/"+agg.UUID+"#tags-"+kind)
}

// tagChangeFunc computes an aggregate's metadata after a tag change, with
// the message to show, or refuses the value.
type tagChangeFunc func(agg *models.Aggregate, st models.Settings, md map[string]string, value string) (map[string]string, string, error)

// retryTag is the aggregate page after a refused tag (retry=tenants or
// retry=reservations in the URL with the typed value): the value back in
// its field, checked again, with the error next to it.
func (h *Handler) retryTag(c echo.Context, agg *models.Aggregate) (detailOpts, error) {
	kind := c.QueryParam("retry")
	var change tagChangeFunc
	field := "project"
	switch kind {
	case "tenants":
		change = tenantAdd(c)
	case "reservations":
		change, field = reservationAdd, "reservation"
	default:
		return nil, nil
	}
	value := strings.TrimSpace(c.QueryParam(field))
	st, _, err := h.store().GetSettings(c.Request().Context())
	if err != nil {
		return nil, err
	}
	msg := ""
	if _, _, err := change(agg, st, maps.Clone(agg.Metadata), value); err != nil {
		msg = err.Error()
	}
	return func(d *cv.AggregateDetailProps) {
		f := &d.Tenants
		if kind == "reservations" {
			f = &d.Reservations
		}
		f.Error, f.Value = msg, value
	}, nil
}

type userMsg string

func (m userMsg) Error() string { return string(m) }

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
	return h.tagChange(c, "tenants", tenantAdd(c))
}

// tenantAdd is the tenant add form's change.
func tenantAdd(c echo.Context) tagChangeFunc {
	return func(agg *models.Aggregate, _ models.Settings, md map[string]string, p string) (map[string]string, string, error) {
		cur := scheduling.TenantTags(md)
		if c.FormValue("split") != "" {
			if len(tenantWarnings(md)) == 0 {
				return nil, "", userMsg("There is no comma list to split.")
			}
			return scheduling.SetTenantTags(md, cur), fmt.Sprintf("Tenants of “%s” rewritten as one key per project.", agg.Name), nil
		}
		if err := validProjectID(p); err != nil {
			return nil, "", err
		}
		if slices.Contains(cur, p) {
			return nil, "", userMsg(fmt.Sprintf("Project %s is already a tenant of this aggregate.", p))
		}
		next := scheduling.AddTenantTag(md, p)
		return next, fmt.Sprintf("Project %s added to “%s” (key %s).", p, agg.Name, tenantKeyOf(next, p)), nil
	}
}

// TenantRemove removes a project (POST /aggregates/:id/tenants/remove).
func (h *Handler) TenantRemove(c echo.Context) error {
	return h.tagChange(c, "tenants", func(agg *models.Aggregate, _ models.Settings, md map[string]string, p string) (map[string]string, string, error) {
		next, ok := scheduling.RemoveTenantTag(md, p)
		if !ok {
			return nil, "", userMsg(fmt.Sprintf("Project %s is not a tenant of this aggregate.", p))
		}
		msg := fmt.Sprintf("Project %s removed from “%s”.", p, agg.Name)
		if len(scheduling.TenantTags(next)) == 0 {
			msg += " The aggregate no longer restricts tenants."
		}
		return next, msg, nil
	})
}

// ReservationAdd tags the aggregate with a reservation id
// (POST /aggregates/:id/reservations).
func (h *Handler) ReservationAdd(c echo.Context) error {
	return h.tagChange(c, "reservations", reservationAdd)
}

// reservationAdd is the reservation add form's change.
func reservationAdd(agg *models.Aggregate, st models.Settings, md map[string]string, id string) (map[string]string, string, error) {
	prefix := st.RequiredMemberPrefix
	if prefix == "" {
		return nil, "", userMsg("Reservation tags are off: set a required-member prefix in Settings first.")
	}
	if err := validReservationID(id); err != nil {
		return nil, "", err
	}
	cur := scheduling.ReservationTags(md, prefix)
	if slices.Contains(cur, id) {
		return nil, "", userMsg(fmt.Sprintf("Reservation %s is already on this aggregate.", id))
	}
	return scheduling.AddReservationTag(md, prefix, id),
		fmt.Sprintf("Reservation %s added to “%s” (key %s).", id, agg.Name, prefix+id), nil
}

// ReservationRemove removes a reservation tag
// (POST /aggregates/:id/reservations/remove).
func (h *Handler) ReservationRemove(c echo.Context) error {
	return h.tagChange(c, "reservations", func(agg *models.Aggregate, st models.Settings, md map[string]string, id string) (map[string]string, string, error) {
		next, ok := scheduling.RemoveReservationTag(md, st.RequiredMemberPrefix, id)
		if !ok {
			return nil, "", userMsg(fmt.Sprintf("Reservation %s is not on this aggregate.", id))
		}
		return next,
			fmt.Sprintf("Reservation %s removed from “%s”.", id, agg.Name), nil
	})
}
