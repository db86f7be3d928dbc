package cloud

import (
	"context"
	"errors"
	"time"

	"corral/models"
)

// SyncProgress is what a background sync (StartSync) has done so far, or
// did last: for the Cloud page, which polls it while it runs.
type SyncProgress struct {
	Running  bool
	Actor    string
	Started  time.Time
	Finished time.Time
	// Done and Total count the provider details read (Total is 0 until
	// Placement's provider list is in).
	Done, Total int
	Result      *SyncResult // when it succeeded
	Err         string      // when it failed
}

// backgroundSyncTimeout bounds one background sync.
const backgroundSyncTimeout = 15 * time.Minute

// StartSync starts a sync in the background and returns at once; ErrBusy
// when a sync, rollout or write is running on this replica. Progress says
// how it goes. A sync that finds another replica syncing ends with
// ErrBusy as its error.
func (s *Syncer) StartSync(actor models.Actor) error {
	if err := s.claim(); err != nil {
		return err
	}
	s.mu.Lock()
	s.progress = SyncProgress{Running: true, Actor: actor.Name, Started: time.Now().UTC()}
	s.mu.Unlock()
	go func() {
		defer s.unclaim()
		ctx, cancel := context.WithTimeout(context.Background(), backgroundSyncTimeout)
		defer cancel()
		var res *SyncResult
		entered := false // Sync records its own failures
		err := s.locked(ctx, func(c *Client) error {
			var err error
			entered = true
			res, err = Sync(ctx, s.Store, c, actor, SyncOptions{Connection: s.Connection(), Progress: func(done, total int) {
				s.mu.Lock()
				s.progress.Done, s.progress.Total = done, total
				s.mu.Unlock()
			}})
			return err
		})
		if err != nil && !entered && !errors.Is(err, ErrBusy) {
			// Nothing was read (Connect failed): record it for the
			// page all the same.
			now := time.Now().UTC()
			_ = s.Store.RecordSyncFailure(context.WithoutCancel(ctx), models.SyncRecord{StartedAt: now, FinishedAt: now,
				Connection: s.Connection(), Actor: actor.Name, Error: err.Error()})
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.progress.Running, s.progress.Finished, s.progress.Result = false, time.Now().UTC(), res
		if err != nil {
			s.progress.Err = err.Error()
		}
	}()
	return nil
}

// Progress is the running background sync's progress, or the last one's
// outcome (zero when none ran).
func (s *Syncer) Progress() SyncProgress {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.progress
}
