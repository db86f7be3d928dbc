package store

import (
	"reflect"
	"slices"
	"time"

	"corral/models"
)

// rewriteWorld replaces the domain tables' rows with merged. Generations
// move for every object the import touched (and for providers whose
// aggregates changed); untouched objects keep theirs, ids and creation times.
func (t *txn) rewriteWorld(cur, in, merged *models.World) error {
	touched := touchedByImport(in)
	for _, table := range []string{"aggregate_members", "aggregates", "server_groups", "servers", "flavors", "providers"} {
		if err := t.tx.Exec("DELETE FROM " + table).Error; err != nil {
			return err
		}
	}
	for _, step := range []func(cur, merged *models.World, touched map[string]bool) error{
		t.rewriteProviders, t.rewriteAggregates, t.rewriteFlavors, t.rewriteServers, t.rewriteServerGroups,
	} {
		if err := step(cur, merged, touched); err != nil {
			return err
		}
	}
	if !reflect.DeepEqual(merged.Settings, cur.Settings) {
		// Settings get their own event too: a settings change is worth
		// finding in the log without reading every import.
		if err := t.saveSettings(AnyGeneration, merged.Settings); err != nil {
			return err
		}
	}
	return nil
}

// touchedByImport names the objects an imported world mentions: "p", "a",
// "f" or "g" and the provider's, aggregate's, flavor's or group's key.
func touchedByImport(in *models.World) map[string]bool {
	touched := map[string]bool{}
	for _, p := range in.Providers {
		touched["p"+p.UUID] = true
	}
	for _, a := range in.Aggregates {
		touched["a"+a.UUID] = true
	}
	for _, f := range in.Flavors {
		touched["f"+f.ID] = true
	}
	for _, g := range in.ServerGroups {
		touched["g"+g.UUID] = true
	}
	return touched
}

// rewriteProviders inserts merged's providers; a provider's generation
// moves when the import touched it or its aggregates changed.
func (t *txn) rewriteProviders(cur, merged *models.World, touched map[string]bool) error {
	oldProv := map[string]models.Provider{}
	for _, p := range cur.Providers {
		oldProv[p.UUID] = p
	}
	oldAggsOf, newAggsOf := aggregatesOfProviders(cur), aggregatesOfProviders(merged)
	now := t.now
	for i := range merged.Providers {
		p := &merged.Providers[i]
		p.Generation, p.CreatedAt, p.UpdatedAt = 0, now, now
		if old, ok := oldProv[p.UUID]; ok {
			p.Generation, p.CreatedAt, p.UpdatedAt = old.Generation, old.CreatedAt, old.UpdatedAt
			a, b := slices.Clone(oldAggsOf[p.UUID]), slices.Clone(newAggsOf[p.UUID])
			slices.Sort(a)
			slices.Sort(b)
			if touched["p"+p.UUID] || !slices.Equal(a, b) {
				p.Generation, p.UpdatedAt = old.Generation+1, now
			}
		}
	}
	return t.tx.CreateInBatches(merged.Providers, 500).Error
}

// aggregatesOfProviders maps each member provider to its aggregates' uuids.
func aggregatesOfProviders(w *models.World) map[string][]string {
	out := map[string][]string{}
	for _, a := range w.Aggregates {
		for _, m := range a.Members {
			out[m] = append(out[m], a.UUID)
		}
	}
	return out
}

// rewriteAggregates inserts merged's aggregates and their members; kept
// aggregates keep their ids.
func (t *txn) rewriteAggregates(cur, merged *models.World, touched map[string]bool) error {
	oldAgg := map[string]models.Aggregate{}
	for _, a := range cur.Aggregates {
		oldAgg[a.UUID] = a
	}
	now := t.now
	var rows []models.AggregateMember
	for i := range merged.Aggregates {
		a := &merged.Aggregates[i]
		a.ID, a.Generation, a.CreatedAt, a.UpdatedAt = 0, 0, now, now
		if old, ok := oldAgg[a.UUID]; ok {
			a.ID, a.Generation, a.CreatedAt, a.UpdatedAt = old.ID, old.Generation, old.CreatedAt, old.UpdatedAt
			if touched["a"+a.UUID] {
				a.Generation, a.UpdatedAt = old.Generation+1, now
			}
		}
		for _, m := range a.Members {
			rows = append(rows, models.AggregateMember{AggregateUUID: a.UUID, ProviderUUID: m})
		}
	}
	// Kept aggregates go in with their ids first; new ones then take fresh
	// ids from the sequence, which is already past every kept id.
	var keep, fresh []models.Aggregate
	for _, a := range merged.Aggregates {
		if a.ID != 0 {
			keep = append(keep, a)
		} else {
			fresh = append(fresh, a)
		}
	}
	for _, batch := range [][]models.Aggregate{keep, fresh} {
		if len(batch) > 0 {
			if err := t.tx.Omit("Members").CreateInBatches(batch, 500).Error; err != nil {
				return err
			}
		}
	}
	if len(rows) > 0 {
		if err := t.tx.CreateInBatches(rows, 1000).Error; err != nil {
			return err
		}
	}
	return nil
}

func (t *txn) rewriteFlavors(cur, merged *models.World, touched map[string]bool) error {
	oldFlv := map[string]models.Flavor{}
	for _, f := range cur.Flavors {
		oldFlv[f.ID] = f
	}
	now := t.now
	for i := range merged.Flavors {
		f := &merged.Flavors[i]
		f.Generation, f.CreatedAt, f.UpdatedAt = 0, now, now
		if old, ok := oldFlv[f.ID]; ok {
			f.Generation, f.CreatedAt, f.UpdatedAt = old.Generation, old.CreatedAt, old.UpdatedAt
			if touched["f"+f.ID] {
				f.Generation, f.UpdatedAt = old.Generation+1, now
			}
		}
	}
	if len(merged.Flavors) > 0 {
		return t.tx.CreateInBatches(merged.Flavors, 500).Error
	}
	return nil
}

func (t *txn) rewriteServers(cur, merged *models.World, _ map[string]bool) error {
	oldSrv := map[string]models.Server{}
	for _, s := range cur.Servers {
		oldSrv[s.UUID] = s
	}
	now := t.now
	for i := range merged.Servers {
		s := &merged.Servers[i]
		s.CreatedAt, s.UpdatedAt = now, now
		if old, ok := oldSrv[s.UUID]; ok {
			s.CreatedAt = old.CreatedAt
		}
	}
	if len(merged.Servers) > 0 {
		return t.tx.CreateInBatches(merged.Servers, 500).Error
	}
	return nil
}

func (t *txn) rewriteServerGroups(cur, merged *models.World, touched map[string]bool) error {
	oldGrp := map[string]models.ServerGroup{}
	for _, g := range cur.ServerGroups {
		oldGrp[g.UUID] = g
	}
	now := t.now
	for i := range merged.ServerGroups {
		g := &merged.ServerGroups[i]
		// Distinct creation times keep the listing in import order.
		g.Generation, g.CreatedAt, g.UpdatedAt = 0, now.Add(timeStep(i)), now
		if old, ok := oldGrp[g.UUID]; ok {
			g.Generation, g.CreatedAt, g.UpdatedAt = old.Generation, old.CreatedAt, old.UpdatedAt
			if touched["g"+g.UUID] {
				g.Generation, g.UpdatedAt = old.Generation+1, now
			}
		}
	}
	if len(merged.ServerGroups) > 0 {
		return t.tx.CreateInBatches(merged.ServerGroups, 500).Error
	}
	return nil
}

// timeStep spaces out creation times of objects inserted in one go.
func timeStep(i int) time.Duration { return time.Duration(i) * time.Microsecond }
