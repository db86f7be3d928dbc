package store

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"corral/models"
)

// ProviderQuery selects a page of providers, ordered by name.
type ProviderQuery struct {
	Search    string // substring of name or uuid
	RootsOnly bool
	Kind      string // "" (any) or one of the ProviderKind values
	Name      string // exact name
	UUID      string // exact uuid
	InTree    string // root uuid: the whole tree
	// UUIDs and InTrees select by list (InTrees: whole trees by root
	// uuid). nil means no filter; an empty, non-nil list selects nothing.
	UUIDs   []string
	InTrees []string
	Offset  int
	Limit   int // <= 0: all
}

// Provider kinds, as ProviderQuery.Kind. A sharing provider is one with
// the MISC_SHARES_VIA_AGGREGATE trait wherever it sits; hosts and children
// are the other roots and non-roots.
const (
	ProviderKindRoot    = "root"    // no parent: hosts and sharing roots
	ProviderKindHost    = "host"    // a root that is not sharing
	ProviderKindSharing = "sharing" // carries MISC_SHARES_VIA_AGGREGATE
	ProviderKindChild   = "child"   // has a parent and is not sharing
)

// ProviderKinds lists the kinds ProviderQuery.Kind accepts, for forms.
var ProviderKinds = []string{ProviderKindRoot, ProviderKindHost, ProviderKindSharing, ProviderKindChild}

// ListProviders returns one page of providers and the total matching.
func (s *Store) ListProviders(ctx context.Context, q ProviderQuery) ([]models.Provider, int, error) {
	if err := checkSearch(q.Search); err != nil {
		return nil, 0, err
	}
	var out []models.Provider
	var total int64
	if q.Kind != "" && !slices.Contains(ProviderKinds, q.Kind) {
		return nil, 0, models.E(models.Invalid, "kind", "unknown provider kind %q (want one of %s)", q.Kind, strings.Join(ProviderKinds, ", "))
	}
	if (q.UUIDs != nil && len(q.UUIDs) == 0) || (q.InTrees != nil && len(q.InTrees) == 0) {
		return []models.Provider{}, 0, nil
	}
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		base := s.providerFilter(tx, q)
		if err := base.Session(&gorm.Session{}).Count(&total).Error; err != nil {
			return err
		}
		return page(base.Order("name"), q.Offset, q.Limit).Find(&out).Error
	})
	if err != nil {
		return nil, 0, mapErr("store.ListProviders", err)
	}
	for i := range out {
		normaliseProvider(&out[i])
	}
	return out, int(total), nil
}

// providerFilter is the WHERE part of a ProviderQuery (q.Kind checked).
func (s *Store) providerFilter(tx *gorm.DB, q ProviderQuery) *gorm.DB {
	base := tx.Model(&models.Provider{})
	if idx := kindIndex[q.Kind]; idx != "" && !s.postgres && q.Name == "" && q.UUID == "" && q.InTree == "" && q.UUIDs == nil && q.InTrees == nil {
		// SQLite's planner prefers the index on parent_uuid, reads every
		// root's row to test its traits and takes several times longer.
		base = base.Table("providers INDEXED BY " + idx)
	}
	if q.Search != "" {
		base = s.providerSearch(base, q.Search)
	}
	if q.RootsOnly {
		base = base.Where("parent_uuid IS NULL")
	}
	switch q.Kind {
	case ProviderKindRoot:
		base = base.Where("parent_uuid IS NULL")
	case ProviderKindHost:
		base = base.Where("parent_uuid IS NULL AND NOT " + s.sharingCond())
	case ProviderKindSharing:
		base = base.Where(s.sharingCond())
	case ProviderKindChild:
		base = base.Where("parent_uuid IS NOT NULL AND NOT " + s.sharingCond())
	}
	if q.Name != "" {
		base = base.Where("name = ?", q.Name)
	}
	if q.UUID != "" {
		base = base.Where("uuid = ?", q.UUID)
	}
	if q.InTree != "" {
		base = base.Where("root_uuid = ?", q.InTree)
	}
	if q.UUIDs != nil {
		base = base.Where("uuid IN ?", q.UUIDs)
	}
	if q.InTrees != nil {
		base = base.Where("root_uuid IN ?", q.InTrees)
	}
	return base
}

// sharingNeedle is the sharing trait as it appears in the traits column
// (a JSON array of strings). It is a constant of letters, underscores and
// quotes, so it is written into the SQL as a literal: the partial indexes
// of migration 0001 (idx_providers_sharing, _hosts, _children) apply only to
// queries that spell their condition the same way.
const sharingNeedle = `"` + models.TraitSharesViaAggregate + `"`

// sharingCond matches providers whose traits hold sharingNeedle: a
// case-sensitive substring test, as trait names are. COALESCE keeps a NULL
// column from making both the condition and its negation unknown.
func (s *Store) sharingCond() string {
	if s.postgres {
		return "(strpos(COALESCE(traits, ''), '" + sharingNeedle + "') > 0)"
	}
	return "(instr(COALESCE(traits, ''), '" + sharingNeedle + "') > 0)"
}

// kindIndex names the partial index that holds exactly the providers of a
// kind (see sharingNeedle).
var kindIndex = map[string]string{
	ProviderKindHost:    "idx_providers_hosts",
	ProviderKindSharing: "idx_providers_sharing",
	ProviderKindChild:   "idx_providers_children",
}

// providerSearch adds the case-insensitive substring match on name or uuid.
// A search cannot match a uuid when it holds anything but hex digits and
// dashes, so that half is left out then; on SQLite, LIKE already ignores
// ASCII case (as far as SQLite's LOWER() folds), and calling LOWER() on
// 100,000 rows costs several times the match itself.
func (s *Store) providerSearch(q *gorm.DB, search string) *gorm.DB {
	p := likePattern(search)
	name, uuidCol := "LOWER(name)", "LOWER(uuid)"
	if !s.postgres {
		name, uuidCol = "name", "uuid"
	}
	cond := name + ` LIKE ? ESCAPE '\'`
	if !couldBeUUIDPart(search) {
		return q.Where(cond, p)
	}
	return q.Where(cond+" OR "+uuidCol+` LIKE ? ESCAPE '\'`, p, p)
}

// couldBeUUIDPart reports whether s could be a substring of a uuid.
func couldBeUUIDPart(s string) bool {
	for _, r := range strings.ToLower(s) {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r == '-') {
			return false
		}
	}
	return true
}

func normaliseProvider(p *models.Provider) {
	if p.Traits == nil {
		p.Traits = []string{}
	}
}

// GetProvider finds a provider by uuid or name.
func (s *Store) GetProvider(ctx context.Context, ref string) (*models.Provider, error) {
	var p *models.Provider
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		p, err = findProvider(tx, ref)
		return err
	})
	return p, mapErr("store.GetProvider", err)
}

func findProvider(tx *gorm.DB, ref string) (*models.Provider, error) {
	var p models.Provider
	res := tx.Where("uuid = ?", ref).Limit(1).Find(&p)
	if res.Error == nil && res.RowsAffected == 0 {
		res = tx.Where("name = ?", ref).Limit(1).Find(&p)
	}
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, models.E(models.NotFound, "provider", "resource provider %s not found", ref)
	}
	normaliseProvider(&p)
	return &p, nil
}

func validateProvider(p *models.Provider) error {
	p.Name = strings.TrimSpace(p.Name)
	if p.ParentUUID != nil && *p.ParentUUID == "" {
		p.ParentUUID = nil
	}
	if err := models.CheckProvider(p); err != nil {
		return err
	}
	traits := slices.Clone(p.Traits)
	slices.Sort(traits)
	p.Traits = slices.Compact(traits)
	if p.Traits == nil {
		p.Traits = []string{}
	}
	return nil
}

// CreateProvider inserts p (a uuid is generated when empty); its root is its
// parent's root, or itself.
func (s *Store) CreateProvider(ctx context.Context, a Actor, p *models.Provider) error {
	if p == nil {
		return models.E(models.Invalid, "provider", "no provider given")
	}
	return s.write(ctx, a, "store.CreateProvider", func(t *txn) error {
		if err := t.createProvider(p); err != nil {
			return err
		}
		t.touchProviders(p.UUID)
		return nil
	})
}

func (t *txn) createProvider(p *models.Provider) error {
	if p.UUID == "" {
		p.UUID = uuid.NewString()
	} else if _, err := uuid.Parse(p.UUID); err != nil {
		return models.E(models.Invalid, "uuid", "%q is not a uuid", p.UUID)
	}
	if err := validateProvider(p); err != nil {
		return err
	}
	p.RootUUID = p.UUID
	if p.ParentUUID != nil {
		parent, err := findProviderByUUID(t.tx, *p.ParentUUID, "parent_provider_uuid")
		if err != nil {
			return err
		}
		p.RootUUID = parent.RootUUID
	}
	var n int64
	if err := t.tx.Model(&models.Provider{}).Where("uuid = ?", p.UUID).Count(&n).Error; err != nil {
		return err
	}
	if n > 0 {
		return models.E(models.Conflict, "uuid", "resource provider %s already exists", p.UUID)
	}
	if err := t.providerNameFree(p.Name, ""); err != nil {
		return err
	}
	p.Generation = 0
	p.CreatedAt, p.UpdatedAt = t.now, t.now
	if err := t.tx.Create(p).Error; err != nil {
		return err
	}
	return t.audit("create", "provider", p.UUID, p.Name, nil, p)
}

func (t *txn) providerNameFree(name, exceptUUID string) error {
	var n int64
	q := t.tx.Model(&models.Provider{}).Where("name = ?", name)
	if exceptUUID != "" {
		q = q.Where("uuid <> ?", exceptUUID)
	}
	if err := q.Count(&n).Error; err != nil {
		return err
	}
	if n > 0 {
		return models.E(models.Conflict, "name", "a resource provider named %q already exists", name)
	}
	return nil
}

func findProviderByUUID(tx *gorm.DB, id, field string) (*models.Provider, error) {
	var p models.Provider
	res := tx.Where("uuid = ?", id).Limit(1).Find(&p)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, models.E(models.NotFound, field, "resource provider %s not found", id)
	}
	normaliseProvider(&p)
	return &p, nil
}

func cloneProvider(p *models.Provider) *models.Provider {
	c := *p
	c.Traits = slices.Clone(p.Traits)
	c.Inventories = maps.Clone(p.Inventories)
	c.Usages = maps.Clone(p.Usages)
	c.Compute = cloneService(p.Compute)
	if p.ParentUUID != nil {
		v := *p.ParentUUID
		c.ParentUUID = &v
	}
	return &c
}

func cloneService(s *models.ComputeHost) *models.ComputeHost {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

// UpdateProvider lets fn change a provider's name, parent, traits,
// inventories and usages in one transaction. Re-parenting moves the whole
// subtree to the new root; a cycle is refused.
func (s *Store) UpdateProvider(ctx context.Context, a Actor, provUUID string, generation int64, fn func(*models.Provider) error, opts ...WriteOption) (*models.Provider, error) {
	var out *models.Provider
	err := s.write(ctx, a, "store.UpdateProvider", func(t *txn) (err error) {
		if out, err = t.updateProvider(provUUID, generation, fn, opts...); err != nil {
			return err
		}
		t.touchProviders(out.UUID)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// updateProvider is UpdateProvider inside a write.
func (t *txn) updateProvider(provUUID string, generation int64, fn func(*models.Provider) error, opts ...WriteOption) (*models.Provider, error) {
	o := writeOpts(opts)
	var out *models.Provider
	err := func() error {
		cur, err := findProviderByUUID(t.tx, provUUID, "provider")
		if err != nil {
			return err
		}
		if generation != AnyGeneration && cur.Generation != generation {
			return staleErr("resource provider", cur.Name)
		}
		before := cloneProvider(cur)
		next := cloneProvider(cur)
		if fn != nil {
			if err := fn(next); err != nil {
				return err
			}
		}
		next.UUID, next.CreatedAt = cur.UUID, cur.CreatedAt
		if err := validateProvider(next); err != nil {
			return err
		}
		if next.Name != cur.Name {
			if err := t.providerNameFree(next.Name, cur.UUID); err != nil {
				return err
			}
		}
		next.RootUUID = cur.RootUUID
		reparent := ptrStr(next.ParentUUID) != ptrStr(cur.ParentUUID)
		if reparent {
			root, err := t.newRoot(cur, next.ParentUUID)
			if err != nil {
				return err
			}
			next.RootUUID = root
		}
		if cur.IsHost() {
			if err := t.keepServersHosted(cur, next); err != nil {
				return err
			}
		}
		next.Generation = o.nextGeneration(cur.Generation)
		next.UpdatedAt = t.now
		res := t.tx.Model(&models.Provider{UUID: cur.UUID}).Where("generation = ?", cur.Generation).
			Select("name", "parent_uuid", "root_uuid", "traits", "inventories", "usages", "generation", "updated_at").Updates(next)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return staleErr("resource provider", cur.Name)
		}
		if reparent && next.RootUUID != cur.RootUUID {
			if err := t.moveSubtree(cur.UUID, cur.RootUUID, next.RootUUID, o); err != nil {
				return err
			}
		}
		out = next
		return t.audit("update", "provider", cur.UUID, next.Name, before, next)
	}()
	return out, err
}

func ptrStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// newRoot validates a new parent for p and returns p's new root.
func (t *txn) newRoot(p *models.Provider, parent *string) (string, error) {
	if parent == nil {
		return p.UUID, nil
	}
	if *parent == p.UUID {
		return "", models.E(models.Invalid, "parent_provider_uuid", "a resource provider cannot be its own parent")
	}
	par, err := findProviderByUUID(t.tx, *parent, "parent_provider_uuid")
	if err != nil {
		return "", err
	}
	// Walk up from the new parent: meeting p means p would be its own ancestor.
	for cur := par; cur.ParentUUID != nil; {
		if *cur.ParentUUID == p.UUID {
			return "", models.E(models.Invalid, "parent_provider_uuid", "%s is a descendant of %s; that would make a cycle", par.Name, p.Name)
		}
		if cur, err = findProviderByUUID(t.tx, *cur.ParentUUID, "parent_provider_uuid"); err != nil {
			return "", err
		}
	}
	return par.RootUUID, nil
}

// moveSubtree re-roots every descendant of top (in tree oldRoot) to newRoot.
func (t *txn) moveSubtree(top, oldRoot, newRoot string, o writeOptions) error {
	var tree []models.Provider
	if err := t.tx.Select("uuid", "parent_uuid").Where("root_uuid = ?", oldRoot).Find(&tree).Error; err != nil {
		return err
	}
	children := map[string][]string{}
	for _, p := range tree {
		if p.ParentUUID != nil {
			children[*p.ParentUUID] = append(children[*p.ParentUUID], p.UUID)
		}
	}
	var moved []string
	for queue := slices.Clone(children[top]); len(queue) > 0; {
		u := queue[0]
		queue = append(queue[1:], children[u]...)
		moved = append(moved, u)
	}
	t.noteProviders(moved...)
	for rest := moved; len(rest) > 0; {
		n := min(len(rest), 500)
		cols := map[string]any{"root_uuid": newRoot, "updated_at": t.now}
		if !o.keepGeneration {
			cols["generation"] = gorm.Expr("generation + 1")
		}
		if err := t.tx.Model(&models.Provider{}).Where("uuid IN ?", rest[:n]).UpdateColumns(cols).Error; err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// DeleteProvider removes a provider that has no children; its aggregate
// memberships go with it (those aggregates' generations move).
func (s *Store) DeleteProvider(ctx context.Context, a Actor, provUUID string, generation int64) error {
	return s.write(ctx, a, "store.DeleteProvider", func(t *txn) error {
		cur, err := findProviderByUUID(t.tx, provUUID, "provider")
		if err != nil {
			return err
		}
		if generation != AnyGeneration && cur.Generation != generation {
			return staleErr("resource provider", cur.Name)
		}
		_, err = t.deleteProvider(cur)
		return err
	})
}

// deleteProvider is DeleteProvider inside a write, of the provider cur
// read in it; it returns the aggregates the provider was in.
func (t *txn) deleteProvider(cur *models.Provider) ([]string, error) {
	if cur.IsHost() {
		hosted, err := t.serversOn(cur.Name)
		if err != nil {
			return nil, err
		}
		if len(hosted) > 0 {
			return nil, models.E(models.Conflict, "provider", "host %s still has servers (%s); move or delete them first", cur.Name, strings.Join(hosted, ", "))
		}
	}
	var kids []string
	if err := t.tx.Model(&models.Provider{}).Where("parent_uuid = ?", cur.UUID).Order("name").Limit(5).Pluck("name", &kids).Error; err != nil {
		return nil, err
	}
	if len(kids) > 0 {
		return nil, models.E(models.Conflict, "provider", "resource provider %s has children (%s); delete them first", cur.Name, strings.Join(kids, ", "))
	}
	aggs, err := providerAggregates(t.tx, cur.UUID)
	if err != nil {
		return nil, err
	}
	if err := t.tx.Where("provider_uuid = ?", cur.UUID).Delete(&models.AggregateMember{}).Error; err != nil {
		return nil, err
	}
	if err := t.bumpAggregates(aggs); err != nil {
		return nil, err
	}
	t.touchAggregates(aggs...)
	t.touchProviders(cur.UUID)
	res := t.tx.Where("uuid = ? AND generation = ?", cur.UUID, cur.Generation).Delete(&models.Provider{})
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected != 1 {
		return nil, staleErr("resource provider", cur.Name)
	}
	return aggs, t.audit("delete", "provider", cur.UUID, cur.Name, map[string]any{"provider": cur, "aggregates": aggs}, nil)
}

// providerAggregates lists the aggregates Placement has the provider in:
// those where only Nova's aggregate has it (a synced drift) are left out.
func providerAggregates(tx *gorm.DB, provUUID string) ([]string, error) {
	out := []string{}
	if err := tx.Model(&models.AggregateMember{}).Where("provider_uuid = ?", provUUID).Order("aggregate_uuid").Pluck("aggregate_uuid", &out).Error; err != nil {
		return nil, err
	}
	novaOnly, err := driftedAggregates(tx, out)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, func(u string) bool {
		a := novaOnly[u]
		return a != nil && slices.Contains(a.NotInPlacement, provUUID)
	}), nil
}

// driftedAggregates reads, of the aggregates uuids, those whose two
// memberships differ (few or none).
func driftedAggregates(tx *gorm.DB, uuids []string) (map[string]*models.Aggregate, error) {
	out := map[string]*models.Aggregate{}
	for rest := uuids; len(rest) > 0; {
		n := min(len(rest), 500)
		var aggs []models.Aggregate
		if err := tx.Select("id", "uuid", "not_in_placement", "not_in_nova").
			Where("uuid IN ? AND (not_in_placement IS NOT NULL OR not_in_nova IS NOT NULL)", rest[:n]).Find(&aggs).Error; err != nil {
			return nil, err
		}
		for i := range aggs {
			if aggs[i].Diverges() {
				out[aggs[i].UUID] = &aggs[i]
			}
		}
		rest = rest[n:]
	}
	return out, nil
}

// mirrorMembership makes provUUID's membership of the drifted aggregates
// among uuids the same on both sides, as Nova's mirroring does when corral
// changes it.
func (t *txn) mirrorMembership(provUUID string, uuids []string) error {
	drifted, err := driftedAggregates(t.tx, uuids)
	if err != nil {
		return err
	}
	for _, a := range drifted {
		members, err := aggregateMembers(t.tx, a.UUID)
		if err != nil {
			return err
		}
		a.Members = members
		a.Mirror(provUUID)
		if err := t.tx.Model(&models.Aggregate{ID: a.ID}).Select("not_in_placement", "not_in_nova").Updates(a).Error; err != nil {
			return err
		}
	}
	return nil
}

func aggregateMembers(tx *gorm.DB, aggUUID string) ([]string, error) {
	var out []string
	err := tx.Model(&models.AggregateMember{}).Where("aggregate_uuid = ?", aggUUID).Pluck("provider_uuid", &out).Error
	return out, err
}

// providerRows lists every aggregate row the provider has, on either side.
func providerRows(tx *gorm.DB, provUUID string) ([]string, error) {
	var out []string
	err := tx.Model(&models.AggregateMember{}).Where("provider_uuid = ?", provUUID).Pluck("aggregate_uuid", &out).Error
	return out, err
}

// ProviderAggregates returns the uuids of the aggregates a provider is
// directly in (Placement's GET /resource_providers/{uuid}/aggregates) and the
// provider's generation.
func (s *Store) ProviderAggregates(ctx context.Context, provUUID string) ([]string, int64, error) {
	var out []string
	var gen int64
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		p, err := findProviderByUUID(tx, provUUID, "provider")
		if err != nil {
			return err
		}
		gen = p.Generation
		out, err = providerAggregates(tx, provUUID)
		return err
	})
	if err != nil {
		return nil, 0, mapErr("store.ProviderAggregates", err)
	}
	return out, gen, nil
}

// SetProviderAggregates replaces a provider's aggregates (Placement's PUT).
// Like Placement, an unknown aggregate uuid is created on demand — here as a
// bare aggregate named after its uuid. Returns the provider's new generation
// (unchanged with KeepGeneration, as for Placement's PUT below 1.19).
func (s *Store) SetProviderAggregates(ctx context.Context, a Actor, provUUID string, generation int64, aggUUIDs []string, opts ...WriteOption) (int64, error) {
	var newGen int64
	err := s.write(ctx, a, "store.SetProviderAggregates", func(t *txn) error {
		cur, err := findProviderByUUID(t.tx, provUUID, "provider")
		if err != nil {
			return err
		}
		if generation != AnyGeneration && cur.Generation != generation {
			return staleErr("resource provider", cur.Name)
		}
		_, newGen, err = t.setProviderAggregates(cur, aggUUIDs, writeOpts(opts))
		return err
	})
	if err != nil {
		return 0, err
	}
	return newGen, nil
}

// setProviderAggregates is SetProviderAggregates inside a write, of the
// provider cur read in it. It returns the aggregates the provider was in
// and its new generation.
func (t *txn) setProviderAggregates(cur *models.Provider, aggUUIDs []string, o writeOptions) (have []string, newGen int64, err error) {
	want := slices.Clone(aggUUIDs)
	for _, u := range want {
		if _, err = uuid.Parse(u); err != nil {
			return nil, 0, models.E(models.Invalid, "aggregates", "%q is not a uuid", u)
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	have, err = providerAggregates(t.tx, cur.UUID)
	if err != nil {
		return nil, 0, err
	}
	added, removed := diffSorted(have, want)
	// An aggregate only Nova has the provider in already holds its row: the
	// provider is now in both (mirrored below), not added twice.
	rows, err := providerRows(t.tx, cur.UUID)
	if err != nil {
		return nil, 0, err
	}
	for _, u := range added {
		if slices.Contains(rows, u) {
			continue
		}
		var n int64
		if err := t.tx.Model(&models.Aggregate{}).Where("uuid = ?", u).Count(&n).Error; err != nil {
			return nil, 0, err
		}
		if n == 0 {
			if err := t.createAggregate(&models.Aggregate{UUID: u, Name: u}); err != nil {
				return nil, 0, err
			}
		}
		if err := t.tx.Create(&models.AggregateMember{AggregateUUID: u, ProviderUUID: cur.UUID}).Error; err != nil {
			return nil, 0, err
		}
	}
	if len(removed) > 0 {
		if err := t.tx.Where("provider_uuid = ? AND aggregate_uuid IN ?", cur.UUID, removed).Delete(&models.AggregateMember{}).Error; err != nil {
			return nil, 0, err
		}
	}
	if err := t.mirrorMembership(cur.UUID, append(slices.Clone(added), removed...)); err != nil {
		return nil, 0, err
	}
	if err := t.bumpAggregates(append(slices.Clone(added), removed...)); err != nil {
		return nil, 0, err
	}
	if len(added) > 0 {
		if err := t.checkZones([]string{cur.UUID}, ""); err != nil {
			return nil, 0, err
		}
	}
	newGen = o.nextGeneration(cur.Generation)
	res := t.tx.Model(&models.Provider{}).Where("uuid = ? AND generation = ?", cur.UUID, cur.Generation).
		UpdateColumns(map[string]any{"generation": newGen, "updated_at": t.now})
	if res.Error != nil {
		return nil, 0, res.Error
	}
	if res.RowsAffected != 1 {
		return nil, 0, staleErr("resource provider", cur.Name)
	}
	t.touchAggregates(append(slices.Clone(added), removed...)...)
	t.noteProviders(cur.UUID)
	return have, newGen, t.audit("set-aggregates", "provider", cur.UUID, cur.Name,
		map[string]any{"aggregates": have, "generation": cur.Generation},
		map[string]any{"aggregates": want, "generation": newGen})
}

// serversOn names (up to five of) the servers on host.
func (t *txn) serversOn(host string) ([]string, error) {
	var names []string
	err := t.tx.Model(&models.Server{}).Where("host = ?", host).Order("name").Limit(5).Pluck("name", &names).Error
	return names, err
}

// keepServersHosted follows a host's rename into its servers, and refuses
// to turn a host with servers into something that is not a host.
func (t *txn) keepServersHosted(cur, next *models.Provider) error {
	if next.IsHost() {
		if next.Name != cur.Name {
			var hosted []string
			if err := t.tx.Model(&models.Server{}).Where("host = ?", cur.Name).Pluck("uuid", &hosted).Error; err != nil {
				return err
			}
			t.noteServers(hosted...)
			return t.tx.Model(&models.Server{}).Where("host = ?", cur.Name).
				UpdateColumns(map[string]any{"host": next.Name, "updated_at": t.now}).Error
		}
		return nil
	}
	hosted, err := t.serversOn(cur.Name)
	if err != nil {
		return err
	}
	if len(hosted) > 0 {
		return models.E(models.Conflict, "provider", "host %s still has servers (%s); it must stay a host", cur.Name, strings.Join(hosted, ", "))
	}
	return nil
}

// WriteOption adjusts one provider write.
type WriteOption func(*writeOptions)

type writeOptions struct {
	keepGeneration bool
}

// KeepGeneration leaves provider generations where they are, for the writes
// Placement does not count as a change of the provider: PUT
// /resource_providers/{uuid}/aggregates below microversion 1.19 and PUT
// /resource_providers/{uuid} (rename, re-parent). The generation passed in
// is still checked, the write is still audited and still moves the store's
// revision.
func KeepGeneration() WriteOption {
	return func(o *writeOptions) { o.keepGeneration = true }
}

func writeOpts(opts []WriteOption) writeOptions {
	var o writeOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// nextGeneration is the generation a provider written at gen gets.
func (o writeOptions) nextGeneration(gen int64) int64 {
	if o.keepGeneration {
		return gen
	}
	return gen + 1
}
