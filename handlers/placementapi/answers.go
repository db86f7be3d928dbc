package placementapi

import (
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"corral/models/placement"
)

// Clients ask the same small lists again and again: nova-compute its own
// provider, a scheduler filter its aggregates. answerCache keeps the bytes
// of recent small answers for one revision of the world, so that asking
// again costs no parsing, judging or encoding. Any write moves the
// revision and so empties it; what an answer depends on besides the world
// (the microversion and the query, byte for byte) is its key.
type answerCache struct {
	mu    sync.Mutex
	rev   int64
	m     map[answerKey]cachedAnswer
	bytes int
}

type answerKey struct {
	minor int
	query string
}

// cachedAnswer is a whole answer body and its providers' last change
// (Unix nanoseconds; 0 when it lists none, and Last-Modified is then the
// time of asking, as Placement's is).
type cachedAnswer struct {
	body []byte
	last int64
	// Header values, put together once: Content-Length, and
	// Last-Modified when last is set.
	length, modified []string
}

// Bounds: a few hundred answers of at most 2,000 providers, and at most
// maxCachedBytes in all; past them the cache starts again empty.
const (
	maxCachedAnswers = 256
	maxCachedBytes   = 16 << 20
	maxCachedQuery   = 4 << 10
)

func (a *answerCache) get(rev int64, k answerKey) (cachedAnswer, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rev != rev {
		return cachedAnswer{}, false
	}
	ans, ok := a.m[k]
	return ans, ok
}

// put keeps a copy of body, the answer at revision rev.
func (a *answerCache) put(rev int64, k answerKey, body []byte, last int64) {
	if len(k.query) > maxCachedQuery || len(body) > maxCachedBytes/16 {
		return
	}
	ans := cachedAnswer{body: slices.Clone(body), last: last,
		length: []string{strconv.Itoa(len(body))}[:1:1]}
	if last != 0 {
		ans.modified = []string{time.Unix(0, last).UTC().Format(http.TimeFormat)}[:1:1]
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case rev < a.rev:
		return // a newer revision is cached already
	case rev > a.rev, len(a.m) >= maxCachedAnswers, a.bytes+len(body) > maxCachedBytes:
		a.rev, a.m, a.bytes = rev, make(map[answerKey]cachedAnswer), 0
	}
	if _, ok := a.m[k]; !ok {
		a.m[k] = ans
		a.bytes += len(ans.body)
	}
}

// Shared header values (see negotiate's).
var (
	jsonContentType = []string{echo.MIMEApplicationJSON}[:1:1]
	noCache         = []string{"no-cache"}[:1:1]
)

// writeCached sends a cached answer, its headers as put together once.
func (api *API) writeCached(c echo.Context, v placement.Version, ans cachedAnswer) {
	h := c.Response().Header()
	if v.AtLeast(15) {
		if ans.modified != nil {
			h[echo.HeaderLastModified] = ans.modified
			h[echo.HeaderCacheControl] = noCache
		} else {
			setLastModified(c, api.now())
		}
	}
	h[echo.HeaderContentType] = jsonContentType
	h[echo.HeaderContentLength] = ans.length
	c.Response().WriteHeader(http.StatusOK)
	c.Response().Write(ans.body)
}
