package store

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"

	"gorm.io/gorm"

	"corral/models"
	"corral/models/scheduling"
)

// QuotaResources lists the quotas corral enforces, in display order.
var QuotaResources = []string{models.QuotaServerGroups, models.QuotaServerGroupMembers}

// ProjectUsage is one project's quota limits and what it uses of them.
type ProjectUsage struct {
	ProjectID string
	// Limits holds the limits set explicitly; a resource missing here is at
	// models.DefaultQuota.
	Limits  map[string]int
	Servers int
	Users   int
	Groups  int
	// LargestGroup is the group with the most members (its members are
	// what server_group_members limits); empty when the project has none.
	LargestGroup        string // uuid
	LargestGroupName    string
	LargestGroupMembers int
}

// Limit returns the effective limit for resource and whether it was set
// explicitly (-1 = unlimited).
func (u ProjectUsage) Limit(resource string) (limit int, set bool) {
	if n, ok := u.Limits[resource]; ok {
		return n, true
	}
	return models.DefaultQuota, false
}

// Used returns what the project uses of resource: its number of groups, or
// the member count of its largest group.
func (u ProjectUsage) Used(resource string) int {
	if resource == models.QuotaServerGroupMembers {
		return u.LargestGroupMembers
	}
	return u.Groups
}

// ListProjectUsage returns, sorted by project id, every project that owns
// servers, server groups, users or quota rows, with its limits and usage.
// A non-empty project restricts the answer to that one project (which is
// then returned even when it owns nothing, at the defaults).
func (s *Store) ListProjectUsage(ctx context.Context, project string) ([]ProjectUsage, error) {
	by := map[string]*ProjectUsage{}
	get := func(p string) *ProjectUsage {
		u := by[p]
		if u == nil {
			u = &ProjectUsage{ProjectID: p, Limits: map[string]int{}}
			by[p] = u
		}
		return u
	}
	if project != "" {
		get(project)
	}
	scope := func(q *gorm.DB) *gorm.DB {
		q = q.Where("project_id <> ''")
		if project != "" {
			q = q.Where("project_id = ?", project)
		}
		return q
	}
	type count struct {
		ProjectID string
		N         int
	}
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		for _, c := range []struct {
			model any
			add   func(*ProjectUsage, int)
		}{
			{&models.Server{}, func(u *ProjectUsage, n int) { u.Servers = n }},
			{&models.User{}, func(u *ProjectUsage, n int) { u.Users = n }},
		} {
			var rows []count
			if err := scope(tx.Model(c.model)).Select("project_id, COUNT(*) AS n").Group("project_id").Scan(&rows).Error; err != nil {
				return err
			}
			for _, r := range rows {
				c.add(get(r.ProjectID), r.N)
			}
		}
		// Members are a JSON list, so the largest group is found here
		// rather than in SQL; only the columns needed are read.
		var groups []models.ServerGroup
		if err := scope(tx.Model(&models.ServerGroup{})).Select("uuid, name, project_id, members").Order("created_at, uuid").Find(&groups).Error; err != nil {
			return err
		}
		for _, g := range groups {
			u := get(g.ProjectID)
			u.Groups++
			if u.LargestGroup == "" || len(g.Members) > u.LargestGroupMembers {
				u.LargestGroup, u.LargestGroupName, u.LargestGroupMembers = g.UUID, g.Name, len(g.Members)
			}
		}
		var qs []models.Quota
		if err := scope(tx.Model(&models.Quota{})).Find(&qs).Error; err != nil {
			return err
		}
		for _, q := range qs {
			get(q.ProjectID).Limits[q.Resource] = q.Limit
		}
		return nil
	})
	if err != nil {
		return nil, mapErr("store.ListProjectUsage", err)
	}
	out := make([]ProjectUsage, 0, len(by))
	for _, u := range by {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProjectID < out[j].ProjectID })
	return out, nil
}

// GetProjectUsage is ListProjectUsage for one project.
func (s *Store) GetProjectUsage(ctx context.Context, project string) (ProjectUsage, error) {
	if err := validQuotaProject(project); err != nil {
		return ProjectUsage{}, err
	}
	us, err := s.ListProjectUsage(ctx, project)
	if err != nil {
		return ProjectUsage{}, err
	}
	return us[0], nil
}

func validQuotaProject(p string) error {
	if strings.TrimSpace(p) == "" {
		return models.E(models.Invalid, "project", "name the project whose quotas to use")
	}
	if p != strings.TrimSpace(p) || len(p) > 255 {
		return models.E(models.Invalid, "project", "a project id has no surrounding spaces and at most 255 characters")
	}
	return nil
}

// QuotaUpdate changes some of one project's limits in one write.
type QuotaUpdate struct {
	// Set gives new limits (-1 = unlimited).
	Set map[string]int
	// Reset puts resources back to models.DefaultQuota (removes the rows).
	Reset []string
	// Expect, when given, holds each resource's effective limit as the
	// caller last saw it; a different stored limit means someone else
	// changed it meanwhile, and nothing is written.
	Expect map[string]int
	// Force allows a limit below what the project already uses, as Nova's
	// quota-sets "force" does; without it such a limit is refused.
	Force bool
}

// errNoQuotaChange ends a write that would change nothing, so that no
// empty audit event is recorded.
var errNoQuotaChange = errors.New("no quota change")

// UpdateQuotas applies u to project in one audited transaction and returns
// the resources whose limit actually changed (nil when none did, which is
// not an error). Refusals name the resource as the error's field.
func (s *Store) UpdateQuotas(ctx context.Context, a Actor, project string, u QuotaUpdate) ([]string, error) {
	if err := checkQuotaUpdate(project, u); err != nil {
		return nil, err
	}
	var changed []string
	err := s.write(ctx, a, "store.UpdateQuotas", func(t *txn) error {
		t.keepsWorld() // no part of the world
		var err error
		if changed, err = t.updateQuotas(project, u); err != nil {
			return err
		}
		if len(changed) == 0 {
			return errNoQuotaChange
		}
		return nil
	})
	if errors.Is(err, errNoQuotaChange) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return changed, nil
}

// checkQuotaUsage refuses limits below the project's current usage, with
// Nova's wording for the same refusal.
func (t *txn) checkQuotaUsage(project string, set map[string]int) error {
	if len(set) == 0 {
		return nil
	}
	var groups []models.ServerGroup
	if err := t.tx.Model(&models.ServerGroup{}).Select("uuid, members").Where("project_id = ?", project).Find(&groups).Error; err != nil {
		return err
	}
	used := map[string]int{models.QuotaServerGroups: len(groups)}
	for _, g := range groups {
		used[models.QuotaServerGroupMembers] = max(used[models.QuotaServerGroupMembers], len(g.Members))
	}
	for _, r := range QuotaResources {
		n, ok := set[r]
		if ok && n >= 0 && n < used[r] {
			return models.E(models.Invalid, r, "Quota limit %d for %s must be greater than or equal to already used and reserved %d.", n, r, used[r])
		}
	}
	return nil
}

// updateQuotas applies u to project inside t and returns the resources
// whose limit changed (nil when none did).
func (t *txn) updateQuotas(project string, u QuotaUpdate) ([]string, error) {
	var changed []string
	var rows []models.Quota
	if err := t.tx.Where("project_id = ?", project).Find(&rows).Error; err != nil {
		return nil, err
	}
	cur := map[string]int{}
	for _, q := range rows {
		cur[q.Resource] = q.Limit
	}
	effective := func(r string) int {
		if n, ok := cur[r]; ok {
			return n
		}
		return models.DefaultQuota
	}
	for _, r := range QuotaResources {
		if want, ok := u.Expect[r]; ok && effective(r) != want {
			return nil, models.E(models.Conflict, "generation", "the quotas of project %s were changed by someone else — reload", project)
		}
	}
	if !u.Force {
		if err := t.checkQuotaUsage(project, u.Set); err != nil {
			return nil, err
		}
	}
	for _, r := range QuotaResources {
		old, had := cur[r]
		oldRow := models.Quota{ProjectID: project, Resource: r, Limit: effective(r)}
		if n, ok := u.Set[r]; ok {
			if had && old == n {
				continue
			}
			q := models.Quota{ProjectID: project, Resource: r, Limit: n}
			if err := t.tx.Where("project_id = ? AND resource = ?", project, r).Delete(&models.Quota{}).Error; err != nil {
				return nil, err
			}
			if err := t.tx.Create(&q).Error; err != nil {
				return nil, err
			}
			if err := t.audit("set", "quota", project+"/"+r, r, oldRow, q); err != nil {
				return nil, err
			}
			changed = append(changed, r)
		} else if slices.Contains(u.Reset, r) && had {
			if err := t.tx.Where("project_id = ? AND resource = ?", project, r).Delete(&models.Quota{}).Error; err != nil {
				return nil, err
			}
			def := models.Quota{ProjectID: project, Resource: r, Limit: models.DefaultQuota}
			if err := t.audit("reset", "quota", project+"/"+r, r, oldRow, def); err != nil {
				return nil, err
			}
			changed = append(changed, r)
		}
	}
	return changed, nil
}

// checkQuotaUpdate refuses a malformed update before anything is read.
func checkQuotaUpdate(project string, u QuotaUpdate) error {
	if err := validQuotaProject(project); err != nil {
		return err
	}
	for r, n := range u.Set {
		if err := validQuotaResource(r); err != nil {
			return err
		}
		if n < -1 {
			return models.E(models.Invalid, r, "a quota limit is -1 (unlimited) or more, not %d", n)
		}
		if slices.Contains(u.Reset, r) {
			return models.E(models.Invalid, r, "%s cannot be both set and reset", r)
		}
	}
	for _, r := range u.Reset {
		if err := validQuotaResource(r); err != nil {
			return err
		}
	}
	return nil
}

// applyQuotaChange writes a set_quotas change and returns what undoes it:
// the earlier limits of what it changed, and a reset of what had none.
func (t *txn) applyQuotaChange(c scheduling.Change) ([]scheduling.Change, error) {
	u := QuotaUpdate{Set: c.Quotas, Reset: c.Reset, Expect: c.Expect, Force: c.Force}
	if err := checkQuotaUpdate(c.Project, u); err != nil {
		return nil, err
	}
	var rows []models.Quota
	if err := t.tx.Where("project_id = ?", c.Project).Find(&rows).Error; err != nil {
		return nil, err
	}
	changed, err := t.updateQuotas(c.Project, u)
	if err != nil || len(changed) == 0 {
		return nil, err
	}
	undo := scheduling.Change{Op: scheduling.OpSetQuotas, Project: c.Project,
		QuotaFields: scheduling.QuotaFields{Quotas: map[string]int{}, Force: true}}
	for _, r := range changed {
		i := slices.IndexFunc(rows, func(q models.Quota) bool { return q.Resource == r })
		if i >= 0 {
			undo.Quotas[r] = rows[i].Limit
		} else {
			undo.Reset = append(undo.Reset, r)
		}
	}
	return []scheduling.Change{undo}, nil
}
