package store

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"corral/models"
)

// AggregateQuery selects a page of aggregates.
type AggregateQuery struct {
	Search string // substring of name, uuid, availability zone or metadata
	Sort   string // id (default), name, availability_zone, created_at, updated_at
	Desc   bool
	Offset int
	Limit  int // <= 0: all
}

var aggregateSorts = map[string]string{
	"": "id", "id": "id", "name": "name", "availability_zone": "availability_zone",
	"created_at": "created_at", "updated_at": "updated_at", "uuid": "uuid",
}

// azKey is the metadata key Nova keeps an aggregate's zone under.
const azKey = "availability_zone"

// ListAggregates returns one page of aggregates (members loaded) and the
// total number matching the query.
func (s *Store) ListAggregates(ctx context.Context, q AggregateQuery) ([]models.Aggregate, int, error) {
	var out []models.Aggregate
	total, err := s.listAggregates(ctx, q, &out, loadMembers)
	if err != nil {
		return nil, 0, mapErr("store.ListAggregates", err)
	}
	return out, total, nil
}

// AggregateSummary is an aggregate as a list shows it: its members counted,
// not loaded (Aggregate.Members stays empty).
type AggregateSummary struct {
	models.Aggregate
	MemberCount int
}

// ListAggregateSummaries is ListAggregates for list pages: members are
// counted by one grouped query instead of loaded, so a page holding zone
// aggregates with thousands of hosts costs no more than any other page.
func (s *Store) ListAggregateSummaries(ctx context.Context, q AggregateQuery) ([]AggregateSummary, int, error) {
	var aggs []models.Aggregate
	var counts map[string]int
	total, err := s.listAggregates(ctx, q, &aggs, func(tx *gorm.DB, aggs []models.Aggregate) error {
		ids := make([]string, len(aggs))
		for i := range aggs {
			normaliseAggregate(&aggs[i])
			ids[i] = aggs[i].UUID
		}
		var err error
		counts, err = countMembers(tx, ids)
		return err
	})
	if err != nil {
		return nil, 0, mapErr("store.ListAggregateSummaries", err)
	}
	out := make([]AggregateSummary, len(aggs))
	for i := range aggs {
		out[i] = AggregateSummary{Aggregate: aggs[i], MemberCount: counts[aggs[i].UUID]}
	}
	return out, total, nil
}

// listAggregates reads one page into out and lets fill complete it inside
// the same read transaction.
func (s *Store) listAggregates(ctx context.Context, q AggregateQuery, out *[]models.Aggregate, fill func(*gorm.DB, []models.Aggregate) error) (int, error) {
	if err := checkSearch(q.Search); err != nil {
		return 0, err
	}
	col, ok := aggregateSorts[q.Sort]
	if !ok {
		return 0, models.E(models.Invalid, "sort", "cannot sort aggregates by %q", q.Sort)
	}
	var total int64
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		base := tx.Model(&models.Aggregate{})
		if q.Search != "" {
			p := likePattern(q.Search)
			base = base.Where(`LOWER(name) LIKE ? ESCAPE '\' OR LOWER(uuid) LIKE ? ESCAPE '\' OR LOWER(COALESCE(availability_zone, '')) LIKE ? ESCAPE '\' OR LOWER(COALESCE(metadata, '')) LIKE ? ESCAPE '\'`, p, p, p, p)
		}
		if err := base.Session(&gorm.Session{}).Count(&total).Error; err != nil {
			return err
		}
		order := col
		if q.Desc {
			order += " DESC"
		}
		if col != "id" {
			order += ", id"
		}
		if err := page(base.Order(order), q.Offset, q.Limit).Find(out).Error; err != nil {
			return err
		}
		return fill(tx, *out)
	})
	return int(total), err
}

// countMembers counts the memberships of each aggregate in one grouped
// query; aggregates without members are absent from the map.
func countMembers(tx *gorm.DB, aggUUIDs []string) (map[string]int, error) {
	counts := make(map[string]int, len(aggUUIDs))
	for rest := aggUUIDs; len(rest) > 0; {
		n := min(len(rest), 500)
		var rows []struct {
			AggregateUUID string
			N             int
		}
		if err := tx.Model(&models.AggregateMember{}).Select("aggregate_uuid, COUNT(*) AS n").
			Where("aggregate_uuid IN ?", rest[:n]).Group("aggregate_uuid").Scan(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			counts[r.AggregateUUID] = r.N
		}
		rest = rest[n:]
	}
	return counts, nil
}

// loadMembers fills Members (sorted provider UUIDs) for each aggregate.
func loadMembers(tx *gorm.DB, aggs []models.Aggregate) error {
	if len(aggs) == 0 {
		return nil
	}
	idx := make(map[string]int, len(aggs))
	ids := make([]string, 0, len(aggs))
	for i := range aggs {
		aggs[i].Members = []string{}
		normaliseAggregate(&aggs[i])
		idx[aggs[i].UUID] = i
		ids = append(ids, aggs[i].UUID)
	}
	var rows []models.AggregateMember
	// Chunked so a long page stays under the databases' bind-variable limits.
	for len(ids) > 0 {
		n := min(len(ids), 500)
		var part []models.AggregateMember
		if err := tx.Where("aggregate_uuid IN ?", ids[:n]).Order("aggregate_uuid, provider_uuid").Find(&part).Error; err != nil {
			return err
		}
		rows = append(rows, part...)
		ids = ids[n:]
	}
	for _, r := range rows {
		i := idx[r.AggregateUUID]
		aggs[i].Members = append(aggs[i].Members, r.ProviderUUID)
	}
	return nil
}

func normaliseAggregate(a *models.Aggregate) {
	if a.Metadata == nil {
		a.Metadata = map[string]string{}
	}
	if a.Members == nil {
		a.Members = []string{}
	}
}

// GetAggregate finds an aggregate by integer id, uuid or name.
func (s *Store) GetAggregate(ctx context.Context, ref string) (*models.Aggregate, error) {
	var agg *models.Aggregate
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		agg, err = findAggregate(tx, ref)
		return err
	})
	return agg, mapErr("store.GetAggregate", err)
}

func findAggregate(tx *gorm.DB, ref string) (*models.Aggregate, error) {
	var agg models.Aggregate
	var res *gorm.DB
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		res = tx.Where("id = ?", id).Limit(1).Find(&agg)
		if res.Error == nil && res.RowsAffected == 0 {
			res = tx.Where("name = ?", ref).Limit(1).Find(&agg)
		}
	} else {
		res = tx.Where("uuid = ?", ref).Limit(1).Find(&agg)
		if res.Error == nil && res.RowsAffected == 0 {
			res = tx.Where("name = ?", ref).Limit(1).Find(&agg)
		}
	}
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, models.E(models.NotFound, "aggregate", "aggregate %s not found", ref)
	}
	list := []models.Aggregate{agg}
	if err := loadMembers(tx, list); err != nil {
		return nil, err
	}
	return &list[0], nil
}

// validateAggregate checks the fields a person types.
func validateAggregate(a *models.Aggregate) error {
	a.Name = strings.TrimSpace(a.Name)
	if a.AvailabilityZone != nil && strings.TrimSpace(*a.AvailabilityZone) == "" {
		a.AvailabilityZone = nil
	}
	return models.CheckAggregate(a)
}

// syncAZ keeps the availability_zone field and Nova's metadata key in step:
// whichever of the two the edit changed wins.
func syncAZ(before, after *models.Aggregate) {
	if after.Metadata == nil {
		after.Metadata = map[string]string{}
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	fieldChanged := before == nil || str(before.AvailabilityZone) != str(after.AvailabilityZone)
	metaChanged := before == nil || before.Metadata[azKey] != after.Metadata[azKey]
	switch {
	case fieldChanged && after.AvailabilityZone != nil:
		after.Metadata[azKey] = *after.AvailabilityZone
	case fieldChanged && before != nil:
		delete(after.Metadata, azKey)
	case metaChanged:
		if v, ok := after.Metadata[azKey]; ok && v != "" {
			after.AvailabilityZone = &v
		} else {
			delete(after.Metadata, azKey)
			after.AvailabilityZone = nil
		}
	}
}

// CreateAggregate inserts agg (a uuid is generated when empty) with its
// members, and fills ID, UUID, Generation and timestamps.
func (s *Store) CreateAggregate(ctx context.Context, a Actor, agg *models.Aggregate) error {
	const op = "store.CreateAggregate"
	if agg == nil {
		return models.E(models.Invalid, "aggregate", "no aggregate given")
	}
	return s.write(ctx, a, op, func(t *txn) error {
		if err := t.createAggregate(agg); err != nil {
			return err
		}
		t.touchAggregates(agg.UUID)
		return nil
	})
}

func (t *txn) createAggregate(agg *models.Aggregate) error {
	if agg.UUID == "" {
		agg.UUID = uuid.NewString()
	} else if _, err := uuid.Parse(agg.UUID); err != nil {
		return models.E(models.Invalid, "uuid", "%q is not a uuid", agg.UUID)
	}
	agg.ID = 0
	agg.Metadata = maps.Clone(agg.Metadata)
	if agg.Metadata == nil {
		agg.Metadata = map[string]string{}
	}
	if err := validateAggregate(agg); err != nil {
		return err
	}
	syncAZ(nil, agg)
	members, err := t.checkProviders(agg.Members)
	if err != nil {
		return err
	}
	if err := t.aggregateNameFree(agg.Name, ""); err != nil {
		return err
	}
	var n int64
	if err := t.tx.Model(&models.Aggregate{}).Where("uuid = ?", agg.UUID).Count(&n).Error; err != nil {
		return err
	}
	if n > 0 {
		return models.E(models.Conflict, "uuid", "aggregate %s already exists", agg.UUID)
	}
	agg.Generation = 0
	agg.CreatedAt, agg.UpdatedAt = t.now, t.now
	agg.Members = members
	if err := t.tx.Omit("Members").Create(agg).Error; err != nil {
		return err
	}
	if err := t.setMembers(agg.UUID, nil, members); err != nil {
		return err
	}
	if agg.AvailabilityZone != nil {
		if err := t.checkZones(members, *agg.AvailabilityZone); err != nil {
			return err
		}
	}
	return t.audit("create", "aggregate", agg.UUID, agg.Name, nil, agg)
}

func (t *txn) aggregateNameFree(name, exceptUUID string) error {
	var n int64
	q := t.tx.Model(&models.Aggregate{}).Where("name = ?", name)
	if exceptUUID != "" {
		q = q.Where("uuid <> ?", exceptUUID)
	}
	if err := q.Count(&n).Error; err != nil {
		return err
	}
	if n > 0 {
		return models.E(models.Conflict, "name", "an aggregate named %q already exists", name)
	}
	return nil
}

// checkProviders verifies that every uuid names a provider and returns the
// set sorted and de-duplicated; unknown ones are named in the error.
func (t *txn) checkProviders(uuids []string) ([]string, error) {
	set := slices.Clone(uuids)
	slices.Sort(set)
	set = slices.Compact(set)
	if len(set) == 0 {
		return []string{}, nil
	}
	found := make(map[string]bool, len(set))
	for rest := set; len(rest) > 0; {
		n := min(len(rest), 500)
		var got []string
		if err := t.tx.Model(&models.Provider{}).Where("uuid IN ?", rest[:n]).Pluck("uuid", &got).Error; err != nil {
			return nil, err
		}
		for _, u := range got {
			found[u] = true
		}
		rest = rest[n:]
	}
	var missing []string
	for _, u := range set {
		if !found[u] {
			missing = append(missing, u)
		}
	}
	if len(missing) > 0 {
		return nil, models.E(models.NotFound, "members", "no such provider: %s", strings.Join(missing, ", "))
	}
	return set, nil
}

// setMembers moves aggregate aggUUID from membership old to new (both sorted)
// and bumps the generation of every provider whose aggregates changed, as
// Placement does, so a provider editor holding the old list gets a conflict.
func (t *txn) setMembers(aggUUID string, old, new []string) error {
	added, removed := diffSorted(old, new)
	for rest := removed; len(rest) > 0; {
		n := min(len(rest), 500)
		if err := t.tx.Where("aggregate_uuid = ? AND provider_uuid IN ?", aggUUID, rest[:n]).Delete(&models.AggregateMember{}).Error; err != nil {
			return err
		}
		rest = rest[n:]
	}
	if len(added) > 0 {
		rows := make([]models.AggregateMember, len(added))
		for i, p := range added {
			rows[i] = models.AggregateMember{AggregateUUID: aggUUID, ProviderUUID: p}
		}
		if err := t.tx.CreateInBatches(rows, 500).Error; err != nil {
			return err
		}
	}
	return t.bumpProviders(append(added, removed...))
}

func (t *txn) bumpProviders(uuids []string) error {
	t.noteProviders(uuids...)
	for rest := uuids; len(rest) > 0; {
		n := min(len(rest), 500)
		if err := t.tx.Model(&models.Provider{}).Where("uuid IN ?", rest[:n]).
			UpdateColumns(map[string]any{"generation": gorm.Expr("generation + 1"), "updated_at": t.now}).Error; err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

func (t *txn) bumpAggregates(uuids []string) error {
	for rest := uuids; len(rest) > 0; {
		n := min(len(rest), 500)
		if err := t.tx.Model(&models.Aggregate{}).Where("uuid IN ?", rest[:n]).
			UpdateColumns(map[string]any{"generation": gorm.Expr("generation + 1"), "updated_at": t.now}).Error; err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// diffSorted returns what is in b but not a, and in a but not b.
func diffSorted(a, b []string) (added, removed []string) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			removed = append(removed, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			added = append(added, b[j])
			j++
		default:
			i++
			j++
		}
	}
	return added, removed
}

// UpdateAggregate loads the aggregate, lets fn change its name, zone,
// metadata and members (provider UUIDs), and saves it — all in one
// transaction. generation must match unless it is AnyGeneration.
func (s *Store) UpdateAggregate(ctx context.Context, a Actor, aggUUID string, generation int64, fn func(*models.Aggregate) error) (*models.Aggregate, error) {
	const op = "store.UpdateAggregate"
	var out *models.Aggregate
	err := s.write(ctx, a, op, func(t *txn) error {
		var err error
		out, err = t.updateAggregate(aggUUID, generation, fn)
		if err == nil {
			t.touchAggregates(out.UUID)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (t *txn) updateAggregate(aggUUID string, generation int64, fn func(*models.Aggregate) error) (*models.Aggregate, error) {
	cur, err := findAggregateByUUID(t.tx, aggUUID)
	if err != nil {
		return nil, err
	}
	if generation != AnyGeneration && cur.Generation != generation {
		return nil, staleErr("aggregate", cur.Name)
	}
	before := cloneAggregate(cur)
	next := cloneAggregate(cur)
	if fn != nil {
		if err = fn(next); err != nil {
			return nil, err
		}
	}
	// Identity and bookkeeping are not the caller's to change.
	next.ID, next.UUID, next.CreatedAt = cur.ID, cur.UUID, cur.CreatedAt
	if err = validateAggregate(next); err != nil {
		return nil, err
	}
	syncAZ(before, next)
	members, err := t.checkProviders(next.Members)
	if err != nil {
		return nil, err
	}
	if next.Name != cur.Name {
		if err := t.aggregateNameFree(next.Name, cur.UUID); err != nil {
			return nil, err
		}
	}
	next.Generation = cur.Generation + 1
	next.UpdatedAt = t.now
	next.Members = members
	// A member corral adds or removes is then the same on both sides, as
	// Nova's add_host and remove_host make it.
	added, removed := diffSorted(cur.Members, members)
	next.Mirror(append(added, removed...)...)
	// The WHERE on the generation we read is what makes this safe even when
	// another writer slipped in between the read and the write.
	res := t.tx.Model(&models.Aggregate{ID: cur.ID}).Where("generation = ?", cur.Generation).
		Select("name", "availability_zone", "metadata", "not_in_placement", "not_in_nova", "generation", "updated_at").Updates(next)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected != 1 {
		return nil, staleErr("aggregate", cur.Name)
	}
	if err := t.setMembers(cur.UUID, cur.Members, members); err != nil {
		return nil, err
	}
	if next.AvailabilityZone != nil {
		check := members
		if ptrStr(before.AvailabilityZone) == *next.AvailabilityZone {
			check, _ = diffSorted(cur.Members, members)
		}
		if err := t.checkZones(check, *next.AvailabilityZone); err != nil {
			return nil, err
		}
	}
	if err := t.audit("update", "aggregate", cur.UUID, next.Name, before, next); err != nil {
		return nil, err
	}
	return next, nil
}

func findAggregateByUUID(tx *gorm.DB, aggUUID string) (*models.Aggregate, error) {
	var agg models.Aggregate
	res := tx.Where("uuid = ?", aggUUID).Limit(1).Find(&agg)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, models.E(models.NotFound, "aggregate", "aggregate %s not found", aggUUID)
	}
	list := []models.Aggregate{agg}
	if err := loadMembers(tx, list); err != nil {
		return nil, err
	}
	return &list[0], nil
}

func cloneAggregate(a *models.Aggregate) *models.Aggregate {
	c := *a
	c.Metadata = maps.Clone(a.Metadata)
	if c.Metadata == nil {
		c.Metadata = map[string]string{}
	}
	c.Members = slices.Clone(a.Members)
	if c.Members == nil {
		c.Members = []string{}
	}
	c.NotInPlacement, c.NotInNova = slices.Clone(a.NotInPlacement), slices.Clone(a.NotInNova)
	if a.AvailabilityZone != nil {
		z := *a.AvailabilityZone
		c.AvailabilityZone = &z
	}
	return &c
}

// DeleteAggregate removes an aggregate. Like Nova, it refuses while hosts are
// still members; other memberships (children, sharing providers) go with it.
func (s *Store) DeleteAggregate(ctx context.Context, a Actor, aggUUID string, generation int64) error {
	const op = "store.DeleteAggregate"
	return s.write(ctx, a, op, func(t *txn) error {
		cur, err := findAggregateByUUID(t.tx, aggUUID)
		if err != nil {
			return err
		}
		t.touchAggregates(cur.UUID)
		if generation != AnyGeneration && cur.Generation != generation {
			return staleErr("aggregate", cur.Name)
		}
		if len(cur.Members) > 0 {
			var ps []models.Provider
			if err := t.tx.Where("parent_uuid IS NULL AND uuid IN (?)",
				t.tx.Model(&models.AggregateMember{}).Select("provider_uuid").Where("aggregate_uuid = ?", cur.UUID)).
				Order("name").Find(&ps).Error; err != nil {
				return err
			}
			var hosts []string
			for i := range ps {
				if ps[i].IsHost() {
					hosts = append(hosts, ps[i].Name)
				}
			}
			if len(hosts) > 0 {
				return models.E(models.Conflict, "members", "aggregate %s still has hosts: %s; remove them first", cur.Name, strings.Join(hosts, ", "))
			}
		}
		if err := t.setMembers(cur.UUID, cur.Members, nil); err != nil {
			return err
		}
		res := t.tx.Where("id = ? AND generation = ?", cur.ID, cur.Generation).Delete(&models.Aggregate{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return staleErr("aggregate", cur.Name)
		}
		return t.audit("delete", "aggregate", cur.UUID, cur.Name, cur, nil)
	})
}

// checkZones runs the zone rule (models.CheckZones) for providers inside the
// write: every write holds the revision row's lock, so no other write can
// slip a membership in between this read and the commit. wanted is the zone
// of the aggregate being changed, if any. Only hosts count: a sharing
// provider may serve aggregates in several zones.
func (t *txn) checkZones(providers []string, wanted string) error {
	var ms []models.ZoneMembership
	for rest := providers; len(rest) > 0; {
		n := min(len(rest), 500)
		var got []struct {
			Provider, Name, Zone string
			ParentUUID           *string
			Traits               []byte
		}
		if err := t.tx.Table("aggregate_members AS m").
			Select("m.provider_uuid AS provider, p.name AS name, a.availability_zone AS zone, p.parent_uuid AS parent_uuid, p.traits AS traits").
			Joins("JOIN aggregates a ON a.uuid = m.aggregate_uuid").
			Joins("JOIN providers p ON p.uuid = m.provider_uuid").
			Where("m.provider_uuid IN ? AND a.availability_zone IS NOT NULL AND a.availability_zone <> ''", rest[:n]).
			Scan(&got).Error; err != nil {
			return err
		}
		for _, g := range got {
			p := models.Provider{ParentUUID: g.ParentUUID}
			if err := decodeJSONColumn(g.Traits, &p.Traits); err != nil {
				return err
			}
			if p.IsHost() {
				ms = append(ms, models.ZoneMembership{Provider: g.Provider, Name: g.Name, Zone: g.Zone})
			}
		}
		rest = rest[n:]
	}
	return models.CheckZones(ms, wanted)
}
