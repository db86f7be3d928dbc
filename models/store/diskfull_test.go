package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

// wantOutOfSpace checks err is Unavailable (a 503) and says why.
func wantOutOfSpace(t *testing.T, err error) {
	t.Helper()
	var me *models.Error
	if !errors.As(err, &me) || me.Kind != models.Unavailable || !strings.Contains(me.Msg, "out of disk space") {
		t.Fatalf("got %#v (%v), want Unavailable saying the database is out of space", me, err)
	}
}

// A database that cannot grow is a 503 saying so, from either driver.
func TestFullDiskMapsToUnavailable(t *testing.T) {
	full := sqlite3.Error{Code: sqlite3.ErrFull, ExtendedCode: sqlite3.ErrFull.Extend(0)}
	wantOutOfSpace(t, store.MapErr("test", fmt.Errorf("insert: %w", full)))
	pg := &pgconn.PgError{Code: "53100", Message: `could not extend file "base/16384/2619": No space left on device`}
	wantOutOfSpace(t, store.MapErr("test", fmt.Errorf("insert: %w", pg)))
}

// A real SQLite database that fills up (its page count capped) answers
// Unavailable, not an unexplained error.
func TestFullSQLiteDatabaseIsUnavailable(t *testing.T) {
	s := storetest.Open(t)
	if err := s.ExecRaw("CREATE TABLE filler (b BLOB)"); err != nil {
		t.Fatal(err)
	}
	if err := s.ExecRaw("PRAGMA max_page_count = 1"); err != nil {
		t.Fatal(err)
	}
	wantOutOfSpace(t, s.ExecRaw("INSERT INTO filler VALUES (zeroblob(1000000))"))
}
