package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"

	"corral/models"
)

// migrationFiles holds the schema's history, one numbered SQL file per
// version and database (see the package doc).
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// migrationsTable records the versions applied to a database.
const migrationsTable = "corral_migrations"

// migrationName is NNNN_what_it_does.sql.
var migrationName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+\.sql$`)

// migration is one version of the schema on one database.
type migration struct {
	ID         string // "0001"
	File       string // "0001_baseline.sql"
	Statements []string
}

// loadMigrations reads the migrations of a dialect ("sqlite" or
// "postgres") in version order, refusing a gap, a duplicate or a set that
// differs from the other dialect's: both databases share one sequence.
func loadMigrations(dialect string) ([]migration, error) {
	files := map[string][]string{}
	for _, d := range []string{"sqlite", "postgres"} {
		entries, err := fs.ReadDir(migrationFiles, path.Join("migrations", d))
		if err != nil {
			return nil, err
		}
		for i, e := range entries {
			m := migrationName.FindStringSubmatch(e.Name())
			if m == nil {
				return nil, fmt.Errorf("migration %s/%s: want NNNN_name.sql", d, e.Name())
			}
			if want := fmt.Sprintf("%04d", i+1); m[1] != want {
				return nil, fmt.Errorf("migration %s/%s: expected version %s next", d, e.Name(), want)
			}
			files[d] = append(files[d], e.Name())
		}
	}
	if !slices.Equal(files["sqlite"], files["postgres"]) {
		return nil, fmt.Errorf("migrations differ between sqlite %v and postgres %v", files["sqlite"], files["postgres"])
	}
	var out []migration
	for _, name := range files[dialect] {
		b, err := migrationFiles.ReadFile(path.Join("migrations", dialect, name))
		if err != nil {
			return nil, err
		}
		stmts := splitStatements(string(b))
		if len(stmts) == 0 {
			return nil, fmt.Errorf("migration %s/%s holds no statement", dialect, name)
		}
		out = append(out, migration{ID: name[:4], File: name, Statements: stmts})
	}
	return out, nil
}

// splitStatements cuts a migration file into statements: each ends with a
// ";" at the end of a line; lines starting with "--" are comments.
func splitStatements(src string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		if strings.HasSuffix(trimmed, ";") {
			if st := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cur.String()), ";")); st != "" {
				out = append(out, st)
			}
			cur.Reset()
		}
	}
	if st := strings.TrimSpace(cur.String()); st != "" {
		out = append(out, st)
	}
	return out
}

func (s *Store) dialect() string {
	if s.postgres {
		return "postgres"
	}
	return "sqlite"
}

// migrate brings the schema up to the newest version this binary knows, in
// one transaction: a failure leaves the database as it was. gormigrate runs
// inside the transaction it is given, so the versions it records commit or
// roll back with the schema changes themselves, on both databases.
func (s *Store) migrate(ctx context.Context) error {
	if s.postgres {
		return s.db.WithContext(ctx).Transaction(s.migrateTx)
	}
	// A migration that changes a column on SQLite must rebuild the table,
	// and dropping the old table would cascade-delete the rows that refer
	// to it. Foreign keys can only be switched off outside a transaction,
	// so pin one connection; migrateTx checks them before committing.
	return s.db.WithContext(ctx).Connection(func(conn *gorm.DB) error {
		if err := conn.Exec("PRAGMA foreign_keys = OFF").Error; err != nil {
			return err
		}
		defer conn.Exec("PRAGMA foreign_keys = ON")
		return conn.Transaction(s.migrateTx)
	})
}

func (s *Store) migrateTx(tx *gorm.DB) error {
	if s.postgres {
		// Replicas starting together must not migrate concurrently;
		// PostgreSQL DDL is transactional, so a transaction-scoped lock
		// covers the whole migration. (On SQLite the write connection's
		// BEGIN IMMEDIATE already serialises migrating processes.)
		if err := tx.Exec("SELECT pg_advisory_xact_lock(7306234921)").Error; err != nil {
			return err
		}
	}
	ms, err := loadMigrations(s.dialect())
	if err != nil {
		return err
	}
	pending := len(ms)
	if tx.Migrator().HasTable(migrationsTable) {
		applied, err := refuseNewer(tx, ms)
		if err != nil {
			return err
		}
		pending = len(ms) - applied
	} else if tx.Migrator().HasTable("providers") {
		// Made by a release that migrated with GORM's AutoMigrate: version
		// 0001 is written to adopt such a database as it is.
		if err := checkBaselineColumns(tx); err != nil {
			return err
		}
	}
	steps := make([]*gormigrate.Migration, len(ms))
	for i, m := range ms {
		steps[i] = &gormigrate.Migration{ID: m.ID, Migrate: func(tx *gorm.DB) error {
			for _, st := range m.Statements {
				if err := tx.Exec(st).Error; err != nil {
					return fmt.Errorf("migration %s/%s: %w", s.dialect(), m.File, err)
				}
			}
			return nil
		}}
	}
	g := gormigrate.New(tx, &gormigrate.Options{
		TableName:                 migrationsTable,
		IDColumnName:              "id",
		IDColumnSize:              255,
		UseTransaction:            false, // tx is already the transaction
		ValidateUnknownMigrations: true,
	}, steps)
	if err := g.Migrate(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// Checking every foreign key reads every membership and allocation:
	// seconds at 100,000 providers, so only after a migration ran.
	if !s.postgres && pending > 0 {
		var bad []struct{ Table, Parent string }
		if err := tx.Raw("PRAGMA foreign_key_check").Scan(&bad).Error; err != nil {
			return err
		}
		if len(bad) > 0 {
			return fmt.Errorf("migrate: %d rows break foreign keys, e.g. in %s a row refers to a missing %s", len(bad), bad[0].Table, bad[0].Parent)
		}
	}
	return nil
}

// refuseNewer stops a binary from using a database that a newer release
// has migrated past what this binary knows: it would half-understand it.
// It returns how many of ms the database has had.
func refuseNewer(tx *gorm.DB, ms []migration) (int, error) {
	var applied []string
	if err := tx.Table(migrationsTable).Order("id").Pluck("id", &applied).Error; err != nil {
		return 0, err
	}
	known := map[string]bool{}
	for _, m := range ms {
		known[m.ID] = true
	}
	for _, id := range applied {
		if !known[id] {
			return 0, models.E(models.Invalid, "db",
				"the database's schema is at version %s, newer than this corral knows (up to %s): run the newer corral, or restore a backup",
				applied[len(applied)-1], ms[len(ms)-1].ID)
		}
	}
	return len(applied), nil
}

// baselineColumns are the tables and columns of version 0001, which every
// release before versioned migrations had (sessions and drafts came later,
// and 0001 creates them when they are missing).
var baselineColumns = map[string][]string{
	"providers":           {"uuid", "name", "parent_uuid", "root_uuid", "traits", "inventories", "usages", "generation", "created_at", "updated_at"},
	"aggregates":          {"id", "uuid", "name", "availability_zone", "metadata", "generation", "created_at", "updated_at"},
	"aggregate_members":   {"aggregate_uuid", "provider_uuid"},
	"flavors":             {"id", "name", "v_cpus", "ram_mb", "disk_gb", "extra_specs", "generation", "created_at", "updated_at"},
	"servers":             {"uuid", "name", "project_id", "user_id", "host", "created_at", "updated_at"},
	"server_groups":       {"uuid", "name", "project_id", "user_id", "policy", "rules", "members", "generation", "created_at", "updated_at"},
	"users":               {"id", "name", "password_hash", "role", "project_id", "created_at", "updated_at"},
	"api_tokens":          {"id", "user_id", "name", "hash", "prefix", "created_at", "last_used_at", "revoked_at"},
	"audit_events":        {"id", "at", "actor", "via", "action", "object_type", "object_id", "object_name", "before", "after"},
	"quota":               {"project_id", "resource", "limit"},
	"corral_revision":     {"id", "revision"},
	"corral_settings":     {"id", "data", "generation", "updated_at"},
	"corral_session_keys": {"id", "hash_key", "block_key", "created_at"},
	"corral_drafts":       {"id", "name", "author", "base_revision", "changes", "generations", "version", "created_at", "updated_at"},
	"sessions":            {"id", "hash", "user_id", "created_at", "last_seen_at", "expires_at", "user_agent", "ip"},
}

// checkBaselineColumns refuses to adopt a database whose existing tables
// lack columns of version 0001 (not corral's, or edited by hand): 0001
// skips tables that exist, so later code would fail on them at random.
func checkBaselineColumns(tx *gorm.DB) error {
	tables := make([]string, 0, len(baselineColumns))
	for t := range baselineColumns {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	for _, t := range tables {
		if !tx.Migrator().HasTable(t) {
			continue
		}
		cols, err := tx.Migrator().ColumnTypes(t)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, c := range cols {
			have[c.Name()] = true
		}
		for _, c := range baselineColumns[t] {
			if !have[c] {
				return models.E(models.Invalid, "db",
					"table %s has no column %s: the database was not made by corral, or was changed by hand", t, c)
			}
		}
	}
	return nil
}
