package console

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/forms"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/views"
	cv "corral/views/console"
)

// aggregateSorts are the columns the list sorts by (the store's names).
var aggregateSorts = map[string]bool{"name": true, "availability_zone": true, "created_at": true, "updated_at": true, "id": true}

// pickerLimit caps the providers the picker lists for one search.
const pickerLimit = 25

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
		snap, err := h.snapshot(c)
		if err != nil {
			return err
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
			snap, err := h.snapshot(c)
			if err != nil {
				return err
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

// resolver looks providers up by uuid once per request.
type resolver struct {
	h     *Handler
	c     echo.Context
	cache map[string]*models.Provider
}

func newResolver(h *Handler, c echo.Context) *resolver {
	return &resolver{h: h, c: c, cache: map[string]*models.Provider{}}
}

// prefetch loads the providers in uuids that are not cached yet, and their
// ancestors (for the paths rows show), one query per tree level instead of
// one per provider.
func (r *resolver) prefetch(uuids []string) error {
	for len(uuids) > 0 {
		var missing []string
		for _, u := range uuids {
			if _, ok := r.cache[u]; !ok {
				missing = append(missing, u)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		found, err := r.h.store().ProvidersByUUID(r.c.Request().Context(), missing)
		if err != nil {
			return err
		}
		uuids = nil
		for _, u := range missing {
			p, ok := found[u]
			if !ok {
				r.cache[u] = nil
				continue
			}
			r.cache[u] = &p
			if p.ParentUUID != nil {
				uuids = append(uuids, *p.ParentUUID)
			}
		}
	}
	return nil
}

func (r *resolver) get(uuid string) (*models.Provider, error) {
	if p, ok := r.cache[uuid]; ok {
		return p, nil
	}
	p, err := r.h.store().GetProvider(r.c.Request().Context(), uuid)
	if err != nil {
		if models.KindOf(err) == models.NotFound {
			r.cache[uuid] = nil
			return nil, nil
		}
		return nil, err
	}
	r.cache[uuid] = p
	return p, nil
}

// row describes p with its kind and its place in its tree.
func (r *resolver) row(p *models.Provider) (cv.MemberRow, error) {
	m := cv.MemberRow{UUID: p.UUID, Name: p.Name, Kind: providerKind(p)}
	if p.ParentUUID != nil {
		var path []string
		seen := map[string]bool{p.UUID: true}
		for cur := p.ParentUUID; cur != nil && !seen[*cur]; {
			seen[*cur] = true
			q, err := r.get(*cur)
			if err != nil {
				return m, err
			}
			if q == nil {
				break
			}
			path = append(path, q.Name)
			cur = q.ParentUUID
		}
		slices.Reverse(path)
		m.Path = strings.Join(path, " › ")
	}
	return m, nil
}

func (r *resolver) rows(uuids []string) ([]cv.MemberRow, error) {
	if err := r.prefetch(uuids); err != nil {
		return nil, err
	}
	out := make([]cv.MemberRow, 0, len(uuids))
	for _, u := range uuids {
		p, err := r.get(u)
		if err != nil {
			return nil, err
		}
		if p == nil {
			out = append(out, cv.MemberRow{UUID: u, Name: u, Kind: "missing"})
			continue
		}
		m, err := r.row(p)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// hostScanLimit bounds how many members a page inspects to find the hosts
// that block deletion: a zone aggregate may hold thousands, and one host is
// enough to refuse.
const hostScanLimit = 500

// hostNames returns the names of the members that are hosts (sorted), and
// whether the list is complete (every member was inspected).
func (r *resolver) hostNames(uuids []string) ([]string, bool, error) {
	var out []string
	complete := true
	for i, u := range uuids {
		if i >= hostScanLimit && len(out) > 0 {
			complete = false
			break
		}
		if i%hostScanLimit == 0 {
			// Look the members up a scan's worth at a time.
			if err := r.prefetch(uuids[i:min(len(uuids), i+hostScanLimit)]); err != nil {
				return nil, false, err
			}
		}
		p, err := r.get(u)
		if err != nil {
			return nil, false, err
		}
		if p != nil && p.IsHost() {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out, complete, nil
}

func providerKind(p *models.Provider) string {
	switch {
	case p.IsSharing():
		return "sharing"
	case p.ParentUUID != nil:
		return "child"
	}
	return "host"
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
	// The generation is checked here until changes carry it to the
	// applier.
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

// readRows reads the key/value rows of an editor (forms.Rows) for the page.
func readRows(c echo.Context) ([]cv.KV, map[string]string, []cv.Problem) {
	params, _ := c.FormParams()
	rows, md, probs := forms.Rows(params)
	return kvRows(rows), md, toCVProblems(probs)
}

func kvRows(rows []forms.Row) []cv.KV {
	var out []cv.KV
	for _, r := range rows {
		out = append(out, cv.KV{Key: r.Key, Value: r.Value})
	}
	return out
}

func toCVProblems(ps []forms.Problem) []cv.Problem {
	var out []cv.Problem
	for _, p := range ps {
		out = append(out, cv.Problem{Key: p.Key, Message: p.Message, Warning: p.Warning})
	}
	return out
}

// editableMetadata is the metadata the raw editor shows: everything but the
// keys that have their own typed fields (zone, tenants, reservations).
func editableMetadata(md map[string]string, st models.Settings) map[string]string {
	out := map[string]string{}
	for k, v := range md {
		if !forms.TypedKey(k, st) {
			out[k] = v
		}
	}
	return out
}

func metadataEditor(agg *models.Aggregate, md map[string]string, rows []cv.KV, readOnly bool) cv.KVEditor {
	if rows == nil {
		for _, k := range slices.Sorted(maps.Keys(md)) {
			rows = append(rows, cv.KV{Key: k, Value: md[k]})
		}
	}
	return cv.KVEditor{
		Action:      "/aggregates/" + agg.UUID + "/metadata",
		Validate:    "/aggregates/" + agg.UUID + "/metadata/validate",
		Generation:  agg.Generation,
		Rows:        rows,
		Blank:       3,
		Note:        "The zone, tenant tags and reservation tags have their own fields above and are kept as they are.",
		ReadOnly:    readOnly,
		SubmitLabel: "Save metadata",
		TestID:      "metadata-editor",
		ImpactForm:  forms.KindMetadata, ImpactTarget: agg.UUID,
	}
}

// submittedMetadata reads the metadata editor (forms.Metadata): the rows as
// typed, the problems of the whole and the reader's answer.
func (h *Handler) submittedMetadata(c echo.Context, agg *models.Aggregate) ([]cv.KV, []cv.Problem, error) {
	rows, _, read, err := h.readMetadata(c, agg)
	return rows, toCVProblems(read.Problems), err
}

func (h *Handler) readMetadata(c echo.Context, agg *models.Aggregate) ([]cv.KV, models.Settings, forms.Read, error) {
	snap, err := h.snapshot(c)
	if err != nil {
		return nil, models.Settings{}, forms.Read{}, err
	}
	params, _ := c.FormParams()
	rows, _, _ := forms.Rows(params)
	return kvRows(rows), snap.World().Settings, forms.Metadata(params, agg, snap), nil
}

// editorProblems are the findings about the keys the raw editor shows.
func editorProblems(md map[string]string, st models.Settings) []cv.Problem {
	return toCVProblems(forms.EditorProblems(md, st))
}

// AggregateMetadata saves the metadata editor (POST /aggregates/:id/metadata),
// read by forms.Metadata.
func (h *Handler) AggregateMetadata(c echo.Context) error {
	agg, err := h.loadAggregate(c)
	if err != nil {
		return err
	}
	rows, st, read, err := h.readMetadata(c, agg)
	if err != nil {
		return err
	}
	probs := toCVProblems(read.Problems)
	gen, gerr := formGeneration(c)
	if gerr != nil {
		probs = append(probs, cv.Problem{Message: errMsg(gerr)})
	}
	// A refused save goes back to the aggregate's page (post/redirect/get)
	// with the typed rows in the URL; that page checks them again and
	// shows the problems beside them. What a second look cannot reproduce
	// (a concurrent edit, a damaged form) comes as a flash.
	showErrors := func(probs []cv.Problem) error {
		q := url.Values{"retry": {"metadata"}}
		for _, r := range rows {
			q.Add("key", r.Key)
			q.Add("value", r.Value)
		}
		if gerr == nil {
			q.Set("generation", strconv.FormatInt(gen, 10))
		}
		ed := cv.KVEditor{Problems: probs}
		again := cv.KVEditor{Problems: rowProblems(agg, st, rows)}
		if ed.HasErrors() && !again.HasErrors() {
			for _, p := range probs {
				if p.Message != "" {
					handlers.AddFlash(c, handlers.FlashError, p.Message)
					break
				}
			}
		}
		return handlers.SeeOther(c, "/aggregates/"+agg.UUID+"?"+q.Encode()+"#metadata-editor")
	}
	ed := cv.KVEditor{Problems: probs}
	if ed.HasErrors() {
		return showErrors(probs)
	}
	err = forms.CheckGeneration("aggregate", agg.Name, gen, agg.Generation)
	if err == nil {
		_, err = h.apply(c, read.Changes)
	}
	if err != nil {
		if !userError(err) {
			return err
		}
		return showErrors(append(probs, cv.Problem{Message: upperFirst(conflictMessage(err))}))
	}
	var added, changed, removed int
	for _, ch := range read.Changes {
		_, had := agg.Metadata[ch.Key]
		switch {
		case ch.Op == scheduling.OpUnsetMetadata:
			removed++
		case had:
			changed++
		default:
			added++
		}
	}
	msg := fmt.Sprintf("Metadata of “%s” saved: %d added, %d changed, %d removed.", agg.Name, added, changed, removed)
	if added+changed+removed == 0 {
		msg = fmt.Sprintf("Metadata of “%s” unchanged.", agg.Name)
	}
	if n := len(probs); n > 0 {
		handlers.AddFlash(c, handlers.FlashWarning, fmt.Sprintf("Saved with %s; see the metadata section.", views.Plural(n, "warning", "warnings")))
	}
	return redirectFlash(c, handlers.FlashSuccess, msg, "/aggregates/"+agg.UUID)
}

// rowProblems are the problems of typed metadata rows that a second look
// finds again (not those of a concurrent edit).
func rowProblems(agg *models.Aggregate, st models.Settings, rows []cv.KV) []cv.Problem {
	md := map[string]string{}
	var probs []cv.Problem
	for _, r := range rows {
		if r.Key == "" {
			probs = append(probs, cv.Problem{Message: "a value has no key"})
			continue
		}
		if _, dup := md[r.Key]; dup {
			probs = append(probs, cv.Problem{Key: r.Key, Message: "duplicate"})
		}
		md[r.Key] = r.Value
		if forms.TypedKey(r.Key, st) {
			probs = append(probs, cv.Problem{Key: r.Key, Message: forms.TypedKeyMessage(r.Key)})
		}
	}
	full := maps.Clone(md)
	for k, v := range agg.Metadata {
		if forms.TypedKey(k, st) {
			full[k] = v
		}
	}
	return append(probs, editorProblems(full, st)...)
}

// AggregateMetadataValidate checks the editor's content as it is typed and
// answers with the findings (POST /aggregates/:id/metadata/validate).
// Nothing is saved.
func (h *Handler) AggregateMetadataValidate(c echo.Context) error {
	agg, err := h.loadAggregate(c)
	if err != nil {
		return err
	}
	_, probs, err := h.submittedMetadata(c, agg)
	if err != nil {
		return err
	}
	ed := metadataEditor(agg, nil, []cv.KV{}, false)
	ed.Problems = probs
	return handlers.Render(c, http.StatusOK, cv.LiveProblems(ed))
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
