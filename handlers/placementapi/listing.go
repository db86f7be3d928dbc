package placementapi

import (
	"context"
	"encoding/json"
	"math/bits"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/placement"
)

// A provider list is written from bytes encoded once per snapshot: every
// provider's JSON object, concatenated in provider order, for each shape the
// microversions give it. A list of 100,000 providers is then a few large
// writes out of shared memory instead of 100,000 maps marshalled per
// request, and a request costs no copy of the world however many run at
// once.

// Shapes of a provider's JSON: each threshold adds a link or, at 1.14, the
// tree fields.
var shapeThresholds = [...]int{1, 6, 11, 14}

const numShapes = len(shapeThresholds) + 1

func shapeOf(v placement.Version) int {
	s := 0
	for _, t := range shapeThresholds {
		if v.AtLeast(t) {
			s++
		}
	}
	return s
}

// encodedProviders is one snapshot's providers, encoded.
type encodedProviders struct {
	ix *placement.Index
	*encodings
}

// encodings depend on the providers only: a snapshot that differs from
// the previous one in its aggregates alone shares them.
type encodings struct {
	// modified is each provider's last change (Unix nanoseconds), for
	// Last-Modified.
	modOnce  sync.Once
	modified []int64
	shapes   [numShapes]encodedShape
	// summaries are allocation candidates' provider summaries,
	// "uuid":{…}, as 1.27–1.28 ([0]) and 1.29 and later ([1]) write
	// them, each encoded the first time an answer lists it.
	summaries [2]struct {
		once sync.Once
		frag []atomic.Pointer[[]byte]
	}
}

// summary is provider i's summary entry in the 1.27 shape, or the 1.29
// one (with parent and root) when nested.
func (e *encodedProviders) summary(i int, nested bool) []byte {
	s, v := 0, placement.V(27)
	if nested {
		s, v = 1, placement.V(29)
	}
	sm := &e.summaries[s]
	sm.once.Do(func() { sm.frag = make([]atomic.Pointer[[]byte], e.ix.Len()) })
	if f := sm.frag[i].Load(); f != nil {
		return *f
	}
	// Two requests may both encode it; either's bytes are the same.
	f := appendSummary(nil, e.ix.Provider(i), nil, v)
	sm.frag[i].Store(&f)
	return f
}

// encodedShape holds ",{…}" for every provider (each with a leading
// comma) in buf; provider i is buf[off[i]:off[i+1]].
type encodedShape struct {
	once  sync.Once
	ready atomic.Bool // built: small answers copy from it too
	// smallAnswers counts small answers encoded on the spot; past
	// buildAfterSmall of them the shape is built in the background. A
	// snapshot replaced before that (writes faster than reads) never
	// pays for encoding every provider.
	smallAnswers atomic.Int32
	buf          []byte
	off          []int
}

const buildAfterSmall = 64

// encoded returns the encodings of ix's providers, replacing those of an
// older snapshot.
func (api *API) encoded(ix *placement.Index) *encodedProviders {
	if e := api.enc.Load(); e != nil && e.ix == ix {
		return e
	}
	for {
		old := api.enc.Load()
		if old != nil && old.ix == ix {
			return old
		}
		e := &encodedProviders{ix: ix}
		if old != nil && sameProviders(old.ix, ix) {
			e.encodings = old.encodings
		} else {
			e.encodings = &encodings{}
		}
		if api.enc.CompareAndSwap(old, e) {
			return e
		}
	}
}

// sameProviders reports whether two indexes hold the very same provider
// objects, in the same order (snapshots updated for aggregates share them).
func sameProviders(a, b *placement.Index) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := 0; i < a.Len(); i++ {
		if a.Provider(i) != b.Provider(i) {
			return false
		}
	}
	return true
}

func (e *encodedProviders) shape(s int) *encodedShape {
	sh := &e.shapes[s]
	sh.once.Do(func() {
		v := placement.V(0)
		if s > 0 {
			v = placement.V(shapeThresholds[s-1])
		}
		n := e.ix.Len()
		sh.off = make([]int, n+1)
		// Room for a typical provider up front saves regrowing 50 MB.
		sh.buf = make([]byte, 0, n*(160+70*s))
		for i := 0; i < n; i++ {
			sh.off[i] = len(sh.buf)
			sh.buf = append(sh.buf, ',')
			sh.buf = appendProvider(sh.buf, e.ix.Provider(i), v)
		}
		sh.off[n] = len(sh.buf)
		sh.ready.Store(true)
	})
	return sh
}

// built returns shape s when a large list, or enough small ones, have
// built it already.
func (e *encodedProviders) built(s int) *encodedShape {
	if sh := &e.shapes[s]; sh.ready.Load() {
		return sh
	}
	return nil
}

func (e *encodedProviders) modTimes() []int64 {
	e.modOnce.Do(func() {
		n := e.ix.Len()
		e.modified = make([]int64, n)
		for i := 0; i < n; i++ {
			e.modified[i] = modified(e.ix.Provider(i)).UnixNano()
		}
	})
	return e.modified
}

// appendProvider appends p's JSON exactly as encoding/json writes
// serializeProvider(p, v).
func appendProvider(b []byte, p *models.Provider, v placement.Version) []byte {
	self := providerURL(p.UUID)
	b = append(b, `{"uuid":`...)
	b = appendJSONString(b, p.UUID)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, p.Name)
	b = append(b, `,"generation":`...)
	b = strconv.AppendInt(b, p.Generation, 10)
	b = append(b, `,"links":[{"rel":"self","href":`...)
	b = appendJSONString(b, self)
	b = append(b, '}')
	rel := func(r string) {
		b = append(b, `,{"rel":"`...)
		b = append(b, r...)
		b = append(b, `","href":`...)
		b = appendJSONString(b, self+"/"+r)
		b = append(b, '}')
	}
	rel("inventories")
	rel("usages")
	if v.AtLeast(1) {
		rel("aggregates")
	}
	if v.AtLeast(6) {
		rel("traits")
	}
	if v.AtLeast(11) {
		rel("allocations")
	}
	b = append(b, ']')
	if v.AtLeast(14) {
		b = appendTreeFields(b, p)
	}
	return append(b, '}')
}

// appendTreeFields appends p's "parent_provider_uuid" and
// "root_provider_uuid" members, each after a comma.
func appendTreeFields(b []byte, p *models.Provider) []byte {
	b = append(b, `,"parent_provider_uuid":`...)
	if p.ParentUUID == nil {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, *p.ParentUUID)
	}
	root := p.RootUUID
	if root == "" {
		root = p.UUID
	}
	b = append(b, `,"root_provider_uuid":`...)
	return appendJSONString(b, root)
}

// appendJSONString quotes s as encoding/json does (HTML characters
// escaped); plain ASCII, which names and uuids nearly always are, is copied
// as is.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// span is a run [from, to) of providers in the answer.
type span struct{ from, to int }

// selection collects the answer's providers as runs of neighbours, so that
// writing them out is one copy per run.
type selection struct {
	spans []span
	count int
}

func (s *selection) add(i int) {
	s.count++
	if n := len(s.spans); n > 0 && s.spans[n-1].to == i {
		s.spans[n-1].to++
		return
	}
	s.spans = append(s.spans, span{i, i + 1})
}

func (s *selection) addRun(from, to int) {
	s.count += to - from
	if n := len(s.spans); n > 0 && s.spans[n-1].to == from {
		s.spans[n-1].to = to
		return
	}
	s.spans = append(s.spans, span{from, to})
}

// selectAll adds every provider not in excluded (nil: every provider),
// whole words at a time where a word is all in.
func selectAll(sel *selection, n int, excluded placement.Bitset, keep func(int) bool) {
	if excluded == nil && keep == nil {
		if n > 0 {
			sel.addRun(0, n)
		}
		return
	}
	for w := 0; w*64 < n; w++ {
		in := ^uint64(0)
		if excluded != nil {
			in = ^excluded[w]
		}
		base := w * 64
		if rest := n - base; rest < 64 {
			in &= (1 << uint(rest)) - 1
		}
		if in == ^uint64(0) && keep == nil {
			sel.addRun(base, base+64)
			continue
		}
		for in != 0 {
			i := base + bits.TrailingZeros64(in)
			in &= in - 1
			if keep == nil || keep(i) {
				sel.add(i)
			}
		}
	}
}

// largeAnswer is the size from which a list takes a slot of the large
// answers' limit.
const largeAnswer = 2000

// largeLimit bounds how many large answers are written at once; the rest
// wait in line for up to largeWait, then get a 503 with Retry-After.
type largeLimit struct {
	slots chan struct{}
	wait  time.Duration
	// refused counts 503s, for the load test and the logs.
	refused atomic.Int64
}

func newLargeLimit(n int, wait time.Duration) *largeLimit {
	return &largeLimit{slots: make(chan struct{}, n), wait: wait}
}

// acquire takes a slot; false means the line was too long.
func (l *largeLimit) acquire(ctx context.Context) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	l.refused.Add(1)
	return false
}

func (l *largeLimit) release() { <-l.slots }

// smallBuffers hold small answers while they are assembled, so that each
// is one write: the client is woken once for the whole answer.
var smallBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// answerSlot is where a small answer is kept in the answer cache.
type answerSlot struct {
	rev int64
	key answerKey
}

// lastModified is the latest change of sel's providers (Unix nanoseconds),
// 0 when it lists none.
func lastModified(e *encodedProviders, sel *selection) int64 {
	mods := e.modTimes()
	var last int64
	for _, s := range sel.spans {
		for _, m := range mods[s.from:s.to] {
			last = max(last, m)
		}
	}
	return last
}

// setListModified sets Last-Modified (from 1.15): the listed providers'
// last change, or the time of asking when it lists none.
func (api *API) setListModified(c echo.Context, v placement.Version, last int64) {
	if v.AtLeast(15) {
		t := api.now()
		if last != 0 {
			t = time.Unix(0, last)
		}
		setLastModified(c, t)
	}
}

// smallBody encodes a small answer into a buffer of smallBuffers. A few
// providers are encoded on the spot until the shared encoding of every
// provider exists (built for the first large list, or in the background
// after buildAfterSmall small ones).
func smallBody(e *encodedProviders, v placement.Version, sel *selection) *[]byte {
	bp := smallBuffers.Get().(*[]byte)
	b := append((*bp)[:0], listHead...)
	if sh := e.built(shapeOf(v)); sh != nil {
		for k, s := range sel.spans {
			chunk := sh.buf[sh.off[s.from]:sh.off[s.to]]
			if k == 0 {
				chunk = chunk[1:]
			}
			b = append(b, chunk...)
		}
	} else {
		if sh := &e.shapes[shapeOf(v)]; sh.smallAnswers.Add(1) == buildAfterSmall {
			go e.shape(shapeOf(v))
		}
		first := true
		for _, s := range sel.spans {
			for i := s.from; i < s.to; i++ {
				if !first {
					b = append(b, ',')
				}
				first = false
				b = appendProvider(b, e.ix.Provider(i), v)
			}
		}
	}
	*bp = append(b, listTail...)
	return bp
}

const listHead, listTail = `{"resource_providers":[`, "]}\n"

// writeSelection writes the providers of sel in the shape of v; a small
// answer is also kept in slot, when there is one.
func (api *API) writeSelection(c echo.Context, v placement.Version, ix *placement.Index, sel *selection, slot *answerSlot) error {
	e := api.encoded(ix)
	if sel.count < largeAnswer {
		body := smallBody(e, v, sel)
		ans := newAnswer(*body, lastModified(e, sel))
		smallBuffers.Put(body)
		api.writeAnswer(c, v, ans)
		if slot != nil {
			api.answers.put(slot.rev, slot.key, ans)
		}
		return nil
	}
	if !api.large.acquire(c.Request().Context()) {
		c.Response().Header().Set("Retry-After", "1")
		return &Error{Status: http.StatusServiceUnavailable,
			Msg: "Too many large provider lists are being sent; retry shortly."}
	}
	defer api.large.release()
	api.setListModified(c, v, lastModified(e, sel))
	sh := e.shape(shapeOf(v))
	size := len(listHead) + len(listTail)
	for _, s := range sel.spans {
		size += sh.off[s.to] - sh.off[s.from]
	}
	if sel.count > 0 {
		size-- // the first provider's leading comma
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	h.Set(echo.HeaderContentLength, strconv.Itoa(size))
	c.Response().WriteHeader(http.StatusOK)
	w := c.Response()
	if _, err := w.Write([]byte(listHead)); err != nil {
		return nil // the client went away; nothing left to tell it
	}
	for k, s := range sel.spans {
		chunk := sh.buf[sh.off[s.from]:sh.off[s.to]]
		if k == 0 {
			chunk = chunk[1:]
		}
		if _, err := w.Write(chunk); err != nil {
			return nil
		}
	}
	w.Write([]byte(listTail))
	return nil
}
