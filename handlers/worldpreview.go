package handlers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"corral/models"
	"corral/models/store"
	"corral/views"
)

// WorldPlan is a checked import: the world store.ImportWorld will receive,
// what it would change and the revision the check was made against.
type WorldPlan struct {
	World       *models.World // after Blazar translation, ready for ImportWorld
	Replace     bool
	Revision    int64
	Kinds       []views.WorldKindDiff
	Settings    bool // whether the settings would change
	BlazarLines []string
}

// PlanWorldImport checks w as an import into st would and says what it
// would change, without changing st. The check is the import itself, run on
// a scratch SQLite copy of the current world: the store's validation is the
// only one there is, so the preview cannot disagree with the real import
// about what is valid, nor about how a merge matches objects by uuid or
// name. A bad world returns the store's error, which names the field.
func PlanWorldImport(ctx context.Context, st *store.Store, w *models.World, replace, blazar bool) (*WorldPlan, error) {
	const op = "handlers.PlanWorldImport"
	in, lines, err := PrepareWorldImport(ctx, st, w, replace, blazar)
	if err != nil {
		return nil, err
	}
	cur, rev, err := st.LoadWorld(ctx)
	if err != nil {
		return nil, models.Wrap(op, err)
	}
	next, err := dryRunImport(ctx, cur, in, replace)
	if err != nil {
		return nil, err
	}
	kinds, settings := DiffWorlds(cur, next)
	return &WorldPlan{World: in, Replace: replace, Revision: rev, Kinds: kinds, Settings: settings, BlazarLines: lines}, nil
}

// scratchActor is who the scratch store's audit log names; that log is
// thrown away with the scratch store.
var scratchActor = store.Actor{Name: "preview", Via: "console", Role: models.RoleAdmin}

// dryRunImport imports in on top of a scratch copy of cur and returns the
// world that results.
func dryRunImport(ctx context.Context, cur, in *models.World, replace bool) (*models.World, error) {
	const op = "handlers.dryRunImport"
	dir, err := os.MkdirTemp("", "corral-world-check-")
	if err != nil {
		return nil, models.Wrap(op, err)
	}
	defer os.RemoveAll(dir)
	scratch, err := store.Open(ctx, filepath.Join(dir, "check.db"))
	if err != nil {
		return nil, models.Wrap(op, err)
	}
	defer scratch.Close()
	// A replace ignores the current objects, so only a merge needs them.
	if !replace {
		if err = scratch.ImportWorld(ctx, scratchActor, cur, true); err != nil {
			// The current world failing its own checks is the console's
			// fault, not the file's: report it as internal.
			return nil, &models.Error{Op: op, Kind: models.Internal, Msg: "copying the current world for the check failed", Err: err}
		}
	}
	if err = scratch.ImportWorld(ctx, scratchActor, in, replace); err != nil {
		return nil, err
	}
	next, err := scratch.ExportWorld(ctx)
	if err != nil {
		return nil, models.Wrap(op, err)
	}
	return next, nil
}

// worldKinds names the kinds of objects in the order the preview lists them.
var worldKinds = []struct{ kind, label string }{
	{"providers", "Providers"},
	{"aggregates", "Aggregates"},
	{"flavors", "Flavors"},
	{"servers", "Servers"},
	{"server_groups", "Server groups"},
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
		out["flavors"] = append(out["flavors"], worldEntry{f.ID, f.Name, fp([]any{f.Name, f.VCPUs, f.RAMMB, f.DiskGB, f.ExtraSpecs})})
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
	return out
}

// DiffWorlds compares two worlds object by object (providers, aggregates,
// servers and groups by uuid, flavors by id) and reports, per kind, the
// names of the objects added to, changed in and removed from cur to give
// next, and whether the settings differ. Both worlds should come from the
// store, which normalises what it returns, so that equal content compares
// equal.
func DiffWorlds(cur, next *models.World) ([]views.WorldKindDiff, bool) {
	before, after := entriesOf(cur), entriesOf(next)
	var out []views.WorldKindDiff
	for _, k := range worldKinds {
		d := views.WorldKindDiff{Kind: k.kind, Label: k.label}
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
