package store

import (
	"sync"
	"time"

	"corral/models"
)

// tokenCache remembers resolved API tokens for the revision they were read
// at, and for at most tokenTouchInterval so that last-use bookkeeping still
// happens that often.
type tokenCache struct {
	mu      sync.Mutex
	entries map[[32]byte]tokenEntry // by the token's SHA-256
}

type tokenEntry struct {
	rev  int64
	at   time.Time
	user models.User
	tok  models.APIToken
}

// maxCachedTokens bounds the cache; past it the cache starts over.
const maxCachedTokens = 4096

func (c *tokenCache) get(hash [32]byte, rev int64) (*models.User, *models.APIToken, bool) {
	c.mu.Lock()
	e, ok := c.entries[hash]
	c.mu.Unlock()
	if !ok || e.rev != rev || time.Since(e.at) >= tokenTouchInterval {
		return nil, nil, false
	}
	// Copies: callers may change what they get.
	u, tok := e.user, e.tok
	return &u, &tok, true
}

func (c *tokenCache) put(hash [32]byte, rev int64, u *models.User, tok *models.APIToken) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedTokens {
		c.entries = map[[32]byte]tokenEntry{}
	}
	c.entries[hash] = tokenEntry{rev: rev, at: time.Now(), user: *u, tok: *tok}
}
