package store_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

// adminCount counts users with the admin role.
func adminCount(t *testing.T, s *store.Store) int {
	t.Helper()
	users, err := s.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, u := range users {
		if u.Role == models.RoleAdmin {
			n++
		}
	}
	return n
}

func setRole(s *store.Store, by store.Actor, id int64, role models.Role) error {
	_, err := s.UpdateUser(ctx, by, id, func(u *models.User) error { u.Role = role; return nil })
	return err
}

// The last admin can be neither demoted nor deleted; every other change,
// and any change once a second admin exists, goes through.
func TestLastAdminIsKept(t *testing.T) {
	cli := store.Actor{Name: "ops", Via: "cli"}
	cases := []struct {
		name   string
		admins int // admins before the change, ann first
		change func(s *store.Store, ann *models.User) error
		field  string // "" and ok: allowed
		ok     bool
	}{
		{"demote the only admin to member", 1, func(s *store.Store, ann *models.User) error {
			return setRole(s, cli, ann.ID, models.RoleMember)
		}, "role", false},
		{"demote the only admin to reader", 1, func(s *store.Store, ann *models.User) error {
			return setRole(s, cli, ann.ID, models.RoleReader)
		}, "role", false},
		{"delete the only admin", 1, func(s *store.Store, ann *models.User) error {
			return s.DeleteUser(ctx, cli, ann.ID)
		}, "", false},
		{"move the only admin to another project", 1, func(s *store.Store, ann *models.User) error {
			_, err := s.UpdateUser(ctx, cli, ann.ID, func(u *models.User) error { u.ProjectID = "globex"; return nil })
			return err
		}, "", true},
		{"demote one of two admins", 2, func(s *store.Store, ann *models.User) error {
			return setRole(s, cli, ann.ID, models.RoleMember)
		}, "", true},
		{"delete one of two admins", 2, func(s *store.Store, ann *models.User) error {
			return s.DeleteUser(ctx, cli, ann.ID)
		}, "", true},
	}
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				// Each case gets its own admin; earlier cases' admins go, so
				// the count below is exact.
				ann := mustUser(t, s, fmt.Sprintf("ann%d", i), models.RoleAdmin)
				for _, u := range mustUsers(t, s) {
					if u.Role == models.RoleAdmin && u.ID != ann.ID {
						if err := s.DeleteUser(ctx, cli, u.ID); err != nil {
							t.Fatal(err)
						}
					}
				}
				if c.admins == 2 {
					mustUser(t, s, fmt.Sprintf("bea%d", i), models.RoleAdmin)
				}
				before := adminCount(t, s)
				if before != c.admins {
					t.Fatalf("set-up: %d admins, want %d", before, c.admins)
				}
				err := c.change(s, ann)
				if c.ok {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					return
				}
				wantKind(t, err, models.Conflict, c.field)
				if !strings.Contains(err.Error(), "last admin") || !strings.Contains(err.Error(), ann.Name) {
					t.Errorf("message %q does not say that %s is the last admin", err, ann.Name)
				}
				got, gerr := s.UserByID(ctx, ann.ID)
				if gerr != nil || got.Role != models.RoleAdmin {
					t.Errorf("after the refusal: %+v, %v; want %s still admin", got, gerr, ann.Name)
				}
			})
		}
	})
}

func mustUsers(t *testing.T, s *store.Store) []models.User {
	t.Helper()
	users, err := s.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return users
}

// Two admins demoting (or deleting) each other at the same moment: one
// wins, the other is refused, and one admin is left — never zero.
func TestAdminsDemotingEachOtherKeepOne(t *testing.T) {
	type move func(s *store.Store, by store.Actor, target *models.User) error
	demote := func(s *store.Store, by store.Actor, u *models.User) error {
		return setRole(s, by, u.ID, models.RoleReader)
	}
	del := func(s *store.Store, by store.Actor, u *models.User) error { return s.DeleteUser(ctx, by, u.ID) }
	pairs := []struct {
		name   string
		first  move
		second move
	}{
		{"demote and demote", demote, demote},
		{"delete and delete", del, del},
		{"demote and delete", demote, del},
	}
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		for pi, p := range pairs {
			t.Run(p.name, func(t *testing.T) {
				for round := 0; round < 8; round++ {
					a := mustUser(t, s, fmt.Sprintf("a%d-%d", pi, round), models.RoleAdmin)
					b := mustUser(t, s, fmt.Sprintf("b%d-%d", pi, round), models.RoleAdmin)
					// Only a and b are admins when the race starts.
					for _, u := range mustUsers(t, s) {
						if u.Role == models.RoleAdmin && u.ID != a.ID && u.ID != b.ID {
							if err := s.DeleteUser(ctx, admin, u.ID); err != nil {
								t.Fatal(err)
							}
						}
					}
					byA := store.Actor{Name: a.Name, Via: "console", Role: models.RoleAdmin}
					byB := store.Actor{Name: b.Name, Via: "console", Role: models.RoleAdmin}
					var wg sync.WaitGroup
					start := make(chan struct{})
					errs := make([]error, 2)
					wg.Add(2)
					go func() { defer wg.Done(); <-start; errs[0] = p.first(s, byA, b) }()
					go func() { defer wg.Done(); <-start; errs[1] = p.second(s, byB, a) }()
					close(start)
					wg.Wait()
					won, refused := 0, 0
					for _, err := range errs {
						switch {
						case err == nil:
							won++
						case models.KindOf(err) == models.Conflict && strings.Contains(err.Error(), "last admin"):
							refused++
						default:
							t.Fatalf("round %d: unexpected error %v", round, err)
						}
					}
					if won != 1 || refused != 1 {
						t.Fatalf("round %d: %d won, %d refused (%v); want one of each", round, won, refused, errs)
					}
					if n := adminCount(t, s); n != 1 {
						t.Fatalf("round %d: %d admins left, want 1", round, n)
					}
				}
			})
		}
	})
}
