package cloud

import (
	"context"
	"encoding/json"
	"time"

	"corral/models"
	"corral/models/scheduling"
)

// SyncOptions tune one sync.
type SyncOptions struct {
	DryRun     bool
	Parallel   int
	Connection string // described without secrets, for the record
	// Progress is told how many provider details have been read.
	Progress func(done, total int)
}

// SyncResult is what a sync found, and what it stored.
type SyncResult struct {
	Changes       []Change
	Disagreements []Disagreement
	Warnings      []string
	Stats         ReadStats
	Counts        map[string]int
	// Blazar says, one line each, which of Blazar's keys were restated
	// as corral's reservation and tenant tags, as an import restates them.
	Blazar []string
	// NovaRelease is the Nova release the compute API's maximum
	// microversion names (see DetectNovaRelease).
	NovaRelease string
	Record      models.SyncRecord // ID and Revision set when stored
	Stored      bool
}

// Sync reads the cloud and (unless DryRun) stores it as corral's live state
// in one transaction. A read that fails stores nothing: the error is
// recorded for the Cloud page and returned.
func Sync(ctx context.Context, st LiveStore, c *Client, actor models.Actor, o SyncOptions) (*SyncResult, error) {
	// A sync reads the whole cloud as corral, even after a person's rollout.
	ctx = models.WithoutPersonToken(ctx)
	started := time.Now().UTC()
	rec := models.SyncRecord{StartedAt: started, Connection: o.Connection, Actor: actor.Name}
	fail := func(err error) (*SyncResult, error) {
		if !o.DryRun {
			rec.FinishedAt = time.Now().UTC()
			rec.DurationMS = rec.FinishedAt.Sub(started).Milliseconds()
			rec.Requests = c.Requests()
			rec.Error = StoredError(err)
			_ = st.RecordSyncFailure(context.WithoutCancel(ctx), rec)
		}
		return nil, err
	}
	var prev *PlacementState
	if k, err := LoadKept(ctx, st); err != nil {
		return fail(err)
	} else if k != nil && k.Placement.Providers != nil {
		prev = &k.Placement
	}
	cur, err := st.ExportWorld(ctx)
	if err != nil {
		return fail(err)
	}
	before := c.Requests()
	snap, err := c.Read(ctx, ReadOptions{Parallel: o.Parallel, Previous: prev, Progress: o.Progress})
	if err != nil {
		return fail(err)
	}
	m := Map(snap)
	// Blazar's reservation=<id> and blazar:owner=<project> are restated as
	// the tags corral's request filters read, as an import restates them.
	var blazar []string
	m.World, blazar = scheduling.TranslateBlazar(m.World, cur.Settings)
	res := &SyncResult{Blazar: blazar,
		Changes: Diff(cur, m.World), Disagreements: m.Disagreements, Warnings: m.Warnings, Stats: snap.ReadStats,
		Counts: map[string]int{"providers": len(m.World.Providers), "aggregates": len(m.World.Aggregates),
			"flavors": len(m.World.Flavors), "servers": len(m.World.Servers), "server_groups": len(m.World.ServerGroups)},
	}
	release, changeRelease, note := DetectNovaRelease(c.ComputeMaxVersion, cur.Settings.NovaRelease)
	res.NovaRelease = release
	if note != "" {
		res.Warnings = append(res.Warnings, note)
	}
	if o.DryRun {
		return res, nil
	}
	if changeRelease {
		// Before the live state, so that the sync's record names the
		// revision the store is at when it is done.
		if err = applyNovaRelease(ctx, st, actor, release); err != nil {
			res.Warnings = append(res.Warnings, "nova_release could not be set: "+err.Error())
		}
	}
	placement, err := json.Marshal(Kept{Placement: snap.Placement, Aggregates: snap.Aggregates, Flavors: snap.Flavors,
		ServerGroups: snap.ServerGroups, Hypervisors: snap.Hypervisors, ComputeHosts: snap.ComputeHosts})
	if err != nil {
		return fail(err)
	}
	changes, _ := json.Marshal(res.Changes)
	warn, _ := json.Marshal(res.Warnings)
	rec.Requests = c.Requests() - before
	rec.ProvidersRead, rec.ProvidersReused = snap.ReadStats.ProvidersRead, snap.ReadStats.ProvidersReused
	rec.Changes, rec.ChangeCount, rec.Disagreements, rec.Warnings = string(changes), len(res.Changes), res.Disagreements, string(warn)
	rec.FinishedAt = time.Now().UTC()
	rec.DurationMS = rec.FinishedAt.Sub(started).Milliseconds()
	ls := &models.LiveState{World: m.World, Quotas: m.Quotas, Consumers: m.Consumers, Placement: string(placement), Record: rec}
	if err := st.ReplaceLiveState(ctx, actor, ls); err != nil {
		return fail(models.Wrap("cloud.Sync", err))
	}
	res.Record, res.Stored = ls.Record, true
	return res, nil
}

// Kept is what a sync keeps of the cloud's own view between syncs: the
// Placement state (for the incremental read) and Nova's aggregates and
// hosts (what a rollout checks the cloud against before changing it).
type Kept struct {
	Placement    PlacementState    `json:"placement"`
	Aggregates   []NovaAggregate   `json:"aggregates"`
	Flavors      []NovaFlavor      `json:"flavors"`
	ServerGroups []NovaServerGroup `json:"server_groups"`
	Hypervisors  []NovaHypervisor  `json:"hypervisors"`
	ComputeHosts []string          `json:"compute_hosts"`
}

// LoadKept reads what the last sync kept; nil when there was none.
func LoadKept(ctx context.Context, st interface {
	CloudPlacementState(ctx context.Context) (string, error)
}) (*Kept, error) {
	raw, err := st.CloudPlacementState(ctx)
	if err != nil || raw == "" {
		return nil, err
	}
	var k Kept
	if json.Unmarshal([]byte(raw), &k) != nil {
		return nil, nil // an older shape: the next sync reads everything
	}
	return &k, nil
}
