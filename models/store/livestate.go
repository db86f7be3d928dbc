package store

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"corral/models"
)

// SyncRecord is one sync with a real cloud (models.SyncRecord), kept in
// cloud_syncs.
type SyncRecord = models.SyncRecord

// cloudStateRow keeps what the last sync read from Placement, so the next
// one re-reads only the providers whose generation moved.
type cloudStateRow struct {
	ID        int    `gorm:"primaryKey;autoIncrement:false"`
	Placement string `gorm:"type:text;not null"`
	UpdatedAt time.Time
}

func (cloudStateRow) TableName() string { return "cloud_state" }

// LiveState is one sync's result (models.LiveState), stored in one
// transaction by ReplaceLiveState.
type LiveState = models.LiveState

// ReplaceLiveState makes ls.World corral's live state: in one transaction
// every domain object is replaced by the cloud's (corral's settings,
// users, drafts and audit log stay), the reported quotas replace those of
// their projects, the sync is recorded and audited as a "sync" with counts.
// Objects the cloud did not change keep their generations, so drafts based
// on them stay valid. The record's Revision is filled in.
func (s *Store) ReplaceLiveState(ctx context.Context, a Actor, ls *LiveState) error {
	const op = "store.ReplaceLiveState"
	if ls == nil || ls.World == nil {
		return models.E(models.Invalid, "world", "no world given")
	}
	in := cloneWorld(ls.World)
	if err := checkIncoming(in); err != nil {
		return models.Wrap(op, err)
	}
	var counts map[string]int
	err := s.write(ctx, a, op, func(t *txn) error {
		cur, err := loadWorld(t.tx)
		if err != nil {
			return err
		}
		in.Settings = cur.Settings
		merged, err := mergeWorld(cur, in, true)
		if err != nil {
			return err
		}
		if err := validateWorld(merged); err != nil {
			return err
		}
		// A sync that finds nothing new stores no revision: this
		// transaction (and its step of the revision) is rolled back.
		if same, err := liveStateUnchanged(t.tx, cur, merged, ls); err != nil {
			return err
		} else if same {
			counts = worldCounts(merged)
			counts["consumers"] = len(ls.Consumers)
			return errUnchanged
		}
		before := worldCounts(cur)
		var consumersBefore int64
		if err := t.tx.Model(&models.Consumer{}).Count(&consumersBefore).Error; err != nil {
			return err
		}
		before["consumers"] = int(consumersBefore)
		// Allocations hold on to their providers: they go first and come
		// back with the cloud's.
		for _, table := range []string{"allocations", "consumers"} {
			if err := t.tx.Exec("DELETE FROM " + table).Error; err != nil {
				return err
			}
		}
		if err := t.rewriteWorld(cur, changedOnly(cur, merged), merged); err != nil {
			return err
		}
		if err := t.insertConsumers(ls.Consumers); err != nil {
			return err
		}
		for _, q := range ls.Quotas {
			if err := t.tx.Where("project_id = ? AND resource = ?", q.ProjectID, q.Resource).Delete(&models.Quota{}).Error; err != nil {
				return err
			}
			if q.Limit != models.DefaultQuota {
				if err := t.tx.Create(&models.Quota{ProjectID: q.ProjectID, Resource: q.Resource, Limit: q.Limit}).Error; err != nil {
					return err
				}
			}
		}
		if err := t.saveCloudState(ls.Placement); err != nil {
			return err
		}
		if err := t.tx.Raw("SELECT revision FROM corral_revision WHERE id = 1").Scan(&ls.Record.Revision).Error; err != nil {
			return err
		}
		ls.Record.ID = 0
		if err := t.tx.Create(&ls.Record).Error; err != nil {
			return err
		}
		// The world's consumers are the sync's (loadWorld reads none).
		synced := worldCounts(merged)
		synced["consumers"] = len(ls.Consumers)
		after := map[string]any{"counts": synced, "changed": ls.Record.ChangeCount, "consumers": len(ls.Consumers),
			"requests": ls.Record.Requests, "providers_read": ls.Record.ProvidersRead, "quotas": len(ls.Quotas)}
		return t.audit("sync", "world", "world", ls.Record.Connection, before, after)
	})
	if errors.Is(err, errUnchanged) {
		return s.recordUnchangedSync(ctx, a, ls, counts)
	}
	return err
}

// errUnchanged rolls back a sync's write that would change nothing.
var errUnchanged = errors.New("live state unchanged")

// saveCloudState keeps what a sync read of the cloud's own view.
func (t *txn) saveCloudState(placement string) error {
	row := cloudStateRow{ID: 1, Placement: placement, UpdatedAt: t.now}
	return t.tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error
}

// insertConsumers stores consumers and their allocations in batches.
func (t *txn) insertConsumers(cs []models.Consumer) error {
	if len(cs) == 0 {
		return nil
	}
	var allocs []models.Allocation
	for i := range cs {
		for _, a := range cs[i].Allocations {
			a.ConsumerUUID = cs[i].UUID
			allocs = append(allocs, a)
		}
	}
	if err := t.tx.Omit("Allocations").CreateInBatches(cs, 500).Error; err != nil {
		return err
	}
	if len(allocs) > 0 {
		return t.tx.CreateInBatches(allocs, 1000).Error
	}
	return nil
}

// changedOnly is the part of merged that differs from cur: only those
// objects get a new generation.
func changedOnly(cur, merged *models.World) *models.World {
	out := &models.World{}
	type key = string
	provs := map[key]models.Provider{}
	for _, p := range cur.Providers {
		provs[p.UUID] = p
	}
	for _, p := range merged.Providers {
		o, ok := provs[p.UUID]
		if !ok || o.Name != p.Name || !reflect.DeepEqual(o.ParentUUID, p.ParentUUID) || !reflect.DeepEqual(o.Traits, p.Traits) ||
			!sameMap(o.Inventories, p.Inventories) || !sameMap(o.Usages, p.Usages) || !reflect.DeepEqual(o.Compute, p.Compute) {
			out.Providers = append(out.Providers, p)
		}
	}
	aggs := map[key]models.Aggregate{}
	for _, a := range cur.Aggregates {
		aggs[a.UUID] = a
	}
	for _, a := range merged.Aggregates {
		o, ok := aggs[a.UUID]
		if !ok || o.Name != a.Name || !reflect.DeepEqual(o.AvailabilityZone, a.AvailabilityZone) ||
			!sameMap(o.Metadata, a.Metadata) || !reflect.DeepEqual(o.Members, a.Members) ||
			!slices.Equal(o.NotInPlacement, a.NotInPlacement) || !slices.Equal(o.NotInNova, a.NotInNova) {
			out.Aggregates = append(out.Aggregates, a)
		}
	}
	flvs := map[key]models.Flavor{}
	for _, f := range cur.Flavors {
		flvs[f.ID] = f
	}
	for _, f := range merged.Flavors {
		o, ok := flvs[f.ID]
		if !ok || o.Name != f.Name || o.VCPUs != f.VCPUs || o.RAMMB != f.RAMMB || o.DiskGB != f.DiskGB || o.EphemeralGB != f.EphemeralGB || o.SwapMB != f.SwapMB || !sameMap(o.ExtraSpecs, f.ExtraSpecs) ||
			o.Private != f.Private || !slices.Equal(o.Projects, f.Projects) {
			out.Flavors = append(out.Flavors, f)
		}
	}
	grps := map[key]models.ServerGroup{}
	for _, g := range cur.ServerGroups {
		grps[g.UUID] = g
	}
	for _, g := range merged.ServerGroups {
		o, ok := grps[g.UUID]
		if !ok || o.Name != g.Name || o.ProjectID != g.ProjectID || o.UserID != g.UserID || o.Policy != g.Policy ||
			!sameMap(o.Rules, g.Rules) || !reflect.DeepEqual(o.Members, g.Members) {
			out.ServerGroups = append(out.ServerGroups, g)
		}
	}
	return out
}

// sameMap treats nil and empty as equal.
func sameMap[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// AuditCloudCall records one call a rollout made to the cloud. The cloud,
// not corral's live state, changed, so the revision does not move; the
// re-sync after the rollout brings the change in.
func (s *Store) AuditCloudCall(ctx context.Context, a Actor, action, objType, objID, objName string, request, answer any) error {
	return mapErr("store.AuditCloudCall", s.draftWrite(ctx, a, func(t *txn) error {
		return t.audit(action, objType, objID, objName, request, answer)
	}))
}

// RecordSyncFailure keeps a failed sync's record (for the Cloud page); the
// live state is not touched and the revision does not move.
func (s *Store) RecordSyncFailure(ctx context.Context, rec SyncRecord) error {
	rec.ID, rec.Revision = 0, 0
	if rec.Error == "" {
		rec.Error = "failed"
	}
	return mapErr("store.RecordSyncFailure", s.db.WithContext(ctx).Create(&rec).Error)
}

// RecentSyncs returns the last n sync records, newest first.
func (s *Store) RecentSyncs(ctx context.Context, n int) ([]SyncRecord, error) {
	var out []SyncRecord
	err := s.rdb.WithContext(ctx).Order("id DESC").Limit(n).Find(&out).Error
	return out, mapErr("store.RecentSyncs", err)
}

// LastSuccessfulSync is the newest sync that stored its state, or nil.
func (s *Store) LastSuccessfulSync(ctx context.Context) (*SyncRecord, error) {
	var r SyncRecord
	err := s.rdb.WithContext(ctx).Where("error = ''").Order("id DESC").Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, mapErr("store.LastSuccessfulSync", err)
	}
	return &r, nil
}

// CloudPlacementState is what the last sync kept of the cloud ("" if none).
func (s *Store) CloudPlacementState(ctx context.Context) (string, error) {
	var row cloudStateRow
	err := s.rdb.WithContext(ctx).Where("id = 1").Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	if err != nil {
		return "", mapErr("store.CloudPlacementState", err)
	}
	return row.Placement, nil
}

// syncLockKey is the PostgreSQL advisory lock replicas take to sync.
const syncLockKey = 7306234922

// TrySyncLock takes the cloud-sync lock without waiting: on PostgreSQL an
// advisory lock held by one connection for as long as the sync runs, so
// that of several replicas on one database only one syncs at a time (a
// replica that dies releases it with its connection). On SQLite, one
// process serves a file, and its own mutex suffices. ok is false when
// another holder has it; release must be called when ok.
func (s *Store) TrySyncLock(ctx context.Context) (release func(), ok bool, err error) {
	if !s.postgres {
		if !s.syncMu.TryLock() {
			return nil, false, nil
		}
		return s.syncMu.Unlock, true, nil
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, false, mapErr("store.TrySyncLock", err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return nil, false, mapErr("store.TrySyncLock", err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", int64(syncLockKey)).Scan(&ok); err != nil || !ok {
		conn.Close()
		return nil, false, mapErr("store.TrySyncLock", err)
	}
	return func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(syncLockKey))
		conn.Close()
	}, true, nil
}
