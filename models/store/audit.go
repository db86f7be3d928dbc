package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"corral/models"
)

// AuditQuery selects audit events, newest first.
type AuditQuery struct {
	Actor      string
	ObjectType string // aggregate, provider, flavor, server, server_group, quota, settings, user, token, world, session_keys
	ObjectID   string
	Since      time.Time // inclusive; zero = no bound
	Until      time.Time // exclusive; zero = no bound
	// OnlyProject limits the events to those of Project (a non-admin's
	// view); with an empty Project nothing matches.
	OnlyProject bool
	Project     string
	Offset      int
	Limit       int // <= 0: all
}

// ListAudit returns one page of events and the total matching.
func (s *Store) ListAudit(ctx context.Context, q AuditQuery) ([]models.AuditEvent, int, error) {
	var out []models.AuditEvent
	var total int64
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		base := tx.Model(&models.AuditEvent{})
		if q.Actor != "" {
			base = base.Where("actor = ?", q.Actor)
		}
		if q.ObjectType != "" {
			base = base.Where("object_type = ?", q.ObjectType)
		}
		if q.ObjectID != "" {
			base = base.Where("object_id = ?", q.ObjectID)
		}
		if q.OnlyProject {
			base = base.Where("project_id = ? AND project_id <> ''", q.Project)
		}
		if !q.Since.IsZero() {
			base = base.Where("at >= ?", q.Since.UTC())
		}
		if !q.Until.IsZero() {
			base = base.Where("at < ?", q.Until.UTC())
		}
		if err := base.Session(&gorm.Session{}).Count(&total).Error; err != nil {
			return err
		}
		return page(base.Order("id DESC"), q.Offset, q.Limit).Find(&out).Error
	})
	if err != nil {
		return nil, 0, mapErr("store.ListAudit", err)
	}
	return out, int(total), nil
}
