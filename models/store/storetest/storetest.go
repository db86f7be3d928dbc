// Package storetest opens real stores for tests: a fresh SQLite file per
// test, and a fresh PostgreSQL schema per test when CORRAL_TEST_POSTGRES
// names a server.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"corral/models/store"
)

// PostgresEnv names the variable holding the test server's URL.
const PostgresEnv = "CORRAL_TEST_POSTGRES"

// Open returns a store on a fresh SQLite file in t.TempDir(), closed when
// the test ends.
func Open(t testing.TB) *store.Store {
	t.Helper()
	return OpenPath(t, filepath.Join(t.TempDir(), "corral.db"))
}

// OpenPath opens (and closes at the end of the test) a SQLite store at path;
// opening the same path twice gives two stores on one database, like two
// processes.
func OpenPath(t testing.TB, path string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open sqlite store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// PostgresDSN creates a fresh schema on the test server and returns a URL
// whose connections use it; the schema is dropped when the test ends. It
// skips the test when CORRAL_TEST_POSTGRES is unset.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skipf("PostgreSQL tests skipped: set %s=postgres://… (see .ci/postgres.sh)", PostgresEnv)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	admin, err := gorm.Open(postgres.Open(base), &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		t.Fatalf("connect to %s: %v", PostgresEnv, err)
	}
	if err = admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE")
		if db, dberr := admin.DB(); dberr == nil {
			db.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// OpenPostgres returns a store on a fresh PostgreSQL schema, or skips.
func OpenPostgres(t testing.TB) *store.Store {
	t.Helper()
	dsn := PostgresDSN(t)
	s, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("open postgres store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// ForEach runs fn as two subtests, "sqlite" and "postgres", each on a fresh
// empty store; the PostgreSQL one skips when no server is configured.
func ForEach(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, Open(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, OpenPostgres(t)) })
}

// ForEachDSN is ForEach for tests that open the database themselves (e.g.
// two stores on one database): fn gets a DSN for a fresh, empty database.
func ForEachDSN(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, filepath.Join(t.TempDir(), "corral.db")) })
	t.Run("postgres", func(t *testing.T) { fn(t, PostgresDSN(t)) })
}
