package store_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

const sessionTTL = 8 * time.Hour

// signIn authenticates name and starts a session at now, as the console
// does.
func signIn(t *testing.T, s *store.Store, name string, now time.Time) string {
	t.Helper()
	u, err := s.Authenticate(ctx, name, "correct horse")
	if err != nil {
		t.Fatalf("authenticate %s: %v", name, err)
	}
	plain, row, err := s.CreateSession(ctx, u, "Mozilla/5.0 (test)", "192.0.2.7", now, sessionTTL)
	if err != nil {
		t.Fatalf("create session for %s: %v", name, err)
	}
	if plain == "" || row.UserID != u.ID {
		t.Fatalf("CreateSession = %q, %+v", plain, row)
	}
	return plain
}

func mustUser(t *testing.T, s *store.Store, name string, role models.Role) *models.User {
	t.Helper()
	u, err := s.CreateUser(ctx, admin, name, "correct horse", role, "acme")
	if err != nil {
		t.Fatalf("create user %s: %v", name, err)
	}
	return u
}

// alive reports whether plain still resolves at now, failing the test on
// anything but a clean refusal.
func alive(t *testing.T, s *store.Store, plain string, now time.Time) bool {
	t.Helper()
	_, _, err := s.LookupSession(ctx, plain, now)
	if err == nil {
		return true
	}
	if models.KindOf(err) != models.Unauthorized {
		t.Fatalf("LookupSession: %v, want Unauthorized or success", err)
	}
	return false
}

func TestSessionLifecycle(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		bob := mustUser(t, s, "bob", models.RoleMember)
		t0 := time.Now().UTC().Truncate(time.Second)
		plain := signIn(t, s, "bob", t0)

		sess, u, err := s.LookupSession(ctx, plain, t0.Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if u.ID != bob.ID || u.Name != "bob" || u.Role != models.RoleMember || u.ProjectID != "acme" || u.PasswordHash != "" {
			t.Errorf("user = %+v, want bob (member, acme) without the password hash", u)
		}
		if sess.UserID != bob.ID || !sess.CreatedAt.Equal(t0) || !sess.ExpiresAt.Equal(t0.Add(sessionTTL)) ||
			sess.UserAgent != "Mozilla/5.0 (test)" || sess.IP != "192.0.2.7" {
			t.Errorf("session = %+v", sess)
		}
		if !sess.LastSeenAt.Equal(t0) {
			t.Errorf("last seen %v after a request within a minute, want %v (not rewritten)", sess.LastSeenAt, t0)
		}
		later := t0.Add(2 * time.Minute)
		if _, _, err := s.LookupSession(ctx, plain, later); err != nil {
			t.Fatal(err)
		}
		list, err := s.ListSessions(ctx, bob.ID, later)
		if err != nil || len(list) != 1 || !list[0].LastSeenAt.Equal(later) {
			t.Fatalf("ListSessions = %+v, %v; want one session last seen %v", list, err, later)
		}

		cases := []struct {
			name  string
			plain string
			at    time.Time
			alive bool
		}{
			{"just before expiry", plain, t0.Add(sessionTTL - time.Second), true},
			{"at expiry", plain, t0.Add(sessionTTL), false},
			{"after expiry", plain, t0.Add(sessionTTL + time.Hour), false},
			{"empty id", "", t0, false},
			{"unknown id", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", t0, false},
			{"the stored hash as id", hexSHA(plain), t0, false},
		}
		for _, c := range cases {
			if got := alive(t, s, c.plain, c.at); got != c.alive {
				t.Errorf("%s: alive = %v, want %v", c.name, got, c.alive)
			}
		}
		if n, err := s.ListSessions(ctx, bob.ID, t0.Add(sessionTTL)); err != nil || len(n) != 0 {
			t.Errorf("ListSessions after expiry = %v, %v; want none", n, err)
		}

		if err := s.EndSession(ctx, plain); err != nil {
			t.Fatal(err)
		}
		if alive(t, s, plain, t0.Add(time.Minute)) {
			t.Error("session alive after EndSession")
		}
		if err := s.EndSession(ctx, plain); err != nil {
			t.Errorf("ending an ended session: %v", err)
		}
	})
}

func hexSHA(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestSessionIDNotStoredInPlainText(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		mustUser(t, s, "bob", models.RoleMember)
		now := time.Now()
		plain := signIn(t, s, "bob", now)
		rows, err := s.SessionRows()
		if err != nil || len(rows) != 1 {
			t.Fatalf("session rows = %v, %v", rows, err)
		}
		for col, v := range rows[0] {
			if strings.Contains(fmt.Sprint(v), plain) {
				t.Errorf("column %s holds the plain session id", col)
			}
		}
		if got := fmt.Sprint(rows[0]["hash"]); got != hexSHA(plain) {
			t.Errorf("hash column = %q, want the SHA-256 of the id", got)
		}
	})
}

func TestEndOtherSessionsAndByID(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		bob := mustUser(t, s, "bob", models.RoleMember)
		carol := mustUser(t, s, "carol", models.RoleReader)
		now := time.Now()
		b1, b2, b3 := signIn(t, s, "bob", now), signIn(t, s, "bob", now), signIn(t, s, "bob", now)
		c1 := signIn(t, s, "carol", now)

		counts, err := s.SessionCounts(ctx, now)
		if err != nil || counts[bob.ID] != 3 || counts[carol.ID] != 1 {
			t.Fatalf("SessionCounts = %v, %v; want bob 3, carol 1", counts, err)
		}

		// Carol cannot end Bob's session by id: it is "not found" to her.
		list, _ := s.ListSessions(ctx, bob.ID, now)
		wantKind(t, s.EndSessionByID(ctx, carol.ID, list[0].ID), models.NotFound, "session")
		b3sess, _, _ := s.LookupSession(ctx, b3, now)
		if err := s.EndSessionByID(ctx, bob.ID, b3sess.ID); err != nil {
			t.Fatal(err)
		}

		n, err := s.EndOtherSessions(ctx, bob.ID, b1)
		if err != nil || n != 1 {
			t.Fatalf("EndOtherSessions = %d, %v; want 1 (b2; b3 was ended already)", n, err)
		}
		for _, c := range []struct {
			name, plain string
			alive       bool
		}{{"kept", b1, true}, {"other", b2, false}, {"ended by id", b3, false}, {"another user's", c1, true}} {
			if got := alive(t, s, c.plain, now); got != c.alive {
				t.Errorf("%s session: alive = %v, want %v", c.name, got, c.alive)
			}
		}
	})
}

func TestEndUserSessionsIsAudited(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		bob := mustUser(t, s, "bob", models.RoleMember)
		now := time.Now()
		b1, b2 := signIn(t, s, "bob", now), signIn(t, s, "bob", now)
		rev, _ := s.Revision(ctx)
		n, err := s.EndUserSessions(ctx, admin, bob.ID)
		if err != nil || n != 2 {
			t.Fatalf("EndUserSessions = %d, %v; want 2", n, err)
		}
		if alive(t, s, b1, now) || alive(t, s, b2, now) {
			t.Error("a session survived signing out everywhere")
		}
		if rev2, _ := s.Revision(ctx); rev2 != rev {
			t.Errorf("revision moved %d → %d: sessions are not world data", rev, rev2)
		}
		evs, _, err := s.ListAudit(ctx, store.AuditQuery{Actor: admin.Name, ObjectType: "user", ObjectID: fmt.Sprint(bob.ID)})
		if err != nil || len(evs) == 0 || evs[0].Action != "sign-out-everywhere" || !strings.Contains(evs[0].After, `"sessions_ended":2`) {
			t.Fatalf("audit = %+v, %v; want a sign-out-everywhere event by %s ending 2 sessions", evs, err, admin.Name)
		}
		_, err = s.EndUserSessions(ctx, admin, 99999)
		wantKind(t, err, models.NotFound, "user")
	})
}

// Changes to a user that invalidate their sign-ins end them in the same
// transaction; other users' sessions and unrelated edits leave them alone.
func TestUserChangesEndSessions(t *testing.T) {
	cases := []struct {
		name   string
		change func(s *store.Store, u *models.User) error
		ends   bool
		reason string
	}{
		{"password", func(s *store.Store, u *models.User) error {
			return s.SetPassword(ctx, admin, u.Name, "battery staple")
		}, true, "password changed"},
		{"role", func(s *store.Store, u *models.User) error {
			_, err := s.UpdateUser(ctx, admin, u.ID, func(u *models.User) error { u.Role = models.RoleReader; return nil })
			return err
		}, true, "role or project changed"},
		{"project", func(s *store.Store, u *models.User) error {
			_, err := s.UpdateUser(ctx, admin, u.ID, func(u *models.User) error { u.ProjectID = "other"; return nil })
			return err
		}, true, "role or project changed"},
		{"deletion", func(s *store.Store, u *models.User) error {
			return s.DeleteUser(ctx, admin, u.ID)
		}, true, "user deleted"},
		{"update changing nothing", func(s *store.Store, u *models.User) error {
			_, err := s.UpdateUser(ctx, admin, u.ID, func(*models.User) error { return nil })
			return err
		}, false, ""},
		{"refused role", func(s *store.Store, u *models.User) error {
			_, err := s.UpdateUser(ctx, admin, u.ID, func(u *models.User) error { u.Role = "root"; return nil })
			if models.KindOf(err) == models.Invalid {
				return nil
			}
			return fmt.Errorf("role root: %v, want Invalid", err)
		}, false, ""},
	}
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		mustUser(t, s, "carol", models.RoleReader)
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				u := mustUser(t, s, fmt.Sprintf("bob%d", i), models.RoleMember)
				now := time.Now()
				mine, other := signIn(t, s, u.Name, now), signIn(t, s, u.Name, now)
				carol := signIn(t, s, "carol", now)
				if err := c.change(s, u); err != nil {
					t.Fatal(err)
				}
				for _, p := range []string{mine, other} {
					if got := alive(t, s, p, now); got == c.ends {
						t.Errorf("session alive = %v after the change, want %v", got, !c.ends)
					}
				}
				if !alive(t, s, carol, now) {
					t.Error("another user's session ended")
				}
				evs, _, err := s.ListAudit(ctx, store.AuditQuery{ObjectType: "user", ObjectID: fmt.Sprint(u.ID)})
				if err != nil {
					t.Fatal(err)
				}
				var found bool
				for _, e := range evs {
					if e.Action == "sign-out-everywhere" && e.Actor == admin.Name && strings.Contains(e.After, c.reason) &&
						strings.Contains(e.After, `"sessions_ended":2`) {
						found = true
					}
				}
				if found != c.ends {
					t.Errorf("audit has the forced sign-out: %v, want %v; events %+v", found, c.ends, evs)
				}
			})
		}
	})
}

// A sign-in that checked the old password must not outlive a password
// change that commits before its session is stored.
func TestSignInRacingPasswordChange(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		mustUser(t, s, "bob", models.RoleMember)
		u, err := s.Authenticate(ctx, "bob", "correct horse")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetPassword(ctx, admin, "bob", "battery staple"); err != nil {
			t.Fatal(err)
		}
		_, _, err = s.CreateSession(ctx, u, "", "", time.Now(), sessionTTL)
		wantKind(t, err, models.Unauthorized, "")
		_, _, err = s.CreateSession(ctx, u, "", "", time.Now(), 0)
		wantKind(t, err, models.Invalid, "ttl")
	})
}

func TestSessionsPrunedAndCapped(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		bob := mustUser(t, s, "bob", models.RoleMember)
		t0 := time.Now()
		u, _ := s.Authenticate(ctx, "bob", "correct horse")
		if _, _, err := s.CreateSession(ctx, u, "", "198.51.100.1", t0, time.Hour); err != nil {
			t.Fatal(err)
		}
		// A sign-in two hours later prunes the expired row.
		first := signIn(t, s, "bob", t0.Add(2*time.Hour))
		rows, err := s.SessionRows()
		if err != nil || len(rows) != 1 {
			t.Fatalf("rows after pruning: %d, %v; want 1", len(rows), err)
		}
		for i := 1; i < store.MaxSessionsPerUser+2; i++ {
			if _, _, err := s.CreateSession(ctx, u, "", "", t0.Add(2*time.Hour), time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		list, err := s.ListSessions(ctx, bob.ID, t0.Add(2*time.Hour))
		if err != nil || len(list) != store.MaxSessionsPerUser {
			t.Fatalf("ListSessions: %d sessions, %v; want the newest %d", len(list), err, store.MaxSessionsPerUser)
		}
		if alive(t, s, first, t0.Add(2*time.Hour)) {
			t.Error("the oldest session survived the cap")
		}
	})
}

func TestSessionUserAgentClipped(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		mustUser(t, s, "bob", models.RoleMember)
		u, _ := s.Authenticate(ctx, "bob", "correct horse")
		ua := strings.Repeat("é", 400) + "\xff"
		_, row, err := s.CreateSession(ctx, u, ua, strings.Repeat("1", 100), time.Now(), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if len(row.UserAgent) != 512 || !strings.HasPrefix(ua, row.UserAgent) || len(row.IP) != 64 {
			t.Errorf("user agent %d bytes, ip %d bytes; want 512 (whole runes) and 64", len(row.UserAgent), len(row.IP))
		}
	})
}

// BenchmarkLookupSession measures what every console request pays to check
// its session: one indexed join of the session and its user.
func BenchmarkLookupSession(b *testing.B) {
	s := storetest.Open(b)
	if _, err := s.CreateUser(ctx, admin, "bob", "correct horse", models.RoleMember, "acme"); err != nil {
		b.Fatal(err)
	}
	u, _ := s.Authenticate(ctx, "bob", "correct horse")
	now := time.Now()
	plain, _, err := s.CreateSession(ctx, u, "bench", "127.0.0.1", now, sessionTTL)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("session", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, _, err := s.LookupSession(ctx, plain, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	// What the user lookup alone cost before sessions had rows.
	b.Run("user-by-id", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.UserByID(ctx, u.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
