package store

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"corral/models"
)

// ServerGroupQuery selects server groups, in creation order like Nova's list.
type ServerGroupQuery struct {
	ProjectID string // "" = all projects
	Offset    int
	Limit     int // <= 0: all
}

// ListServerGroups returns the groups matching q.
func (s *Store) ListServerGroups(ctx context.Context, q ServerGroupQuery) ([]models.ServerGroup, error) {
	var out []models.ServerGroup
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		base := tx.Model(&models.ServerGroup{})
		if q.ProjectID != "" {
			base = base.Where("project_id = ?", q.ProjectID)
		}
		return page(base.Order("created_at, uuid"), q.Offset, q.Limit).Find(&out).Error
	})
	if err != nil {
		return nil, mapErr("store.ListServerGroups", err)
	}
	for i := range out {
		normaliseGroup(&out[i])
	}
	return out, nil
}

// CountServerGroups reports how many groups a project has ("" = all).
func (s *Store) CountServerGroups(ctx context.Context, projectID string) (int, error) {
	var n int64
	q := s.rdb.WithContext(ctx).Model(&models.ServerGroup{})
	if projectID != "" {
		q = q.Where("project_id = ?", projectID)
	}
	err := q.Count(&n).Error
	return int(n), mapErr("store.CountServerGroups", err)
}

func normaliseGroup(g *models.ServerGroup) {
	if g.Members == nil {
		g.Members = []string{}
	}
	if g.Rules == nil {
		g.Rules = map[string]int{}
	}
}

// GetServerGroup finds a group by uuid.
func (s *Store) GetServerGroup(ctx context.Context, id string) (*models.ServerGroup, error) {
	var g *models.ServerGroup
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		g, err = findGroup(tx, id)
		return err
	})
	return g, mapErr("store.GetServerGroup", err)
}

func findGroup(tx *gorm.DB, id string) (*models.ServerGroup, error) {
	var g models.ServerGroup
	res := tx.Where("uuid = ?", id).Limit(1).Find(&g)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		// Nova's wording, so the compute API can pass it through.
		return nil, models.E(models.NotFound, "server_group", "Instance group %s could not be found.", id)
	}
	normaliseGroup(&g)
	return &g, nil
}

// validateGroup checks name, policy and rules as Nova's API does at 2.64.
func validateGroup(g *models.ServerGroup) error {
	g.Name = strings.TrimSpace(g.Name)
	return models.CheckServerGroup(g)
}

// checkMembers verifies the members are servers that belong to no other
// group (a server is in at most one group, as in Nova), and de-duplicates
// them keeping the order given.
func (t *txn) checkMembers(groupUUID string, members []string) ([]string, error) {
	seen := map[string]bool{}
	out := make([]string, 0, len(members))
	for _, m := range members {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return out, nil
	}
	var found []string
	for rest := out; len(rest) > 0; {
		n := min(len(rest), 500)
		var got []string
		if err := t.tx.Model(&models.Server{}).Where("uuid IN ?", rest[:n]).Pluck("uuid", &got).Error; err != nil {
			return nil, err
		}
		found = append(found, got...)
		rest = rest[n:]
	}
	var missing []string
	for _, m := range out {
		if !slices.Contains(found, m) {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		return nil, models.E(models.NotFound, "members", "no such server: %s", strings.Join(missing, ", "))
	}
	var others []models.ServerGroup
	if err := t.tx.Where("uuid <> ?", groupUUID).Find(&others).Error; err != nil {
		return nil, err
	}
	for _, g := range others {
		for _, m := range g.Members {
			if seen[m] {
				return nil, models.E(models.Conflict, "members", "server %s is already in server group %s", m, g.Name)
			}
		}
	}
	return out, nil
}

// groupsWithMember returns the groups listing server id.
func (t *txn) groupsWithMember(id string) ([]models.ServerGroup, error) {
	var cands []models.ServerGroup
	if err := t.tx.Where("members LIKE ?", `%"`+id+`"%`).Find(&cands).Error; err != nil {
		return nil, err
	}
	var out []models.ServerGroup
	for _, g := range cands {
		if slices.Contains(g.Members, id) {
			out = append(out, g)
		}
	}
	return out, nil
}

// quotaLimit reads a limit inside a write, so the check and the insert see
// the same state (writes are serialised on the revision row).
func quotaLimit(tx *gorm.DB, project, resource string) (int, error) {
	var q models.Quota
	res := tx.Where("project_id = ? AND resource = ?", project, resource).Limit(1).Find(&q)
	if res.Error != nil {
		return 0, res.Error
	}
	if res.RowsAffected == 0 {
		return models.DefaultQuota, nil
	}
	return q.Limit, nil
}

func (t *txn) checkMemberQuota(g *models.ServerGroup, before int) error {
	if len(g.Members) <= before {
		return nil // shrinking or unchanged never exceeds a quota
	}
	limit, err := quotaLimit(t.tx, g.ProjectID, models.QuotaServerGroupMembers)
	if err != nil {
		return err
	}
	if limit >= 0 && len(g.Members) > limit {
		return models.E(models.OverQuota, "members", "Quota exceeded, too many servers in group")
	}
	return nil
}

// CreateServerGroup inserts g after checking the project's server_groups
// quota (and server_group_members when it starts with members).
func (s *Store) CreateServerGroup(ctx context.Context, a Actor, g *models.ServerGroup) error {
	if g == nil {
		return models.E(models.Invalid, "server_group", "no server group given")
	}
	return s.write(ctx, a, "store.CreateServerGroup", func(t *txn) error {
		t.touchGroups()
		return t.createServerGroup(g)
	})
}

// createServerGroup is CreateServerGroup inside a write.
func (t *txn) createServerGroup(g *models.ServerGroup) error {
	return func() error {
		if g.UUID == "" {
			g.UUID = uuid.NewString()
		} else if _, err := uuid.Parse(g.UUID); err != nil {
			return models.E(models.Invalid, "uuid", "%q is not a uuid", g.UUID)
		}
		g.Rules = maps.Clone(g.Rules)
		normaliseGroup(g)
		if err := validateGroup(g); err != nil {
			return err
		}
		limit, err := quotaLimit(t.tx, g.ProjectID, models.QuotaServerGroups)
		if err != nil {
			return err
		}
		if limit >= 0 {
			var n int64
			if err = t.tx.Model(&models.ServerGroup{}).Where("project_id = ?", g.ProjectID).Count(&n).Error; err != nil {
				return err
			}
			if int(n)+1 > limit {
				return models.E(models.OverQuota, "", "Quota exceeded, too many server groups.")
			}
		}
		members, err := t.checkMembers(g.UUID, g.Members)
		if err != nil {
			return err
		}
		g.Members = members
		if err := t.checkMemberQuota(g, 0); err != nil {
			return err
		}
		var n int64
		if err := t.tx.Model(&models.ServerGroup{}).Where("uuid = ?", g.UUID).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return models.E(models.Conflict, "uuid", "server group %s already exists", g.UUID)
		}
		g.Generation = 0
		g.CreatedAt, g.UpdatedAt = t.now, t.now
		if err := t.tx.Create(g).Error; err != nil {
			return err
		}
		return t.audit("create", "server_group", g.UUID, g.Name, nil, g)
	}()
}

// UpdateServerGroup lets fn change a group's name, policy, rules and members
// (server uuids); growing the members checks server_group_members.
func (s *Store) UpdateServerGroup(ctx context.Context, a Actor, id string, generation int64, fn func(*models.ServerGroup) error) (*models.ServerGroup, error) {
	var out *models.ServerGroup
	err := s.write(ctx, a, "store.UpdateServerGroup", func(t *txn) (err error) {
		t.touchGroups()
		out, err = t.updateServerGroup(id, generation, fn)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// updateServerGroup is UpdateServerGroup inside a write.
func (t *txn) updateServerGroup(id string, generation int64, fn func(*models.ServerGroup) error) (*models.ServerGroup, error) {
	var out *models.ServerGroup
	err := func() error {
		cur, err := findGroup(t.tx, id)
		if err != nil {
			return err
		}
		if generation != AnyGeneration && cur.Generation != generation {
			return staleErr("server group", cur.Name)
		}
		before := *cur
		next := *cur
		next.Rules = maps.Clone(cur.Rules)
		next.Members = slices.Clone(cur.Members)
		if fn != nil {
			if err = fn(&next); err != nil {
				return err
			}
		}
		next.UUID, next.CreatedAt = cur.UUID, cur.CreatedAt
		normaliseGroup(&next)
		if err = validateGroup(&next); err != nil {
			return err
		}
		if next.Members, err = t.checkMembers(cur.UUID, next.Members); err != nil {
			return err
		}
		if err := t.checkMemberQuota(&next, len(cur.Members)); err != nil {
			return err
		}
		next.Generation = cur.Generation + 1
		next.UpdatedAt = t.now
		res := t.tx.Model(&models.ServerGroup{UUID: cur.UUID}).Where("generation = ?", cur.Generation).
			Select("Name", "ProjectID", "UserID", "Policy", "Rules", "Members", "Generation", "UpdatedAt").Updates(&next)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return staleErr("server group", cur.Name)
		}
		out = &next
		return t.audit("update", "server_group", cur.UUID, next.Name, &before, &next)
	}()
	return out, err
}

// DeleteServerGroup removes a group (its servers stay).
func (s *Store) DeleteServerGroup(ctx context.Context, a Actor, id string, generation int64) error {
	return s.write(ctx, a, "store.DeleteServerGroup", func(t *txn) error {
		t.touchGroups()
		return t.deleteServerGroup(id, generation)
	})
}

// deleteServerGroup is DeleteServerGroup inside a write.
func (t *txn) deleteServerGroup(id string, generation int64) error {
	return func() error {
		cur, err := findGroup(t.tx, id)
		if err != nil {
			return err
		}
		if generation != AnyGeneration && cur.Generation != generation {
			return staleErr("server group", cur.Name)
		}
		res := t.tx.Where("uuid = ? AND generation = ?", cur.UUID, cur.Generation).Delete(&models.ServerGroup{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return staleErr("server group", cur.Name)
		}
		return t.audit("delete", "server_group", cur.UUID, cur.Name, cur, nil)
	}()
}

// GetQuota returns a project's limit for resource, or models.DefaultQuota.
// -1 means unlimited.
func (s *Store) GetQuota(ctx context.Context, project, resource string) (int, error) {
	if err := validQuotaResource(resource); err != nil {
		return 0, err
	}
	n, err := quotaLimit(s.rdb.WithContext(ctx), project, resource)
	return n, mapErr("store.GetQuota", err)
}

func validQuotaResource(r string) error {
	if r != models.QuotaServerGroups && r != models.QuotaServerGroupMembers {
		return models.E(models.Invalid, "resource", "unknown quota resource %q (want %s or %s)", r, models.QuotaServerGroups, models.QuotaServerGroupMembers)
	}
	return nil
}

// SetQuota sets a project's limit for resource (-1 = unlimited).
func (s *Store) SetQuota(ctx context.Context, a Actor, project, resource string, limit int) error {
	if err := validQuotaResource(resource); err != nil {
		return err
	}
	if limit < -1 {
		return models.E(models.Invalid, "limit", "a quota limit is -1 (unlimited) or more, not %d", limit)
	}
	return s.write(ctx, a, "store.SetQuota", func(t *txn) error {
		t.keepsWorld() // no part of the world
		old, err := quotaLimit(t.tx, project, resource)
		if err != nil {
			return err
		}
		q := models.Quota{ProjectID: project, Resource: resource, Limit: limit}
		if err := t.tx.Where("project_id = ? AND resource = ?", project, resource).Delete(&models.Quota{}).Error; err != nil {
			return err
		}
		if err := t.tx.Create(&q).Error; err != nil {
			return err
		}
		return t.audit("set", "quota", project+"/"+resource, resource,
			models.Quota{ProjectID: project, Resource: resource, Limit: old}, q)
	})
}

// ListQuotas returns the limits explicitly set ("" = every project).
func (s *Store) ListQuotas(ctx context.Context, project string) ([]models.Quota, error) {
	var out []models.Quota
	q := s.rdb.WithContext(ctx).Order("project_id, resource")
	if project != "" {
		q = q.Where("project_id = ?", project)
	}
	err := q.Find(&out).Error
	return out, mapErr("store.ListQuotas", err)
}
