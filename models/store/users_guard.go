package store

import (
	"gorm.io/gorm/clause"

	"corral/models"
)

// keepAnAdmin refuses a change that would leave no admin: cur is the user as
// stored, next what it is about to become (nil when it is being deleted).
//
// It runs inside the write transaction, after the revision row's lock, so
// two admins demoting each other at once are ordered: the second sees the
// first's commit and is refused. On PostgreSQL the surviving admin's row is
// locked too, so that even a writer that skipped the revision lock could
// not demote it before this transaction commits.
func (t *txn) keepAnAdmin(cur, next *models.User) error {
	if cur.Role != models.RoleAdmin || (next != nil && next.Role == models.RoleAdmin) {
		return nil
	}
	q := t.tx.Model(&models.User{}).Select("id").
		Where("role = ? AND id <> ?", models.RoleAdmin, cur.ID).Order("id").Limit(1)
	if t.tx.Dialector.Name() == "postgres" {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var others []int64
	if err := q.Scan(&others).Error; err != nil {
		return err
	}
	if len(others) > 0 {
		return nil
	}
	if next == nil {
		return models.E(models.Conflict, "", "%s is the last admin and cannot be deleted: make another user admin first", cur.Name)
	}
	return models.E(models.Conflict, "role", "%s is the last admin and cannot become %s: make another user admin first", cur.Name, next.Role)
}
