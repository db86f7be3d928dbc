package console

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/forms"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/store"
	"corral/views"
	cv "corral/views/console"
)

// aggregateSorts are the columns the list sorts by (the store's names).
var aggregateSorts = map[string]bool{"name": true, "availability_zone": true, "created_at": true, "updated_at": true, "id": true}

// AggregateList shows one page of aggregates (GET /aggregates).
func (h *Handler) AggregateList(c echo.Context) error {
	ctx := c.Request().Context()
	search, sortKey, desc := queryList(c)
	if !aggregateSorts[sortKey] {
		sortKey, desc = "", false
	}
	offset, limit := handlers.Paging(c, handlers.DefaultPageSize)
	// Counted, not loaded: a page holding the zone aggregates of a big
	// cloud would otherwise read tens of thousands of memberships.
	aggs, total, err := h.store().ListAggregateSummaries(ctx, store.AggregateQuery{Search: search, Sort: sortKey, Desc: desc, Offset: offset, Limit: limit})
	if err != nil {
		return err
	}
	st, _, err := h.store().GetSettings(ctx)
	if err != nil {
		return err
	}
	dis, err := h.disagreements(ctx)
	if err != nil {
		return err
	}
	rows := make([]cv.AggregateRow, len(aggs))
	for i := range aggs {
		a := &aggs[i].Aggregate
		resv := reservationIDs(a.Metadata, st.RequiredMemberPrefix)
		rows[i] = cv.AggregateRow{
			UUID: a.UUID, Name: a.Name, AZ: deref(a.AvailabilityZone),
			Members: aggs[i].MemberCount, MetadataKeys: len(a.Metadata), Updated: a.UpdatedAt,
			Tenants: tagValues(tenantTags(a.Metadata)), FreePool: isFreePool(a, resv),
			Disagreements: dis[a.UUID],
		}
		for _, id := range resv {
			if id != models.FreePoolName {
				rows[i].Reservations = append(rows[i].Reservations, id)
			}
		}
	}
	list := cv.ListState{Path: "/aggregates", Search: search, Sort: sortKey, Desc: desc,
		Pager: views.Pager{Offset: offset, Limit: limit, Total: total, Path: "/aggregates", Query: c.QueryParams()}}
	props := cv.AggregateListProps{List: list, Rows: rows, CanEdit: isAdmin(c)}
	if handlers.IsHTMX(c) {
		return handlers.Render(c, http.StatusOK, cv.AggregateTable(props))
	}
	return handlers.Render(c, http.StatusOK, cv.AggregateList(layout.Page(c, "Aggregates", "aggregates"), props))
}

func isFreePool(a *models.Aggregate, resv []string) bool {
	return a.Name == models.FreePoolName || slices.Contains(resv, models.FreePoolName)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// AggregateNew shows the create form (GET /aggregates/new).
func (h *Handler) AggregateNew(c echo.Context) error {
	if again, kept := retrying(c, "aggregate-new"); again {
		f, _, err := h.readNewAggregate(c)
		if err != nil {
			return err
		}
		mergeErrors(f.Errors, kept)
		return h.renderNew(c, http.StatusOK, f)
	}
	return h.renderNew(c, http.StatusOK, cv.AggregateForm{Errors: map[string]string{}})
}

func (h *Handler) renderNew(c echo.Context, status int, f cv.AggregateForm) error {
	return handlers.Render(c, status, cv.AggregateNew(layout.Page(c, "New aggregate", "aggregates"), f))
}

// aggregateForm is the name and zone form as typed, with the reader's
// refusals and the acknowledgement it still needs.
func aggregateForm(c echo.Context, currentAZ string, read forms.Read) cv.AggregateForm {
	f := cv.AggregateForm{
		Name:      strings.TrimSpace(c.FormValue("name")),
		AZ:        strings.TrimSpace(c.FormValue("availability_zone")),
		CurrentAZ: currentAZ,
		ConfirmAZ: c.FormValue("confirm_az") != "",
		Hosts:     c.FormValue("hosts"),
		Errors:    map[string]string{},
	}
	maps.Copy(f.Errors, read.Confirm)
	maps.Copy(f.Errors, read.Errors)
	return f
}

// AggregateCreate creates an aggregate, with its zone and hosts, in one
// transaction (POST /aggregates).
func (h *Handler) AggregateCreate(c echo.Context) error {
	f, read, err := h.readNewAggregate(c)
	if err != nil {
		return err
	}
	// A refusal comes back to the form (post/redirect/get) with what was
	// typed; the page checks it again.
	if len(f.Errors) > 0 {
		return retryForm(c, "/aggregates/new", "aggregate-new", f.Errors, "")
	}
	changes := read.Changes
	id := models.NewUUID()
	changes[0].UUID = id
	if _, err := h.apply(c, changes); err != nil {
		if !userError(err) {
			return err
		}
		return retryForm(c, "/aggregates/new", "aggregate-new",
			placeError(err, map[string]string{"aggregate": "name", "name": "name", "members": "hosts", "provider": "hosts", "availability_zone": "availability_zone"}), "")
	}
	msg := fmt.Sprintf("Aggregate “%s” created", f.Name)
	if f.AZ != "" {
		msg += fmt.Sprintf(" in zone “%s”", f.AZ)
	}
	if n := len(changes) - 1; n > 0 {
		msg += " with " + views.Plural(n, "member", "members")
	}
	return redirectFlash(c, handlers.FlashSuccess, msg+".", "/aggregates/"+id)
}

// readNewAggregate reads and checks the new-aggregate form
// (forms.AggregateCreate).
func (h *Handler) readNewAggregate(c echo.Context) (cv.AggregateForm, forms.Read, error) {
	snap, err := h.snapshot(c)
	if err != nil {
		return cv.AggregateForm{}, forms.Read{}, err
	}
	params, _ := c.FormParams()
	read := forms.AggregateCreate(params, snap)
	return aggregateForm(c, "", read), read, nil
}

// placeError turns a store refusal into form messages, putting it next to
// the field it names (fields maps the store's field to the form's).
func placeError(err error, fields map[string]string) map[string]string {
	field := fields[forms.Field(err)]
	msg := errMsg(err)
	if isStale(err) {
		msg = "Not saved: " + msg + "."
		field = ""
	}
	return map[string]string{field: upperFirst(msg)}
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// loadAggregate finds the aggregate of the :id parameter.
func (h *Handler) loadAggregate(c echo.Context) (*models.Aggregate, error) {
	return h.store().GetAggregate(c.Request().Context(), c.Param("id"))
}

// detailOpts lets a handler re-show the page with what was submitted.
type detailOpts func(*cv.AggregateDetailProps)

// AggregateDetail shows an aggregate (GET /aggregates/:id).
func (h *Handler) AggregateDetail(c echo.Context) error {
	agg, err := h.loadAggregate(c)
	if err != nil {
		return err
	}
	if c.QueryParam("retry") == "metadata" {
		rows, probs, serr := h.submittedMetadata(c, agg)
		if serr != nil {
			return serr
		}
		gen, gerr := formGeneration(c)
		return h.renderDetail(c, http.StatusOK, agg, func(d *cv.AggregateDetailProps) {
			d.Metadata = metadataEditor(agg, nil, rows, false)
			d.Metadata.Problems = probs
			if gerr == nil {
				// The rows are what was typed on top of that generation.
				d.Metadata.Generation = gen
			}
		})
	}
	if again, kept := retrying(c, "aggregate"); again {
		snap, serr := h.snapshot(c)
		if serr != nil {
			return serr
		}
		params, _ := c.FormParams()
		f := aggregateForm(c, deref(agg.AvailabilityZone), forms.AggregateUpdate(params, agg, snap))
		f.UUID, f.Generation = agg.UUID, agg.Generation
		if gen, gerr := formGeneration(c); gerr == nil {
			f.Generation = gen
		}
		mergeErrors(f.Errors, kept)
		return h.renderDetail(c, http.StatusOK, agg, func(d *cv.AggregateDetailProps) { d.Form = f })
	}
	if again, kept := retrying(c, "members"); again {
		params, _ := c.FormParams()
		refs := forms.MemberRefs(params)
		msg := kept[""]
		if msg == "" {
			snap, serr := h.snapshot(c)
			if serr != nil {
				return serr
			}
			read := forms.MembersAdd(params, agg, snap)
			msg = read.FirstError()
		}
		// Ticked providers come back by name in the box.
		provs, _, perr := h.resolveProviders(c, refs)
		if perr != nil {
			return perr
		}
		shown := slices.Clone(refs)
		for i, r := range shown {
			for _, p := range provs {
				if p.UUID == r {
					shown[i] = p.Name
				}
			}
		}
		return h.renderDetail(c, http.StatusOK, agg, func(d *cv.AggregateDetailProps) {
			d.Picker.Bulk, d.Picker.Error = strings.Join(shown, "\n"), msg
		})
	}
	if again, kept := retrying(c, "members-remove"); again {
		params, _ := c.FormParams()
		ticked := params["provider"]
		return h.renderDetail(c, http.StatusOK, agg, func(d *cv.AggregateDetailProps) {
			for i := range d.Members {
				d.Members[i].Ticked = slices.Contains(ticked, d.Members[i].UUID)
			}
			d.MemberError = kept[""]
		})
	}
	retry, err := h.retryTag(c, agg)
	if err != nil {
		return err
	}
	if retry != nil {
		return h.renderDetail(c, http.StatusOK, agg, retry)
	}
	return h.renderDetail(c, http.StatusOK, agg)
}

func (h *Handler) renderDetail(c echo.Context, status int, agg *models.Aggregate, opts ...detailOpts) error {
	d, err := h.detailProps(c, agg)
	if err != nil {
		return err
	}
	for _, o := range opts {
		o(&d)
	}
	return handlers.Render(c, status, cv.AggregateDetail(layout.Page(c, agg.Name, "aggregates"), d))
}

func (h *Handler) detailProps(c echo.Context, agg *models.Aggregate) (cv.AggregateDetailProps, error) {
	ctx := c.Request().Context()
	st, _, err := h.store().GetSettings(ctx)
	if err != nil {
		return cv.AggregateDetailProps{}, err
	}
	edit := isAdmin(c)
	az := deref(agg.AvailabilityZone)
	d := cv.AggregateDetailProps{
		Agg:     agg,
		CanEdit: edit,
		Form: cv.AggregateForm{UUID: agg.UUID, Generation: agg.Generation, Name: agg.Name, AZ: az, CurrentAZ: az,
			Errors: map[string]string{}},
		Metadata:     metadataEditor(agg, editableMetadata(agg.Metadata, st), nil, !edit),
		Tenants:      tenantField(agg, !edit),
		Reservations: reservationField(agg, st, !edit),
	}
	d.Metadata.Problems = editorProblems(agg.Metadata, st)
	dis, err := h.disagreements(ctx)
	if err != nil {
		return d, err
	}
	d.Disagreements = dis[agg.UUID]

	// Members, one page at a time: a zone aggregate may hold thousands.
	// Up to hostScanLimit members are all looked up anyway (to find the
	// hosts that block deletion), so those pages are in name order; past
	// it the pages follow the stored (uuid) order.
	offset, limit := handlers.Paging(c, handlers.DefaultPageSize)
	members := agg.Members
	d.MembersPager = views.Pager{Offset: offset, Limit: limit, Total: len(members), Path: "/aggregates/" + agg.UUID, Query: c.QueryParams()}
	res := newResolver(h, c)
	hosts, complete, err := res.hostNames(members)
	if err != nil {
		return d, err
	}
	if complete {
		all, err := res.rows(members)
		if err != nil {
			return d, err
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].Name < all[j].Name })
		if offset < len(all) {
			d.Members = all[offset:min(len(all), offset+limit)]
		}
	} else {
		rows, err := res.rows(pageOf(members, offset, limit))
		if err != nil {
			return d, err
		}
		d.Members = rows
	}
	for i := range d.Members {
		switch u := d.Members[i].UUID; {
		case slices.Contains(agg.NotInPlacement, u):
			d.Members[i].Side = "nova"
		case slices.Contains(agg.NotInNova, u):
			d.Members[i].Side = "placement"
		}
	}
	d.Hosts = len(hosts)
	if !complete {
		d.Hosts = -1
	}
	if len(hosts) > 0 {
		names := listSome(hosts, 5)
		if !complete {
			names = strings.Join(hosts[:min(len(hosts), 5)], ", ") + " and the other hosts"
		}
		d.DeleteReason = fmt.Sprintf("Delete is not possible while hosts are members (as in Nova): remove %s first.", names)
	}
	d.Picker = cv.PickerProps{AggUUID: agg.UUID, Generation: agg.Generation, Query: strings.TrimSpace(c.QueryParam("pq")), ReadOnly: !edit}
	if d.Picker.Query != "" {
		if err := h.fillPicker(c, agg, &d.Picker); err != nil {
			return d, err
		}
	}
	return d, nil
}

// AggregateUpdate saves name and zone (POST /aggregates/:id), read by
// forms.AggregateUpdate.
func (h *Handler) AggregateUpdate(c echo.Context) error {
	agg, err := h.loadAggregate(c)
	if err != nil {
		return err
	}
	snap, err := h.snapshot(c)
	if err != nil {
		return err
	}
	params, _ := c.FormParams()
	read := forms.AggregateUpdate(params, agg, snap)
	cur := deref(agg.AvailabilityZone)
	f := aggregateForm(c, cur, read)
	gen, gerr := formGeneration(c)
	if gerr != nil {
		f.Errors[""] = errMsg(gerr)
	}
	if len(f.Errors) > 0 {
		return retryForm(c, "/aggregates/"+agg.UUID, "aggregate", f.Errors, "")
	}
	if len(read.Changes) == 0 {
		return redirectFlash(c, handlers.FlashSuccess, "Nothing to save: name and zone are unchanged.", "/aggregates/"+agg.UUID)
	}
	// Checked here for the common case; the changes carry the generation
	// too, so that the write refuses a save that went stale since.
	err = forms.CheckGeneration("aggregate", agg.Name, gen, agg.Generation)
	if err == nil {
		_, err = h.apply(c, read.Changes)
	}
	if err != nil {
		if !userError(err) {
			return err
		}
		// The form comes back with the generation the edit was based on
		// (it rides in the URL): saving again without reloading must not
		// overwrite another admin's change.
		return retryForm(c, "/aggregates/"+agg.UUID, "aggregate",
			placeError(err, map[string]string{"value": "name", "name": "name", "availability_zone": "availability_zone"}), "")
	}
	var changes []string
	if f.Name != agg.Name {
		changes = append(changes, fmt.Sprintf("renamed to “%s”", f.Name))
	}
	switch z := f.AZ; {
	case z == cur:
	case z == "":
		changes = append(changes, fmt.Sprintf("zone “%s” cleared", cur))
	default:
		changes = append(changes, fmt.Sprintf("zone set to “%s”", z))
	}
	return redirectFlash(c, handlers.FlashSuccess, fmt.Sprintf("Aggregate “%s” saved: %s.", agg.Name, strings.Join(changes, ", ")), "/aggregates/"+agg.UUID)
}

// AggregateConfirmDelete asks before deleting (GET /aggregates/:id/delete).
// While hosts remain it says why instead, as the delete would be refused.
func (h *Handler) AggregateConfirmDelete(c echo.Context) error {
	agg, err := h.loadAggregate(c)
	if err != nil {
		return err
	}
	hosts, _, err := newResolver(h, c).hostNames(agg.Members)
	if err != nil {
		return err
	}
	if len(hosts) > 0 {
		return redirectFlash(c, handlers.FlashError, fmt.Sprintf("“%s” cannot be deleted while hosts are members: remove %s first.", agg.Name, listSome(hosts, 5)), "/aggregates/"+agg.UUID)
	}
	return handlers.Render(c, http.StatusOK, views.ConfirmPage(layout.Page(c, "Delete aggregate", "aggregates"), views.Confirm{
		Title:   "Delete aggregate “" + agg.Name + "”?",
		Message: fmt.Sprintf("The aggregate, its %s and its %s go. Flavors and requests that name it stop matching it.", views.Plural(len(agg.Metadata), "metadata key", "metadata keys"), views.Plural(len(agg.Members), "remaining membership", "remaining memberships")),
		Action:  "/aggregates/" + agg.UUID + "/delete",
		Cancel:  "/aggregates/" + agg.UUID,
		Button:  "Delete aggregate",
	}))
}

// AggregateDelete deletes (POST /aggregates/:id/delete), read by
// forms.AggregateDelete: refused while hosts are members, as in Nova.
func (h *Handler) AggregateDelete(c echo.Context) error {
	agg, err := h.loadAggregate(c)
	if err != nil {
		return err
	}
	snap, err := h.snapshot(c)
	if err != nil {
		return err
	}
	back := "/aggregates/" + agg.UUID
	read := forms.AggregateDelete(agg, snap)
	if read.Refused() {
		return redirectFlash(c, handlers.FlashError, "Not deleted: "+read.FirstError()+".", back)
	}
	if _, err := h.apply(c, read.Changes); err != nil {
		if !userError(err) {
			return err
		}
		return redirectFlash(c, handlers.FlashError, "Not deleted: "+errMsg(err)+".", back)
	}
	return redirectFlash(c, handlers.FlashSuccess, fmt.Sprintf("Aggregate “%s” deleted.", agg.Name), "/aggregates")
}
