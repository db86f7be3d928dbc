package store

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"

	"corral/models"
	"corral/models/scheduling"
)

// What a committed write changed, as far as the live snapshot cares.
type changeKind uint8

const (
	changeUnknown    changeKind = iota // anything: rebuild from the database
	changeNone                         // nothing the world holds
	changeAggregates                   // only the aggregates named
)

type change struct {
	kind       changeKind
	aggregates []string
	// providers changed in place (generation, timestamps), not in their
	// place in the tree, name or sharing.
	providers []string
}

// changeLog remembers what this process's recent writes changed, by the
// revision each produced. A revision missing from it was written by
// another process (a replica, the CLI) or too long ago.
type changeLog struct {
	mu      sync.Mutex
	entries map[int64]change
}

// changeLogSize bounds the revisions remembered.
const changeLogSize = 1024

func (l *changeLog) record(rev int64, c change) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.entries == nil {
		l.entries = map[int64]change{}
	}
	l.entries[rev] = c
	delete(l.entries, rev-changeLogSize)
}

// since merges the changes of the revisions after from up to to; false
// when one of them is unknown or needs a rebuild.
func (l *changeLog) since(from, to int64) (aggregates, providers []string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if to < from || to-from > changeLogSize {
		return nil, nil, false
	}
	for r := from + 1; r <= to; r++ {
		c, found := l.entries[r]
		if !found || c.kind == changeUnknown {
			return nil, nil, false
		}
		aggregates = append(aggregates, c.aggregates...)
		providers = append(providers, c.providers...)
	}
	return aggregates, providers, true
}

// Live is the filtering core's snapshot of the current world, one per
// Store and shared by every part of the server that reads the world. It is
// built once (Warm, at start), then kept current: after a write of this
// process that touched only aggregates, the change is applied to the
// previous snapshot (the aggregates are read again, the 100,000 providers
// are not); after a write that changed nothing of the world, the snapshot
// is kept; after anything else — a write elsewhere, a provider, flavor or
// settings change — it is rebuilt from the database.
type Live struct {
	s       *Store
	cur     atomic.Pointer[liveValue]
	mu      sync.Mutex // one update at a time; others wait and share it
	warming atomic.Bool
	// Counters, for tests and the logs.
	Rebuilds, Updates atomic.Int64
}

type liveValue struct {
	snap *scheduling.Snapshot
	rev  int64
}

// Live returns the store's live snapshot holder.
func (s *Store) Live() *Live {
	s.liveOnce.Do(func() { s.live = &Live{s: s} })
	return s.live
}

// Warm builds the snapshot now, so that the first request does not; the
// server calls it in the background at start. Ready is false meanwhile.
func (l *Live) Warm(ctx context.Context) error {
	l.warming.Store(true)
	defer l.warming.Store(false)
	_, _, err := l.Get(ctx)
	return err
}

// Ready reports whether requests are answered without waiting for the
// first build.
func (l *Live) Ready() bool { return !l.warming.Load() || l.cur.Load() != nil }

// Get returns the snapshot of the current revision, and that revision.
// Checking the revision is one tiny query, so replicas sharing one
// PostgreSQL see each other's writes on their next Get.
func (l *Live) Get(ctx context.Context) (*scheduling.Snapshot, int64, error) {
	rev, err := l.s.Revision(ctx)
	if err != nil {
		return nil, 0, err
	}
	if v := l.cur.Load(); v != nil && v.rev == rev {
		return v.snap, v.rev, nil
	}
	// A memo (WithRevisionMemo) may be older than the snapshot: decide on
	// the database's revision.
	if rev, err = l.s.currentRevision(ctx); err != nil {
		return nil, 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.cur.Load()
	if v != nil && v.rev == rev {
		return v.snap, v.rev, nil
	}
	if v != nil && rev > v.rev {
		nv, uerr := l.update(ctx, v)
		switch {
		case uerr == nil:
			l.cur.Store(nv)
			l.Updates.Add(1)
			return nv.snap, nv.rev, nil
		case !errors.Is(uerr, errRebuild):
			return nil, 0, uerr
		}
	}
	w, wrev, err := l.s.LoadWorld(ctx)
	if err != nil {
		return nil, 0, err
	}
	snap, err := scheduling.NewSnapshot(w)
	if err != nil {
		return nil, 0, models.Wrap("store.Live", err)
	}
	// Keyed by the revision the world was read at, which may be newer than
	// the one checked above.
	l.cur.Store(&liveValue{snap: snap, rev: wrev})
	l.Rebuilds.Add(1)
	return snap, wrev, nil
}

var errRebuild = errors.New("rebuild from the database")

// update applies the writes since v to v's snapshot, or says errRebuild.
func (l *Live) update(ctx context.Context, v *liveValue) (*liveValue, error) {
	var out *liveValue
	err := l.s.readTx(ctx, func(tx *gorm.DB) error {
		var rev int64
		if err := tx.Raw("SELECT revision FROM corral_revision WHERE id = 1").Scan(&rev).Error; err != nil {
			return err
		}
		touched, provs, ok := l.s.changes.since(v.rev, rev)
		if !ok {
			return errRebuild
		}
		if len(touched) == 0 && len(provs) == 0 {
			out = &liveValue{snap: v.snap, rev: rev}
			return nil
		}
		slices.Sort(touched)
		touched = slices.Compact(touched)
		fresh, err := loadAggregates(tx, touched)
		if err != nil {
			return err
		}
		old := v.snap.World()
		w := *old
		changed := make(map[string]bool, len(touched))
		for _, u := range touched {
			changed[u] = true
		}
		byUUID := make(map[string]*models.Aggregate, len(fresh))
		for i := range fresh {
			byUUID[fresh[i].UUID] = &fresh[i]
		}
		w.Aggregates = make([]models.Aggregate, 0, len(old.Aggregates)+len(fresh))
		for _, a := range old.Aggregates {
			if !changed[a.UUID] {
				w.Aggregates = append(w.Aggregates, a)
			} else if f, ok := byUUID[a.UUID]; ok {
				w.Aggregates = append(w.Aggregates, *f)
				delete(byUUID, a.UUID)
			}
		}
		// New aggregates have the highest ids: they come last, in id
		// order, as LoadWorld lists them.
		for _, f := range fresh {
			if _, ok := byUUID[f.UUID]; ok {
				w.Aggregates = append(w.Aggregates, f)
			}
		}
		if len(provs) > 0 {
			// Providers changed in place: a copy of the list with their
			// new rows (the snapshot checks that nothing else moved).
			slices.Sort(provs)
			provs = slices.Compact(provs)
			var fresh []models.Provider
			for rest := provs; len(rest) > 0; {
				n := min(len(rest), 500)
				part, serr := scanProviderRows(tx.Model(&models.Provider{}).Where("uuid IN ?", rest[:n]), n)
				if serr != nil {
					return serr
				}
				fresh = append(fresh, part...)
				rest = rest[n:]
			}
			if len(fresh) != len(provs) {
				return errRebuild // one was deleted
			}
			ix := v.snap.Index()
			w.Providers = slices.Clone(old.Providers)
			for _, p := range fresh {
				i, ok := ix.ProviderByUUID(p.UUID)
				if !ok {
					return errRebuild
				}
				w.Providers[i] = p
			}
		}
		snap, err := v.snap.WithAggregates(&w, changed)
		if err != nil {
			return errRebuild
		}
		out = &liveValue{snap: snap, rev: rev}
		return nil
	})
	if err != nil {
		if errors.Is(err, errRebuild) {
			return nil, errRebuild
		}
		return nil, mapErr("store.Live", err)
	}
	return out, nil
}

// loadAggregates reads the aggregates with these uuids (those that still
// exist), with their members, in id order, as loadWorld does.
func loadAggregates(tx *gorm.DB, uuids []string) ([]models.Aggregate, error) {
	var out []models.Aggregate
	for rest := uuids; len(rest) > 0; {
		n := min(len(rest), 500)
		var part []models.Aggregate
		if err := tx.Where("uuid IN ?", rest[:n]).Order("id").Find(&part).Error; err != nil {
			return nil, err
		}
		out = append(out, part...)
		rest = rest[n:]
	}
	slices.SortFunc(out, func(a, b models.Aggregate) int { return int(a.ID - b.ID) })
	idx := make(map[string]int, len(out))
	names := make([]string, 0, len(out))
	for i := range out {
		normaliseAggregate(&out[i])
		idx[out[i].UUID] = i
		names = append(names, out[i].UUID)
	}
	for rest := names; len(rest) > 0; {
		n := min(len(rest), 500)
		var members []models.AggregateMember
		if err := tx.Where("aggregate_uuid IN ?", rest[:n]).Order("aggregate_uuid, provider_uuid").Find(&members).Error; err != nil {
			return nil, err
		}
		for _, m := range members {
			if i, ok := idx[m.AggregateUUID]; ok {
				out[i].Members = append(out[i].Members, m.ProviderUUID)
			}
		}
		rest = rest[n:]
	}
	return out, nil
}
