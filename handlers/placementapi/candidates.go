package placementapi

import (
	"errors"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/placement"
	"corral/models/pycompat"
)

// catalog answers which classes and traits exist: the standard ones, the
// custom ones created through the API, and any a provider already uses.
type catalog struct {
	ix            *placement.Index
	loaded        bool
	classes       map[string]bool
	traits        map[string]bool
	customClasses func() ([]string, error)
	customTraits  func() ([]string, error)
	err           error
}

var (
	standardClassSet = setOf(placement.StandardResourceClasses)
	standardTraitSet = setOf(placement.StandardTraits)
)

func setOf(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

func (c *catalog) load() {
	if c.loaded {
		return
	}
	c.loaded = true
	c.classes, c.traits = map[string]bool{}, map[string]bool{}
	if names, err := c.customClasses(); err == nil {
		for _, n := range names {
			c.classes[n] = true
		}
	} else {
		c.err = err
	}
	if names, err := c.customTraits(); err == nil {
		for _, n := range names {
			c.traits[n] = true
		}
	} else {
		c.err = err
	}
	for i := 0; i < c.ix.Len(); i++ {
		p := c.ix.Provider(i)
		for rc := range p.Inventories {
			c.classes[rc] = true
		}
		for _, t := range p.Traits {
			c.traits[t] = true
		}
	}
}

func (c *catalog) HasClass(n string) bool {
	if standardClassSet[n] || len(c.ix.ProvidersWithClass(n)) > 0 {
		return true
	}
	c.load()
	return c.classes[n]
}

func (c *catalog) HasTrait(n string) bool {
	if standardTraitSet[n] {
		return true
	}
	c.load()
	return c.traits[n]
}

func (api *API) catalogFor(c echo.Context, ix *placement.Index) *catalog {
	ctx := c.Request().Context()
	return &catalog{ix: ix,
		customClasses: func() ([]string, error) { return api.env.Store.CustomResourceClasses(ctx) },
		customTraits:  func() ([]string, error) { return api.env.Store.CustomTraits(ctx) },
	}
}

type summaryResource struct {
	Capacity int64 `json:"capacity"`
	Used     int64 `json:"used"`
}

// listCandidates is GET /allocation_candidates (1.10 and above).
func (api *API) listCandidates(c echo.Context) error {
	v := version(c)
	if !v.AtLeast(10) {
		return &Error{Status: http.StatusNotFound}
	}
	req, perr := parseCandidateQuery(c.Request().URL.RawQuery, v)
	if perr != nil {
		return perr
	}
	snap, err := api.snapshot(c)
	if err != nil {
		return err
	}
	ix := snap.Index()
	cat := api.catalogFor(c, ix)
	res, err := ix.AllocationCandidates(req.q, cat)
	if cat.err != nil {
		return cat.err
	}
	if err != nil {
		var u *placement.Unknown
		if errors.As(err, &u) {
			if u.Trait {
				return badRequest(u.Error())
			}
			return badRequest("Invalid resource class in resources parameter: " + u.Error())
		}
		return err
	}
	buf := candidateBodies.Get().(*[]byte)
	body := appendCandidates((*buf)[:0], ix, api.encoded(ix), res, req, v)
	if v.AtLeast(15) {
		setLastModified(c, api.now())
	}
	err = c.JSONBlob(http.StatusOK, body)
	// The body has been written: its buffer serves the next answer, which
	// spares clearing and collecting megabytes per request.
	if cap(body) <= maxPooledBody {
		*buf = body
		candidateBodies.Put(buf)
	}
	return err
}

// candidateBodies are buffers for answers, reused across requests.
var candidateBodies = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody bounds the buffers kept: an answer with every candidate of
// a 100,000-provider cloud is tens of megabytes, and rare.
const maxPooledBody = 8 << 20

// appendCandidates renders the answer straight into JSON, appending to b:
// at thousands of candidates, maps of maps through encoding/json cost more
// than finding them. A test holds it equal to that encoding.
//
// enc, when not nil, holds the snapshot's summaries already encoded.
func appendCandidates(b []byte, ix *placement.Index, enc *encodedProviders, res *placement.Candidates, req *candidateRequest, v placement.Version) []byte {
	b = slices.Grow(b, 256*(len(res.Requests)+len(res.Summaries))+64)
	b = append(b, `{"allocation_requests":[`...)
	for i, cand := range res.Requests {
		if i > 0 {
			b = append(b, ',')
		}
		if v.AtLeast(12) {
			b = append(b, `{"allocations":{`...)
			for j := 0; j < len(cand.Allocs); {
				p := cand.Allocs[j].Provider
				if j > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, ix.Provider(p).UUID)
				b = append(b, `:{"resources":{`...)
				for k := j; j < len(cand.Allocs) && cand.Allocs[j].Provider == p; j++ {
					if j > k {
						b = append(b, ',')
					}
					b = appendJSONString(b, cand.Allocs[j].Class)
					b = append(b, ':')
					b = strconv.AppendInt(b, cand.Allocs[j].Amount, 10)
				}
				b = append(b, "}}"...)
			}
			b = append(b, '}')
			if v.AtLeast(34) {
				b = append(b, `,"mappings":{`...)
				for k, m := range cand.Mappings {
					if k > 0 {
						b = append(b, ',')
					}
					b = appendJSONString(b, m.Suffix)
					b = append(b, ":["...)
					for x, p := range m.Providers {
						if x > 0 {
							b = append(b, ',')
						}
						b = appendJSONString(b, ix.Provider(p).UUID)
					}
					b = append(b, ']')
				}
				b = append(b, '}')
			}
			b = append(b, '}')
			continue
		}
		b = append(b, `{"allocations":[`...)
		for j := 0; j < len(cand.Allocs); {
			p := cand.Allocs[j].Provider
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"resource_provider":{"uuid":`...)
			b = appendJSONString(b, ix.Provider(p).UUID)
			b = append(b, `},"resources":{`...)
			for k := j; j < len(cand.Allocs) && cand.Allocs[j].Provider == p; j++ {
				if j > k {
					b = append(b, ',')
				}
				b = appendJSONString(b, cand.Allocs[j].Class)
				b = append(b, ':')
				b = strconv.AppendInt(b, cand.Allocs[j].Amount, 10)
			}
			b = append(b, "}}"...)
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"provider_summaries":{`...)
	for i, pi := range res.Summaries {
		if i > 0 {
			b = append(b, ',')
		}
		if enc != nil && v.AtLeast(27) {
			// From 1.27 a summary lists every class: the same bytes for
			// every request on this snapshot.
			b = append(b, enc.summary(pi, v.AtLeast(29))...)
			continue
		}
		b = appendSummary(b, ix.Provider(pi), req, v)
	}
	b = append(b, "}}\n"...)
	return b
}

// appendSummary appends provider p's entry of provider_summaries:
// "uuid":{…}. Below 1.27 it lists the requested classes only.
func appendSummary(b []byte, p *models.Provider, req *candidateRequest, v placement.Version) []byte {
	b = appendJSONString(b, p.UUID)
	b = append(b, `:{"resources":{`...)
	classes := make([]string, 0, len(p.Inventories))
	for rc := range p.Inventories {
		if v.AtLeast(27) || req.requested[rc] {
			classes = append(classes, rc)
		}
	}
	sort.Strings(classes)
	for k, rc := range classes {
		if k > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, rc)
		b = append(b, `:{"capacity":`...)
		b = strconv.AppendInt(b, placement.Capacity(p.Inventories[rc]), 10)
		b = append(b, `,"used":`...)
		b = strconv.AppendInt(b, p.Usages[rc], 10)
		b = append(b, '}')
	}
	b = append(b, '}')
	if v.AtLeast(17) {
		b = append(b, `,"traits":[`...)
		for k, t := range p.Traits {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, t)
		}
		b = append(b, ']')
	}
	if v.AtLeast(29) {
		b = appendTreeFields(b, p)
	}
	return append(b, '}')
}

// pyRepr is Python's repr of a decoded value, for messages.
func pyRepr(v any) string { return pycompat.Repr(v) }
