package store

import (
	"context"
	"sync"

	"corral/models"
)

// SnapshotCache holds a value built from the world (e.g. the filtering
// core's snapshot) and rebuilds it only when the store's revision moved.
// Checking the revision is one tiny query, so replicas sharing one
// PostgreSQL see each other's writes on their next Get.
type SnapshotCache[T any] struct {
	s     *Store
	build func(*models.World) (T, error)

	mu       sync.RWMutex // guards val, rev, ok
	val      T
	rev      int64
	ok       bool
	building sync.Mutex // one build at a time: concurrent misses wait and share it
}

// NewSnapshotCache returns a cache that builds values with build.
func NewSnapshotCache[T any](s *Store, build func(*models.World) (T, error)) *SnapshotCache[T] {
	return &SnapshotCache[T]{s: s, build: build}
}

// Get returns the value for the current revision, building it if needed,
// and the revision it was built from.
func (c *SnapshotCache[T]) Get(ctx context.Context) (T, int64, error) {
	var zero T
	rev, err := c.s.Revision(ctx)
	if err != nil {
		return zero, 0, err
	}
	if v, r, ok := c.cached(rev); ok {
		return v, r, nil
	}
	c.building.Lock()
	defer c.building.Unlock()
	// Someone else may have built it while we waited.
	if v, r, ok := c.cached(rev); ok {
		return v, r, nil
	}
	w, wrev, err := c.s.LoadWorld(ctx)
	if err != nil {
		return zero, 0, err
	}
	v, err := c.build(w)
	if err != nil {
		return zero, 0, models.Wrap("store.SnapshotCache", err)
	}
	c.mu.Lock()
	// The world may be newer than the revision checked above; key the value
	// by what it was actually built from.
	c.val, c.rev, c.ok = v, wrev, true
	c.mu.Unlock()
	return v, wrev, nil
}

// cached returns the held value if it was built at revision rev. Equality,
// not "at least": a database restored from a backup has a lower revision,
// and its world must not be answered from a newer snapshot.
func (c *SnapshotCache[T]) cached(rev int64) (T, int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.ok && c.rev == rev {
		return c.val, c.rev, true
	}
	var zero T
	return zero, 0, false
}

// Invalidate drops the held value; the next Get rebuilds.
func (c *SnapshotCache[T]) Invalidate() {
	c.mu.Lock()
	c.ok = false
	c.mu.Unlock()
}
