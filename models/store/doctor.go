package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"corral/models"
)

// FindingAck says a doctor finding is known: who acknowledged it, why, and
// the fingerprint of what the finding said then. A finding whose
// fingerprint has moved on is no longer acknowledged.
type FindingAck struct {
	Key         string    `gorm:"column:finding_key;primaryKey" json:"key"`
	Code        string    `gorm:"not null" json:"code"`
	Fingerprint string    `gorm:"not null" json:"fingerprint"`
	Actor       string    `json:"actor"`
	Reason      string    `json:"reason"`
	CreatedAt   time.Time `json:"created_at"`
}

func (FindingAck) TableName() string { return "doctor_acks" }

// AckFinding records (or replaces) the acknowledgement of the finding
// under ack.Key, as a; Actor and CreatedAt are filled in. It changes no
// object of the world, so the live revision stays.
func (s *Store) AckFinding(ctx context.Context, a Actor, ack FindingAck) (*FindingAck, error) {
	const op = "store.AckFinding"
	ack.Reason = strings.TrimSpace(ack.Reason)
	switch {
	case ack.Key == "" || len(ack.Key) > 255:
		return nil, models.E(models.Invalid, "key", "a finding key is needed")
	case ack.Code == "" || ack.Fingerprint == "":
		return nil, models.E(models.Invalid, "fingerprint", "a finding's code and fingerprint are needed")
	case ack.Reason == "":
		return nil, models.E(models.Invalid, "reason", "say why the finding is acknowledged")
	case len(ack.Reason) > 1000:
		return nil, models.E(models.Invalid, "reason", "the reason is longer than 1000 characters")
	}
	ack.Actor = a.Name
	err := s.draftWrite(ctx, a, func(t *txn) error {
		ack.CreatedAt = t.now
		if err := t.tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&ack).Error; err != nil {
			return err
		}
		return t.audit("acknowledge", "finding", ack.Key, ack.Code, nil, ack)
	})
	if err != nil {
		return nil, mapErr(op, err)
	}
	return &ack, nil
}

// UnackFinding removes the acknowledgement under key (NotFound when none).
func (s *Store) UnackFinding(ctx context.Context, a Actor, key string) error {
	err := s.draftWrite(ctx, a, func(t *txn) error {
		var ack FindingAck
		if err := t.tx.Where("finding_key = ?", key).Take(&ack).Error; err != nil {
			return err
		}
		if err := t.tx.Delete(&ack).Error; err != nil {
			return err
		}
		return t.audit("unacknowledge", "finding", ack.Key, ack.Code, ack, nil)
	})
	return mapErr("store.UnackFinding", err)
}

// FindingAcks returns every acknowledgement by key.
func (s *Store) FindingAcks(ctx context.Context) (map[string]FindingAck, error) {
	var rows []FindingAck
	if err := s.rdb.WithContext(ctx).Order("finding_key").Find(&rows).Error; err != nil {
		return nil, mapErr("store.FindingAcks", err)
	}
	out := make(map[string]FindingAck, len(rows))
	for _, r := range rows {
		out[r.Key] = r
	}
	return out, nil
}

// Consumers returns Placement's consumers with their allocations, ordered
// by UUID (the live snapshot does not hold them).
func (s *Store) Consumers(ctx context.Context) ([]models.Consumer, error) {
	var out []models.Consumer
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		out, err = loadConsumers(tx)
		return err
	})
	return out, mapErr("store.Consumers", err)
}
