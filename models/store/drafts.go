package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"corral/models"
	"corral/models/scheduling"
)

// Draft is a named set of pending changes. Changes holds the JSON list of
// the core's draft changes; Generations records, for every live object a
// change touches, the generation it had when the draft first touched it,
// so that applying can refuse when someone changed the object since.
//
// Editing a draft changes no live object, so it does not move the global
// revision (cached snapshots stay valid); it is still audited.
type Draft struct {
	ID           string           `gorm:"primaryKey;size:36" json:"id"`
	Name         string           `gorm:"size:255;not null" json:"name"`
	Author       string           `gorm:"size:255;not null" json:"author"`
	BaseRevision int64            `gorm:"not null;default:0" json:"base_revision"`
	Changes      string           `gorm:"type:text;not null" json:"-"`
	Generations  map[string]int64 `gorm:"serializer:json;type:text" json:"generations"`
	// Version moves on every edit of the draft, so two people editing the
	// same draft do not silently overwrite each other.
	Version   int64     `gorm:"not null;default:0" json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// TableName keeps drafts with corral's other bookkeeping tables.
func (Draft) TableName() string { return "corral_drafts" }

// Object keys of Draft.Generations.
const (
	draftSettingsKey  = "settings"
	draftAggPrefix    = "aggregate:"        // + uuid: the aggregate's generation
	draftNamePrefix   = "aggregate-new:"    // + name: must still not exist (-1)
	draftFlavorPrefix = "flavor:"           // + id: the flavor's generation
	draftGroupPrefix  = "server_group:"     // + uuid: the group's generation
	draftNewGroup     = "server_group-new:" // + project/name: must still not exist (-1)
	draftProvPrefix   = "provider:"         // + uuid: the provider's generation
)

// absent marks an object that did not exist when the draft touched it.
const absent int64 = -1

// CreateDraft starts an empty draft named name, authored by a.
func (s *Store) CreateDraft(ctx context.Context, a Actor, name string) (*Draft, error) {
	const op = "store.CreateDraft"
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, models.E(models.Invalid, "name", "a draft needs a name")
	}
	if len(name) > 255 {
		return nil, models.E(models.Invalid, "name", "draft name is longer than 255 characters")
	}
	author := a.Name
	if author == "" {
		author = "(unknown)"
	}
	d := &Draft{ID: uuid.NewString(), Name: name, Author: author, Changes: "[]", Generations: map[string]int64{}}
	err := s.draftWrite(ctx, a, func(t *txn) error {
		var rev int64
		if err := t.tx.Raw("SELECT revision FROM corral_revision WHERE id = 1").Scan(&rev).Error; err != nil {
			return err
		}
		d.BaseRevision = rev
		d.CreatedAt, d.UpdatedAt = t.now, t.now
		if err := t.tx.Create(d).Error; err != nil {
			return err
		}
		return t.audit("create", "draft", d.ID, d.Name, nil, draftAudit(d))
	})
	if err != nil {
		return nil, mapErr(op, err)
	}
	return d, nil
}

// ListDrafts returns every draft, newest first.
func (s *Store) ListDrafts(ctx context.Context) ([]Draft, error) {
	var out []Draft
	err := s.rdb.WithContext(ctx).Order("created_at DESC, id").Find(&out).Error
	for i := range out {
		normaliseDraft(&out[i])
	}
	return out, mapErr("store.ListDrafts", err)
}

// GetDraft finds a draft by id. Returns NotFound when there is none.
func (s *Store) GetDraft(ctx context.Context, id string) (*Draft, error) {
	d, err := findDraft(s.rdb.WithContext(ctx), id)
	return d, mapErr("store.GetDraft", err)
}

func findDraft(tx *gorm.DB, id string) (*Draft, error) {
	var d Draft
	res := tx.Where("id = ?", id).Limit(1).Find(&d)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, models.E(models.NotFound, "draft", "draft %s not found", id)
	}
	normaliseDraft(&d)
	return &d, nil
}

func normaliseDraft(d *Draft) {
	if d.Generations == nil {
		d.Generations = map[string]int64{}
	}
	if d.Changes == "" {
		d.Changes = "[]"
	}
}

// DraftTouch names one live object a draft change touches: an aggregate by
// uuid or name, an aggregate the draft creates (by name), a flavor, a
// server group (with its project when named by name), a group the draft
// creates, a provider whose traits or inventories it edits, or the
// settings.
type DraftTouch struct {
	Aggregate    string
	NewAggregate string
	Flavor       string
	ServerGroup  string
	GroupProject string
	NewGroup     string // project/name
	Provider     string
	Settings     bool
}

// TouchesOf lists the live objects changes touch, in order. An aggregate
// or server group that an earlier change of the list creates is not a
// live object.
func TouchesOf(changes []scheduling.Change) []DraftTouch {
	created := map[string]bool{}
	createdGroups := map[string]bool{}
	createdProviders := map[string]bool{}
	var out []DraftTouch
	for _, c := range changes {
		switch c.Op {
		case scheduling.OpSetSettings:
			out = append(out, DraftTouch{Settings: true})
		case scheduling.OpCreateAggregate:
			created[c.Aggregate] = true
			if c.UUID != "" {
				created[c.UUID] = true
			}
			out = append(out, DraftTouch{NewAggregate: c.Aggregate})
		case scheduling.OpSetExtraSpec, scheduling.OpUnsetExtraSpec, scheduling.OpUpdateFlavor, scheduling.OpDeleteFlavor:
			out = append(out, DraftTouch{Flavor: c.Flavor})
		case scheduling.OpCreateServerGroup:
			createdGroups[c.ServerGroup] = true
			if c.UUID != "" {
				createdGroups[c.UUID] = true
			}
			out = append(out, DraftTouch{NewGroup: c.Project + "/" + c.ServerGroup})
		case scheduling.OpDeleteServerGroup, scheduling.OpAddGroupMember, scheduling.OpRemoveGroupMember:
			if !createdGroups[c.ServerGroup] {
				out = append(out, DraftTouch{ServerGroup: c.ServerGroup, GroupProject: c.Project})
			}
		case scheduling.OpCreateProvider:
			createdProviders[c.Provider] = true
			if c.UUID != "" {
				createdProviders[c.UUID] = true
			}
		case scheduling.OpAddTrait, scheduling.OpRemoveTrait, scheduling.OpSetInventory, scheduling.OpDeleteInventory,
			scheduling.OpDeleteProvider, scheduling.OpRenameProvider, scheduling.OpSetProviderParent, scheduling.OpSetInventories,
			scheduling.OpSetTraits, scheduling.OpSetProviderAggregates:
			if !createdProviders[c.Provider] {
				out = append(out, DraftTouch{Provider: c.Provider})
			}
		case scheduling.OpCreateResourceClass, scheduling.OpDeleteResourceClass, scheduling.OpCreateTrait, scheduling.OpDeleteTrait,
			scheduling.OpSetAllocations:
			// The catalog and consumers: no object with a generation a
			// draft records (a consumer's is the change's own).
		default:
			if c.Aggregate != "" && !created[c.Aggregate] {
				out = append(out, DraftTouch{Aggregate: c.Aggregate})
			}
		}
	}
	return out
}

// SetDraftChanges replaces the draft's changes if version is the draft's
// current version. For every live object the changes touch that the draft
// has not touched before, it records the object's generation now: what
// applying checks against. Returns the updated draft.
func (s *Store) SetDraftChanges(ctx context.Context, a Actor, id string, version int64, changes []scheduling.Change) (*Draft, error) {
	const op = "store.SetDraftChanges"
	if changes == nil {
		changes = []scheduling.Change{}
	}
	data, err := json.Marshal(changes)
	if err != nil {
		return nil, models.Wrap(op, err)
	}
	touches := TouchesOf(changes)
	var out *Draft
	err = s.draftWrite(ctx, a, func(t *txn) error {
		d, ferr := findDraft(t.tx, id)
		if ferr != nil {
			return ferr
		}
		if d.Version != version {
			return models.E(models.Conflict, "version", "draft %s was changed by someone else — reload", d.Name)
		}
		before := draftAudit(d)
		// Keep what was recorded for objects still touched, and forget the
		// rest: a removed change must not keep the draft stale.
		gens := map[string]int64{}
		for _, tc := range touches {
			if kerr := keepTouch(t.tx, d.Generations, gens, tc); kerr != nil {
				return kerr
			}
		}
		next := *d
		next.Changes = string(data)
		next.Generations = gens
		next.Version = d.Version + 1
		next.UpdatedAt = t.now
		res := t.tx.Model(&Draft{}).Where("id = ? AND version = ?", d.ID, d.Version).
			Select("changes", "generations", "version", "updated_at").Updates(&next)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return models.E(models.Conflict, "version", "draft %s was changed by someone else — reload", d.Name)
		}
		out = &next
		return t.audit("update", "draft", d.ID, d.Name, before, draftAudit(&next))
	})
	if err != nil {
		return nil, mapErr(op, err)
	}
	return out, nil
}

// DraftChanges decodes the draft's change list.
func (d *Draft) DraftChanges() ([]scheduling.Change, error) {
	var cs []scheduling.Change
	if err := json.Unmarshal([]byte(d.Changes), &cs); err != nil {
		return nil, models.E(models.Invalid, "changes", "draft %s holds unreadable changes: %v", d.Name, err)
	}
	return cs, nil
}

// recordTouch stores the live generation of the object tc names, unless the
// draft already recorded it. An aggregate reference that matches nothing
// is NotFound, so a draft never refers to an object that does not exist.
func recordTouch(tx *gorm.DB, gens map[string]int64, tc DraftTouch) error {
	switch {
	case tc.Settings:
		if _, ok := gens[draftSettingsKey]; ok {
			return nil
		}
		_, gen, err := loadSettings(tx)
		if err != nil {
			return err
		}
		gens[draftSettingsKey] = gen
	case tc.NewAggregate != "":
		key := draftNamePrefix + tc.NewAggregate
		if _, ok := gens[key]; ok {
			return nil
		}
		var n int64
		if err := tx.Model(&models.Aggregate{}).Where("name = ?", tc.NewAggregate).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return models.E(models.Conflict, "name", "an aggregate named %q already exists", tc.NewAggregate)
		}
		gens[key] = absent
	case tc.Aggregate != "":
		agg, err := findAggregate(tx, tc.Aggregate)
		if err != nil {
			return err
		}
		key := draftAggPrefix + agg.UUID
		if _, ok := gens[key]; !ok {
			gens[key] = agg.Generation
		}
	case tc.Flavor != "":
		f, err := findFlavor(tx, tc.Flavor, true)
		if err != nil {
			return err
		}
		if _, ok := gens[draftFlavorPrefix+f.ID]; !ok {
			gens[draftFlavorPrefix+f.ID] = f.Generation
		}
	case tc.ServerGroup != "":
		g, err := findGroupByRef(tx, tc.ServerGroup, tc.GroupProject)
		if err != nil {
			return err
		}
		if _, ok := gens[draftGroupPrefix+g.UUID]; !ok {
			gens[draftGroupPrefix+g.UUID] = g.Generation
		}
	case tc.NewGroup != "":
		project, name, _ := strings.Cut(tc.NewGroup, "/")
		var n int64
		if err := tx.Model(&models.ServerGroup{}).Where("project_id = ? AND name = ?", project, name).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return models.E(models.Conflict, "server_group", "project %s already has a server group named %q", project, name)
		}
		gens[draftNewGroup+tc.NewGroup] = absent
	case tc.Provider != "":
		p, err := findProvider(tx, tc.Provider)
		if err != nil {
			return err
		}
		if _, ok := gens[draftProvPrefix+p.UUID]; !ok {
			gens[draftProvPrefix+p.UUID] = p.Generation
		}
	}
	return nil
}

// keepTouch records in gens the generation old holds for the object tc
// names, or its live generation when old has none.
func keepTouch(tx *gorm.DB, old, gens map[string]int64, tc DraftTouch) error {
	key := ""
	switch {
	case tc.Settings:
		key = draftSettingsKey
	case tc.NewAggregate != "":
		key = draftNamePrefix + tc.NewAggregate
	case tc.Aggregate != "":
		agg, err := findAggregate(tx, tc.Aggregate)
		if err != nil {
			return err
		}
		key = draftAggPrefix + agg.UUID
	}
	if g, ok := old[key]; ok && key != "" {
		gens[key] = g
		return nil
	}
	return recordTouch(tx, gens, tc)
}

// DraftChangeCheck is one change of a draft checked against the live
// world: Stale when an object it touches changed since the draft recorded
// it, Problem when it no longer applies (after the changes before it).
type DraftChangeCheck struct {
	Index   int
	Change  scheduling.Change
	Stale   bool
	Problem string
}

// CheckDraft checks each change of d against the live world, in order, as
// a rebase would: a change that does not apply is skipped for the ones
// after it.
func (s *Store) CheckDraft(ctx context.Context, d *Draft) ([]DraftChangeCheck, error) {
	var out []DraftChangeCheck
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		out, err = checkDraft(tx, d, nil)
		return err
	})
	return out, mapErr("store.CheckDraft", err)
}

// checkDraft checks d's changes, those with keep[i] false left out (nil
// keeps all), and returns the checks of the kept ones.
func checkDraft(tx *gorm.DB, d *Draft, keep []bool) ([]DraftChangeCheck, error) {
	changes, err := d.DraftChanges()
	if err != nil {
		return nil, err
	}
	if keep != nil && len(keep) != len(changes) {
		return nil, models.E(models.Invalid, "keep", "the draft has %d changes, %d were reviewed — reload", len(changes), len(keep))
	}
	w, err := loadWorld(tx)
	if err != nil {
		return nil, err
	}
	var out []DraftChangeCheck
	for i, c := range changes {
		if keep != nil && !keep[i] {
			continue
		}
		ck := DraftChangeCheck{Index: i, Change: c}
		for _, tc := range TouchesOf([]scheduling.Change{c}) {
			probe := &Draft{Generations: map[string]int64{}}
			if err := keepTouch(tx, d.Generations, probe.Generations, tc); err != nil {
				if models.KindOf(err) == models.Internal {
					return nil, err
				}
				ck.Stale = true
				continue
			}
			stale, err := draftConflicts(tx, probe)
			if err != nil {
				return nil, err
			}
			ck.Stale = ck.Stale || len(stale) > 0
		}
		next, err := scheduling.ApplyChanges(w, []scheduling.Change{c})
		if err != nil {
			if models.KindOf(err) == models.Internal {
				return nil, err
			}
			var ce *models.Error
			if errors.As(err, &ce) && ce.Msg != "" {
				ck.Problem = ce.Msg
			} else {
				ck.Problem = err.Error()
			}
		} else {
			w = next
		}
		out = append(out, ck)
	}
	return out, nil
}

// RebaseDraft brings a stale draft onto the live world: the changes with
// keep[i] false are dropped, every kept one must apply to the live world
// (in order), and the draft then records the live generations, so it
// applies unless something changes again. version is the draft version
// the person reviewed.
func (s *Store) RebaseDraft(ctx context.Context, a Actor, id string, version int64, keep []bool) (*Draft, error) {
	const op = "store.RebaseDraft"
	var out *Draft
	err := s.draftWrite(ctx, a, func(t *txn) error {
		d, err := findDraft(t.tx, id)
		if err != nil {
			return err
		}
		if d.Version != version {
			return models.E(models.Conflict, "version", "draft %s was changed since you reviewed it — reload", d.Name)
		}
		checks, err := checkDraft(t.tx, d, keep)
		if err != nil {
			return err
		}
		var kept []scheduling.Change
		for _, ck := range checks {
			if ck.Problem != "" {
				return models.E(models.Conflict, fmt.Sprintf("changes[%d]", ck.Index), "change %d no longer applies: %s; drop it to rebase", ck.Index+1, ck.Problem)
			}
			kept = append(kept, ck.Change)
		}
		if kept == nil {
			kept = []scheduling.Change{}
		}
		data, err := json.Marshal(kept)
		if err != nil {
			return err
		}
		gens := map[string]int64{}
		for _, tc := range TouchesOf(kept) {
			if err := recordTouch(t.tx, gens, tc); err != nil {
				return err
			}
		}
		var rev int64
		if err := t.tx.Raw("SELECT revision FROM corral_revision WHERE id = 1").Scan(&rev).Error; err != nil {
			return err
		}
		before := draftAudit(d)
		next := *d
		next.Changes, next.Generations, next.BaseRevision = string(data), gens, rev
		next.Version, next.UpdatedAt = d.Version+1, t.now
		res := t.tx.Model(&Draft{}).Where("id = ? AND version = ?", d.ID, d.Version).
			Select("changes", "generations", "base_revision", "version", "updated_at").Updates(&next)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return models.E(models.Conflict, "version", "draft %s was changed by someone else — reload", d.Name)
		}
		out = &next
		return t.audit("rebase", "draft", d.ID, d.Name, before, draftAudit(&next))
	})
	if err != nil {
		return nil, mapErr(op, err)
	}
	return out, nil
}

// findGroupByRef finds a server group by UUID, or by a name unique (within
// project when given).
func findGroupByRef(tx *gorm.DB, ref, project string) (*models.ServerGroup, error) {
	if g, err := findGroup(tx, ref); err == nil || models.KindOf(err) != models.NotFound {
		return g, err
	}
	q := tx.Where("name = ?", ref)
	if project != "" {
		q = q.Where("project_id = ?", project)
	}
	var gs []models.ServerGroup
	if err := q.Limit(2).Find(&gs).Error; err != nil {
		return nil, err
	}
	switch len(gs) {
	case 0:
		return nil, models.E(models.NotFound, "server_group", "no server group named %q", ref)
	case 1:
		normaliseGroup(&gs[0])
		return &gs[0], nil
	}
	return nil, models.E(models.Invalid, "server_group", "more than one server group is named %q; give its UUID", ref)
}

// DraftConflicts lists, for a person, every object the draft touches that
// changed since the draft first touched it. Empty means the draft still
// applies to what it was made against.
func (s *Store) DraftConflicts(ctx context.Context, d *Draft) ([]string, error) {
	var out []string
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		out, err = draftConflicts(tx, d)
		return err
	})
	return out, mapErr("store.DraftConflicts", err)
}

func draftConflicts(tx *gorm.DB, d *Draft) ([]string, error) {
	var out []string
	for _, key := range slices.Sorted(maps.Keys(d.Generations)) {
		want := d.Generations[key]
		switch {
		case key == draftSettingsKey:
			_, gen, err := loadSettings(tx)
			if err != nil {
				return nil, err
			}
			if gen != want {
				out = append(out, "settings were changed since the draft was made")
			}
		case strings.HasPrefix(key, draftNamePrefix):
			name := strings.TrimPrefix(key, draftNamePrefix)
			var n int64
			if err := tx.Model(&models.Aggregate{}).Where("name = ?", name).Count(&n).Error; err != nil {
				return nil, err
			}
			if n > 0 {
				out = append(out, "an aggregate named "+name+" was created since the draft was made")
			}
		case strings.HasPrefix(key, draftAggPrefix):
			id := strings.TrimPrefix(key, draftAggPrefix)
			var agg models.Aggregate
			res := tx.Where("uuid = ?", id).Limit(1).Find(&agg)
			if res.Error != nil {
				return nil, res.Error
			}
			if res.RowsAffected == 0 {
				out = append(out, "aggregate "+id+" was deleted since the draft was made")
			} else if agg.Generation != want {
				out = append(out, "aggregate "+agg.Name+" was changed since the draft was made")
			}
		case strings.HasPrefix(key, draftFlavorPrefix):
			f, err := findFlavor(tx, strings.TrimPrefix(key, draftFlavorPrefix), false)
			switch {
			case models.KindOf(err) == models.NotFound:
				out = append(out, "flavor "+strings.TrimPrefix(key, draftFlavorPrefix)+" was deleted since the draft was made")
			case err != nil:
				return nil, err
			case f.Generation != want:
				out = append(out, "flavor "+f.Name+" was changed since the draft was made")
			}
		case strings.HasPrefix(key, draftGroupPrefix):
			g, err := findGroup(tx, strings.TrimPrefix(key, draftGroupPrefix))
			switch {
			case models.KindOf(err) == models.NotFound:
				out = append(out, "server group "+strings.TrimPrefix(key, draftGroupPrefix)+" was deleted since the draft was made")
			case err != nil:
				return nil, err
			case g.Generation != want:
				out = append(out, "server group "+g.Name+" was changed since the draft was made")
			}
		case strings.HasPrefix(key, draftNewGroup):
			project, name, _ := strings.Cut(strings.TrimPrefix(key, draftNewGroup), "/")
			var n int64
			if err := tx.Model(&models.ServerGroup{}).Where("project_id = ? AND name = ?", project, name).Count(&n).Error; err != nil {
				return nil, err
			}
			if n > 0 {
				out = append(out, "a server group named "+name+" was created in project "+project+" since the draft was made")
			}
		case strings.HasPrefix(key, draftProvPrefix):
			p, err := findProviderByUUID(tx, strings.TrimPrefix(key, draftProvPrefix), "provider")
			switch {
			case models.KindOf(err) == models.NotFound:
				out = append(out, "provider "+strings.TrimPrefix(key, draftProvPrefix)+" was deleted since the draft was made")
			case err != nil:
				return nil, err
			case p.Generation != want:
				out = append(out, "provider "+p.Name+" was changed since the draft was made")
			}
		}
	}
	return out, nil
}

// DiscardDraft deletes the draft. No live object changes.
func (s *Store) DiscardDraft(ctx context.Context, a Actor, id string) error {
	err := s.draftWrite(ctx, a, func(t *txn) error {
		d, err := findDraft(t.tx, id)
		if err != nil {
			return err
		}
		if err := t.tx.Where("id = ?", d.ID).Delete(&Draft{}).Error; err != nil {
			return err
		}
		return t.audit("discard", "draft", d.ID, d.Name, draftAudit(d), nil)
	})
	return mapErr("store.DiscardDraft", err)
}

// draftWrite runs fn in one transaction with an audit trail but, unlike
// write, leaves the global revision alone: drafts are not live data.
func (s *Store) draftWrite(ctx context.Context, a Actor, fn func(t *txn) error) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		t := &txn{tx: tx, actor: a, now: time.Now().UTC()}
		return fn(t)
	})
}

// draftAudit is what the audit log records of a draft.
func draftAudit(d *Draft) map[string]any {
	return map[string]any{"name": d.Name, "author": d.Author, "base_revision": d.BaseRevision, "changes": json.RawMessage(d.Changes)}
}

// ApplyDraft applies the draft's changes to live data in one transaction
// and deletes the draft: every change or none. version must be the draft's
// current version (what the person reviewed). It fails with a Conflict
// naming the objects when any object the draft touches changed since the
// draft first touched it, and with an Invalid error naming the change when
// a change no longer applies. Each touched aggregate and the settings are
// written through the same checks and audit trail as a direct edit.
func (s *Store) ApplyDraft(ctx context.Context, a Actor, id string, version int64) error {
	const op = "store.ApplyDraft"
	return s.write(ctx, a, op, func(t *txn) error {
		d, err := findDraft(t.tx, id)
		if err != nil {
			return err
		}
		if d.Version != version {
			return models.E(models.Conflict, "version", "draft %s was changed since you reviewed it — reload", d.Name)
		}
		conflicts, err := draftConflicts(t.tx, d)
		if err != nil {
			return err
		}
		if len(conflicts) > 0 {
			return models.E(models.Conflict, "draft", "draft %s no longer applies: %s", d.Name, strings.Join(conflicts, "; "))
		}
		changes, err := d.DraftChanges()
		if err != nil {
			return err
		}
		revert, err := t.applyChanges(changes)
		if err != nil {
			return err
		}
		if err := t.tx.Where("id = ?", d.ID).Delete(&Draft{}).Error; err != nil {
			return err
		}
		// The event keeps what undoes the draft, computed from the objects'
		// values before and after: a revert is a new draft of those.
		applied := draftAudit(d)
		applied["revert_changes"] = revert
		// Nothing is shown struck through: the draft's content is what the
		// apply made live.
		return t.audit("apply", "draft", d.ID, d.Name, nil, applied)
	})
}

// RevertDraftApply starts a new draft that undoes the draft applied in
// audit event eventID: its changes are the ones the apply recorded as its
// undo (the before-values of every object it wrote). It is a draft like
// any other, to preview and apply or discard. NotFound when there is no
// such event; Invalid when the event is not a draft's apply.
func (s *Store) RevertDraftApply(ctx context.Context, a Actor, eventID int64) (*Draft, error) {
	const op = "store.RevertDraftApply"
	var ev models.AuditEvent
	res := s.rdb.WithContext(ctx).Where("id = ?", eventID).Limit(1).Find(&ev)
	if res.Error != nil {
		return nil, mapErr(op, res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, models.E(models.NotFound, "event", "audit event %d not found", eventID)
	}
	if ev.Action != "apply" || ev.ObjectType != "draft" {
		return nil, models.E(models.Invalid, "event", "audit event %d is not the apply of a draft", eventID)
	}
	var after struct {
		Revert *[]scheduling.Change `json:"revert_changes"`
	}
	if err := json.Unmarshal([]byte(ev.After), &after); err != nil || after.Revert == nil {
		return nil, models.E(models.Invalid, "event", "audit event %d does not record how to undo the draft (applied before reverts were recorded)", eventID)
	}
	d, err := s.CreateDraft(ctx, a, truncate("Revert of "+ev.ObjectName, 255))
	if err != nil {
		return nil, err
	}
	return s.SetDraftChanges(ctx, a, d.ID, d.Version, *after.Revert)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
