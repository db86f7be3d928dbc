package store

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"

	"corral/models"
	"corral/models/scheduling"
)

// ImportPlan is a checked import: the world ImportWorldAt will receive,
// what it would change and the revision the check was made against.
type ImportPlan struct {
	World           *models.World // after Blazar translation, ready for ImportWorldAt
	Replace         bool
	Revision        int64
	Kinds           []KindDiff // providers, aggregates, flavors, servers, server groups, consumers
	SettingsChanged bool
	BlazarLines     []string // one per Blazar convention restated, for a person
	// Next is the world the import leaves live (what a connected import
	// rolls out to the cloud).
	Next *models.World
}

// KindDiff names the objects of one kind that an import adds, changes and
// removes, each list sorted.
type KindDiff struct {
	Kind                    string // "providers", "aggregates", "flavors", "servers", "server_groups", "consumers"
	Label                   string // "Providers"
	Added, Changed, Removed []string
}

// planActor is who the plan's audit event names; it is rolled back with
// the rest of the plan.
var planActor = Actor{Name: "preview", Via: "plan", Role: models.RoleAdmin}

// errPlanned ends a plan's transaction: the import ran and was measured,
// and nothing of it may stay.
var errPlanned = errors.New("import planned; rolling back")

// PlanImport checks w as ImportWorld would and says what it would change,
// without changing anything. The check is the import itself, run inside a
// transaction that is always rolled back: the store's validation is the
// only one there is, so the plan cannot disagree with the real import
// about what is valid, nor about how a merge matches objects by uuid or
// name. With blazar, Blazar's conventions are first restated as corral's
// reservation and tenant tags (see PrepareImport). A bad world returns the
// store's error, which names the field. The plan holds the writers' lock
// while it runs, so its revision is the one it was checked against.
func (s *Store) PlanImport(ctx context.Context, w *models.World, replace, blazar bool) (*ImportPlan, error) {
	const op = "store.PlanImport"
	if w == nil {
		return nil, models.E(models.Invalid, "world", "no world given")
	}
	var plan *ImportPlan
	err := s.write(ctx, planActor, op, func(t *txn) error {
		var rev int64
		if err := t.tx.Raw("SELECT revision FROM corral_revision WHERE id = 1").Scan(&rev).Error; err != nil {
			return err
		}
		cur, err := loadWorld(t.tx)
		if err != nil {
			return err
		}
		translated, lines := w, []string(nil)
		if blazar {
			translated, lines = scheduling.TranslateBlazar(w, settingsAfterImport(cur.Settings, w, replace))
		}
		in := cloneWorld(translated)
		if err = checkIncoming(in); err != nil {
			return err
		}
		before := cloneWorld(cur)
		// LoadWorld leaves the consumers out; the plan compares them too.
		if before.Consumers, err = loadConsumers(t.tx); err != nil {
			return err
		}
		if err = t.importWorld(cur, in, replace); err != nil {
			return err
		}
		next, err := loadWorld(t.tx)
		if err != nil {
			return err
		}
		if next.Consumers, err = loadConsumers(t.tx); err != nil {
			return err
		}
		kinds, settings := DiffWorlds(before, next)
		plan = &ImportPlan{World: translated, Replace: replace, Revision: rev - 1, // write has taken its own step
			Kinds: kinds, SettingsChanged: settings, BlazarLines: lines, Next: next}
		return errPlanned
	})
	if errors.Is(err, errPlanned) {
		return plan, nil
	}
	return nil, err
}

// PrepareImport is what both `corral import` and the console's world page
// do to a decoded world before ImportWorld: with blazar, Blazar's
// conventions are restated as corral's reservation and tenant tags, using
// the reservation prefixes that will be in force after the import. It
// returns the world to import (w itself is not modified) and one line per
// translation for a person to read.
func (s *Store) PrepareImport(ctx context.Context, w *models.World, replace, blazar bool) (*models.World, []string, error) {
	if w == nil {
		return nil, nil, models.E(models.Invalid, "world", "no world given")
	}
	if !blazar {
		return w, nil, nil
	}
	cur, _, err := s.GetSettings(ctx)
	if err != nil {
		return nil, nil, models.Wrap("store.PrepareImport", err)
	}
	out, lines := scheduling.TranslateBlazar(w, settingsAfterImport(cur, w, replace))
	return out, lines, nil
}

// worldKinds names the kinds of objects in the order a plan lists them.
var worldKinds = []struct{ kind, label string }{
	{"providers", "Providers"},
	{"aggregates", "Aggregates"},
	{"flavors", "Flavors"},
	{"servers", "Servers"},
	{"server_groups", "Server groups"},
	{"consumers", "Consumers (allocations)"},
}

// worldEntry is one object as the world format sees it: its identity, the
// name to show and its content without bookkeeping (generations, times,
// database ids), so that an object rewritten unchanged compares equal.
type worldEntry struct {
	id, name, content string
}

func entriesOf(w *models.World) map[string][]worldEntry {
	fp := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			return "" // the types below always marshal
		}
		return string(b)
	}
	out := map[string][]worldEntry{}
	for _, p := range w.Providers {
		out["providers"] = append(out["providers"], worldEntry{p.UUID, p.Name, fp([]any{p.Name, p.ParentUUID, p.Traits, p.Inventories, p.Usages})})
	}
	for _, a := range w.Aggregates {
		out["aggregates"] = append(out["aggregates"], worldEntry{a.UUID, a.Name, fp([]any{a.Name, a.AvailabilityZone, a.Metadata, a.Members})})
	}
	for _, f := range w.Flavors {
		out["flavors"] = append(out["flavors"], worldEntry{f.ID, f.Name, fp([]any{f.Name, f.VCPUs, f.RAMMB, f.DiskGB, f.EphemeralGB, f.SwapMB, f.ExtraSpecs})})
	}
	for _, s := range w.Servers {
		name := s.Name
		if name == "" {
			name = s.UUID
		}
		out["servers"] = append(out["servers"], worldEntry{s.UUID, name, fp([]any{s.Name, s.ProjectID, s.UserID, s.Host})})
	}
	for _, g := range w.ServerGroups {
		name := g.Name
		if name == "" {
			name = g.UUID
		}
		out["server_groups"] = append(out["server_groups"], worldEntry{g.UUID, name, fp([]any{g.Name, g.ProjectID, g.UserID, g.Policy, g.Rules, g.Members})})
	}
	for _, c := range w.Consumers {
		// A consumer has no name; its allocations are its content (the
		// generation is bookkeeping).
		out["consumers"] = append(out["consumers"], worldEntry{c.UUID, c.UUID, fp([]any{c.ProjectID, c.UserID, c.ConsumerType, c.Allocations})})
	}
	return out
}

// DiffWorlds compares two worlds object by object (providers, aggregates,
// servers, groups and consumers by uuid, flavors by id) and reports, per kind, the
// names of the objects added to, changed in and removed from cur to give
// next, and whether the settings differ. Both worlds should come from the
// store, which normalises what it returns, so that equal content compares
// equal.
func DiffWorlds(cur, next *models.World) ([]KindDiff, bool) {
	before, after := entriesOf(cur), entriesOf(next)
	var out []KindDiff
	for _, k := range worldKinds {
		d := KindDiff{Kind: k.kind, Label: k.label}
		old := make(map[string]worldEntry, len(before[k.kind]))
		for _, e := range before[k.kind] {
			old[e.id] = e
		}
		seen := make(map[string]bool, len(after[k.kind]))
		for _, e := range after[k.kind] {
			seen[e.id] = true
			o, ok := old[e.id]
			switch {
			case !ok:
				d.Added = append(d.Added, e.name)
			case o.content != e.content:
				d.Changed = append(d.Changed, e.name)
			}
		}
		for _, e := range before[k.kind] {
			if !seen[e.id] {
				d.Removed = append(d.Removed, e.name)
			}
		}
		slices.Sort(d.Added)
		slices.Sort(d.Changed)
		slices.Sort(d.Removed)
		out = append(out, d)
	}
	return out, !reflect.DeepEqual(normalSettings(cur.Settings), normalSettings(next.Settings))
}

// normalSettings treats an empty filter list and a missing one alike.
func normalSettings(s models.Settings) models.Settings {
	if len(s.EnabledFilters) == 0 {
		s.EnabledFilters = nil
	}
	return s
}
