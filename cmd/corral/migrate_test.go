package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"corral/models/store"
)

// TestCommandsUpgradeAnAutoMigrateDatabase: the commands open a database
// written by release 7989f67 (the last before versioned migrations) and
// see its data.
func TestCommandsUpgradeAnAutoMigrateDatabase(t *testing.T) {
	src, err := os.ReadFile("../../models/store/testdata/corral-7989f67.db")
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "old.db")
	if err := os.WriteFile(db, src, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", "export", "--db", db)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	var w struct {
		Providers  []json.RawMessage `json:"providers"`
		Aggregates []json.RawMessage `json:"aggregates"`
	}
	if err := json.Unmarshal([]byte(stdout), &w); err != nil {
		t.Fatalf("export output: %v", err)
	}
	if len(w.Providers) != 26 || len(w.Aggregates) != 12 {
		t.Errorf("export of the upgraded database: %d providers, %d aggregates; want 26, 12", len(w.Providers), len(w.Aggregates))
	}
}

// TestServeRefusesANewerDatabase: corral serve will not run on a database
// that a newer release has migrated.
func TestServeRefusesANewerDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("INSERT INTO corral_migrations (id) VALUES ('9999')"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	code, _, stderr := runCLI(t, "", "serve", "--addr", "127.0.0.1:0", "--db", db)
	if code != 2 || !strings.Contains(stderr, "schema is at version 9999, newer than this corral knows") {
		t.Errorf("serve on a newer database: exit %d, stderr %q; want 2 and the versions named", code, stderr)
	}
}
