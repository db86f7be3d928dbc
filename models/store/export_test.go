package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"

	"corral/models"
)

// ExecRaw runs one statement on the write connection and maps its error the
// way every store method does, so tests can hit the database's own checks.
func (s *Store) ExecRaw(sql string, args ...any) error {
	return mapErr("test", s.db.Exec(sql, args...).Error)
}

// ProviderListPlans returns SQLite's query plans for the two statements
// ListProviders runs for q (the count, then the page), one line per step.
func (s *Store) ProviderListPlans(q ProviderQuery) (count, list string, err error) {
	dry := s.providerFilter(s.rdb.Session(&gorm.Session{DryRun: true}), q)
	var n int64
	c := dry.Session(&gorm.Session{}).Count(&n)
	var out []models.Provider
	l := page(dry.Order("name"), q.Offset, q.Limit).Find(&out)
	if count, err = s.explain(c.Statement.SQL.String(), c.Statement.Vars); err != nil {
		return "", "", err
	}
	list, err = s.explain(l.Statement.SQL.String(), l.Statement.Vars)
	return count, list, err
}

func (s *Store) explain(sql string, vars []any) (string, error) {
	rows, err := s.rdb.Raw("EXPLAIN QUERY PLAN "+sql, vars...).Rows()
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", err
		}
		steps = append(steps, detail)
	}
	return strings.Join(steps, "\n"), rows.Err()
}

// LoadWorldByColumns reads the world column by column in one read
// transaction: what LoadWorld's faster SQLite readers must equal.
func (s *Store) LoadWorldByColumns() (*models.World, error) {
	var w *models.World
	err := s.readTx(context.Background(), func(tx *gorm.DB) error {
		w = &models.World{}
		var err error
		if w.Providers, err = scanProviders(tx); err != nil {
			return err
		}
		if w.Servers, err = scanServers(tx); err != nil {
			return err
		}
		return loadRestByColumns(tx, w)
	})
	return w, err
}

// loadRestByColumns reads aggregates and members without the grouped read.
func loadRestByColumns(tx *gorm.DB, w *models.World) error {
	if err := tx.Order("id").Find(&w.Aggregates).Error; err != nil {
		return err
	}
	idx := map[string]int{}
	for i := range w.Aggregates {
		normaliseAggregate(&w.Aggregates[i])
		idx[w.Aggregates[i].UUID] = i
	}
	var ms []models.AggregateMember
	if err := tx.Order("aggregate_uuid, provider_uuid").Find(&ms).Error; err != nil {
		return err
	}
	for _, m := range ms {
		w.Aggregates[idx[m.AggregateUUID]].Members = append(w.Aggregates[idx[m.AggregateUUID]].Members, m.ProviderUUID)
	}
	return loadRest(tx, w)
}

// JoinedScansRefuse reports whether the faster SQLite readers refuse this
// database (and LoadWorld reads it column by column).
func (s *Store) JoinedScansRefuse() (providers, servers bool, err error) {
	err = s.readTx(context.Background(), func(tx *gorm.DB) error {
		_, perr := scanProvidersJoined(tx)
		_, serr := scanServersJoined(tx)
		providers, servers = errors.Is(perr, errSlowScan), errors.Is(serr, errSlowScan)
		return nil
	})
	return providers, servers, err
}

// RevisionQueries counts the revision's reads from the database.
func (s *Store) RevisionQueries() int64 { return s.revisionQueries.Load() }

// SetRevisionRecheck sets how long a revision is trusted without a query,
// and returns a function that restores it.
func SetRevisionRecheck(d time.Duration) func() {
	old := revisionRecheck
	revisionRecheck = d
	return func() { revisionRecheck = old }
}

// MapErr is mapErr, for tests of the driver errors no test can provoke.
func MapErr(op string, err error) error { return mapErr(op, err) }
