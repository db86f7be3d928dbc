package store

import (
	"context"

	"corral/models"
)

// What the cloud write path (models/cloud's Applier) reads from corral's
// database besides what a sync and a rollout read.

// DraftVersion is the version of draft id (NotFound when there is none),
// for a rollout to check it against the version a person reviewed.
func (s *Store) DraftVersion(ctx context.Context, id string) (int64, error) {
	d, err := s.GetDraft(ctx, id)
	if err != nil {
		return 0, err
	}
	return d.Version, nil
}

// ImportedWorld is the world an import of w would leave live (merged into
// the live world, or replacing it), checked as ImportWorldAt checks it,
// without changing anything; and the revision it was computed at.
func (s *Store) ImportedWorld(ctx context.Context, w *models.World, replace bool) (*models.World, int64, error) {
	p, err := s.PlanImport(ctx, w, replace, false)
	if err != nil {
		return nil, 0, err
	}
	return p.Next, p.Revision, nil
}
