package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

// releaseFixture is a SQLite database written by release 7989f67, the last one
// that migrated with AutoMigrate (see testdata/mkfixture).
const releaseFixture = "testdata/corral-7989f67.db"

// v2Tables are the tables later migrations add (0002 consumers and
// allocations, 0003 the cloud sync tables, 0004 custom resource classes
// and traits, 0006 doctor acknowledgements); the rest is version 0001.
var v2Tables = []string{"consumers", "allocations", "cloud_syncs", "cloud_state", "resource_classes", "traits", "doctor_acks"}

// laterColumns are the columns later migrations add to version 0001's
// tables (0005 flavor access, 0007 aggregates' two memberships, 0008
// ephemeral disk and swap, 0009 a host's compute service).
var laterColumns = map[string][]string{"flavors": {"private", "projects", "ephemeral_gb", "swap_mb"}, "aggregates": {"not_in_placement", "not_in_nova"},
	"providers": {"compute"}}

// withoutLaterColumns is a schema dump as version 0001 left it: the
// columns laterColumns lists, and their part of SQLite's table statement,
// left out.
func withoutLaterColumns(dump []string, pg bool) []string {
	var out []string
	for _, l := range dump {
		table, rest, _ := strings.Cut(l, " column ")
		if cols, ok := laterColumns[table]; ok && rest != "" {
			f := strings.Split(rest, "|")
			if len(f) > 1 && slices.Contains(cols, f[1]) {
				continue
			}
		}
		if !pg && strings.HasPrefix(l, "flavors object table flavors:") {
			l = strings.Replace(l, ",private numeric NOT NULL DEFAULT false,projects text", "", 1)
			l = strings.Replace(l, ",ephemeral_gb integer NOT NULL DEFAULT 0,swap_mb integer NOT NULL DEFAULT 0", "", 1)
		}
		if !pg && strings.HasPrefix(l, "aggregates object table aggregates:") {
			l = strings.Replace(l, ",not_in_placement text,not_in_nova text", "", 1)
		}
		if !pg && strings.HasPrefix(l, "providers object table providers:") {
			l = strings.Replace(l, ",compute text", "", 1)
		}
		out = append(out, l)
	}
	return out
}

// forEachMigrationDB runs fn on SQLite and PostgreSQL; newDSN gives a fresh, empty
// database each time it is called.
func forEachMigrationDB(t *testing.T, fn func(t *testing.T, newDSN func() string, pg bool)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, func() string { return filepath.Join(t.TempDir(), "corral.db") }, false)
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, func() string { return storetest.PostgresDSN(t) }, true)
	})
}

// rawMigrationDB opens dsn without corral's migrations, closed when the test ends.
func rawMigrationDB(t *testing.T, dsn string) *gorm.DB {
	t.Helper()
	cfg := &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)}
	var d gorm.Dialector
	if strings.HasPrefix(dsn, "postgres") {
		d = postgres.Open(dsn)
	} else {
		d = sqlite.Open("file:" + dsn + "?_foreign_keys=on&_busy_timeout=10000")
	}
	db, err := gorm.Open(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return db
}

func closeRaw(db *gorm.DB) {
	if sqlDB, err := db.DB(); err == nil {
		sqlDB.Close()
	}
}

// makeLegacy builds an empty database the way release 7989f67 did.
func makeLegacy(t *testing.T, dsn string, pg bool) {
	t.Helper()
	db := rawMigrationDB(t, dsn)
	defer closeRaw(db)
	if err := db.Transaction(func(tx *gorm.DB) error { return legacyMigrate(tx, pg) }); err != nil {
		t.Fatalf("legacy migrate: %v", err)
	}
}

// copyFixture copies the release's database into the test's directory, so
// the committed file is never changed.
func copyFixture(t *testing.T) string {
	t.Helper()
	in, err := os.Open(releaseFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(t.TempDir(), "old.db")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// lines runs a query and renders each row as "a|b|c".
func queryLines(t *testing.T, db *gorm.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Raw(q, args...).Rows()
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = fmt.Sprintf("%x", b)
			}
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	quotes     = strings.NewReplacer("`", "", `"`, "")
	spaces     = regexp.MustCompile(`\s+`)
	punctSpace = regexp.MustCompile(`\s*([(),])\s*`)
)

// normSQL makes two spellings of the same DDL compare equal: quoting and
// layout differ between GORM's statements and the migration files.
func normSQL(s string) string {
	s = spaces.ReplaceAllString(quotes.Replace(s), " ")
	return strings.TrimSpace(punctSpace.ReplaceAllString(s, "$1"))
}

// schemaDump describes every table, column, index and constraint of a
// database, one sorted line each, leaving out the tables in skip.
func schemaDump(t *testing.T, db *gorm.DB, pg bool, skip ...string) []string {
	t.Helper()
	skipped := func(table string) bool {
		return slices.Contains(skip, table)
	}
	var out []string
	add := func(table string, ls []string, prefix string) {
		if skipped(table) {
			return
		}
		for _, l := range ls {
			out = append(out, table+" "+prefix+" "+l)
		}
	}
	if !pg {
		for _, obj := range queryLines(t, db, "SELECT type, name, tbl_name, COALESCE(sql, '') FROM sqlite_master") {
			f := strings.SplitN(obj, "|", 4)
			typ, name, table := f[0], f[1], f[2]
			add(table, []string{typ + " " + name + ": " + normSQL(f[3])}, "object")
			switch typ {
			case "table":
				add(table, queryLines(t, db, "SELECT cid, name, type, \"notnull\", COALESCE(dflt_value, 'NULL'), pk, hidden FROM pragma_table_xinfo(?)", name), "column")
				add(table, queryLines(t, db, "SELECT name, \"unique\", origin, partial FROM pragma_index_list(?)", name), "index")
				add(table, queryLines(t, db, "SELECT id, seq, \"table\", \"from\", \"to\", on_update, on_delete, \"match\" FROM pragma_foreign_key_list(?)", name), "foreign key")
			case "index":
				add(table, queryLines(t, db, "SELECT ?, seqno, cid, COALESCE(name, ''), \"desc\", coll, key FROM pragma_index_xinfo(?)", name, name), "index column")
			}
		}
	} else {
		var schema string
		if err := db.Raw("SELECT current_schema()").Scan(&schema).Error; err != nil {
			t.Fatal(err)
		}
		for _, l := range queryLines(t, db, `SELECT table_name, ordinal_position, column_name, data_type,
				COALESCE(character_maximum_length, -1), is_nullable, COALESCE(column_default, 'NULL')
			FROM information_schema.columns WHERE table_schema = current_schema()`) {
			table, rest, _ := strings.Cut(l, "|")
			add(table, []string{rest}, "column")
		}
		for _, l := range queryLines(t, db, `SELECT c.conrelid::regclass::text, c.conname, c.contype, pg_get_constraintdef(c.oid)
			FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
			WHERE n.nspname = current_schema()`) {
			table, rest, _ := strings.Cut(l, "|")
			add(table, []string{rest}, "constraint")
		}
		for _, l := range queryLines(t, db, "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()") {
			table, rest, _ := strings.Cut(l, "|")
			add(table, []string{strings.ReplaceAll(rest, " "+schema+".", " ")}, "index")
		}
		for _, l := range queryLines(t, db, `SELECT s.relname, d.refobjid::regclass::text, t.data_type
			FROM pg_class s JOIN pg_namespace n ON n.oid = s.relnamespace
			JOIN pg_depend d ON d.objid = s.oid AND d.deptype = 'a'
			JOIN information_schema.sequences t ON t.sequence_schema = n.nspname AND t.sequence_name = s.relname
			WHERE s.relkind = 'S' AND n.nspname = current_schema()`) {
			name, rest, _ := strings.Cut(l, "|")
			table, typ, _ := strings.Cut(rest, "|")
			add(table, []string{name + " " + typ}, "sequence")
		}
	}
	slices.Sort(out)
	return out
}

// sameLines fails with the lines only one side has.
func sameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	var only []string
	for _, l := range got {
		if !slices.Contains(want, l) {
			only = append(only, "+ "+l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			only = append(only, "- "+l)
		}
	}
	t.Errorf("%s differ (%d vs %d lines; + only in the first, - only in the second):\n%s", what, len(got), len(want), strings.Join(only, "\n"))
}

func openMigrated(t *testing.T, dsn string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func appliedVersions(t *testing.T, db *gorm.DB) []string {
	t.Helper()
	return queryLines(t, db, "SELECT id FROM "+store.MigrationsTable+" ORDER BY id")
}

// TestMigrationBaselineIsTheAutoMigrateSchema holds version 0001 to the
// schema release 7989f67's AutoMigrate made, object for object: tables,
// columns and their types, defaults and nullability, primary keys, unique
// and partial indexes, foreign keys and their actions, sequences.
func TestMigrationBaselineIsTheAutoMigrateSchema(t *testing.T) {
	forEachMigrationDB(t, func(t *testing.T, newDSN func() string, pg bool) {
		old := newDSN()
		makeLegacy(t, old, pg)
		want := schemaDump(t, rawMigrationDB(t, old), pg)

		fresh := newDSN()
		s := openMigrated(t, fresh)
		s.Close()
		got := withoutLaterColumns(schemaDump(t, rawMigrationDB(t, fresh), pg, append([]string{store.MigrationsTable}, v2Tables...)...), pg)
		sameLines(t, "migration 0001 and AutoMigrate schemas", got, want)

		// The dump must be able to tell schemas apart.
		if len(want) < 150 {
			t.Fatalf("schema dump has only %d lines:\n%s", len(want), strings.Join(want, "\n"))
		}
		for _, needle := range []string{"aggregate_members", "idx_providers_sharing", "CASCADE", "idx_sessions_hash"} {
			if !strings.Contains(strings.Join(want, "\n"), needle) {
				t.Errorf("schema dump lacks %q", needle)
			}
		}
		if !pg {
			// The frozen code path is the release's: its schema is the one
			// in the file the release wrote.
			sameLines(t, "frozen AutoMigrate and release 7989f67's file", schemaDump(t, rawMigrationDB(t, copyFixture(t)), pg), want)
		}
	})
}

// TestMigrationBaselineColumns keeps the list that guards adoption of an
// old database equal to what 0001 creates.
func TestMigrationBaselineColumns(t *testing.T) {
	storetest.ForEachDSN(t, func(t *testing.T, dsn string) {
		openMigrated(t, dsn).Close()
		db := rawMigrationDB(t, dsn)
		var tables []string
		for table := range store.BaselineColumns {
			tables = append(tables, table)
			cols, err := db.Migrator().ColumnTypes(table)
			if err != nil {
				t.Fatalf("%s: %v", table, err)
			}
			var names []string
			for _, c := range cols {
				if !slices.Contains(laterColumns[table], c.Name()) {
					names = append(names, c.Name())
				}
			}
			if !slices.Equal(names, store.BaselineColumns[table]) {
				t.Errorf("%s: 0001 creates %v, baselineColumns says %v", table, names, store.BaselineColumns[table])
			}
		}
		all, err := db.Migrator().GetTables()
		if err != nil {
			t.Fatal(err)
		}
		for _, table := range all {
			if !slices.Contains(tables, table) && !slices.Contains(v2Tables, table) && table != store.MigrationsTable && table != "sqlite_sequence" {
				t.Errorf("table %s is in the schema but not in baselineColumns", table)
			}
		}
	})
}

// TestMigrationFilesPairUp: one version sequence for both databases.
func TestMigrationFilesPairUp(t *testing.T) {
	lite, err := store.MigrationIDs("sqlite")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := store.MigrationIDs("postgres")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008", "0009"}; !slices.Equal(lite, want) || !slices.Equal(pg, want) {
		t.Fatalf("versions: sqlite %v, postgres %v, want %v", lite, pg, want)
	}
}

// allTables are the tables release 7989f67 had.
func releaseTables() []string {
	var out []string
	for table := range store.BaselineColumns {
		out = append(out, table)
	}
	slices.Sort(out)
	return out
}

// contents is every row of every table of the release, in key order.
func tableContents(t *testing.T, db *gorm.DB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, table := range releaseTables() {
		order := "1"
		if table == "aggregate_members" || table == "quota" {
			order = "1, 2"
		}
		// The release's columns: later migrations may add some.
		cols := `"` + strings.Join(store.BaselineColumns[table], `", "`) + `"`
		out[table] = queryLines(t, db, `SELECT `+cols+` FROM "`+table+`" ORDER BY `+order)
	}
	return out
}

// copyRows fills an empty old-schema PostgreSQL database with the rows of
// the release's SQLite file, as a dump and restore would, sequences
// included.
func copyRows(t *testing.T, from, to *gorm.DB) {
	t.Helper()
	order := []string{"providers", "aggregates", "aggregate_members", "flavors", "servers", "server_groups",
		"users", "api_tokens", "audit_events", "quota", "corral_revision", "corral_settings",
		"corral_session_keys", "corral_drafts", "sessions"}
	if !slices.Equal(slices.Sorted(slices.Values(order)), releaseTables()) {
		t.Fatalf("copy order %v misses tables of %v", order, releaseTables())
	}
	err := to.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("DELETE FROM corral_revision").Error; err != nil {
			return err
		}
		for _, table := range order {
			rows, err := from.Raw(`SELECT * FROM "` + table + `"`).Rows()
			if err != nil {
				return err
			}
			cols, _ := rows.Columns()
			quoted := make([]string, len(cols))
			marks := make([]string, len(cols))
			for i, c := range cols {
				quoted[i], marks[i] = `"`+c+`"`, "?"
			}
			ins := `INSERT INTO "` + table + `" (` + strings.Join(quoted, ", ") + `) VALUES (` + strings.Join(marks, ", ") + `)`
			var batch [][]any
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					rows.Close()
					return err
				}
				batch = append(batch, vals)
			}
			rows.Close()
			for _, vals := range batch {
				if err := tx.Exec(ins, vals...).Error; err != nil {
					return fmt.Errorf("%s: %w", table, err)
				}
			}
			if slices.Contains(cols, "id") {
				var serial *string
				if err := tx.Raw("SELECT pg_get_serial_sequence(?, 'id')", table).Scan(&serial).Error; err != nil {
					return err
				}
				if serial != nil {
					if err := tx.Exec(`SELECT setval(?, (SELECT COALESCE(MAX(id), 0) + 1 FROM "`+table+`"), false)`, *serial).Error; err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("copy the release's rows: %v", err)
	}
}

// TestMigrationUpgradesARelease7989f67Database opens a database made by the
// last AutoMigrate release — on SQLite the very file it wrote, on
// PostgreSQL the same rows in the schema its code path makes — and checks
// that it is adopted at 0001, upgraded to the newest version, keeps every
// row, ends with the schema of a fresh database, and works.
func TestMigrationUpgradesARelease7989f67Database(t *testing.T) {
	forEachMigrationDB(t, func(t *testing.T, newDSN func() string, pg bool) {
		var dsn string
		if pg {
			dsn = newDSN()
			makeLegacy(t, dsn, true)
			src, dst := rawMigrationDB(t, copyFixture(t)), rawMigrationDB(t, dsn)
			copyRows(t, src, dst)
			copied, orig := tableContents(t, dst), tableContents(t, src)
			for _, table := range releaseTables() {
				if len(copied[table]) != len(orig[table]) {
					t.Fatalf("%s: copied %d of %d rows", table, len(copied[table]), len(orig[table]))
				}
			}
			closeRaw(src)
			closeRaw(dst)
		} else {
			dsn = copyFixture(t)
		}
		raw := rawMigrationDB(t, dsn)
		if raw.Migrator().HasTable(store.MigrationsTable) {
			t.Fatal("the release's database already has a migrations table")
		}
		before := tableContents(t, raw)
		if n := len(before["providers"]); n != 26 {
			t.Fatalf("the release's database holds %d providers, want the demo's 26", n)
		}
		for table, rows := range before {
			if len(rows) == 0 {
				t.Fatalf("the release's database has no rows in %s: the test would not see them lost", table)
			}
		}
		closeRaw(raw)

		s := openMigrated(t, dsn)
		raw = rawMigrationDB(t, dsn)
		if got := appliedVersions(t, raw); !slices.Equal(got, []string{"0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008", "0009"}) {
			t.Fatalf("applied versions %v, want [0001 0002 0003 0004 0005 0006 0007 0008 0009]", got)
		}
		after := tableContents(t, raw)
		for _, table := range releaseTables() {
			sameLines(t, table+" rows after the upgrade and before", after[table], before[table])
		}

		// The upgraded database has exactly a fresh database's schema.
		fresh := newDSN()
		openMigrated(t, fresh).Close()
		sameLines(t, "upgraded and fresh schemas", schemaDump(t, raw, pg), schemaDump(t, rawMigrationDB(t, fresh), pg))

		checkReleaseData(t, s)
		checkWrites(t, s)
		checkAllocationKeys(t, s)

		// Opening again applies nothing twice.
		s.Close()
		openMigrated(t, dsn).Close()
		if got := appliedVersions(t, raw); !slices.Equal(got, []string{"0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008", "0009"}) {
			t.Fatalf("applied versions after reopening %v", got)
		}
	})
}

// checkReleaseData reads the release's objects through the store.
func checkReleaseData(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	w, _, err := s.LoadWorld(ctx)
	if err != nil {
		t.Fatalf("LoadWorld: %v", err)
	}
	if len(w.Providers) != 26 || len(w.Aggregates) != 12 || len(w.Flavors) != 7 || len(w.Servers) != 10 || len(w.ServerGroups) != 4 {
		t.Errorf("world: %d providers, %d aggregates, %d flavors, %d servers, %d groups; want 26, 12, 7, 10, 4",
			len(w.Providers), len(w.Aggregates), len(w.Flavors), len(w.Servers), len(w.ServerGroups))
	}
	if w.Settings.RequiredMemberPrefix != "CUSTOM_FIXTURE_" {
		t.Errorf("settings lost: required member prefix %q", w.Settings.RequiredMemberPrefix)
	}
	aggB, err := s.GetAggregate(ctx, store.DemoUUID("aggregate", "aggB"))
	if err != nil {
		t.Fatal(err)
	}
	members := slices.Sorted(slices.Values(aggB.Members))
	want := slices.Sorted(slices.Values([]string{store.DemoUUID("provider", "cn2"), store.DemoUUID("provider", "ss1")}))
	if aggB.Name != "aggB" || !slices.Equal(members, want) {
		t.Errorf("aggB: name %q, members %v, want %v", aggB.Name, members, want)
	}
	cn1, err := s.GetProvider(ctx, store.DemoUUID("provider", "cn1"))
	if err != nil || cn1.Name != "cn1" || len(cn1.Inventories) == 0 {
		t.Errorf("cn1: %+v, %v", cn1, err)
	}
	if _, err := s.Authenticate(ctx, "admin", "admin password 1"); err != nil {
		t.Errorf("admin cannot sign in with the release's password: %v", err)
	}
	alice, err := s.UserByName(ctx, "alice")
	if err != nil || alice.ProjectID != "project-a" || alice.Role != models.RoleMember {
		t.Errorf("alice: %+v, %v", alice, err)
	}
	tokens, err := s.ListTokens(ctx, 0)
	if err != nil || len(tokens) != 2 {
		t.Errorf("tokens: %d, %v", len(tokens), err)
	}
	if n, err := s.GetQuota(ctx, "project-a", models.QuotaServerGroups); err != nil || n != 7 {
		t.Errorf("quota: %d, %v", n, err)
	}
	drafts, err := s.ListDrafts(ctx)
	if err != nil || len(drafts) != 1 || drafts[0].Name != "fixture draft" {
		t.Errorf("drafts: %+v, %v", drafts, err)
	}
	keys, err := s.SessionKeys(ctx)
	if err != nil || len(keys) != 2 {
		t.Errorf("session keys: %d, %v", len(keys), err)
	}
}

// checkWrites makes changes that need every sequence and the revision row.
func checkWrites(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	a := store.Actor{Name: "upgrade-test", Via: "cli"}
	rev, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agg := &models.Aggregate{Name: "after-upgrade", Members: []string{store.DemoUUID("provider", "cn1")}}
	if err := s.CreateAggregate(ctx, a, agg); err != nil {
		t.Fatalf("create an aggregate after the upgrade: %v", err)
	}
	if _, err := s.CreateUser(ctx, a, "bob", "bob password 1", models.RoleReader, ""); err != nil {
		t.Fatalf("create a user after the upgrade: %v", err)
	}
	if _, _, err := s.CreateToken(ctx, a, "bob", "t"); err != nil {
		t.Fatalf("create a token after the upgrade: %v", err)
	}
	if after, err := s.Revision(ctx); err != nil || after <= rev {
		t.Errorf("revision %d → %d, %v", rev, after, err)
	}
	events, _, err := s.ListAudit(ctx, store.AuditQuery{Actor: a.Name})
	if err != nil || len(events) != 3 {
		t.Errorf("audit of the writes: %d events, %v", len(events), err)
	}
	w, _, err := s.LoadWorld(ctx)
	if err != nil || len(w.Aggregates) != 13 {
		t.Errorf("after a write LoadWorld has %d aggregates, %v", len(w.Aggregates), err)
	}
}

// checkAllocationKeys exercises migration 0002's keys: an allocation needs
// its consumer and provider, goes with its consumer, and keeps its
// provider from being deleted.
func checkAllocationKeys(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	a := store.Actor{Name: "upgrade-test", Via: "cli"}
	p := &models.Provider{UUID: "0b9e1d1e-2f4c-4d7e-9a51-6c1f00000001", Name: "alloc-host", Traits: []string{}}
	if err := s.CreateProvider(ctx, a, p); err != nil {
		t.Fatal(err)
	}
	const consumer = "0b9e1d1e-2f4c-4d7e-9a51-6c1f0000c001"
	const ins = "INSERT INTO allocations (consumer_uuid, provider_uuid, resource_class, used) VALUES (?, ?, ?, ?)"
	if err := s.ExecRaw(ins, consumer, p.UUID, "VCPU", 2); !models.Is(models.Conflict, err) {
		t.Errorf("allocation without its consumer: %v, want a conflict", err)
	}
	if err := s.ExecRaw("INSERT INTO consumers (uuid, project_id, user_id, consumer_type) VALUES (?, 'p', 'u', 'INSTANCE')", consumer); err != nil {
		t.Fatal(err)
	}
	if err := s.ExecRaw(ins, consumer, "0b9e1d1e-2f4c-4d7e-9a51-6c1fffffffff", "VCPU", 2); !models.Is(models.Conflict, err) {
		t.Errorf("allocation on no provider: %v, want a conflict", err)
	}
	if err := s.ExecRaw(ins, consumer, p.UUID, "VCPU", 2); err != nil {
		t.Fatal(err)
	}
	if err := s.ExecRaw(ins, consumer, p.UUID, "VCPU", 3); !models.Is(models.Conflict, err) {
		t.Errorf("second VCPU allocation of one consumer on one provider: %v, want a conflict", err)
	}
	if err := s.DeleteProvider(ctx, a, p.UUID, store.AnyGeneration); !models.Is(models.Conflict, err) {
		t.Errorf("deleting a provider with allocations: %v, want a conflict", err)
	}
	if err := s.ExecRaw("DELETE FROM consumers WHERE uuid = ?", consumer); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteProvider(ctx, a, p.UUID, store.AnyGeneration); err != nil {
		t.Errorf("deleting the provider once its consumer (and so its allocations) is gone: %v", err)
	}
}

// TestMigration0002ConsumersAllocations checks 0002's keys on a fresh
// database.
func TestMigration0002ConsumersAllocations(t *testing.T) {
	storetest.ForEachDSN(t, func(t *testing.T, dsn string) {
		checkAllocationKeys(t, openMigrated(t, dsn))
		// NO ACTION would refuse the deletion above as well, but only at the
		// end of the statement; the schema must say RESTRICT.
		want := "allocations foreign key 0|0|providers|provider_uuid|uuid|NO ACTION|RESTRICT|NONE"
		pg := strings.HasPrefix(dsn, "postgres")
		if pg {
			want = "allocations constraint allocations_provider_uuid_fkey|f|FOREIGN KEY (provider_uuid) REFERENCES providers(uuid) ON DELETE RESTRICT"
		}
		if dump := schemaDump(t, rawMigrationDB(t, dsn), pg); !slices.Contains(dump, want) {
			t.Errorf("schema lacks %q", want)
		}
	})
}

// TestMigrationRefusesANewerDatabase: a database migrated by a newer
// release is not used, and not changed.
func TestMigrationRefusesANewerDatabase(t *testing.T) {
	storetest.ForEachDSN(t, func(t *testing.T, dsn string) {
		openMigrated(t, dsn).Close()
		raw := rawMigrationDB(t, dsn)
		if err := raw.Exec("INSERT INTO " + store.MigrationsTable + " (id) VALUES ('0010')").Error; err != nil {
			t.Fatal(err)
		}
		before := schemaDump(t, raw, strings.HasPrefix(dsn, "postgres"))
		s, err := store.Open(context.Background(), dsn)
		if err == nil {
			s.Close()
			t.Fatal("a database at a version this binary does not know was opened")
		}
		if !models.Is(models.Invalid, err) || !strings.Contains(err.Error(), "version 0010, newer than this corral knows (up to 0009)") {
			t.Errorf("error %q (kind %v), want an invalid-database error naming both versions", err, models.KindOf(err))
		}
		sameLines(t, "schema after the refused open", schemaDump(t, raw, strings.HasPrefix(dsn, "postgres")), before)
	})
}

// TestMigrationRefusesAForeignSchema: an old database whose tables lack
// columns of the baseline is not adopted.
func TestMigrationRefusesAForeignSchema(t *testing.T) {
	forEachMigrationDB(t, func(t *testing.T, newDSN func() string, pg bool) {
		dsn := newDSN()
		makeLegacy(t, dsn, pg)
		raw := rawMigrationDB(t, dsn)
		if err := raw.Exec("ALTER TABLE servers DROP COLUMN user_id").Error; err != nil {
			t.Fatal(err)
		}
		s, err := store.Open(context.Background(), dsn)
		if err == nil {
			s.Close()
			t.Fatal("a database whose servers table lacks user_id was adopted")
		}
		if !strings.Contains(err.Error(), "table servers has no column user_id") {
			t.Errorf("error %q, want it to name the table and column", err)
		}
		if raw.Migrator().HasTable(store.MigrationsTable) || raw.Migrator().HasTable("consumers") {
			t.Error("the refused database was migrated anyway")
		}
	})
}

// TestMigrationConcurrentStart: replicas opening one new database at the
// same moment all succeed, and each version is applied once.
func TestMigrationConcurrentStart(t *testing.T) {
	storetest.ForEachDSN(t, func(t *testing.T, dsn string) {
		const replicas = 4
		var wg sync.WaitGroup
		errs := make([]error, replicas)
		start := make(chan struct{})
		for i := range replicas {
			wg.Go(func() {
				<-start
				s, err := store.Open(context.Background(), dsn)
				if err == nil {
					s.Close()
				}
				errs[i] = err
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("replica %d: %v", i, err)
			}
		}
		raw := rawMigrationDB(t, dsn)
		if got := appliedVersions(t, raw); !slices.Equal(got, []string{"0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008", "0009"}) {
			t.Errorf("applied versions %v", got)
		}
		if got := queryLines(t, raw, "SELECT id, revision FROM corral_revision"); !slices.Equal(got, []string{"1|0"}) {
			t.Errorf("revision rows %v", got)
		}
	})
}

// TestMigrationChecksForeignKeysOnSQLite: foreign keys are off while
// migrations run on SQLite, so a dangling reference is caught before the
// migration commits.
func TestMigrationChecksForeignKeysOnSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corral.db")
	makeLegacy(t, path, false)
	raw := rawMigrationDB(t, path)
	err := raw.Connection(func(c *gorm.DB) error {
		if err := c.Exec("PRAGMA foreign_keys = OFF").Error; err != nil {
			return err
		}
		return c.Exec("INSERT INTO aggregate_members (aggregate_uuid, provider_uuid) VALUES ('no-such-aggregate', 'no-such-provider')").Error
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(context.Background(), path)
	if err == nil {
		s.Close()
		t.Fatal("a database with a dangling membership was migrated")
	}
	if !strings.Contains(err.Error(), "break foreign keys") {
		t.Errorf("error %q, want it to say foreign keys are broken", err)
	}
	if raw.Migrator().HasTable(store.MigrationsTable) {
		t.Error("the refused database was migrated anyway")
	}
}

// releasedMigrations are the migration files databases may have applied:
// they must never change (add a new migration instead). Add a file here
// when it is released.
var releasedMigrations = map[string]string{
	"migrations/sqlite/0001_baseline.sql":                "faef5f6cb5c86ce564786f1960c2410e6b0dac18a979978a53f0922ebeef8e85",
	"migrations/postgres/0001_baseline.sql":              "52e1b12b951e35233775b0d3ebb26d3c8e9c7c685254a984fa87f6880e88b06a",
	"migrations/sqlite/0002_consumers_allocations.sql":   "0e4187b482f15a2311a55fde83801dfc5a16b6b744b93d6e7b012e7cd12837d9",
	"migrations/postgres/0002_consumers_allocations.sql": "a363423e3a03739a4babc7dcfb13fba7d8bb377210f8b3b6410dd443542ab796",
}

func TestReleasedMigrationsAreUnchanged(t *testing.T) {
	for file, want := range releasedMigrations {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s changed (sha256 %s): a released migration must stay as databases applied it; add a new migration instead", file, got)
		}
	}
}
