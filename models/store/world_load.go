package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"gorm.io/gorm"

	"corral/models"
)

// LoadWorld reads everything the filtering core needs as of one revision
// and returns that revision. Its parts are read side by side, each in its
// own read transaction that also reads the revision: every write moves
// the revision in its own transaction, so parts read at the same revision
// are one consistent state. When a write lands between them, it reads
// again, and in the end everything in one transaction.
func (s *Store) LoadWorld(ctx context.Context) (*models.World, int64, error) {
	for attempt := 0; attempt < 3; attempt++ {
		w, rev, same, err := s.loadWorldParallel(ctx)
		if err != nil {
			return nil, 0, mapErr("store.LoadWorld", err)
		}
		if same {
			return w, rev, nil
		}
	}
	var w *models.World
	var rev int64
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		if err := tx.Raw(revisionQuery).Scan(&rev).Error; err != nil {
			return err
		}
		var err error
		w, err = loadWorld(tx)
		return err
	})
	if err != nil {
		return nil, 0, mapErr("store.LoadWorld", err)
	}
	return w, rev, nil
}

// worldParts are the independent parts of a world, each read by one
// function of a read transaction.
var worldParts = []func(tx *gorm.DB, w *models.World) error{
	loadProviders, loadAggregatesAndMembers, loadServers, loadRest,
}

// loadWorldParallel reads the world's parts at once; same is false when
// they were not all read at the same revision.
func (s *Store) loadWorldParallel(ctx context.Context) (w *models.World, rev int64, same bool, err error) {
	w = &models.World{}
	revs := make([]int64, len(worldParts))
	errs := make([]error, len(worldParts))
	var wg sync.WaitGroup
	for i, part := range worldParts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.readTx(ctx, func(tx *gorm.DB) error {
				if rerr := tx.Raw(revisionQuery).Scan(&revs[i]).Error; rerr != nil {
					return rerr
				}
				return part(tx, w)
			})
		}()
	}
	wg.Wait()
	if err = errors.Join(errs...); err != nil {
		return nil, 0, false, err
	}
	for _, r := range revs[1:] {
		if r != revs[0] {
			return nil, 0, false, nil
		}
	}
	return w, revs[0], true, nil
}

// ExportWorld returns the whole world, ordered for stable output.
// It also carries the consumers with their allocations, read in the same
// transaction (the snapshot's LoadWorld does not need them).
func (s *Store) ExportWorld(ctx context.Context) (*models.World, error) {
	var w *models.World
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		if w, err = loadWorld(tx); err != nil {
			return err
		}
		w.Consumers, err = loadConsumers(tx)
		return err
	})
	if err != nil {
		return nil, mapErr("store.ExportWorld", err)
	}
	return w, nil
}

// loadWorld reads the world in tx, part after part.
func loadWorld(tx *gorm.DB) (*models.World, error) {
	w := &models.World{}
	for _, part := range worldParts {
		if err := part(tx, w); err != nil {
			return nil, err
		}
	}
	return w, nil
}

func isSQLite(tx *gorm.DB) bool { return tx.Dialector.Name() == "sqlite" }

func loadProviders(tx *gorm.DB, w *models.World) error {
	var err error
	if isSQLite(tx) {
		w.Providers, err = scanProvidersJoined(tx)
	}
	if !isSQLite(tx) || errors.Is(err, errSlowScan) {
		w.Providers, err = scanProviders(tx)
	}
	sortProviders(w.Providers)
	return err
}

// sortProviders puts providers in the world's order: by name, byte by
// byte, whatever the database's collation (the live snapshot inserts new
// providers in this order). The database's ORDER BY makes this a check.
func sortProviders(ps []models.Provider) {
	slices.SortFunc(ps, func(a, b models.Provider) int { return strings.Compare(a.Name, b.Name) })
}

// sortServers puts servers in the world's order: by name, then uuid.
func sortServers(vs []models.Server) {
	slices.SortFunc(vs, func(a, b models.Server) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.UUID, b.UUID)
	})
}

func loadAggregatesAndMembers(tx *gorm.DB, w *models.World) error {
	if err := tx.Order("id").Find(&w.Aggregates).Error; err != nil {
		return err
	}
	idx := make(map[string]int, len(w.Aggregates))
	for i := range w.Aggregates {
		normaliseAggregate(&w.Aggregates[i])
		idx[w.Aggregates[i].UUID] = i
	}
	if isSQLite(tx) {
		err := scanMembersGrouped(tx, func(agg string, members []string) {
			if i, ok := idx[agg]; ok {
				w.Aggregates[i].Members = members
			}
		})
		if !errors.Is(err, errSlowScan) {
			return err
		}
		for i := range w.Aggregates {
			w.Aggregates[i].Members = nil
		}
	}
	// Hundreds of thousands of rows at 100,000 providers: scanned by hand,
	// without GORM's reflection per row.
	rows, err := tx.Model(&models.AggregateMember{}).Select("aggregate_uuid, provider_uuid").
		Order("aggregate_uuid, provider_uuid").Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	var aggUUID, provUUID string
	for rows.Next() {
		if err = rows.Scan(&aggUUID, &provUUID); err != nil {
			return err
		}
		if i, ok := idx[aggUUID]; ok {
			w.Aggregates[i].Members = append(w.Aggregates[i].Members, provUUID)
		}
	}
	return rows.Err()
}

func loadServers(tx *gorm.DB, w *models.World) error {
	var err error
	if isSQLite(tx) {
		w.Servers, err = scanServersJoined(tx)
	}
	if !isSQLite(tx) || errors.Is(err, errSlowScan) {
		w.Servers, err = scanServers(tx)
	}
	sortServers(w.Servers)
	return err
}

// loadRest reads the small parts: flavors, server groups, settings.
func loadRest(tx *gorm.DB, w *models.World) error {
	if err := tx.Order("name, id").Find(&w.Flavors).Error; err != nil {
		return err
	}
	for i := range w.Flavors {
		normaliseFlavor(&w.Flavors[i])
	}
	if err := tx.Order("created_at, uuid").Find(&w.ServerGroups).Error; err != nil {
		return err
	}
	for i := range w.ServerGroups {
		normaliseGroup(&w.ServerGroups[i])
	}
	st, _, err := loadSettings(tx)
	if err != nil {
		return err
	}
	w.Settings = st
	return nil
}

// worldCounts summarises a world for the audit log (a whole world is too
// big to keep in every import event).
func worldCounts(w *models.World) map[string]int {
	return map[string]int{
		"providers": len(w.Providers), "aggregates": len(w.Aggregates), "flavors": len(w.Flavors),
		"servers": len(w.Servers), "server_groups": len(w.ServerGroups), "consumers": len(w.Consumers),
	}
}

// scanProviders reads every provider, by name. Providers are most of a big
// world, so they are scanned by hand: GORM's reflection was a third of
// LoadWorld's time.
func scanProviders(tx *gorm.DB) ([]models.Provider, error) {
	var n int64
	if err := tx.Model(&models.Provider{}).Count(&n).Error; err != nil {
		return nil, err
	}
	return scanProviderRows(tx.Model(&models.Provider{}), int(n))
}

// scanProviderRows reads the providers q selects, in name order.
func scanProviderRows(q *gorm.DB, n int) ([]models.Provider, error) {
	rows, err := q.
		Select("uuid, name, parent_uuid, root_uuid, traits, inventories, usages, generation, created_at, updated_at, compute").
		Order("name").Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]models.Provider, 0, n)
	for rows.Next() {
		var p models.Provider
		var parent sql.NullString
		var traits, invs, usages, service []byte
		if err := rows.Scan(&p.UUID, &p.Name, &parent, &p.RootUUID, &traits, &invs, &usages,
			&p.Generation, &p.CreatedAt, &p.UpdatedAt, &service); err != nil {
			return nil, err
		}
		if parent.Valid {
			v := parent.String
			p.ParentUUID = &v
		}
		if err := decodeJSONColumn(traits, &p.Traits); err != nil {
			return nil, fmt.Errorf("provider %s traits: %w", p.Name, err)
		}
		if err := decodeJSONColumn(invs, &p.Inventories); err != nil {
			return nil, fmt.Errorf("provider %s inventories: %w", p.Name, err)
		}
		if err := decodeJSONColumn(usages, &p.Usages); err != nil {
			return nil, fmt.Errorf("provider %s usages: %w", p.Name, err)
		}
		if err := decodeJSONColumn(service, &p.Compute); err != nil {
			return nil, fmt.Errorf("provider %s compute service: %w", p.Name, err)
		}
		normaliseProvider(&p)
		out = append(out, p)
	}
	return out, rows.Err()
}

// scanServers reads every server, by hand like scanProviders.
func scanServers(tx *gorm.DB) ([]models.Server, error) {
	var n int64
	if err := tx.Model(&models.Server{}).Count(&n).Error; err != nil {
		return nil, err
	}
	rows, err := tx.Model(&models.Server{}).
		Select("uuid, name, project_id, user_id, host, created_at, updated_at").Order("name, uuid").Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]models.Server, 0, n)
	for rows.Next() {
		var v models.Server
		if err := rows.Scan(&v.UUID, &v.Name, &v.ProjectID, &v.UserID, &v.Host, &v.CreatedAt, &v.UpdatedAt); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// decodeJSONColumn decodes what GORM's JSON serializer wrote, skipping the
// common empty values without calling the decoder.
func decodeJSONColumn(b []byte, v any) error {
	switch string(b) {
	case "", "null", "[]", "{}":
		return nil
	}
	return json.Unmarshal(b, v)
}
