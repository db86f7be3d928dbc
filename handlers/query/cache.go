package query

import (
	"container/list"
	"crypto/sha256"
	"sync"
)

// responseCache keeps recent preview answers. A preview is a pure function
// of the world (live revision, or a draft's version on a live revision) and
// the request document, so an answer can be reused until either moves:
// the key holds both. Pipelines re-ask the same questions, and several
// people watching one page ask alike; the same request arriving while its
// answer is being computed waits for that computation instead of starting
// another.
type responseCache struct {
	mu       sync.Mutex
	max      int
	maxBytes int
	order    *list.List // front: most recent
	entries  map[[32]byte]*list.Element
	inflight map[[32]byte]*flight
}

type cacheEntry struct {
	key  [32]byte
	body []byte
}

type flight struct {
	done chan struct{}
	body []byte
	err  error
}

func newResponseCache(max, maxBytes int) *responseCache {
	return &responseCache{max: max, maxBytes: maxBytes, order: list.New(),
		entries: map[[32]byte]*list.Element{}, inflight: map[[32]byte]*flight{}}
}

// cacheKey derives a key from the parts that decide an answer.
func cacheKey(parts ...[]byte) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		for i, l := 0, len(p); i < 8; i, l = i+1, l>>8 {
			n[i] = byte(l)
		}
		h.Write(n[:])
		h.Write(p)
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// get returns the answer for key, computing it with compute when it is not
// held. Errors are not kept: bad input is cheap to refuse again.
func (c *responseCache) get(key [32]byte, compute func() ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		c.order.MoveToFront(e)
		body := e.Value.(*cacheEntry).body
		c.mu.Unlock()
		return body, nil
	}
	if f, ok := c.inflight[key]; ok {
		c.mu.Unlock()
		<-f.done
		return f.body, f.err
	}
	f := &flight{done: make(chan struct{})}
	c.inflight[key] = f
	c.mu.Unlock()

	f.body, f.err = compute()
	close(f.done)

	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.inflight, key)
	if f.err == nil && len(f.body) <= c.maxBytes {
		c.entries[key] = c.order.PushFront(&cacheEntry{key: key, body: f.body})
		for c.order.Len() > c.max {
			old := c.order.Back()
			c.order.Remove(old)
			delete(c.entries, old.Value.(*cacheEntry).key)
		}
	}
	return f.body, f.err
}
