package store

import (
	"context"
	"strings"

	"corral/models"
	"corral/models/scheduling"
)

// The two draft operations a rollout to the cloud needs (see
// cloud.DraftStore and cloud.RolloutStore), in the types the cloud
// adapter knows.

// PendingDraft is the draft a rollout plans: its name and changes. A draft
// whose live objects changed since it touched them no longer applies
// (Conflict, naming what changed).
func (s *Store) PendingDraft(ctx context.Context, id string) (name string, changes []scheduling.Change, err error) {
	d, err := s.GetDraft(ctx, id)
	if err != nil {
		return "", nil, err
	}
	conflicts, err := s.DraftConflicts(ctx, d)
	if err != nil {
		return "", nil, err
	}
	if len(conflicts) > 0 {
		return "", nil, models.E(models.Conflict, "draft", "draft %s no longer applies: %s", d.Name, strings.Join(conflicts, "; "))
	}
	changes, err = d.DraftChanges()
	return d.Name, changes, err
}

// SaveDraft stores changes as a new draft named name and returns its id.
func (s *Store) SaveDraft(ctx context.Context, a Actor, name string, changes []scheduling.Change) (string, error) {
	d, err := s.CreateDraft(ctx, a, name)
	if err == nil {
		d, err = s.SetDraftChanges(ctx, a, d.ID, d.Version, changes)
	}
	if err != nil {
		return "", err
	}
	return d.ID, nil
}
