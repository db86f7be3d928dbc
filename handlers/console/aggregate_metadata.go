package console

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/forms"
	"corral/models"
	"corral/models/scheduling"
	"corral/views"
	cv "corral/views/console"
)

// An aggregate's metadata: the key/value editor, its save (POST
// /aggregates/{id}/metadata) and its live check as it is typed
// (POST /aggregates/{id}/metadata/validate).

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
