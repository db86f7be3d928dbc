package store

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"corral/models"
)

// ServerQuery selects a page of servers, ordered by name then uuid.
type ServerQuery struct {
	ProjectID string // "" = all projects
	Host      string // "" = all hosts
	Search    string // substring of name or uuid
	Offset    int
	Limit     int // <= 0: all
}

// ListServers returns one page of servers and the total matching.
func (s *Store) ListServers(ctx context.Context, q ServerQuery) ([]models.Server, int, error) {
	if err := checkSearch(q.Search); err != nil {
		return nil, 0, err
	}
	var out []models.Server
	var total int64
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		base := tx.Model(&models.Server{})
		if q.ProjectID != "" {
			base = base.Where("project_id = ?", q.ProjectID)
		}
		if q.Host != "" {
			base = base.Where("host = ?", q.Host)
		}
		if q.Search != "" {
			p := likePattern(q.Search)
			base = base.Where(`LOWER(name) LIKE ? ESCAPE '\' OR LOWER(uuid) LIKE ? ESCAPE '\'`, p, p)
		}
		if err := base.Session(&gorm.Session{}).Count(&total).Error; err != nil {
			return err
		}
		return page(base.Order("name, uuid"), q.Offset, q.Limit).Find(&out).Error
	})
	if err != nil {
		return nil, 0, mapErr("store.ListServers", err)
	}
	return out, int(total), nil
}

// GetServer finds a server by uuid.
func (s *Store) GetServer(ctx context.Context, id string) (*models.Server, error) {
	var srv *models.Server
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		srv, err = findServer(tx, id)
		return err
	})
	return srv, mapErr("store.GetServer", err)
}

func findServer(tx *gorm.DB, id string) (*models.Server, error) {
	var srv models.Server
	res := tx.Where("uuid = ?", id).Limit(1).Find(&srv)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, models.E(models.NotFound, "server", "server %s not found", id)
	}
	return &srv, nil
}

// checkServer validates a server and that its host (a name) is a host
// provider.
func (t *txn) checkServer(srv *models.Server) error {
	srv.Name = strings.TrimSpace(srv.Name)
	if len(srv.Name) > 255 {
		return models.E(models.Invalid, "name", "server name is longer than 255 characters")
	}
	if srv.Host == "" {
		return nil
	}
	var p models.Provider
	res := t.tx.Where("name = ?", srv.Host).Limit(1).Find(&p)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 || !p.IsHost() {
		return models.E(models.NotFound, "host", "no host named %q", srv.Host)
	}
	return nil
}

// CreateServer inserts srv; an empty UUID becomes a new one.
func (s *Store) CreateServer(ctx context.Context, a Actor, srv *models.Server) error {
	if srv == nil {
		return models.E(models.Invalid, "server", "no server given")
	}
	return s.write(ctx, a, "store.CreateServer", func(t *txn) error {
		if srv.UUID == "" {
			srv.UUID = uuid.NewString()
		} else if _, err := uuid.Parse(srv.UUID); err != nil {
			return models.E(models.Invalid, "uuid", "%q is not a uuid", srv.UUID)
		}
		if err := t.checkServer(srv); err != nil {
			return err
		}
		var n int64
		if err := t.tx.Model(&models.Server{}).Where("uuid = ?", srv.UUID).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return models.E(models.Conflict, "uuid", "server %s already exists", srv.UUID)
		}
		srv.CreatedAt, srv.UpdatedAt = t.now, t.now
		t.touchServers(srv.UUID)
		if err := t.tx.Create(srv).Error; err != nil {
			return err
		}
		return t.audit("create", "server", srv.UUID, srv.Name, nil, srv)
	})
}

// UpdateServer lets fn change a server's name, project, user and host.
// Servers carry no generation: only the console moves them, and a move is a
// fact to record rather than an edit to merge.
func (s *Store) UpdateServer(ctx context.Context, a Actor, id string, fn func(*models.Server) error) (*models.Server, error) {
	var out *models.Server
	err := s.write(ctx, a, "store.UpdateServer", func(t *txn) error {
		cur, err := findServer(t.tx, id)
		if err != nil {
			return err
		}
		next := *cur
		if fn != nil {
			if err := fn(&next); err != nil {
				return err
			}
		}
		next.UUID, next.CreatedAt, next.UpdatedAt = cur.UUID, cur.CreatedAt, t.now
		t.touchServers(cur.UUID)
		if err := t.checkServer(&next); err != nil {
			return err
		}
		if err := t.tx.Model(&models.Server{UUID: cur.UUID}).
			Select("Name", "ProjectID", "UserID", "Host", "UpdatedAt").Updates(&next).Error; err != nil {
			return err
		}
		out = &next
		return t.audit("update", "server", cur.UUID, next.Name, cur, &next)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteServer removes a server and takes it out of its server group.
func (s *Store) DeleteServer(ctx context.Context, a Actor, id string) error {
	return s.write(ctx, a, "store.DeleteServer", func(t *txn) error {
		cur, err := findServer(t.tx, id)
		if err != nil {
			return err
		}
		groups, err := t.groupsWithMember(cur.UUID)
		if err != nil {
			return err
		}
		t.touchServers(cur.UUID)
		t.touchGroups()
		for _, g := range groups {
			members := make([]string, 0, len(g.Members))
			for _, m := range g.Members {
				if m != cur.UUID {
					members = append(members, m)
				}
			}
			res := t.tx.Model(&models.ServerGroup{UUID: g.UUID}).Where("generation = ?", g.Generation).
				Select("Members", "Generation", "UpdatedAt").
				Updates(&models.ServerGroup{Members: members, Generation: g.Generation + 1, UpdatedAt: t.now})
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected != 1 {
				return staleErr("server group", g.Name)
			}
		}
		if err := t.tx.Where("uuid = ?", cur.UUID).Delete(&models.Server{}).Error; err != nil {
			return err
		}
		return t.audit("delete", "server", cur.UUID, cur.Name, cur, nil)
	})
}
