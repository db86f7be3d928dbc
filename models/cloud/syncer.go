package cloud

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"corral/models"
)

// Syncer keeps a connected server's live state in step with the cloud:
// every Every, and when someone asks. Replicas on one database take turns
// through the store's sync lock.
type Syncer struct {
	Store   SyncerStore
	Options Options
	Every   time.Duration // 0: only on demand
	Log     *slog.Logger

	mu      sync.Mutex
	running bool
	// progress is the sync StartSync runs in the background, or ran last.
	progress SyncProgress
	// ids caches the cloud's identifiers the last sync kept.
	ids *identities
}

// ErrBusy means a sync is already running (here or on another replica).
var ErrBusy = errors.New("a sync is already running")

// Connection is the connection without secrets.
func (s *Syncer) Connection() string { return s.Options.Describe() }

// Interval is how often the syncer syncs (0: only on demand).
func (s *Syncer) Interval() time.Duration { return s.Every }

// Running reports whether this replica is syncing now.
func (s *Syncer) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// Run syncs every s.Every until ctx ends (the first sync right away).
func (s *Syncer) Run(ctx context.Context) {
	if s.Every <= 0 {
		return
	}
	t := time.NewTicker(s.Every)
	defer t.Stop()
	for {
		_, err := s.SyncNow(ctx, models.Actor{Name: "corral", Via: "sync", Role: models.RoleAdmin})
		if err != nil && !errors.Is(err, ErrBusy) && ctx.Err() == nil && s.Log != nil {
			s.Log.Warn("sync failed", "connection", s.Connection(), "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SyncNow runs one sync unless one is running already (ErrBusy).
func (s *Syncer) SyncNow(ctx context.Context, actor models.Actor) (*SyncResult, error) {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return nil, ErrBusy
	}
	s.running = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()
	release, ok, err := s.Store.TrySyncLock(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrBusy
	}
	defer release()
	client, err := Connect(ctx, s.Options)
	if err != nil {
		// Nothing was read: record it for the page all the same.
		now := time.Now().UTC()
		_ = s.Store.RecordSyncFailure(context.WithoutCancel(ctx), models.SyncRecord{StartedAt: now, FinishedAt: now,
			Connection: s.Connection(), Actor: actor.Name, Error: StoredError(err)})
		return nil, err
	}
	defer client.Close()
	return Sync(ctx, s.Store, client, actor, SyncOptions{Connection: s.Connection()})
}

// Rollout rolls a planned draft out under the same lock as syncs, so that
// no periodic sync runs in the middle of it (ErrBusy while one runs).
func (s *Syncer) Rollout(ctx context.Context, actor models.Actor, p *Plan) (*RolloutReport, error) {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return nil, ErrBusy
	}
	s.running = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()
	release, ok, err := s.Store.TrySyncLock(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrBusy
	}
	defer release()
	client, err := Connect(ctx, s.Options)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	return client.RolloutDraft(ctx, s.Store, actor, p, s.Connection())
}
