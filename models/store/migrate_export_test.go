package store

// BaselineColumns exposes the columns migration 0001 must create, for the
// test that holds them to the schema.
var BaselineColumns = baselineColumns

// MigrationIDs lists a dialect's migration versions in order.
func MigrationIDs(dialect string) ([]string, error) {
	ms, err := loadMigrations(dialect)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids, nil
}

// MigrationsTable is where applied versions are recorded.
const MigrationsTable = migrationsTable
