package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

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

// projectEvents keeps the events of a project's objects: its server
// groups and servers (whose recorded JSON, before or after, names the
// project) and its quotas (object id "<project>/<resource>"). The match
// is case-sensitive on both databases, as project ids are.
func (s *Store) projectEvents(q *gorm.DB, project string) *gorm.DB {
	if project == "" {
		return q.Where("1 = 0")
	}
	js, _ := json.Marshal(project)
	needle := `"project_id":` + string(js)
	find := "instr(%s, ?) > 0"
	if s.postgres {
		find = "strpos(%s, ?) > 0"
	}
	prefix := project + "/"
	return q.Where("((object_type IN ('server_group', 'server') AND ("+fmt.Sprintf(find, "before")+" OR "+fmt.Sprintf(find, "after")+
		")) OR (object_type = 'quota' AND substr(object_id, 1, ?) = ?))",
		needle, needle, utf8.RuneCountInString(prefix), prefix)
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
			base = s.projectEvents(base, q.Project)
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
