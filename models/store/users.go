package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"corral/models"
)

// MinPasswordLength is the shortest password CreateUser accepts.
const MinPasswordLength = 8

// badCredentials is the one message for every sign-in failure, so an
// attacker cannot tell unknown users from wrong passwords.
const badCredentials = "wrong user name or password"

// dummyHash is compared against when the user does not exist, so that case
// costs the same bcrypt work as a wrong password.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("corral-no-such-user"), bcrypt.DefaultCost)

func validatePassword(pw string) error {
	if len(pw) < MinPasswordLength {
		return models.E(models.Invalid, "password", "a password needs at least %d characters", MinPasswordLength)
	}
	if len(pw) > 72 {
		// bcrypt ignores everything after 72 bytes; refuse rather than
		// silently accept a longer password's prefix.
		return models.E(models.Invalid, "password", "a password can have at most 72 bytes")
	}
	return nil
}

// CreateUser adds a user with a bcrypt-hashed password.
func (s *Store) CreateUser(ctx context.Context, a Actor, name, password string, role models.Role, project string) (*models.User, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, models.E(models.Invalid, "name", "a user needs a name")
	}
	if !role.Valid() {
		return nil, models.E(models.Invalid, "role", "unknown role %q (want admin, member or reader)", role)
	}
	if err := validatePassword(password); err != nil {
		return nil, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return nil, models.Wrap("store.CreateUser", err)
	}
	u := &models.User{Name: name, PasswordHash: string(hash), Role: role, ProjectID: project}
	err = s.write(ctx, a, "store.CreateUser", func(t *txn) error {
		t.keepsWorld() // no part of the world
		var n int64
		if err = t.tx.Model(&models.User{}).Where("name = ?", name).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return models.E(models.Conflict, "name", "a user named %q already exists", name)
		}
		u.CreatedAt, u.UpdatedAt = t.now, t.now
		if err = t.tx.Create(u).Error; err != nil {
			return err
		}
		return t.audit("create", "user", itoa(u.ID), u.Name, nil, u)
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// SetPassword replaces a user's password and ends all their console
// sessions in the same transaction; a console page that changes the
// signed-in user's own password signs them in again afterwards.
func (s *Store) SetPassword(ctx context.Context, a Actor, name, password string) error {
	if err := validatePassword(password); err != nil {
		return err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return models.Wrap("store.SetPassword", err)
	}
	return s.write(ctx, a, "store.SetPassword", func(t *txn) error {
		t.keepsWorld() // no part of the world
		u, err := findUser(t.tx, "name = ?", name)
		if err != nil {
			return err
		}
		if err := t.tx.Model(u).UpdateColumns(map[string]any{"password_hash": string(hash), "updated_at": t.now}).Error; err != nil {
			return err
		}
		// Whoever knew the old password may hold a session or have made a
		// token with it: end them all.
		if err := t.endSessions(u, "password changed"); err != nil {
			return err
		}
		if err := t.revokeTokens(u, "password changed"); err != nil {
			return err
		}
		// The hash itself never goes into the audit log.
		return t.audit("set-password", "user", itoa(u.ID), u.Name, nil, nil)
	})
}

// UpdateUser lets fn change a user's role and project (not the name or the
// password: see SetPassword). A change of either ends the user's console
// sessions in the same transaction.
func (s *Store) UpdateUser(ctx context.Context, a Actor, id int64, fn func(*models.User) error) (*models.User, error) {
	var out *models.User
	err := s.write(ctx, a, "store.UpdateUser", func(t *txn) error {
		t.keepsWorld() // no part of the world
		cur, err := findUser(t.tx, "id = ?", id)
		if err != nil {
			return err
		}
		next := *cur
		if fn != nil {
			if err := fn(&next); err != nil {
				return err
			}
		}
		next.ID, next.Name, next.PasswordHash, next.CreatedAt, next.UpdatedAt = cur.ID, cur.Name, cur.PasswordHash, cur.CreatedAt, t.now
		if !next.Role.Valid() {
			return models.E(models.Invalid, "role", "unknown role %q (want admin, member or reader)", next.Role)
		}
		if err := t.keepAnAdmin(cur, &next); err != nil {
			return err
		}
		if err := t.tx.Model(&models.User{ID: cur.ID}).Select("Role", "ProjectID", "UpdatedAt").Updates(&next).Error; err != nil {
			return err
		}
		// Rights changed: end the sessions granted under the old ones, as
		// a password change does (such a change often answers misuse).
		if next.Role != cur.Role || next.ProjectID != cur.ProjectID {
			if err := t.endSessions(cur, "role or project changed"); err != nil {
				return err
			}
		}
		out = &next
		return t.audit("update", "user", itoa(cur.ID), cur.Name, cur, &next)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteUser removes a user, their API tokens and their console sessions.
// Neither it nor UpdateUser lets the last admin go (Conflict).
func (s *Store) DeleteUser(ctx context.Context, a Actor, id int64) error {
	return s.write(ctx, a, "store.DeleteUser", func(t *txn) error {
		t.keepsWorld() // no part of the world
		cur, err := findUser(t.tx, "id = ?", id)
		if err != nil {
			return err
		}
		if err := t.keepAnAdmin(cur, nil); err != nil {
			return err
		}
		if err := t.tx.Where("user_id = ?", cur.ID).Delete(&models.APIToken{}).Error; err != nil {
			return err
		}
		if err := t.endSessions(cur, "user deleted"); err != nil {
			return err
		}
		if err := t.tx.Delete(&models.User{}, cur.ID).Error; err != nil {
			return err
		}
		return t.audit("delete", "user", itoa(cur.ID), cur.Name, cur, nil)
	})
}

// Authenticate checks a name and password. Every failure is the same
// Unauthorized error and costs about the same time.
func (s *Store) Authenticate(ctx context.Context, name, password string) (*models.User, error) {
	var u models.User
	res := s.rdb.WithContext(ctx).Where("name = ?", name).Limit(1).Find(&u)
	if res.Error != nil {
		return nil, mapErr("store.Authenticate", res.Error)
	}
	if res.RowsAffected == 0 {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return nil, models.E(models.Unauthorized, "", badCredentials)
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) != nil {
		return nil, models.E(models.Unauthorized, "", badCredentials)
	}
	return &u, nil
}

func findUser(tx *gorm.DB, where string, arg any) (*models.User, error) {
	var u models.User
	res := tx.Where(where, arg).Limit(1).Find(&u)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, models.E(models.NotFound, "user", "user %v not found", arg)
	}
	return &u, nil
}

// UserByID finds a user by id.
func (s *Store) UserByID(ctx context.Context, id int64) (*models.User, error) {
	u, err := findUser(s.rdb.WithContext(ctx), "id = ?", id)
	return u, mapErr("store.UserByID", err)
}

// UserByName finds a user by name.
func (s *Store) UserByName(ctx context.Context, name string) (*models.User, error) {
	u, err := findUser(s.rdb.WithContext(ctx), "name = ?", name)
	return u, mapErr("store.UserByName", err)
}

// ListUsers returns every user, by name.
func (s *Store) ListUsers(ctx context.Context) ([]models.User, error) {
	var out []models.User
	err := s.rdb.WithContext(ctx).Order("name").Find(&out).Error
	return out, mapErr("store.ListUsers", err)
}

// CountUsers reports how many users exist (0 on a fresh install).
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	var n int64
	err := s.rdb.WithContext(ctx).Model(&models.User{}).Count(&n).Error
	return int(n), mapErr("store.CountUsers", err)
}

func hashToken(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// CreateToken issues an API token for a user. The plain token is returned
// once; only its SHA-256 is stored.
func (s *Store) CreateToken(ctx context.Context, a Actor, userName, tokenName string) (string, *models.APIToken, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", nil, models.Wrap("store.CreateToken", err)
	}
	plain := base64.RawURLEncoding.EncodeToString(raw)
	tok := &models.APIToken{Name: strings.TrimSpace(tokenName), Hash: hashToken(plain), Prefix: plain[:8]}
	if len(tok.Name) > 255 {
		return "", nil, models.E(models.Invalid, "name", "a token name has at most 255 characters")
	}
	err := s.write(ctx, a, "store.CreateToken", func(t *txn) error {
		t.keepsWorld() // no part of the world
		u, err := findUser(t.tx, "name = ?", userName)
		if err != nil {
			return err
		}
		tok.UserID = u.ID
		tok.CreatedAt = t.now
		if err := t.tx.Create(tok).Error; err != nil {
			return err
		}
		return t.audit("create", "token", itoa(tok.ID), u.Name+"/"+tok.Name, nil, tok)
	})
	if err != nil {
		return "", nil, err
	}
	return plain, tok, nil
}

// tokenTouchInterval bounds how often a token's LastUsedAt is written, so
// a busy API client does not turn every read into a write.
const tokenTouchInterval = time.Minute

// UserByToken resolves a plain API token to its user. Unknown and revoked
// tokens are Unauthorized with the same message.
//
// Answers are remembered for the revision they were read at: every change
// to users and tokens moves the revision, so a cached answer is dropped by
// the first request after a revocation, here or on another replica. An
// API client then costs one tiny query per request instead of two lookups.
func (s *Store) UserByToken(ctx context.Context, plain string) (*models.User, *models.APIToken, error) {
	if plain == "" {
		return nil, nil, models.E(models.Unauthorized, "", "invalid or revoked token")
	}
	rev, err := s.Revision(ctx)
	if err != nil {
		return nil, nil, err
	}
	key := sha256.Sum256([]byte(plain)) // hashToken's, before hex
	if u, tok, ok := s.tokens.get(key, rev); ok {
		return u, tok, nil
	}
	u, tok, err := s.userByToken(ctx, hex.EncodeToString(key[:]))
	if err != nil {
		return nil, nil, err
	}
	s.tokens.put(key, rev, u, tok)
	return u, tok, nil
}

func (s *Store) userByToken(ctx context.Context, hash string) (*models.User, *models.APIToken, error) {
	const op = "store.UserByToken"
	db := s.rdb.WithContext(ctx)
	var tok models.APIToken
	res := db.Where("hash = ?", hash).Limit(1).Find(&tok)
	if res.Error != nil {
		return nil, nil, mapErr(op, res.Error)
	}
	if res.RowsAffected == 0 || tok.RevokedAt != nil {
		return nil, nil, models.E(models.Unauthorized, "", "invalid or revoked token")
	}
	u, err := findUser(db, "id = ?", tok.UserID)
	if err != nil {
		if models.Is(models.NotFound, err) {
			return nil, nil, models.E(models.Unauthorized, "", "invalid or revoked token")
		}
		return nil, nil, mapErr(op, err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond) // what PostgreSQL keeps
	if tok.LastUsedAt == nil || now.Sub(*tok.LastUsedAt) >= tokenTouchInterval {
		// Bookkeeping, not a change to the world: no revision bump, no
		// audit event, and a failure here does not refuse the request.
		cutoff := now.Add(-tokenTouchInterval)
		if s.db.WithContext(ctx).Model(&models.APIToken{}).
			Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", tok.ID, cutoff).
			UpdateColumn("last_used_at", now).Error == nil {
			tok.LastUsedAt = &now
		}
	}
	return u, &tok, nil
}

// ListTokens returns the tokens of one user (0 = all users), newest first.
func (s *Store) ListTokens(ctx context.Context, userID int64) ([]models.APIToken, error) {
	var out []models.APIToken
	q := s.rdb.WithContext(ctx).Order("created_at DESC, id DESC")
	if userID != 0 {
		q = q.Where("user_id = ?", userID)
	}
	err := q.Find(&out).Error
	return out, mapErr("store.ListTokens", err)
}

// revokeTokens revokes every live API token of u inside the transaction
// of a change that ends u's access (a password change, signing out
// everywhere), and records how many in the audit log.
func (t *txn) revokeTokens(u *models.User, reason string) error {
	res := t.tx.Model(&models.APIToken{}).Where("user_id = ? AND revoked_at IS NULL", u.ID).UpdateColumn("revoked_at", t.now)
	if res.Error != nil || res.RowsAffected == 0 {
		return res.Error
	}
	return t.audit("revoke-tokens", "user", itoa(u.ID), u.Name, nil, map[string]any{"tokens_revoked": res.RowsAffected, "reason": reason})
}

// RevokeToken revokes a token; revoking it again changes nothing.
func (s *Store) RevokeToken(ctx context.Context, a Actor, id int64) error {
	return s.write(ctx, a, "store.RevokeToken", func(t *txn) error {
		t.keepsWorld() // no part of the world
		var tok models.APIToken
		res := t.tx.Where("id = ?", id).Limit(1).Find(&tok)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return models.E(models.NotFound, "token", "token %d not found", id)
		}
		before := tok
		if tok.RevokedAt == nil {
			now := t.now
			tok.RevokedAt = &now
			if err := t.tx.Model(&tok).UpdateColumn("revoked_at", now).Error; err != nil {
				return err
			}
		}
		return t.audit("revoke", "token", itoa(tok.ID), tok.Name, before, tok)
	})
}

// SessionKeys returns cookie key pairs (authentication key, encryption key),
// newest first, for sessions.NewCookieStore(keys...). The first pair is
// generated on first use and persisted so every replica and restart shares
// it; older pairs from RotateSessionKeys still decode existing cookies.
func (s *Store) SessionKeys(ctx context.Context) ([][]byte, error) {
	const op = "store.SessionKeys"
	rows, err := s.sessionKeyRows(ctx)
	if err != nil {
		return nil, mapErr(op, err)
	}
	if len(rows) == 0 {
		row, err := newSessionKey()
		if err != nil {
			return nil, models.Wrap(op, err)
		}
		row.ID = 1
		// Two replicas starting at once both try id 1; one insert wins and
		// both read the winner's keys back.
		if err = s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(row).Error; err != nil {
			return nil, mapErr(op, err)
		}
		if rows, err = s.sessionKeyRows(ctx); err != nil {
			return nil, mapErr(op, err)
		}
	}
	out := make([][]byte, 0, 2*len(rows))
	for _, r := range rows {
		out = append(out, r.HashKey, r.BlockKey)
	}
	return out, nil
}

// keptSessionKeys is how many key pairs stay valid: the current one and the
// one before, so a rotation does not sign everybody out.
const keptSessionKeys = 2

func (s *Store) sessionKeyRows(ctx context.Context) ([]sessionKeyRow, error) {
	var rows []sessionKeyRow
	err := s.db.WithContext(ctx).Order("id DESC").Limit(keptSessionKeys).Find(&rows).Error
	return rows, err
}

func newSessionKey() (*sessionKeyRow, error) {
	row := &sessionKeyRow{HashKey: make([]byte, 64), BlockKey: make([]byte, 32), CreatedAt: time.Now().UTC()}
	if _, err := rand.Read(row.HashKey); err != nil {
		return nil, err
	}
	if _, err := rand.Read(row.BlockKey); err != nil {
		return nil, err
	}
	return row, nil
}

// RotateSessionKeys adds a new key pair; cookies signed with the previous
// pair stay valid until the next rotation.
func (s *Store) RotateSessionKeys(ctx context.Context, a Actor) error {
	row, err := newSessionKey()
	if err != nil {
		return models.Wrap("store.RotateSessionKeys", err)
	}
	return s.write(ctx, a, "store.RotateSessionKeys", func(t *txn) error {
		t.keepsWorld() // no part of the world
		var last int64
		if err := t.tx.Model(&sessionKeyRow{}).Select("COALESCE(MAX(id), 0)").Scan(&last).Error; err != nil {
			return err
		}
		row.ID = last + 1
		if err := t.tx.Create(row).Error; err != nil {
			return err
		}
		return t.audit("rotate", "session_keys", itoa(row.ID), "session keys", nil, map[string]any{"id": row.ID})
	})
}
