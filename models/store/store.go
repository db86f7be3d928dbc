// Package store keeps corral's state in SQLite or PostgreSQL through GORM.
//
// Every write runs in one transaction that also bumps a global revision and
// appends an audit event, so readers can cache a snapshot keyed by revision
// and the audit log never misses a change. Objects that people edit
// concurrently carry a generation; an update based on a stale generation is
// refused with models.Conflict instead of silently overwriting.
//
// # Schema
//
// The schema is versioned. Open applies, in one transaction, every
// migration the database has not had yet and records it in
// corral_migrations; on PostgreSQL an advisory lock makes replicas that
// start together migrate one after the other, on SQLite the write
// connection's BEGIN IMMEDIATE does. A database that holds a version this
// binary does not know (a newer release migrated it) is refused, not used.
// A database made before versioning (by GORM's AutoMigrate, no
// corral_migrations table) is adopted: version 0001 is that schema with
// every statement guarded by IF NOT EXISTS.
//
// To change the schema, add the next numbered file in both
// migrations/sqlite and migrations/postgres (NNNN_what_it_does.sql, same
// name in both; each statement ends with ";" at the end of a line). Never
// edit a migration that has been released: databases that applied it will
// not apply it again. Every statement runs inside the migration transaction
// (so no CREATE INDEX CONCURRENTLY). On SQLite, a change to a column means
// the usual table rebuild (create new, copy, drop, rename); foreign keys are
// off during migrations and checked before they commit.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"corral/models"
)

// AnyGeneration skips the generation check (Nova's API carries none).
const AnyGeneration int64 = -1

// Actor is who makes a change and through which door (models.Actor); it is
// recorded in the audit log of every write.
type Actor = models.Actor

// Store is the database behind corral. It is safe for concurrent use.
type Store struct {
	db       *gorm.DB // writes (SQLite: BEGIN IMMEDIATE so writers queue)
	rdb      *gorm.DB // reads (SQLite: deferred transactions, WAL snapshots)
	postgres bool
	tokens   tokenCache
	changes  changeLog
	liveOnce sync.Once
	live     *Live
	syncMu   sync.Mutex // the cloud-sync lock on SQLite (see TrySyncLock)
	// revStmt reads the revision, prepared once: every request reads it,
	// and through GORM the statement was built and prepared each time.
	revOnce sync.Once
	revStmt *sql.Stmt
	// beacon and seen spare SQLite's requests the revision query while
	// no write happened (beacon.go); revisionQueries counts the queries.
	beacon          *beacon
	seen            atomic.Pointer[seenRevision]
	revisionQueries atomic.Int64
	logger          atomic.Pointer[slog.Logger]
}

// SetLogger sets where the store logs (how the live snapshot follows
// writes, at Debug); slog's default logger until then.
func (s *Store) SetLogger(l *slog.Logger) { s.logger.Store(l) }

func (s *Store) log() *slog.Logger {
	if l := s.logger.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// Tables the models package does not describe (corral_revision has no
// type: it is read and written with plain SQL).
type settingsRow struct {
	ID         int    `gorm:"primaryKey;autoIncrement:false"`
	Data       string `gorm:"type:text;not null"`
	Generation int64  `gorm:"not null;default:0"`
	UpdatedAt  time.Time
}

func (settingsRow) TableName() string { return "corral_settings" }

type sessionKeyRow struct {
	ID        int64  `gorm:"primaryKey;autoIncrement:false"` // assigned by hand: see SessionKeys
	HashKey   []byte `gorm:"not null"`
	BlockKey  []byte `gorm:"not null"`
	CreatedAt time.Time
}

func (sessionKeyRow) TableName() string { return "corral_session_keys" }

// Open connects to dsn — a file path (SQLite) or a postgres:// URL — and
// migrates the schema.
func Open(ctx context.Context, dsn string) (*Store, error) {
	const op = "store.Open"
	if strings.TrimSpace(dsn) == "" {
		return nil, models.E(models.Invalid, "db", "a database path or postgres:// URL is required")
	}
	if dsn == ":memory:" || strings.Contains(dsn, "mode=memory") {
		// Each pooled connection would get its own empty database.
		return nil, models.E(models.Invalid, "db", "an in-memory SQLite database is not supported; give a file path")
	}
	cfg := &gorm.Config{Logger: logger.Default.LogMode(logger.Silent), NowFunc: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
	s := &Store{}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		db, err := gorm.Open(postgres.Open(dsn), cfg)
		if err != nil {
			return nil, models.Wrap(op, fmt.Errorf("connect to postgres: %w", err))
		}
		sqlDB, err := db.DB()
		if err != nil {
			return nil, models.Wrap(op, err)
		}
		sqlDB.SetMaxOpenConns(16)
		sqlDB.SetMaxIdleConns(4)
		sqlDB.SetConnMaxIdleTime(time.Minute)
		s.db, s.rdb, s.postgres = db, db, true
	} else {
		if err := createPrivate(dsn); err != nil {
			return nil, models.Wrap(op, err)
		}
		w, err := openSQLite(ctx, sqliteDSN(dsn, "immediate"), cfg)
		if err != nil {
			return nil, models.Wrap(op, fmt.Errorf("open sqlite %s: %w", dsn, err))
		}
		r, err := openSQLite(ctx, sqliteDSN(dsn, "deferred"), cfg)
		if err != nil {
			closeGorm(w)
			return nil, models.Wrap(op, fmt.Errorf("open sqlite %s: %w", dsn, err))
		}
		// Writers take the lock at BEGIN, so a few connections suffice; more
		// would only wait in busy_timeout.
		if sqlDB, err := w.DB(); err == nil {
			sqlDB.SetMaxOpenConns(4)
		}
		if sqlDB, err := r.DB(); err == nil {
			sqlDB.SetMaxOpenConns(8)
		}
		s.db, s.rdb = w, r
		b, berr := openBeacon(sqlitePath(dsn))
		if berr != nil {
			s.log().Info("the revision is read from the database on every request", "reason", berr.Error())
		}
		s.beacon = b
	}
	err := s.migrate(ctx)
	s.beacon.ring() // a migration may have changed what other processes hold
	if err != nil {
		s.Close()
		return nil, models.Wrap(op, err)
	}
	return s, nil
}

// sqlitePath is the file a SQLite dsn names.
func sqlitePath(dsn string) string {
	path := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	return path
}

// createPrivate creates a new SQLite file readable by its owner only: it
// holds cookie keys and password hashes. SQLite gives the WAL and shared
// memory files the database file's permissions. An existing file is left
// as its owner set it.
func createPrivate(dsn string) error {
	path := sqlitePath(dsn)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create sqlite %s: %w", path, err)
	}
	return f.Close()
}

// openSQLite opens a connection pool, retrying while another process holds
// the lock: switching a new file to WAL needs an exclusive lock, and SQLite
// answers that pragma "database is locked" at once instead of waiting in
// busy_timeout, so replicas starting together would otherwise fail.
func openSQLite(ctx context.Context, dsn string, cfg *gorm.Config) (*gorm.DB, error) {
	deadline := time.Now().Add(10 * time.Second)
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		db, err := gorm.Open(sqlite.Open(dsn), cfg)
		if err == nil {
			return db, nil
		}
		closeGorm(db)
		if !strings.Contains(err.Error(), "database is locked") || time.Now().After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

// sqliteDSN turns a path into a go-sqlite3 URI with the options corral relies
// on: WAL so readers never block writers, a busy timeout so concurrent writers
// (other processes included) wait instead of failing, foreign keys on.
func sqliteDSN(path, txlock string) string {
	opts := url.Values{}
	opts.Set("_journal_mode", "WAL")
	opts.Set("_busy_timeout", "10000")
	opts.Set("_foreign_keys", "on")
	opts.Set("_synchronous", "NORMAL")
	opts.Set("_txlock", txlock)
	p := strings.TrimPrefix(path, "file:")
	sep := "?"
	if strings.Contains(p, "?") {
		sep = "&"
	}
	return "file:" + p + sep + opts.Encode()
}

func closeGorm(db *gorm.DB) error {
	if db == nil {
		return nil
	}
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// Close releases the database connections.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	s.revOnce.Do(func() {}) // orders this read of revStmt after its write
	if s.revStmt != nil {
		s.revStmt.Close()
	}
	err := closeGorm(s.db)
	if e := s.beacon.close(); err == nil {
		err = e
	}
	if s.rdb != s.db {
		if e := closeGorm(s.rdb); err == nil {
			err = e
		}
	}
	return models.Wrap("store.Close", err)
}

// IsPostgres reports whether the store runs on PostgreSQL.
func (s *Store) IsPostgres() bool { return s.postgres }

// RevisionCostsAQuery reports whether reading the revision queries the
// database (PostgreSQL, or SQLite where the shared counter of beacon.go
// could not be mapped); a request then does well to read it once
// (WithRevisionMemo).
func (s *Store) RevisionCostsAQuery() bool { return s.beacon == nil }

// Revision is the global change counter: it moves on every write.
// Within a context from WithRevisionMemo it is read once.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	m, _ := ctx.Value(revisionMemoKey{}).(*revisionMemo)
	if m != nil {
		m.mu.Lock()
		rev, ok := m.rev, m.ok
		m.mu.Unlock()
		if ok {
			return rev, nil
		}
	}
	rev, err := s.currentRevision(ctx)
	if m != nil && err == nil {
		m.mu.Lock()
		m.rev, m.ok = rev, true
		m.mu.Unlock()
	}
	return rev, err
}

// currentRevision is the database's revision, memo or not: on SQLite
// read only when the beacon moved (beacon.go).
func (s *Store) currentRevision(ctx context.Context) (int64, error) {
	if s.beacon != nil {
		return s.cachedRevision(ctx)
	}
	return s.queryRevision(ctx)
}

// queryRevision reads the revision from the database.
func (s *Store) queryRevision(ctx context.Context) (int64, error) {
	s.revisionQueries.Add(1)
	s.revOnce.Do(func() {
		if sqlDB, err := s.rdb.DB(); err == nil {
			s.revStmt, _ = sqlDB.PrepareContext(context.WithoutCancel(ctx), revisionQuery)
		}
	})
	var rev int64
	var err error
	if s.revStmt != nil {
		if err = s.revStmt.QueryRowContext(ctx).Scan(&rev); errors.Is(err, sql.ErrNoRows) {
			err = nil // as GORM's Scan: no row, revision 0
		}
	} else {
		err = s.rdb.WithContext(ctx).Raw(revisionQuery).Scan(&rev).Error
	}
	return rev, mapErr("store.Revision", err)
}

const revisionQuery = "SELECT revision FROM corral_revision WHERE id = 1"

type revisionMemoKey struct{}

type revisionMemo struct {
	mu  sync.Mutex
	rev int64
	ok  bool
}

// WithRevisionMemo returns a context in which Revision reads the database
// once, for a request that only reads: its token check and its snapshot
// then cost one query, not two. A write through the store with the
// context forgets the memo.
func WithRevisionMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, revisionMemoKey{}, &revisionMemo{})
}

func forgetRevision(ctx context.Context) {
	if m, _ := ctx.Value(revisionMemoKey{}).(*revisionMemo); m != nil {
		m.mu.Lock()
		m.ok = false
		m.mu.Unlock()
	}
}

// txn is one write in progress.
type txn struct {
	tx     *gorm.DB
	actor  Actor
	now    time.Time
	events int
	rev    int64 // the revision this write makes live
	// What the write changed, for the live snapshot (live.go): unless the
	// write says otherwise, anything may have changed.
	change change
}

// What a write changed, for the live snapshot (live.go). A write that
// calls none of the touch methods may have changed anything: the snapshot
// is then rebuilt from the database. A write that calls one declares
// everything of the world it changed; the helpers it runs note what they
// change on the side (noteProviders, noteServers).

// touchAggregates declares that the write changed these aggregates (their
// rows or members).
func (t *txn) touchAggregates(uuids ...string) {
	t.tracked()
	t.change.aggregates = append(t.change.aggregates, uuids...)
}

// touchProviders declares that the write created, changed or deleted
// these providers.
func (t *txn) touchProviders(uuids ...string) {
	t.tracked()
	t.noteProviders(uuids...)
}

// noteProviders records providers a helper changed, for a write that
// declares its changes.
func (t *txn) noteProviders(uuids ...string) {
	t.change.providers = append(t.change.providers, uuids...)
}

// touchServers declares that the write created, changed or deleted these
// servers.
func (t *txn) touchServers(uuids ...string) {
	t.tracked()
	t.noteServers(uuids...)
}

func (t *txn) noteServers(uuids ...string) {
	t.change.servers = append(t.change.servers, uuids...)
}

// touchFlavors, touchGroups and touchSettings declare a change to the
// flavors, the server groups or the settings: small tables, read again
// whole.
func (t *txn) touchFlavors()  { t.tracked(); t.change.flavors = true }
func (t *txn) touchGroups()   { t.tracked(); t.change.groups = true }
func (t *txn) touchSettings() { t.tracked(); t.change.settings = true }

// keepsWorld declares that the write changed nothing the world holds
// (users, tokens, drafts, quotas, the resource class and trait catalog).
func (t *txn) keepsWorld() { t.tracked() }

func (t *txn) tracked() {
	if t.change.kind == changeUnknown {
		t.change.kind = changeObjects
	}
}

// write runs fn in one transaction that bumps the revision first. Taking the
// revision row's lock first orders all writers on PostgreSQL the same way on
// every write, so they cannot deadlock and a conditional UPDATE always sees
// the previous writer's committed generation.
func (s *Store) write(ctx context.Context, a Actor, op string, fn func(t *txn) error) error {
	var rev int64
	var t *txn
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		rev = 0
		if err := tx.Raw("UPDATE corral_revision SET revision = revision + 1 WHERE id = 1 RETURNING revision").Scan(&rev).Error; err != nil {
			return err
		}
		if rev == 0 {
			return errors.New("revision row is missing")
		}
		t = &txn{tx: tx, actor: a, rev: rev, now: time.Now().UTC().Truncate(time.Microsecond)}
		if err := fn(t); err != nil {
			return err
		}
		if t.events == 0 {
			return fmt.Errorf("%s recorded no audit event", op)
		}
		return nil
	})
	s.beacon.ring()
	forgetRevision(ctx)
	if err == nil {
		s.changes.record(rev, t.change)
		s.Live().afterWrite(ctx, t.change)
	}
	return mapErr(op, err)
}

// audit appends one event; before and after are marshalled to JSON (nil
// stays empty: nothing before a create, nothing after a delete).
func (t *txn) audit(action, objType, objID, objName string, before, after any) error {
	enc := func(v any) (string, error) {
		if v == nil {
			return "", nil
		}
		b, err := json.Marshal(v)
		return string(b), err
	}
	b, err := enc(before)
	if err != nil {
		return err
	}
	a, err := enc(after)
	if err != nil {
		return err
	}
	name := t.actor.Name
	if name == "" {
		name = "(unknown)"
	}
	ev := models.AuditEvent{
		At: t.now, Actor: name, Via: t.actor.Via, Action: action,
		ObjectType: objType, ObjectID: objID, ObjectName: objName, Before: b, After: a,
	}
	if err := t.tx.Create(&ev).Error; err != nil {
		return err
	}
	t.events++
	return nil
}

// mapErr turns driver errors into corral errors: unique violations are
// conflicts, missing rows are not-found, everything else is internal.
func mapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var ce *models.Error
	if errors.As(err, &ce) {
		return models.Wrap(op, err)
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return &models.Error{Op: op, Kind: models.NotFound, Msg: "not found", Err: err}
	}
	if outOfSpace(err) {
		return &models.Error{Op: op, Kind: models.Unavailable, Msg: "the database is out of disk space; nothing was changed — free space on its disk, then try again", Err: err}
	}
	if unavailable(err) {
		return &models.Error{Op: op, Kind: models.Unavailable, Msg: "the database is unavailable or busy; try again in a moment", Err: err}
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.ExtendedCode {
		case sqlite3.ErrConstraintUnique, sqlite3.ErrConstraintPrimaryKey:
			field := ""
			if i := strings.LastIndex(se.Error(), "."); i >= 0 {
				field = strings.TrimSpace(se.Error()[i+1:])
			}
			return &models.Error{Op: op, Kind: models.Conflict, Field: field, Msg: "already exists", Err: err}
		case sqlite3.ErrConstraintForeignKey:
			return &models.Error{Op: op, Kind: models.Conflict, Msg: "refers to an object that does not exist or is still referenced", Err: err}
		case sqlite3.ErrConstraintTrigger:
			// ON DELETE RESTRICT fails as a trigger would.
			if strings.Contains(se.Error(), "FOREIGN KEY") {
				return &models.Error{Op: op, Kind: models.Conflict, Msg: "refers to an object that does not exist or is still referenced", Err: err}
			}
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505":
			field := pe.ConstraintName
			if i := strings.LastIndex(field, "_"); i >= 0 {
				field = field[i+1:]
			}
			return &models.Error{Op: op, Kind: models.Conflict, Field: field, Msg: "already exists", Err: err}
		case "23503":
			return &models.Error{Op: op, Kind: models.Conflict, Msg: "refers to an object that does not exist or is still referenced", Err: err}
		case "40001", "40P01":
			return &models.Error{Op: op, Kind: models.Conflict, Msg: "changed by someone else — reload", Err: err}
		}
	}
	return &models.Error{Op: op, Kind: models.Internal, Err: err}
}

// unavailable reports whether err says the database could not be reached
// or was too busy (a restarting PostgreSQL, a broken connection, SQLite
// still locked after the busy timeout): a state that passes, so a 503, not
// a 500. database/sql replaces broken connections, so the next request
// after the database is back succeeds.
func unavailable(err error) bool {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08: connection exceptions; 57P01-57P03: the server is
		// shutting down or starting.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked
	}
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "failed to connect") || strings.Contains(msg, "connection reset")
}

// outOfSpace reports a database that cannot grow: SQLite's SQLITE_FULL
// ("database or disk is full") and PostgreSQL's disk_full (53100, which
// "could not extend file" also carries).
func outOfSpace(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrFull {
		return true
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "53100"
}

// staleErr is the message every generation mismatch carries.
func staleErr(what, id string) error {
	return models.E(models.Conflict, "generation", "%s %s was changed by someone else — reload", what, id)
}

// page applies offset/limit; a limit <= 0 means no limit.
func page(q *gorm.DB, offset, limit int) *gorm.DB {
	if offset > 0 {
		q = q.Offset(offset)
	}
	if limit > 0 {
		q = q.Limit(limit)
	}
	return q
}

// MaxSearch bounds a list's search text: a pattern is matched against
// every row, and SQLite refuses LIKE patterns over 50,000 bytes.
const MaxSearch = 255

func checkSearch(s string) error {
	if len(s) > MaxSearch {
		return models.E(models.Invalid, "search", "a search has at most %d characters", MaxSearch)
	}
	return nil
}

// likePattern builds a case-insensitive substring pattern with LIKE's
// wildcards escaped, for use with "LOWER(col) LIKE ? ESCAPE '\'".
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(s)) + "%"
}

// readTx runs fn in one read transaction: a consistent snapshot on both
// databases (WAL on SQLite, REPEATABLE READ on PostgreSQL).
func (s *Store) readTx(ctx context.Context, fn func(tx *gorm.DB) error) error {
	var opts *sql.TxOptions
	if s.postgres {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return s.rdb.WithContext(ctx).Transaction(fn, opts)
}
