package store

import (
	"context"
	"errors"

	"corral/models/scheduling"
)

// Apply writes changes to live data in one transaction: every change or
// none, each object through the checks of a direct edit, audited as the
// actor. It is the store's side of the one write path: console forms, the
// compute and Placement APIs, drafts and imports all end here when corral
// runs standalone. A change that does not apply is an Invalid error naming
// it ("changes[2].aggregate"); an object changed by someone else since the
// generation a change names is a Conflict. Changes that change nothing
// write nothing: the answer then has no revision and no revert.
func (s *Store) Apply(ctx context.Context, a Actor, changes []scheduling.Change) (*scheduling.Applied, error) {
	const op = "store.Apply"
	if len(changes) == 0 {
		return &scheduling.Applied{}, nil
	}
	var out scheduling.Applied
	err := s.write(ctx, a, op, func(t *txn) error {
		revert, err := t.applyChanges(changes)
		if err != nil {
			return err
		}
		if len(revert) == 0 && t.events == 0 {
			return errNothingChanged
		}
		out.Revert, out.Revision = revert, t.rev
		return nil
	})
	if errors.Is(err, errNothingChanged) {
		return &scheduling.Applied{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// errNothingChanged rolls back a write whose changes were all no-ops. It
// is a plain error so that the write's wrapping keeps it for errors.Is (a
// corral error is copied when wrapped).
var errNothingChanged = errors.New("nothing changed")

// applyChanges applies changes inside t and returns what undoes them.
func (t *txn) applyChanges(changes []scheduling.Change) ([]scheduling.Change, error) {
	if err := t.checkSettingsGeneration(changes); err != nil {
		return nil, err
	}
	cur, err := loadWorld(t.tx)
	if err != nil {
		return nil, err
	}
	next, err := scheduling.ApplyChanges(cur, changes)
	if err != nil {
		return nil, err
	}
	if err := t.writeDraftWorld(cur, next, changes); err != nil {
		return nil, err
	}
	return scheduling.ChangesBetween(next, cur), nil
}
