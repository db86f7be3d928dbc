package store

import (
	"context"
	"sync/atomic"
	"time"
)

// The revision moves on every write, and every request must see the
// writes of every process sharing the database. On SQLite, reading it
// from the database on every request cost more than the rest of a small
// answer (a read transaction: file locks and a cgo call, with cold caches
// after each pause). Processes sharing one SQLite file share one machine,
// so a beacon tells them instead: a counter in a small file mapped into
// every process ("<db>-revision"), which every write increments after it
// commits. A request reads the database's revision only when the counter
// moved since the last read, or when that read is older than
// revisionRecheck: a bound on staleness should a process die between its
// commit and its ring.
//
// The order makes it exact: a write commits, then rings; a reader loads
// the counter, then queries. A counter unchanged since a query means that
// no write rang since before that query, so every write that has returned
// to its caller was committed before it, and the query saw it.
//
// PostgreSQL replicas run on different machines: there the revision is
// still read from the database on every request.

// revisionRecheck bounds how long a revision is trusted without a query.
var revisionRecheck = time.Second

// beacon is the mapped counter; nil where it cannot be mapped.
type beacon struct {
	counter *atomic.Uint64
	unmap   func() error
}

// ring tells every process sharing the database that the revision moved.
func (b *beacon) ring() {
	if b != nil {
		b.counter.Add(1)
	}
}

func (b *beacon) close() error {
	if b == nil {
		return nil
	}
	return b.unmap()
}

// seenRevision is a revision read from the database and the beacon's
// count loaded just before that read.
type seenRevision struct {
	count uint64
	rev   int64
	at    time.Time
}

// cachedRevision returns the revision without a query when the beacon
// says it cannot have moved since the last read.
func (s *Store) cachedRevision(ctx context.Context) (int64, error) {
	n := s.beacon.counter.Load()
	if seen := s.seen.Load(); seen != nil && seen.count == n && time.Since(seen.at) < revisionRecheck {
		return seen.rev, nil
	}
	at := time.Now()
	rev, err := s.queryRevision(ctx)
	if err != nil {
		return 0, err
	}
	// Racing readers may store an older pair after a newer one; the next
	// request then finds the count moved and queries once more.
	s.seen.Store(&seenRevision{count: n, rev: rev, at: at})
	return rev, nil
}
