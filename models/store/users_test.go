package store_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/gorilla/securecookie"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

func TestUsersAndPasswords(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		u, err := s.CreateUser(ctx, admin, "bob", "correct horse", models.RoleMember, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if u.PasswordHash == "correct horse" || u.PasswordHash == "" {
			t.Fatalf("password stored as %q", u.PasswordHash)
		}
		bad := []struct {
			name, pw string
			role     models.Role
			field    string
			kind     models.Kind
		}{
			{"carol", "correct horse", "root", "role", models.Invalid},
			{"carol", "", models.RoleReader, "password", models.Invalid},
			{"carol", "short", models.RoleReader, "password", models.Invalid},
			{"", "correct horse", models.RoleReader, "name", models.Invalid},
			{"bob", "correct horse", models.RoleReader, "name", models.Conflict},
		}
		for _, b := range bad {
			_, err := s.CreateUser(ctx, admin, b.name, b.pw, b.role, "")
			wantKind(t, err, b.kind, b.field)
		}

		got, err := s.Authenticate(ctx, "bob", "correct horse")
		if err != nil || got.ID != u.ID || got.Role != models.RoleMember || got.ProjectID != "acme" {
			t.Fatalf("Authenticate = %+v, %v", got, err)
		}
		_, errWrong := s.Authenticate(ctx, "bob", "wrong horse")
		wantKind(t, errWrong, models.Unauthorized, "")
		_, errUnknown := s.Authenticate(ctx, "nobody", "correct horse")
		wantKind(t, errUnknown, models.Unauthorized, "")
		if errWrong.Error() != errUnknown.Error() {
			t.Fatalf("messages differ: %q vs %q", errWrong, errUnknown)
		}

		if err := s.SetPassword(ctx, admin, "bob", "battery staple"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, "bob", "correct horse"); models.KindOf(err) != models.Unauthorized {
			t.Fatalf("old password still works: %v", err)
		}
		if _, err := s.Authenticate(ctx, "bob", "battery staple"); err != nil {
			t.Fatalf("new password refused: %v", err)
		}
		if byName, err := s.UserByName(ctx, "bob"); err != nil || byName.ID != u.ID {
			t.Fatalf("UserByName = %+v, %v", byName, err)
		}
		if byID, err := s.UserByID(ctx, u.ID); err != nil || byID.Name != "bob" {
			t.Fatalf("UserByID = %+v, %v", byID, err)
		}
		_, err = s.UserByID(ctx, 999)
		wantKind(t, err, models.NotFound, "user")
		users, err := s.ListUsers(ctx)
		if err != nil || len(users) != 1 {
			t.Fatalf("ListUsers = %v, %v", users, err)
		}

		up, err := s.UpdateUser(ctx, admin, u.ID, func(u *models.User) error {
			u.Role, u.ProjectID, u.Name = models.RoleReader, "globex", "mallory"
			return nil
		})
		if err != nil || up.Role != models.RoleReader || up.ProjectID != "globex" || up.Name != "bob" {
			t.Fatalf("UpdateUser = %+v, %v", up, err)
		}
		_, err = s.UpdateUser(ctx, admin, u.ID, func(u *models.User) error { u.Role = "root"; return nil })
		wantKind(t, err, models.Invalid, "role")
		if _, err := s.Authenticate(ctx, "bob", "battery staple"); err != nil {
			t.Fatalf("password lost by UpdateUser: %v", err)
		}

		// Deleting a user takes their tokens along.
		plain, _, err := s.CreateToken(ctx, admin, "bob", "ci")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteUser(ctx, admin, u.ID); err != nil {
			t.Fatal(err)
		}
		_, _, err = s.UserByToken(ctx, plain)
		wantKind(t, err, models.Unauthorized, "")
		_, err = s.Authenticate(ctx, "bob", "battery staple")
		wantKind(t, err, models.Unauthorized, "")
		wantKind(t, s.DeleteUser(ctx, admin, u.ID), models.NotFound, "user")
	})
}

func TestTokens(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		u, err := s.CreateUser(ctx, admin, "bob", "correct horse", models.RoleAdmin, "admin")
		if err != nil {
			t.Fatal(err)
		}
		plain, tok, err := s.CreateToken(ctx, admin, "bob", "ci")
		if err != nil {
			t.Fatal(err)
		}
		if len(plain) < 40 {
			t.Fatalf("token %q is too short", plain)
		}
		sum := sha256.Sum256([]byte(plain))
		if tok.Hash != hex.EncodeToString(sum[:]) || tok.Prefix != plain[:8] {
			t.Fatalf("token row %+v", tok)
		}
		_, _, err = s.CreateToken(ctx, admin, "nobody", "x")
		wantKind(t, err, models.NotFound, "user")

		gotU, gotT, err := s.UserByToken(ctx, plain)
		if err != nil || gotU.ID != u.ID || gotT.ID != tok.ID {
			t.Fatalf("UserByToken = %+v %+v %v", gotU, gotT, err)
		}
		if gotT.LastUsedAt == nil {
			t.Fatal("LastUsedAt not recorded")
		}
		first := *gotT.LastUsedAt
		_, again, _ := s.UserByToken(ctx, plain)
		if !again.LastUsedAt.Equal(first) {
			t.Fatalf("LastUsedAt rewritten within a minute: %v then %v", first, again.LastUsedAt)
		}
		for _, bad := range []string{"", "x", plain + "x", plain[:len(plain)-1]} {
			_, _, err := s.UserByToken(ctx, bad)
			wantKind(t, err, models.Unauthorized, "")
		}

		// Stored hashed: no row carries the plain token.
		toks, err := s.ListTokens(ctx, u.ID)
		if err != nil || len(toks) != 1 {
			t.Fatalf("ListTokens = %v, %v", toks, err)
		}
		for _, tk := range toks {
			if tk.Hash == plain || tk.Name == plain || tk.Prefix == plain {
				t.Fatalf("plain token stored: %+v", tk)
			}
		}
		if all, _ := s.ListTokens(ctx, 0); len(all) != 1 {
			t.Fatalf("ListTokens(0) = %v", all)
		}

		if err := s.RevokeToken(ctx, admin, tok.ID); err != nil {
			t.Fatal(err)
		}
		_, _, err = s.UserByToken(ctx, plain)
		wantKind(t, err, models.Unauthorized, "")
		wantKind(t, s.RevokeToken(ctx, admin, 12345), models.NotFound, "token")
		toks, _ = s.ListTokens(ctx, u.ID)
		if toks[0].RevokedAt == nil {
			t.Fatal("RevokedAt not set")
		}
	})
}

// On SQLite the whole database is one file (plus its WAL): the plain token
// must appear in neither.
func TestTokenNotInDatabaseFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corral.db")
	s := storetest.OpenPath(t, path)
	if _, err := s.CreateUser(ctx, admin, "bob", "correct horse", models.RoleAdmin, ""); err != nil {
		t.Fatal(err)
	}
	plain, tok, err := s.CreateToken(ctx, admin, "bob", "ci")
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if !bytes.Contains(all, []byte(tok.Hash)) {
		t.Fatal("the token's hash is not in the database files; the check below would prove nothing")
	}
	if bytes.Contains(all, []byte(plain)) {
		t.Fatal("the plain token is in the database file")
	}
}

func TestSessionKeysPersistAndRotate(t *testing.T) {
	storetest.ForEachDSN(t, func(t *testing.T, dsn string) {
		s1, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s1.Close()
		k1, err := s1.SessionKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(k1) != 2 || len(k1[0]) != 64 || len(k1[1]) != 32 {
			t.Fatalf("keys: %d pairs, lengths %d/%d", len(k1), len(k1[0]), len(k1[1]))
		}
		// Another replica (or a restart) gets the same keys.
		s2, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		k2, _ := s2.SessionKeys(ctx)
		if !bytes.Equal(k1[0], k2[0]) || !bytes.Equal(k1[1], k2[1]) {
			t.Fatal("second store got different session keys")
		}
		// A cookie made with the keys decodes on the other replica, and
		// still does after one rotation.
		enc, err := securecookie.EncodeMulti("s", "v", securecookie.CodecsFromPairs(k1...)...)
		if err != nil {
			t.Fatal(err)
		}
		if err := s1.RotateSessionKeys(ctx, admin); err != nil {
			t.Fatal(err)
		}
		k3, _ := s2.SessionKeys(ctx)
		if len(k3) != 4 || bytes.Equal(k3[0], k1[0]) || !bytes.Equal(k3[2], k1[0]) {
			t.Fatal("rotation did not put a new pair first and keep the old one")
		}
		var v string
		if err := securecookie.DecodeMulti("s", enc, &v, securecookie.CodecsFromPairs(k3...)...); err != nil || v != "v" {
			t.Fatalf("old cookie after rotation: %q, %v", v, err)
		}
		// After a second rotation the first pair is gone.
		if err := s1.RotateSessionKeys(ctx, admin); err != nil {
			t.Fatal(err)
		}
		k4, _ := s1.SessionKeys(ctx)
		if err := securecookie.DecodeMulti("s", enc, &v, securecookie.CodecsFromPairs(k4...)...); err == nil {
			t.Fatal("a cookie two rotations old still decodes")
		}
	})
}
