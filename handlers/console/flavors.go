package console

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
	"corral/handlers/forms"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/views"
	cv "corral/views/console"
)

// FlavorList lists flavors (GET /flavors).
func (h *Handler) FlavorList(c echo.Context) error {
	ctx := c.Request().Context()
	search, _, _ := queryList(c)
	offset, limit := handlers.Paging(c, handlers.DefaultPageSize)
	flavors, total, err := h.store().ListFlavors(ctx, store.FlavorQuery{Search: search, Offset: offset, Limit: limit})
	if err != nil {
		return err
	}
	st, _, err := h.store().GetSettings(ctx)
	if err != nil {
		return err
	}
	rows := make([]cv.FlavorRow, len(flavors))
	for i, f := range flavors {
		n := 0
		for _, p := range specProblems(f.ExtraSpecs, st) {
			if !p.Warning {
				n++
			}
		}
		rows[i] = cv.FlavorRow{F: f, Problems: n}
	}
	list := cv.ListState{Path: "/flavors", Search: search,
		Pager: views.Pager{Offset: offset, Limit: limit, Total: total, Path: "/flavors", Query: c.QueryParams()}}
	props := cv.FlavorListProps{List: list, Rows: rows, CanEdit: isAdmin(c)}
	if handlers.IsHTMX(c) {
		return handlers.Render(c, http.StatusOK, cv.FlavorTable(props))
	}
	return handlers.Render(c, http.StatusOK, cv.FlavorList(layout.Page(c, "Flavors", "flavors"), props))
}

func specEditor(rows []cv.KV, probs []cv.Problem, readOnly bool) cv.KVEditor {
	return cv.KVEditor{Rows: rows, Blank: 3, Problems: probs, ReadOnly: readOnly, TestID: "specs-editor"}
}

func flavorForm(f *models.Flavor, st models.Settings, canEdit bool) cv.FlavorForm {
	var rows []cv.KV
	for _, k := range slices.Sorted(maps.Keys(f.ExtraSpecs)) {
		rows = append(rows, cv.KV{Key: k, Value: f.ExtraSpecs[k]})
	}
	return cv.FlavorForm{
		ID: f.ID, Generation: f.Generation, Name: f.Name,
		VCPUs: strconv.Itoa(f.VCPUs), RAMMB: strconv.Itoa(f.RAMMB), DiskGB: strconv.Itoa(f.DiskGB),
		Errors: map[string]string{}, Specs: specEditor(rows, specProblems(f.ExtraSpecs, st), !canEdit), CanEdit: canEdit,
		Private: f.Private, Projects: f.Projects,
	}
}

func (h *Handler) renderFlavor(c echo.Context, status int, f cv.FlavorForm) error {
	title := f.Name
	if f.Creating {
		title = "New flavor"
	}
	return handlers.Render(c, status, cv.FlavorPage(layout.Page(c, title, "flavors"), f))
}

// FlavorNew shows the create form (GET /flavors/new).
func (h *Handler) FlavorNew(c echo.Context) error {
	if again, kept := retrying(c, "flavor-new"); again {
		f, _, _, err := h.readFlavorForm(c, nil)
		if err != nil {
			return err
		}
		mergeErrors(f.Errors, kept)
		return h.renderFlavor(c, http.StatusOK, f)
	}
	f := cv.FlavorForm{Creating: true, VCPUs: "1", RAMMB: "2048", DiskGB: "20", Errors: map[string]string{}, CanEdit: true,
		Specs: specEditor(nil, nil, false)}
	return h.renderFlavor(c, http.StatusOK, f)
}

// readFlavorForm reads the flavor form (forms.FlavorCreate, or
// forms.Flavor for cur) as typed, with its refusals and the reader's
// answer; refused reports whether it cannot be saved.
func (h *Handler) readFlavorForm(c echo.Context, cur *models.Flavor) (f cv.FlavorForm, read forms.Read, refused bool, err error) {
	snap, err := h.snapshot(c)
	if err != nil {
		return f, read, true, err
	}
	st := snap.World().Settings
	params, _ := c.FormParams()
	if cur == nil {
		read = forms.FlavorCreate(params, st)
	} else {
		read = forms.Flavor(params, cur, st)
	}
	f = cv.FlavorForm{
		Creating: cur == nil, Name: strings.TrimSpace(c.FormValue("name")),
		VCPUs: strings.TrimSpace(c.FormValue("vcpus")), RAMMB: strings.TrimSpace(c.FormValue("ram_mb")), DiskGB: strings.TrimSpace(c.FormValue("disk_gb")),
		Errors: map[string]string{}, CanEdit: true,
	}
	maps.Copy(f.Errors, read.Errors)
	rows, _, _ := forms.Rows(params)
	f.Specs = specEditor(kvRows(rows), toCVProblems(read.Problems), false)
	if cur != nil {
		gen, gerr := formGeneration(c)
		if gerr != nil {
			f.Errors[""] = errMsg(gerr)
		}
		f.Generation = gen
	}
	return f, read, len(f.Errors) > 0 || f.Specs.HasErrors(), nil
}

// FlavorCreate creates a flavor (POST /flavors), read by forms.FlavorCreate.
func (h *Handler) FlavorCreate(c echo.Context) error {
	f, read, refused, err := h.readFlavorForm(c, nil)
	if err != nil {
		return err
	}
	// A refusal comes back to the form (post/redirect/get) with what was
	// typed; the page checks it again.
	if refused {
		return retryForm(c, "/flavors/new", "flavor-new", f.Errors, "")
	}
	create := read.Changes[0]
	create.UUID = models.NewUUID()
	if _, err := h.apply(c, []scheduling.Change{create}); err != nil {
		if !userError(err) {
			return err
		}
		return retryForm(c, "/flavors/new", "flavor-new",
			placeError(err, map[string]string{"flavor": "name", "name": "name", "vcpus": "vcpus", "ram_mb": "ram_mb", "disk_gb": "disk_gb"}), "")
	}
	msg := fmt.Sprintf("Flavor “%s” created with %s.", create.Flavor, views.Plural(len(create.Metadata), "extra spec", "extra specs"))
	if n := len(f.Specs.Problems); n > 0 {
		handlers.AddFlash(c, handlers.FlashWarning, fmt.Sprintf("Saved with %s about its extra specs; see below.", views.Plural(n, "warning", "warnings")))
	}
	return redirectFlash(c, handlers.FlashSuccess, msg, "/flavors/"+url.PathEscape(create.UUID))
}

// FlavorDetail shows and edits a flavor (GET /flavors/:id).
func (h *Handler) FlavorDetail(c echo.Context) error {
	fl, err := h.store().GetFlavor(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	st, _, err := h.store().GetSettings(c.Request().Context())
	if err != nil {
		return err
	}
	if again, kept := retrying(c, "flavor"); again && isAdmin(c) {
		f, _, _, err := h.readFlavorForm(c, fl)
		if err != nil {
			return err
		}
		f.ID = fl.ID
		mergeErrors(f.Errors, kept)
		return h.renderFlavor(c, http.StatusOK, f)
	}
	f := flavorForm(fl, st, isAdmin(c))
	if snap, err := h.snapshot(c); err == nil {
		if fit := snap.FlavorFits(fl); fit.Known {
			f.Fits = fmt.Sprintf("Fits on %d of %d hosts now (allocation candidates for %s; aggregates and host filters not applied).",
				fit.Fit, fit.Hosts, flavorResources(fl))
		}
		f.FitsByProject = flavorFitsByProject(snap, fl)
	}
	return h.renderFlavor(c, http.StatusOK, f)
}

// flavorResources is the flavor's unnumbered resources as a query value.
func flavorResources(fl *models.Flavor) string {
	groups, _ := scheduling.FlavorGroups(fl)
	for _, g := range groups {
		if g.Suffix == "" {
			parts := make([]string, len(g.Resources))
			for i, a := range g.Resources {
				parts[i] = fmt.Sprintf("%s:%d", a.Class, a.Amount)
			}
			return strings.Join(parts, ",")
		}
	}
	return "no resources"
}

// FlavorUpdate saves a flavor (POST /flavors/:id), read by forms.Flavor.
func (h *Handler) FlavorUpdate(c echo.Context) error {
	cur, err := h.store().GetFlavor(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	f, read, refused, err := h.readFlavorForm(c, cur)
	if err != nil {
		return err
	}
	f.ID = cur.ID
	// A refusal comes back to the flavor's page (post/redirect/get) with
	// what was typed and the generation it was typed on.
	back := "/flavors/" + url.PathEscape(cur.ID)
	if refused {
		return retryForm(c, back, "flavor", f.Errors, "")
	}
	err = forms.CheckGeneration("flavor", cur.Name, f.Generation, cur.Generation)
	if err == nil {
		_, err = h.apply(c, read.Changes)
	}
	if err != nil {
		if !userError(err) {
			return err
		}
		return retryForm(c, back, "flavor",
			placeError(err, map[string]string{"flavor": "name", "name": "name", "vcpus": "vcpus", "ram_mb": "ram_mb", "disk_gb": "disk_gb", "key": ""}), "")
	}
	next, err := h.store().GetFlavor(c.Request().Context(), cur.ID)
	if err != nil {
		return err
	}
	added, changed, removed := diffMaps(cur.ExtraSpecs, next.ExtraSpecs)
	sizeChanged := cur.Name != next.Name || cur.VCPUs != next.VCPUs || cur.RAMMB != next.RAMMB || cur.DiskGB != next.DiskGB
	msg := fmt.Sprintf("Flavor “%s” saved: extra specs %d added, %d changed, %d removed", next.Name, added, changed, removed)
	if sizeChanged {
		msg += "; name or size changed"
	}
	if !sizeChanged && added+changed+removed == 0 && maps.Equal(cur.ExtraSpecs, next.ExtraSpecs) {
		msg = fmt.Sprintf("Flavor “%s” unchanged", next.Name)
	}
	if n := len(f.Specs.Problems); n > 0 {
		handlers.AddFlash(c, handlers.FlashWarning, fmt.Sprintf("Saved with %s about its extra specs; see below.", views.Plural(n, "warning", "warnings")))
	}
	return redirectFlash(c, handlers.FlashSuccess, msg+".", "/flavors/"+url.PathEscape(next.ID))
}

func diffMaps(a, b map[string]string) (added, changed, removed int) {
	for k, v := range b {
		old, ok := a[k]
		switch {
		case !ok:
			added++
		case old != v:
			changed++
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			removed++
		}
	}
	return
}

// FlavorSpecsValidate checks extra specs as they are typed
// (POST /flavors/validate); nothing is saved.
func (h *Handler) FlavorSpecsValidate(c echo.Context) error {
	st, _, err := h.store().GetSettings(c.Request().Context())
	if err != nil {
		return err
	}
	_, specs, probs := readRows(c)
	probs = append(probs, specProblems(specs, st)...)
	return handlers.Render(c, http.StatusOK, cv.LiveProblems(specEditor(nil, probs, false)))
}

// FlavorConfirmDelete asks before deleting (GET /flavors/:id/delete).
func (h *Handler) FlavorConfirmDelete(c echo.Context) error {
	fl, err := h.store().GetFlavor(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.ConfirmPage(layout.Page(c, "Delete flavor", "flavors"), views.Confirm{
		Title:   "Delete flavor “" + fl.Name + "”?",
		Message: "Requests naming this flavor will fail; servers already running keep their size.",
		Action:  "/flavors/" + url.PathEscape(fl.ID) + "/delete",
		Cancel:  "/flavors/" + url.PathEscape(fl.ID),
		Button:  "Delete flavor",
	}))
}

// FlavorDelete deletes a flavor (POST /flavors/:id/delete).
func (h *Handler) FlavorDelete(c echo.Context) error {
	fl, err := h.store().GetFlavor(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	if _, err := h.apply(c, forms.FlavorDelete(fl).Changes); err != nil {
		if !userError(err) {
			return err
		}
		return redirectFlash(c, handlers.FlashError, "Not deleted: "+errMsg(err)+".", "/flavors/"+url.PathEscape(fl.ID))
	}
	return redirectFlash(c, handlers.FlashSuccess, fmt.Sprintf("Flavor “%s” deleted.", fl.Name), "/flavors")
}
