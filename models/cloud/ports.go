package cloud

import (
	"context"

	"corral/models"
	"corral/models/scheduling"
)

// The cloud adapter does not know corral's database: it declares here what
// it reads from it and writes to it, and the program (cmd/corral, web)
// hands it the store, which has these methods.

// LiveStore is what a sync reads and writes: the live world, what the last
// sync kept of the cloud's own view, the new live state, a failed sync.
type LiveStore interface {
	ExportWorld(ctx context.Context) (*models.World, error)
	CloudPlacementState(ctx context.Context) (string, error)
	ReplaceLiveState(ctx context.Context, a models.Actor, ls *models.LiveState) error
	RecordSyncFailure(ctx context.Context, rec models.SyncRecord) error
}

// RolloutStore is what a rollout needs besides the sync that ends it: an
// audit entry per call, a draft that undoes a partial rollout, the local
// part of a draft (settings) applied, the draft rolled out discarded.
type RolloutStore interface {
	LiveStore
	AuditCloudCall(ctx context.Context, a models.Actor, action, objType, objID, objName string, request, answer any) error
	SaveDraft(ctx context.Context, a models.Actor, name string, changes []scheduling.Change) (id string, err error)
	Apply(ctx context.Context, a models.Actor, changes []scheduling.Change) (*scheduling.Applied, error)
	DiscardDraft(ctx context.Context, a models.Actor, id string) error
}

// DraftStore gives a rollout the draft to plan: its name and changes,
// refused (Conflict) when its live objects changed since it touched them.
type DraftStore interface {
	ExportWorld(ctx context.Context) (*models.World, error)
	CloudPlacementState(ctx context.Context) (string, error)
	PendingDraft(ctx context.Context, id string) (name string, changes []scheduling.Change, err error)
}

// SyncerStore is what a connected server's Syncer uses: all of the above
// and the lock that lets one replica sync at a time.
type SyncerStore interface {
	RolloutStore
	TrySyncLock(ctx context.Context) (release func(), ok bool, err error)
}

// ApplierStore is what the cloud write path (Applier) needs besides a
// syncer's: the draft to roll out and its version, and the world an
// import would leave live.
type ApplierStore interface {
	SyncerStore
	PendingDraft(ctx context.Context, id string) (name string, changes []scheduling.Change, err error)
	DraftVersion(ctx context.Context, id string) (int64, error)
	ImportedWorld(ctx context.Context, w *models.World, replace bool) (*models.World, int64, error)
	// CheckGenerations refuses changes whose generation is not the one
	// the object has in corral now (a Conflict naming it).
	CheckGenerations(ctx context.Context, changes []scheduling.Change) error
}
