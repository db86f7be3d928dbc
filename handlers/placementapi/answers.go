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
	m     map[answerKey]answer
	bytes int
}

type answerKey struct {
	minor int
	query string
}

// answer is a whole small answer, ready to send and to keep: its body and
// its header values, put together once — Content-Length, and
// Last-Modified when it lists providers (when it lists none, Last-Modified
// is the time of asking, as Placement's is).
type answer struct {
	body             []byte
	length, modified []string
}

// newAnswer prepares an answer from a copy of body; last is its
// providers' last change (Unix nanoseconds), 0 when it lists none.
func newAnswer(body []byte, last int64) answer {
	ans := answer{body: slices.Clone(body), length: []string{strconv.Itoa(len(body))}[:1:1]}
	if last != 0 {
		ans.modified = []string{time.Unix(0, last).UTC().Format(http.TimeFormat)}[:1:1]
	}
	return ans
}

// Bounds: a few hundred answers of at most 2,000 providers, and at most
// maxCachedBytes in all; past them the cache starts again empty.
const (
	maxCachedAnswers = 256
	maxCachedBytes   = 16 << 20
	maxCachedQuery   = 4 << 10
)

func (a *answerCache) get(rev int64, k answerKey) (answer, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rev != rev {
		return answer{}, false
	}
	ans, ok := a.m[k]
	return ans, ok
}

// put keeps ans, the answer at revision rev.
func (a *answerCache) put(rev int64, k answerKey, ans answer) {
	if len(k.query) > maxCachedQuery || len(ans.body) > maxCachedBytes/16 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case rev < a.rev:
		return // a newer revision is cached already
	case rev > a.rev, len(a.m) >= maxCachedAnswers, a.bytes+len(ans.body) > maxCachedBytes:
		a.rev, a.m, a.bytes = rev, make(map[answerKey]answer), 0
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

// writeAnswer sends a small answer whole, in one write.
func (api *API) writeAnswer(c echo.Context, v placement.Version, ans answer) {
	h := c.Response().Header()
	switch {
	case ans.modified != nil && v.AtLeast(15):
		h[echo.HeaderLastModified] = ans.modified
		h[echo.HeaderCacheControl] = noCache
	case ans.modified == nil:
		api.setListModified(c, v, 0)
	}
	h[echo.HeaderContentType] = jsonContentType
	h[echo.HeaderContentLength] = ans.length
	c.Response().WriteHeader(http.StatusOK)
	c.Response().Write(ans.body)
}
