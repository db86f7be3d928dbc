package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"corral/models"
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
//
// It reads only the objects the changes name, so a write costs what it
// touches, not the size of the cloud.
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
	if out.Revert == nil {
		out.Revert = []scheduling.Change{}
	}
	return &out, nil
}

// errNothingChanged rolls back a write whose changes were all no-ops. It
// is a plain error so that the write's wrapping keeps it for errors.Is (a
// corral error is copied when wrapped).
var errNothingChanged = errors.New("nothing changed")

// applyChanges applies changes inside t and returns what undoes them.
// Changes of aggregates, flavors, server groups, providers' traits and
// inventories and the settings are applied by the core to the objects
// they name and the difference is written; the operations of Placement's
// resources are written one by one (a run of set_allocations as one
// write, as Placement counts usages and capacity once per request).
func (t *txn) applyChanges(changes []scheduling.Change) ([]scheduling.Change, error) {
	// Declared below, object by object, for the live snapshot.
	t.keepsWorld()
	if err := t.checkSettingsGeneration(changes); err != nil {
		return nil, err
	}
	if err := t.checkGenerations(changes); err != nil {
		return nil, err
	}
	var reverts [][]scheduling.Change
	for start := 0; start < len(changes); {
		end := start + 1
		var revert []scheduling.Change
		var err error
		if changes[start].Op == scheduling.OpSetQuotas {
			revert, err = t.applyQuotaChange(changes[start])
		} else if scheduling.IsPlacementOp(changes[start].Op) {
			for changes[start].Op == scheduling.OpSetAllocations && end < len(changes) && changes[end].Op == scheduling.OpSetAllocations {
				end++
			}
			revert, err = t.applyPlacementChanges(changes[start:end], start)
		} else {
			for end < len(changes) && !scheduling.IsPlacementOp(changes[end].Op) && changes[end].Op != scheduling.OpSetQuotas {
				end++
			}
			revert, err = t.applyWorldChanges(changes[start:end])
		}
		if err != nil {
			return nil, shiftField(err, start)
		}
		reverts = append(reverts, revert)
		start = end
	}
	// What the last part did is undone first.
	var out []scheduling.Change
	for i := len(reverts) - 1; i >= 0; i-- {
		out = append(out, reverts[i]...)
	}
	return out, nil
}

// shiftField renumbers the change an error names ("changes[1]…") by
// offset, for a part of the list that starts at change offset.
func shiftField(err error, offset int) error {
	var ce *models.Error
	if offset == 0 || !errors.As(err, &ce) || !strings.HasPrefix(ce.Field, "changes[") {
		return err
	}
	rest := strings.TrimPrefix(ce.Field, "changes[")
	n, tail, ok := strings.Cut(rest, "]")
	i, aerr := strconv.Atoi(n)
	if !ok || aerr != nil {
		return err
	}
	shifted := *ce
	shifted.Field = fmt.Sprintf("changes[%d]%s", i+offset, tail)
	return &shifted
}

// applyWorldChanges applies changes the core knows how to apply to the
// world: it loads what they name, applies them and writes the difference.
func (t *txn) applyWorldChanges(changes []scheduling.Change) ([]scheduling.Change, error) {
	cur, err := loadNamed(t.tx, changes)
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
	t.declareWritten(cur, next)
	return scheduling.ChangesBetween(next, cur), nil
}

// declareWritten tells the live snapshot which objects a write of the
// difference between cur and next may have changed: every one loaded.
func (t *txn) declareWritten(cur, next *models.World) {
	for _, w := range []*models.World{cur, next} {
		for i := range w.Aggregates {
			t.touchAggregates(w.Aggregates[i].UUID)
		}
		for i := range w.Providers {
			t.touchProviders(w.Providers[i].UUID)
		}
	}
	if len(cur.Flavors) > 0 || len(next.Flavors) > 0 {
		t.touchFlavors()
	}
	if len(cur.ServerGroups) > 0 || len(next.ServerGroups) > 0 {
		t.touchGroups()
	}
	if !reflect.DeepEqual(cur.Settings, next.Settings) {
		t.touchSettings()
	}
}

// checkGenerations refuses changes whose generation is not the one the
// object they name has now (a Conflict, like a direct edit with a stale
// generation); -1 asks that the object not exist. Consumers' generations
// are checked by the allocation write itself, the settings' by
// checkSettingsGeneration.
func (t *txn) checkGenerations(changes []scheduling.Change) error {
	// A form's changes all name the object it edits: it is read once.
	type found struct {
		name string
		gen  int64
		err  error
	}
	seen := map[[3]string]found{}
	for i, c := range changes {
		if c.Generation == nil || c.Op == scheduling.OpSetAllocations || c.Op == scheduling.OpSetSettings {
			continue // settings: checkSettingsGeneration; consumers: setAllocations
		}
		what, ref, project := namedObject(c)
		if what == "" {
			continue
		}
		key := [3]string{what, ref, project}
		f, ok := seen[key]
		if !ok {
			f.name, f.gen, f.err = t.generationOf(what, ref, project)
			seen[key] = f
		}
		at := fmt.Sprintf("changes[%d].generation", i)
		switch {
		case models.KindOf(f.err) == models.NotFound:
			continue // the change itself says what is missing
		case f.err != nil:
			return f.err
		case *c.Generation == scheduling.NoGeneration:
			return models.E(models.Conflict, at, "%s %s already exists", what, f.name)
		case f.gen != *c.Generation:
			return models.E(models.Conflict, at, "%s %s was changed by someone else — reload", what, f.name)
		}
	}
	return nil
}

// CheckGenerations refuses, as Apply would, changes whose generation is
// not the one the object they name has in corral now. Connected, the
// cloud write path checks with it the generations a console form read
// (corral's own: a sync gives an object the cloud changed a new one).
func (s *Store) CheckGenerations(ctx context.Context, changes []scheduling.Change) error {
	err := s.readTx(ctx, func(tx *gorm.DB) error { return (&txn{tx: tx}).checkGenerations(changes) })
	return mapErr("store.CheckGenerations", err)
}

// namedObject says which object with a generation change c names: its
// kind ("" for none), its reference and, for a server group, the project
// the reference is read in.
func namedObject(c scheduling.Change) (what, ref, project string) {
	switch c.Op {
	case scheduling.OpSetSettings, scheduling.OpCreateAggregate, scheduling.OpCreateServerGroup, scheduling.OpCreateProvider,
		scheduling.OpCreateResourceClass, scheduling.OpDeleteResourceClass, scheduling.OpCreateTrait, scheduling.OpDeleteTrait,
		scheduling.OpCreateFlavor:
		return "", "", ""
	case scheduling.OpSetExtraSpec, scheduling.OpUnsetExtraSpec, scheduling.OpUpdateFlavor, scheduling.OpDeleteFlavor:
		return "flavor", c.Flavor, ""
	case scheduling.OpDeleteServerGroup, scheduling.OpAddGroupMember, scheduling.OpRemoveGroupMember:
		return "server group", c.ServerGroup, c.Project
	}
	if c.Op == scheduling.OpAddTrait || c.Op == scheduling.OpRemoveTrait || c.Op == scheduling.OpSetInventory ||
		c.Op == scheduling.OpDeleteInventory || scheduling.IsPlacementOp(c.Op) {
		return "resource provider", c.Provider, ""
	}
	return "aggregate", c.Aggregate, ""
}

// generationOf reads the name and generation of the object namedObject
// named.
func (t *txn) generationOf(what, ref, project string) (name string, gen int64, err error) {
	switch what {
	case "flavor":
		f, ferr := findFlavor(t.tx, ref, true)
		if ferr != nil {
			return "", 0, ferr
		}
		return f.Name, f.Generation, nil
	case "server group":
		g, gerr := findGroupByRef(t.tx, ref, project)
		if gerr != nil {
			return "", 0, gerr
		}
		return g.Name, g.Generation, nil
	case "resource provider":
		p, perr := findProvider(t.tx, ref)
		if perr != nil {
			return "", 0, perr
		}
		return p.Name, p.Generation, nil
	}
	a, aerr := findAggregate(t.tx, ref)
	if aerr != nil {
		return "", 0, aerr
	}
	return a.Name, a.Generation, nil
}

// loadNamed reads, in tx, the part of the world changes name: the
// aggregates (by name or UUID), with the providers they add or remove and,
// for an aggregate deleted, its members; the flavors; the server groups
// and the servers they name or hold; the providers whose traits or
// inventories change; and the settings.
func loadNamed(tx *gorm.DB, changes []scheduling.Change) (*models.World, error) {
	var aggRefs, provRefs, flavorRefs, groupRefs, serverRefs, deleted []string
	groups := false
	for _, c := range changes {
		switch c.Op {
		case scheduling.OpSetSettings:
		case scheduling.OpSetExtraSpec, scheduling.OpUnsetExtraSpec, scheduling.OpCreateFlavor, scheduling.OpDeleteFlavor:
			flavorRefs = append(flavorRefs, c.Flavor, c.UUID)
		case scheduling.OpUpdateFlavor:
			flavorRefs = append(flavorRefs, c.Flavor, c.Value)
		case scheduling.OpCreateServerGroup, scheduling.OpDeleteServerGroup, scheduling.OpAddGroupMember, scheduling.OpRemoveGroupMember:
			groups = true
			groupRefs = append(groupRefs, c.ServerGroup, c.UUID)
			serverRefs = append(append(serverRefs, c.Server), c.Members...)
		case scheduling.OpAddTrait, scheduling.OpRemoveTrait, scheduling.OpSetInventory, scheduling.OpDeleteInventory:
			provRefs = append(provRefs, c.Provider)
		default:
			aggRefs = append(aggRefs, c.Aggregate, c.UUID)
			if c.Op == scheduling.OpRenameAggregate {
				aggRefs = append(aggRefs, c.Value)
			}
			if c.Op == scheduling.OpAddMember || c.Op == scheduling.OpRemoveMember {
				provRefs = append(provRefs, c.Provider)
			}
			if c.Op == scheduling.OpDeleteAggregate {
				deleted = append(deleted, c.Aggregate)
			}
		}
	}
	w := &models.World{}
	st, _, err := loadSettings(tx)
	if err != nil {
		return nil, err
	}
	w.Settings = st
	if w.Aggregates, err = loadAggregatesNamed(tx, refsOf(aggRefs)); err != nil {
		return nil, err
	}
	var members []string
	for _, a := range w.Aggregates {
		if slices.Contains(deleted, a.Name) || slices.Contains(deleted, a.UUID) {
			members = append(members, a.Members...)
		}
	}
	if w.Providers, err = loadProvidersNamed(tx, refsOf(provRefs), uniqueSorted(members)); err != nil {
		return nil, err
	}
	if refs := refsOf(flavorRefs); len(refs) > 0 {
		if err := tx.Where("id IN ? OR name IN ?", refs, refs).Order("name, id").Find(&w.Flavors).Error; err != nil {
			return nil, err
		}
		for i := range w.Flavors {
			normaliseFlavor(&w.Flavors[i])
		}
	}
	if groups {
		if err := loadGroupsAndServers(tx, w, refsOf(groupRefs), refsOf(serverRefs)); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// refsOf is the non-empty references of refs, sorted and de-duplicated.
func refsOf(refs []string) []string {
	return slices.DeleteFunc(uniqueSorted(refs), func(s string) bool { return s == "" })
}

// loadAggregatesNamed reads the aggregates named or numbered by refs, with
// their members, in id order.
func loadAggregatesNamed(tx *gorm.DB, refs []string) ([]models.Aggregate, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	var uuids []string
	if err := tx.Model(&models.Aggregate{}).Where("uuid IN ? OR name IN ?", refs, refs).Pluck("uuid", &uuids).Error; err != nil {
		return nil, err
	}
	return loadAggregates(tx, uuids)
}

// loadProvidersNamed reads the providers named by refs (name or UUID) and
// those with the UUIDs in more, in name order.
func loadProvidersNamed(tx *gorm.DB, refs, more []string) ([]models.Provider, error) {
	var uuids []string
	if len(refs) > 0 {
		if err := tx.Model(&models.Provider{}).Where("uuid IN ? OR name IN ?", refs, refs).Pluck("uuid", &uuids).Error; err != nil {
			return nil, err
		}
	}
	ps, err := loadProvidersByUUID(tx, uniqueSorted(append(uuids, more...)))
	if err != nil {
		return nil, err
	}
	sortProviders(ps)
	return ps, nil
}

// loadGroupsAndServers reads every server group (a server's membership of
// any group matters to adding it to one; the table is small), and the
// servers named by refs or held by the groups named by groupRefs.
func loadGroupsAndServers(tx *gorm.DB, w *models.World, groupRefs, serverRefs []string) error {
	if err := tx.Order("created_at, uuid").Find(&w.ServerGroups).Error; err != nil {
		return err
	}
	var uuids []string
	for i := range w.ServerGroups {
		g := &w.ServerGroups[i]
		normaliseGroup(g)
		if slices.Contains(groupRefs, g.UUID) || slices.Contains(groupRefs, g.Name) {
			uuids = append(uuids, g.Members...)
		}
	}
	if len(serverRefs) > 0 {
		var named []string
		if err := tx.Model(&models.Server{}).Where("uuid IN ? OR name IN ?", serverRefs, serverRefs).Pluck("uuid", &named).Error; err != nil {
			return err
		}
		uuids = append(uuids, named...)
	}
	servers, err := loadServersByUUID(tx, uniqueSorted(uuids))
	if err != nil {
		return err
	}
	sortServers(servers)
	w.Servers = servers
	return nil
}

// writeDraftWorld writes what differs between cur and next: deleted
// aggregates first (so their names are free), then updates, then new ones,
// then the settings.
func (t *txn) writeDraftWorld(cur, next *models.World, changes []scheduling.Change) error {
	after := make(map[string]*models.Aggregate, len(next.Aggregates))
	for i := range next.Aggregates {
		after[next.Aggregates[i].UUID] = &next.Aggregates[i]
	}
	before := make(map[string]bool, len(cur.Aggregates))
	for i := range cur.Aggregates {
		c := &cur.Aggregates[i]
		before[c.UUID] = true
		if _, ok := after[c.UUID]; !ok {
			if err := t.deleteDraftedAggregate(c, cur, changes); err != nil {
				return err
			}
		}
	}
	for i := range cur.Aggregates {
		c := &cur.Aggregates[i]
		n, ok := after[c.UUID]
		if !ok || sameAggregate(c, n) {
			continue
		}
		if _, err := t.updateAggregate(c.UUID, c.Generation, func(a *models.Aggregate) error {
			a.Name, a.AvailabilityZone = n.Name, n.AvailabilityZone
			a.Metadata = maps.Clone(n.Metadata)
			a.Members = slices.Clone(n.Members)
			a.NotInPlacement, a.NotInNova = slices.Clone(n.NotInPlacement), slices.Clone(n.NotInNova)
			return nil
		}); err != nil {
			return err
		}
	}
	for i := range next.Aggregates {
		n := next.Aggregates[i]
		if before[n.UUID] {
			continue
		}
		n.Metadata, n.Members = maps.Clone(n.Metadata), slices.Clone(n.Members)
		if err := t.createAggregate(&n); err != nil {
			return err
		}
	}
	if err := t.writeDraftedFlavorsGroupsProviders(cur, next, changes); err != nil {
		return err
	}
	if !reflect.DeepEqual(cur.Settings, next.Settings) {
		st := next.Settings
		if err := ValidateSettings(&st); err != nil {
			return err
		}
		_, gen, err := loadSettings(t.tx)
		if err != nil {
			return err
		}
		if err := t.saveSettings(gen, st); err != nil {
			return err
		}
	}
	return nil
}

// writeDraftedFlavorsGroupsProviders writes the flavors, server groups and
// providers a draft changed, each through the checks of a direct edit:
// deleted groups first, then changed ones, then new ones (so that a member
// can move from one group to another).
func (t *txn) writeDraftedFlavorsGroupsProviders(cur, next *models.World, changes []scheduling.Change) error {
	if err := t.writeFlavors(cur, next); err != nil {
		return err
	}
	nextGroups := map[string]*models.ServerGroup{}
	for i := range next.ServerGroups {
		nextGroups[next.ServerGroups[i].UUID] = &next.ServerGroups[i]
	}
	curGroups := map[string]*models.ServerGroup{}
	for i := range cur.ServerGroups {
		c := &cur.ServerGroups[i]
		curGroups[c.UUID] = c
		if _, ok := nextGroups[c.UUID]; !ok {
			if err := t.deleteServerGroup(c.UUID, c.Generation); err != nil {
				return err
			}
		}
	}
	for i := range cur.ServerGroups {
		c := &cur.ServerGroups[i]
		n, ok := nextGroups[c.UUID]
		if !ok || slices.Equal(c.Members, n.Members) {
			continue
		}
		if _, err := t.updateServerGroup(c.UUID, c.Generation, func(g *models.ServerGroup) error {
			g.Members = slices.Clone(n.Members)
			return nil
		}); err != nil {
			return err
		}
	}
	for i := range next.ServerGroups {
		n := next.ServerGroups[i]
		if _, ok := curGroups[n.UUID]; ok {
			continue
		}
		n.Rules, n.Members = maps.Clone(n.Rules), slices.Clone(n.Members)
		if err := t.createServerGroup(&n); err != nil {
			return err
		}
	}
	// Providers: only those a change names can differ.
	named := map[string]bool{}
	for _, c := range changes {
		switch c.Op {
		case scheduling.OpAddTrait, scheduling.OpRemoveTrait, scheduling.OpSetInventory, scheduling.OpDeleteInventory:
			named[c.Provider] = true
		}
	}
	if len(named) == 0 {
		return nil
	}
	for i := range next.Providers {
		n := &next.Providers[i]
		if !named[n.UUID] && !named[n.Name] {
			continue
		}
		c := &cur.Providers[i] // ApplyChanges keeps the order
		if slices.Equal(c.Traits, n.Traits) && maps.Equal(c.Inventories, n.Inventories) {
			continue
		}
		if _, err := t.updateProvider(c.UUID, c.Generation, func(p *models.Provider) error {
			p.Traits = slices.Clone(n.Traits)
			p.Inventories = maps.Clone(n.Inventories)
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// deleteDraftedAggregate deletes an aggregate a draft removes. Like Nova,
// it refuses while hosts are members, unless the draft itself removes them.
func (t *txn) deleteDraftedAggregate(c *models.Aggregate, cur *models.World, changes []scheduling.Change) error {
	removed := map[string]bool{}
	for _, ch := range changes {
		if ch.Op == scheduling.OpRemoveMember && (ch.Aggregate == c.Name || ch.Aggregate == c.UUID) {
			removed[ch.Provider] = true
		}
	}
	members := make(map[string]bool, len(c.Members))
	for _, m := range c.Members {
		members[m] = true
	}
	var hosts []string
	for i := range cur.Providers {
		p := &cur.Providers[i]
		if members[p.UUID] && p.IsHost() && !removed[p.Name] && !removed[p.UUID] {
			hosts = append(hosts, p.Name)
		}
	}
	if len(hosts) > 0 {
		slices.Sort(hosts)
		return models.E(models.Conflict, "members", "aggregate %s still has hosts: %s; remove them in the draft before deleting it", c.Name, strings.Join(hosts, ", "))
	}
	if err := t.setMembers(c.UUID, c.Members, nil); err != nil {
		return err
	}
	res := t.tx.Where("id = ? AND generation = ?", c.ID, c.Generation).Delete(&models.Aggregate{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return staleErr("aggregate", c.Name)
	}
	return t.audit("delete", "aggregate", c.UUID, c.Name, c, nil)
}

func sameAggregate(a, b *models.Aggregate) bool {
	az := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	am, bm := slices.Clone(a.Members), slices.Clone(b.Members)
	slices.Sort(am)
	slices.Sort(bm)
	return a.Name == b.Name && az(a.AvailabilityZone) == az(b.AvailabilityZone) &&
		maps.Equal(a.Metadata, b.Metadata) && slices.Equal(am, bm) &&
		slices.Equal(a.NotInPlacement, b.NotInPlacement) && slices.Equal(a.NotInNova, b.NotInNova)
}
