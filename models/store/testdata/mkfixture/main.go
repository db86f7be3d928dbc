// Command mkfixture writes corral-7989f67.db, the SQLite database the
// migration upgrade test starts from. It is built against the release whose
// schema came from GORM's AutoMigrate (commit 7989f67), not against the
// current tree:
//
//	git archive 7989f67 | tar -x -C /tmp/old
//	mkdir /tmp/old/cmd/mkfixture && cp main.go /tmp/old/cmd/mkfixture/
//	(cd /tmp/old && go run ./cmd/mkfixture OUT.db)
//
// It fills every table: the demo world (providers, aggregates and their
// members, flavors, servers, server groups, audit), changed settings, users, tokens
// (one revoked), a session, the session keys, a quota and a draft.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(path string) error {
	ctx := context.Background()
	s, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer s.Close()
	a := store.Actor{Name: "fixture", Via: "cli"}
	if _, err := s.LoadDemo(ctx); err != nil {
		return err
	}
	admin, err := s.CreateUser(ctx, a, "admin", "admin password 1", models.RoleAdmin, "")
	if err != nil {
		return err
	}
	if _, err := s.CreateUser(ctx, a, "alice", "alice password 1", models.RoleMember, "project-a"); err != nil {
		return err
	}
	if _, _, err := s.CreateToken(ctx, a, "alice", "ci"); err != nil {
		return err
	}
	_, old, err := s.CreateToken(ctx, a, "admin", "old")
	if err != nil {
		return err
	}
	if err := s.RevokeToken(ctx, a, old.ID); err != nil {
		return err
	}
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	if _, _, err := s.CreateSession(ctx, admin, "fixture-agent", "127.0.0.1", now, 100*365*24*time.Hour); err != nil {
		return err
	}
	if _, err := s.SessionKeys(ctx); err != nil {
		return err
	}
	st, gen, err := s.GetSettings(ctx)
	if err != nil {
		return err
	}
	st.RequiredMemberPrefix = "CUSTOM_FIXTURE_"
	if err := s.UpdateSettings(ctx, a, gen, st); err != nil {
		return err
	}
	if err := s.SetQuota(ctx, a, "project-a", models.QuotaServerGroups, 7); err != nil {
		return err
	}
	d, err := s.CreateDraft(ctx, a, "fixture draft")
	if err != nil {
		return err
	}
	agg := store.DemoUUID("aggregate", "aggA")
	if _, err := s.SetDraftChanges(ctx, a, d.ID, d.Version, []scheduling.Change{
		{Op: scheduling.OpSetMetadata, Aggregate: agg, Key: "fixture", Value: "yes"},
	}); err != nil {
		return err
	}
	return nil
}
