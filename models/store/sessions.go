package store

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"corral/models"
)

// Session is one console sign-in. The browser's cookie carries a random
// session id; only its SHA-256 is stored, so a copy of the database does not
// let anyone ride a session. Deleting the row ends the sign-in on every
// replica at its next request.
type Session struct {
	ID         int64     `gorm:"primaryKey;autoIncrement" json:"id"`
	Hash       string    `gorm:"uniqueIndex;size:64;not null" json:"-"`
	UserID     int64     `gorm:"index;not null" json:"user_id"`
	CreatedAt  time.Time `gorm:"not null" json:"created_at"`
	LastSeenAt time.Time `gorm:"not null" json:"last_seen_at"`
	ExpiresAt  time.Time `gorm:"index;not null" json:"expires_at"`
	UserAgent  string    `gorm:"size:512" json:"user_agent"`
	IP         string    `gorm:"size:64" json:"ip"`
}

// TableName is the sessions table.
func (Session) TableName() string { return "sessions" }

// SessionTouchInterval bounds how often a session's LastSeenAt is written,
// so that browsing does not turn every page view into a write.
const SessionTouchInterval = time.Minute

// MaxSessionsPerUser is how many sign-ins one user keeps; signing in once
// more ends the oldest, so a script that signs in in a loop cannot grow the
// table without bound.
const MaxSessionsPerUser = 50

const (
	maxUserAgent = 512
	maxIP        = 64
)

// sessionEnded is the one message for an unknown, revoked or expired
// session: the browser only needs to know it must sign in again.
const sessionEnded = "the session has ended; sign in again"

// dbTime is t as the database keeps it (PostgreSQL stores microseconds),
// so values read back compare equal to those written.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// clip cuts s to at most n bytes without splitting a UTF-8 sequence.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// CreateSession starts a sign-in for u, as Authenticate returned it,
// lasting ttl from now, and returns the plain session id for the cookie
// (shown nowhere else). It refuses with Unauthorized when u's password, role
// or project changed since it was read, so a sign-in racing a password
// change cannot outlive it. This user's sign-ins beyond MaxSessionsPerUser
// end, and expired rows of every user are pruned: sign-ins are rare enough
// to carry that cost.
//
// Sessions are bookkeeping, not part of the world: creating one moves no
// revision and records no audit event (the caller logs the sign-in).
func (s *Store) CreateSession(ctx context.Context, u *models.User, userAgent, ip string, now time.Time, ttl time.Duration) (string, *Session, error) {
	const op = "store.CreateSession"
	if u == nil {
		return "", nil, models.E(models.Invalid, "user", "a session needs a user")
	}
	if ttl <= 0 {
		return "", nil, models.E(models.Invalid, "ttl", "a session needs a positive lifetime, not %s", ttl)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", nil, models.Wrap(op, err)
	}
	plain := base64.RawURLEncoding.EncodeToString(raw)
	now = dbTime(now)
	row := &Session{
		Hash: hashToken(plain), UserID: u.ID,
		CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(ttl),
		UserAgent: clip(userAgent, maxUserAgent), IP: clip(ip, maxIP),
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockUser(tx, u.ID); err != nil {
			return err
		}
		cur, err := findUser(tx, "id = ?", u.ID)
		if err != nil {
			return models.E(models.Unauthorized, "", badCredentials)
		}
		if cur.PasswordHash != u.PasswordHash || cur.Role != u.Role || cur.ProjectID != u.ProjectID {
			return models.E(models.Unauthorized, "", "the account changed while signing in; sign in again")
		}
		if err := tx.Create(row).Error; err != nil {
			return err
		}
		keep := tx.Model(&Session{}).Select("id").Where("user_id = ?", u.ID).Order("id DESC").Limit(MaxSessionsPerUser)
		return tx.Where("user_id = ? AND id NOT IN (?)", u.ID, keep).Delete(&Session{}).Error
	})
	if err != nil {
		return "", nil, mapErr(op, err)
	}
	// Outside the transaction: pruning touches other users' rows, whose
	// locks a concurrent sign-out-everywhere may hold.
	_ = s.PruneSessions(ctx, now)
	return plain, row, nil
}

// PruneSessions deletes sign-ins that expired by now. CreateSession calls
// it; expired rows are refused anyway, so this only keeps the table small.
func (s *Store) PruneSessions(ctx context.Context, now time.Time) error {
	err := s.db.WithContext(ctx).Where("expires_at <= ?", dbTime(now)).Delete(&Session{}).Error
	return mapErr("store.PruneSessions", err)
}

// lockUser takes the user row's lock on PostgreSQL, ordering a sign-in and
// a change that ends the user's sessions (SQLite writers are serialised
// already).
func lockUser(tx *gorm.DB, id int64) error {
	if tx.Dialector.Name() != "postgres" {
		return nil
	}
	var ids []int64
	return tx.Raw("SELECT id FROM users WHERE id = ? FOR UPDATE", id).Scan(&ids).Error
}

// sessionUserRow is one session joined with its user: resolving a request's
// session is a single indexed lookup.
type sessionUserRow struct {
	ID         int64
	UserID     int64
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
	UserAgent  string
	IP         string
	UName      string
	URole      models.Role
	UProject   string
	UCreated   time.Time
	UUpdated   time.Time
}

const sessionUserSQL = `SELECT s.id, s.user_id, s.created_at, s.last_seen_at, s.expires_at, s.user_agent, s.ip,
	u.name AS u_name, u.role AS u_role, u.project_id AS u_project, u.created_at AS u_created, u.updated_at AS u_updated
	FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.hash = ? LIMIT 1`

// LookupSession resolves a plain session id to its session and user as of
// now. Unknown, ended and expired sessions are all Unauthorized with the
// same message. LastSeenAt is written at most once per
// SessionTouchInterval; a failure to write it does not refuse the request.
func (s *Store) LookupSession(ctx context.Context, plain string, now time.Time) (*Session, *models.User, error) {
	const op = "store.LookupSession"
	if plain == "" {
		return nil, nil, models.E(models.Unauthorized, "session", sessionEnded)
	}
	var rows []sessionUserRow
	if err := s.rdb.WithContext(ctx).Raw(sessionUserSQL, hashToken(plain)).Scan(&rows).Error; err != nil {
		return nil, nil, mapErr(op, err)
	}
	if len(rows) == 0 {
		return nil, nil, models.E(models.Unauthorized, "session", sessionEnded)
	}
	r := rows[0]
	now = dbTime(now)
	if !now.Before(r.ExpiresAt) {
		return nil, nil, models.E(models.Unauthorized, "session", sessionEnded)
	}
	sess := &Session{
		ID: r.ID, UserID: r.UserID, CreatedAt: r.CreatedAt, LastSeenAt: r.LastSeenAt,
		ExpiresAt: r.ExpiresAt, UserAgent: r.UserAgent, IP: r.IP,
	}
	u := &models.User{ID: r.UserID, Name: r.UName, Role: r.URole, ProjectID: r.UProject, CreatedAt: r.UCreated, UpdatedAt: r.UUpdated}
	if now.Sub(sess.LastSeenAt) >= SessionTouchInterval {
		// The condition makes concurrent requests of one browser write once.
		cutoff := now.Add(-SessionTouchInterval)
		if s.db.WithContext(ctx).Model(&Session{}).
			Where("id = ? AND last_seen_at <= ?", sess.ID, cutoff).
			UpdateColumn("last_seen_at", now).Error == nil {
			sess.LastSeenAt = now
		}
	}
	return sess, u, nil
}

// ListSessions returns a user's sign-ins that have not expired by now, the
// most recently seen first.
func (s *Store) ListSessions(ctx context.Context, userID int64, now time.Time) ([]Session, error) {
	var out []Session
	err := s.rdb.WithContext(ctx).Where("user_id = ? AND expires_at > ?", userID, dbTime(now)).
		Order("last_seen_at DESC, id DESC").Find(&out).Error
	return out, mapErr("store.ListSessions", err)
}

// SessionCounts returns, per user id, how many sign-ins have not expired by
// now; users without one are absent.
func (s *Store) SessionCounts(ctx context.Context, now time.Time) (map[int64]int, error) {
	var rows []struct {
		UserID int64
		N      int
	}
	err := s.rdb.WithContext(ctx).Model(&Session{}).Select("user_id, COUNT(*) AS n").
		Where("expires_at > ?", dbTime(now)).Group("user_id").Scan(&rows).Error
	if err != nil {
		return nil, mapErr("store.SessionCounts", err)
	}
	out := make(map[int64]int, len(rows))
	for _, r := range rows {
		out[r.UserID] = r.N
	}
	return out, nil
}

// EndSession ends the sign-in with this plain id (signing out). Ending an
// unknown or already ended session is not an error: the outcome is the same.
func (s *Store) EndSession(ctx context.Context, plain string) error {
	if plain == "" {
		return nil
	}
	err := s.db.WithContext(ctx).Where("hash = ?", hashToken(plain)).Delete(&Session{}).Error
	return mapErr("store.EndSession", err)
}

// EndSessionByID ends one of userID's sign-ins by its row id; another
// user's session is NotFound, so ids reveal nothing.
func (s *Store) EndSessionByID(ctx context.Context, userID, id int64) error {
	res := s.db.WithContext(ctx).Where("id = ? AND user_id = ?", id, userID).Delete(&Session{})
	if res.Error != nil {
		return mapErr("store.EndSessionByID", res.Error)
	}
	if res.RowsAffected == 0 {
		return models.E(models.NotFound, "session", "you have no session %d", id)
	}
	return nil
}

// EndOtherSessions ends every sign-in of userID except the one with plain
// id keep, and reports how many ended.
func (s *Store) EndOtherSessions(ctx context.Context, userID int64, keep string) (int, error) {
	res := s.db.WithContext(ctx).Where("user_id = ? AND hash <> ?", userID, hashToken(keep)).Delete(&Session{})
	if res.Error != nil {
		return 0, mapErr("store.EndOtherSessions", res.Error)
	}
	return int(res.RowsAffected), nil
}

// EndUserSessions signs a user out everywhere on someone's behalf (an
// admin's), in one audited transaction, and reports how many sign-ins
// ended. Like other session bookkeeping it leaves the world's revision
// alone.
func (s *Store) EndUserSessions(ctx context.Context, a Actor, userID int64) (int, error) {
	const op = "store.EndUserSessions"
	var n int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		t := &txn{tx: tx, actor: a, now: time.Now().UTC().Truncate(time.Microsecond)}
		if err := lockUser(tx, userID); err != nil {
			return err
		}
		u, err := findUser(tx, "id = ?", userID)
		if err != nil {
			return err
		}
		if n, err = deleteUserSessions(tx, u.ID); err != nil {
			return err
		}
		var revoked int64
		if err := tx.Model(&models.APIToken{}).Where("user_id = ? AND revoked_at IS NULL", u.ID).Count(&revoked).Error; err != nil {
			return err
		}
		if revoked > 0 {
			// Cached token answers are kept per revision: move it, as
			// every other change to tokens does.
			if err := tx.Exec("UPDATE corral_revision SET revision = revision + 1 WHERE id = 1").Error; err != nil {
				return err
			}
			if err := t.revokeTokens(u, "signed out everywhere"); err != nil {
				return err
			}
		}
		return t.audit("sign-out-everywhere", "user", itoa(u.ID), u.Name, nil, map[string]any{"sessions_ended": n})
	})
	s.beacon.ring()
	forgetRevision(ctx)
	return int(n), mapErr(op, err)
}

func deleteUserSessions(tx *gorm.DB, userID int64) (int64, error) {
	res := tx.Where("user_id = ?", userID).Delete(&Session{})
	return res.RowsAffected, res.Error
}

// endSessions ends every sign-in of u inside the transaction of a change
// that invalidates them (password, role, project, deletion), so the change
// and the sign-outs commit together. When someone other than u forced the
// sign-outs, the audit log says so and why.
func (t *txn) endSessions(u *models.User, reason string) error {
	if err := lockUser(t.tx, u.ID); err != nil {
		return err
	}
	n, err := deleteUserSessions(t.tx, u.ID)
	if err != nil || n == 0 || t.actor.Name == u.Name {
		return err
	}
	return t.audit("sign-out-everywhere", "user", itoa(u.ID), u.Name, nil, map[string]any{"sessions_ended": n, "reason": reason})
}
