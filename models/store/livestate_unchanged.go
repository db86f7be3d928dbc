package store

import (
	"cmp"
	"context"
	"slices"

	"gorm.io/gorm"

	"corral/models"
)

// liveStateUnchanged reports whether storing in (merged over cur) with
// ls's consumers and quotas would change nothing corral holds: then a sync
// stores no new revision.
func liveStateUnchanged(tx *gorm.DB, cur, merged *models.World, ls *LiveState) (bool, error) {
	ch := changedOnly(cur, merged)
	if len(cur.Providers) != len(merged.Providers) || len(cur.Aggregates) != len(merged.Aggregates) ||
		len(cur.Flavors) != len(merged.Flavors) || len(cur.ServerGroups) != len(merged.ServerGroups) ||
		len(ch.Providers)+len(ch.Aggregates)+len(ch.Flavors)+len(ch.ServerGroups) > 0 || !sameServers(cur.Servers, merged.Servers) {
		return false, nil
	}
	stored, err := loadConsumers(tx)
	if err != nil {
		return false, err
	}
	if !sameConsumers(stored, ls.Consumers) {
		return false, nil
	}
	for _, q := range ls.Quotas {
		var rows []models.Quota
		if err := tx.Where("project_id = ? AND resource = ?", q.ProjectID, q.Resource).Find(&rows).Error; err != nil {
			return false, err
		}
		limit := models.DefaultQuota
		if len(rows) > 0 {
			limit = rows[0].Limit
		}
		if limit != q.Limit {
			return false, nil
		}
	}
	return true, nil
}

func sameServers(a, b []models.Server) bool {
	if len(a) != len(b) {
		return false
	}
	type server struct{ name, project, user, host string }
	byUUID := make(map[string]server, len(a))
	for _, s := range a {
		byUUID[s.UUID] = server{s.Name, s.ProjectID, s.UserID, s.Host}
	}
	for _, s := range b {
		if o, ok := byUUID[s.UUID]; !ok || o != (server{s.Name, s.ProjectID, s.UserID, s.Host}) {
			return false
		}
	}
	return true
}

func sameConsumers(a, b []models.Consumer) bool {
	if len(a) != len(b) {
		return false
	}
	type alloc struct {
		provider, class string
		used            int64
	}
	norm := func(c models.Consumer) []alloc {
		out := make([]alloc, 0, len(c.Allocations))
		for _, x := range c.Allocations {
			out = append(out, alloc{x.ProviderUUID, x.ResourceClass, int64(x.Used)})
		}
		slices.SortFunc(out, func(x, y alloc) int {
			return cmp.Or(cmp.Compare(x.provider, y.provider), cmp.Compare(x.class, y.class))
		})
		return out
	}
	byUUID := make(map[string]models.Consumer, len(a))
	for _, c := range a {
		byUUID[c.UUID] = c
	}
	for _, c := range b {
		o, ok := byUUID[c.UUID]
		if !ok || o.ProjectID != c.ProjectID || o.UserID != c.UserID || o.ConsumerType != c.ConsumerType ||
			o.Generation != c.Generation || !slices.Equal(norm(o), norm(c)) {
			return false
		}
	}
	return true
}

// recordUnchangedSync keeps an unchanged sync's record, what it kept of
// the cloud's own view and its audit event; the live state is as it was,
// so the revision does not move.
func (s *Store) recordUnchangedSync(ctx context.Context, a Actor, ls *LiveState, counts map[string]int) error {
	return s.draftWrite(ctx, a, func(t *txn) error {
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
		after := map[string]any{"counts": counts, "changed": ls.Record.ChangeCount, "consumers": len(ls.Consumers),
			"requests": ls.Record.Requests, "providers_read": ls.Record.ProvidersRead, "quotas": len(ls.Quotas)}
		return t.audit("sync", "world", "world", ls.Record.Connection, counts, after)
	})
}
