package store

import (
	"strings"

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
