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
	changeUnknown changeKind = iota // anything: rebuild from the database
	changeObjects                   // exactly the objects named (maybe none)
)

type change struct {
	kind       changeKind
	aggregates []string // created, changed (rows or members) or deleted
	providers  []string // created, changed or deleted
	servers    []string // created, changed or deleted
	// The small tables, read again whole.
	flavors, groups, settings bool
}

func (c *change) empty() bool {
	return len(c.aggregates) == 0 && len(c.providers) == 0 && len(c.servers) == 0 && !c.flavors && !c.groups && !c.settings
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
func (l *changeLog) since(from, to int64) (change, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out change
	if to < from || to-from > changeLogSize {
		return out, false
	}
	out.kind = changeObjects
	for r := from + 1; r <= to; r++ {
		c, found := l.entries[r]
		if !found || c.kind == changeUnknown {
			return out, false
		}
		out.aggregates = append(out.aggregates, c.aggregates...)
		out.providers = append(out.providers, c.providers...)
		out.servers = append(out.servers, c.servers...)
		out.flavors = out.flavors || c.flavors
		out.groups = out.groups || c.groups
		out.settings = out.settings || c.settings
	}
	out.aggregates = sortedUnique(out.aggregates)
	out.providers = sortedUnique(out.providers)
	out.servers = sortedUnique(out.servers)
	return out, true
}

func sortedUnique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// Live is the filtering core's snapshot of the current world, one per
// Store and shared by every part of the server that reads the world. It is
// built once (Warm, at start), then kept current: a write of this process
// that says what it touched (aggregates, providers, servers, flavors,
// groups, settings, or nothing of the world) is applied to the previous
// snapshot by the writer — the rows it touched are read again, the 100,000
// providers are not; after anything else — a write by another process or
// replica, an import, a sync, an applied draft — it is rebuilt from the
// database by the next reader.
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
		l.s.log().Debug("live snapshot: rebuilding from the database, a write since is not known in detail (another process, or a bulk change)",
			"from_revision", v.rev, "to_revision", rev)
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

// afterWrite brings the snapshot up to a write this process just
// committed, when the write said what it changed: the writer pays the few
// milliseconds, and the next reader finds the snapshot current instead of
// updating it first. Other writes leave it to the next reader.
func (l *Live) afterWrite(ctx context.Context, c change) {
	if c.kind == changeUnknown || l.cur.Load() == nil {
		return
	}
	if _, _, err := l.Get(context.WithoutCancel(ctx)); err != nil {
		l.s.log().Debug("live snapshot: update after a write failed; the next reader retries", "err", err)
	}
}

// update applies the writes since v to v's snapshot, or says errRebuild.
// Only the rows the writes named are read. Aggregates and providers that
// keep their place in the trees update the index in place
// (Snapshot.WithAggregates); flavors, servers, groups and settings share
// everything else (Snapshot.WithObjects); providers created, deleted,
// renamed or moved re-index the patched world in memory.
func (l *Live) update(ctx context.Context, v *liveValue) (*liveValue, error) {
	var out *liveValue
	err := l.s.readTx(ctx, func(tx *gorm.DB) error {
		var rev int64
		if err := tx.Raw(revisionQuery).Scan(&rev).Error; err != nil {
			return err
		}
		c, ok := l.s.changes.since(v.rev, rev)
		if !ok {
			return errRebuild
		}
		if c.empty() {
			out = &liveValue{snap: v.snap, rev: rev}
			return nil
		}
		old := v.snap.World()
		w := *old
		changedAggs := make(map[string]bool, len(c.aggregates))
		for _, u := range c.aggregates {
			changedAggs[u] = true
		}
		if len(c.aggregates) > 0 {
			fresh, err := loadAggregates(tx, c.aggregates)
			if err != nil {
				return err
			}
			w.Aggregates = patchAggregates(old.Aggregates, fresh, changedAggs)
		}
		reindex := false
		if len(c.providers) > 0 {
			fresh, err := loadProvidersByUUID(tx, c.providers)
			if err != nil {
				return err
			}
			w.Providers, reindex = patchProviders(v.snap, old.Providers, fresh, c.providers)
		}
		if len(c.servers) > 0 {
			fresh, err := loadServersByUUID(tx, c.servers)
			if err != nil {
				return err
			}
			w.Servers = patchServers(old.Servers, fresh, c.servers)
		}
		if c.flavors || c.groups || c.settings {
			var rest models.World
			if err := loadRest(tx, &rest); err != nil {
				return err
			}
			if c.flavors {
				w.Flavors = rest.Flavors
			}
			if c.groups {
				w.ServerGroups = rest.ServerGroups
			}
			if c.settings {
				w.Settings = rest.Settings
			}
		}
		snap, err := l.apply(v.snap, &w, c, changedAggs, reindex)
		if err != nil {
			l.s.log().Debug("live snapshot: the change does not apply, rebuilding from the database", "revision", rev, "err", err)
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

// apply builds the snapshot of w, which differs from prev's world by c.
func (l *Live) apply(prev *scheduling.Snapshot, w *models.World, c change, changedAggs map[string]bool, reindex bool) (*scheduling.Snapshot, error) {
	if reindex {
		l.s.log().Debug("live snapshot: providers created, deleted or moved; indexing the updated world", "providers", len(c.providers))
		return scheduling.NewSnapshot(w)
	}
	snap := prev
	if len(c.aggregates) > 0 || len(c.providers) > 0 {
		// WithAggregates takes a world whose other objects are prev's.
		old := prev.World()
		step := *old
		step.Providers, step.Aggregates = w.Providers, w.Aggregates
		next, err := prev.WithAggregates(&step, changedAggs)
		if err != nil {
			return nil, err
		}
		snap = next
		w.Providers, w.Aggregates = step.Providers, step.Aggregates
	}
	if len(c.servers) > 0 || c.flavors || c.groups || c.settings {
		base := snap.World()
		w.Providers, w.Aggregates = base.Providers, base.Aggregates
		return snap.WithObjects(w)
	}
	return snap, nil
}

// patchAggregates replaces the changed aggregates of old by their fresh
// rows (dropping deleted ones) and appends new ones, in id order as
// loadWorld lists them.
func patchAggregates(old, fresh []models.Aggregate, changed map[string]bool) []models.Aggregate {
	byUUID := make(map[string]*models.Aggregate, len(fresh))
	for i := range fresh {
		byUUID[fresh[i].UUID] = &fresh[i]
	}
	out := make([]models.Aggregate, 0, len(old)+len(fresh))
	for _, a := range old {
		if !changed[a.UUID] {
			out = append(out, a)
		} else if f, ok := byUUID[a.UUID]; ok {
			out = append(out, *f)
			delete(byUUID, a.UUID)
		}
	}
	// New aggregates have the highest ids: they come last, in id order.
	for _, f := range fresh {
		if _, ok := byUUID[f.UUID]; ok {
			out = append(out, f)
		}
	}
	return out
}

// patchProviders returns old with the touched providers replaced by their
// fresh rows, and whether the trees changed shape (a provider created,
// deleted, renamed, moved, or made or unmade a sharing provider): then the
// list is re-sorted and the world must be indexed anew.
func patchProviders(prev *scheduling.Snapshot, old, fresh []models.Provider, touched []string) ([]models.Provider, bool) {
	ix := prev.Index()
	inPlace := len(fresh) == len(touched)
	for i := range fresh {
		if !inPlace {
			break
		}
		k, ok := ix.ProviderByUUID(fresh[i].UUID)
		if !ok {
			inPlace = false
			break
		}
		o := ix.Provider(k)
		inPlace = o.Name == fresh[i].Name && sameParent(o.ParentUUID, fresh[i].ParentUUID) &&
			o.RootUUID == fresh[i].RootUUID && o.IsSharing() == fresh[i].IsSharing()
	}
	if inPlace {
		out := slices.Clone(old)
		for _, p := range fresh {
			k, _ := ix.ProviderByUUID(p.UUID)
			out[k] = p
		}
		return out, false
	}
	gone := make(map[string]bool, len(touched))
	for _, u := range touched {
		gone[u] = true
	}
	out := make([]models.Provider, 0, len(old)+len(fresh))
	for _, p := range old {
		if !gone[p.UUID] {
			out = append(out, p)
		}
	}
	out = append(out, fresh...)
	sortProviders(out)
	return out, true
}

func sameParent(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// patchServers returns old with the touched servers replaced by their
// fresh rows (deleted ones dropped), in loadWorld's order.
func patchServers(old, fresh []models.Server, touched []string) []models.Server {
	gone := make(map[string]bool, len(touched))
	for _, u := range touched {
		gone[u] = true
	}
	out := make([]models.Server, 0, len(old)+len(fresh))
	for _, v := range old {
		if !gone[v.UUID] {
			out = append(out, v)
		}
	}
	out = append(out, fresh...)
	sortServers(out)
	return out
}

// loadProvidersByUUID reads the providers with these uuids that exist.
func loadProvidersByUUID(tx *gorm.DB, uuids []string) ([]models.Provider, error) {
	var out []models.Provider
	for rest := uuids; len(rest) > 0; {
		n := min(len(rest), 500)
		part, err := scanProviderRows(tx.Model(&models.Provider{}).Where("uuid IN ?", rest[:n]), n)
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
		rest = rest[n:]
	}
	return out, nil
}

// loadServersByUUID reads the servers with these uuids that exist.
func loadServersByUUID(tx *gorm.DB, uuids []string) ([]models.Server, error) {
	var out []models.Server
	for rest := uuids; len(rest) > 0; {
		n := min(len(rest), 500)
		var part []models.Server
		if err := tx.Where("uuid IN ?", rest[:n]).Find(&part).Error; err != nil {
			return nil, err
		}
		out = append(out, part...)
		rest = rest[n:]
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
