package query

import (
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
)

// The preview answers kept: the 128 most recent, each at most 1 MiB, so at
// most 128 MiB in all. A page of a trace on a large cloud is a few hundred
// KiB (its summary groups every exclusion by reason); one without a limit
// is tens of megabytes and not worth keeping.
const (
	maxAnswers     = 128
	maxAnswerBytes = 1 << 20
)

// Previews without a limit (or above bigTraceLimit) are computed at most
// as many at once as there are processors; the others wait bigTraceWait,
// then get a 503 with Retry-After.
const (
	bigTraceLimit = 1000
	bigTraceWait  = 10 * time.Second
)

var bigTraces = make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))

// maxRequestBody bounds a JSON body of the API (a preview request, a
// draft's changes): the limit its routes declare, so that what the route
// admits is read whole.
const maxRequestBody = handlers.ConsoleJSON

// previewResponse is the trace of FORMATS.md; against a draft it also names
// the draft and carries the difference to live data.
type previewResponse struct {
	*scheduling.Trace
	Draft     *draftRef             `json:"draft,omitempty"`
	Diff      *scheduling.TraceDiff `json:"diff,omitempty"`
	DraftOnly []string              `json:"draft_only,omitempty"`
	// Warnings: connected to a cloud whose Nova and Placement disagree
	// about aggregate membership, member_of sees Placement's side only.
	Warnings []string `json:"warnings,omitempty"`
}

// encode is json.Marshal(r), with the trace written by its own encoder
// (reflection over hundreds of entries was a fifth of a preview's cost):
// the trace's fields come first, then the others.
func (r previewResponse) encode() ([]byte, error) {
	if r.Trace == nil {
		return json.Marshal(r)
	}
	b, err := r.Trace.AppendJSON(newEncodeBuffer())
	if err != nil {
		return nil, err
	}
	noteEncodedSize(len(b))
	rest := r
	rest.Trace = nil
	return rest.appendAfterTrace(b)
}

// appendAfterTrace completes an encoded trace (an object) with r's other
// fields, as json.Marshal places them after the embedded trace's.
func (r previewResponse) appendAfterTrace(trace []byte) ([]byte, error) {
	tail, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if len(tail) > len("{}") {
		trace = append(trace[:len(trace)-1], ',')
		trace = append(trace, tail[1:]...)
	}
	return trace, nil
}

// newEncodeBuffer is a buffer for one trace, sized from the last answer:
// growing a fresh one to a few hundred kilobytes per request doubled the
// garbage.
func newEncodeBuffer() []byte {
	hint := encodeSizeHint.Load()
	return make([]byte, 0, hint+hint/8+512)
}

func noteEncodedSize(n int) { encodeSizeHint.Store(int64(min(n, maxEncodeSizeHint))) }

// encodeSizeHint is the size of the last trace encoded, up to
// maxEncodeSizeHint (a trace without a limit must not make every later
// answer reserve tens of megabytes).
var encodeSizeHint atomic.Int64

const maxEncodeSizeHint = 4 << 20

type draftRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// APIPreview is POST /api/preview: a request document in, its trace out;
// with ?draft=<id>, the trace against the draft and the difference to
// live data. Bad input is a 400 naming the field and the value.
func (h *Handler) APIPreview(c echo.Context) error {
	ctx := c.Request().Context()
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxRequestBody+1))
	if err != nil {
		return models.E(models.Invalid, "", "cannot read the request body: %v", err)
	}
	if int64(len(body)) > maxRequestBody {
		return models.E(models.Invalid, "", "the request body is larger than %d bytes", maxRequestBody)
	}
	spec, err := scheduling.DecodeRequestJSON(body, "")
	if err != nil {
		return err
	}
	live, rev, err := h.liveState(ctx)
	if err != nil {
		return err
	}
	if err = checkGroupRef(c, live, spec.ServerGroup); err != nil {
		return err
	}
	if spec.Limit == 0 || spec.Limit > bigTraceLimit {
		// A trace listing every provider is tens of megabytes while it is
		// built: only a few at once, so that memory stays bounded.
		select {
		case bigTraces <- struct{}{}:
			defer func() { <-bigTraces }()
		case <-time.After(bigTraceWait):
			c.Response().Header().Set("Retry-After", "1")
			return echo.NewHTTPError(http.StatusServiceUnavailable, "Too many previews without a limit are being computed; retry shortly.")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	revText := []byte(strconv.FormatInt(rev, 10))
	id := c.QueryParam("draft")
	var answer []byte
	if id == "" {
		answer, err = h.answers.get(cacheKey(revText, nil, nil, body), func() ([]byte, error) {
			b, rerr := live.snap.RunJSON(spec, newEncodeBuffer())
			if rerr != nil {
				return nil, rerr
			}
			noteEncodedSize(len(b))
			return previewResponse{Warnings: h.cloudWarnings(ctx)}.appendAfterTrace(b)
		})
	} else {
		var d *store.Draft
		d, err = h.env.Store.GetDraft(ctx, id)
		if err != nil {
			return err
		}
		version := []byte(strconv.FormatInt(d.Version, 10))
		answer, err = h.answers.get(cacheKey(revText, []byte(d.ID), version, body), func() ([]byte, error) {
			ds, derr := h.draftWorld(ctx, d, live, rev)
			if derr != nil {
				return nil, derr
			}
			p, perr := scheduling.RunPreview(live.snap, ds.st.snap, spec)
			if perr != nil {
				return nil, perr
			}
			return previewResponse{Trace: p.Trace, Draft: &draftRef{ID: d.ID, Name: d.Name}, Diff: p.Diff, DraftOnly: p.DraftOnly, Warnings: h.cloudWarnings(ctx)}.encode()
		})
	}
	if err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, answer)
}
