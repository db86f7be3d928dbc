package store_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

// Two editors load the same aggregate and save different changes based on
// the same generation: exactly one wins, the other is told to reload, and
// the winner's change is what the database holds.
func TestConcurrentEditorsOfOneAggregate(t *testing.T) {
	storetest.ForEachDSN(t, func(t *testing.T, dsn string) {
		// Two stores on one database, like two replicas (or two processes
		// on one SQLite file).
		s1, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s1.Close()
		s2, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		agg := mustAggregate(t, s1, "shared")

		for round := 0; round < 10; round++ {
			cur, err := s1.GetAggregate(ctx, agg.UUID)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make([]error, 2)
			for i, s := range []*store.Store{s1, s2} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, errs[i] = s.UpdateAggregate(ctx, admin, agg.UUID, cur.Generation, func(a *models.Aggregate) error {
						a.Metadata[fmt.Sprintf("editor%d", i)] = fmt.Sprint(round)
						return nil
					})
				}()
			}
			close(start)
			wg.Wait()
			var won, lost int
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil:
					won++
					winner = i
				case models.KindOf(err) == models.Conflict:
					lost++
				default:
					t.Fatalf("round %d editor %d: unexpected error %v", round, i, err)
				}
			}
			if won != 1 || lost != 1 {
				t.Fatalf("round %d: %d won, %d lost (%v)", round, won, lost, errs)
			}
			after, err := s2.GetAggregate(ctx, agg.UUID)
			if err != nil {
				t.Fatal(err)
			}
			if after.Generation != cur.Generation+1 {
				t.Fatalf("round %d: generation %d, want %d", round, after.Generation, cur.Generation+1)
			}
			if got := after.Metadata[fmt.Sprintf("editor%d", winner)]; got != fmt.Sprint(round) {
				t.Fatalf("round %d: winner's change lost: %v", round, after.Metadata)
			}
		}
	})
}

// Many writers of different objects at once, through two stores on one
// database: every write succeeds (SQLite waits for its lock instead of
// failing with "database is locked") and each one moved the revision.
func TestConcurrentWritersOfDifferentObjects(t *testing.T) {
	storetest.ForEachDSN(t, func(t *testing.T, dsn string) {
		s1, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s1.Close()
		s2, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		rev0, _ := s1.Revision(ctx)
		const writers, each = 8, 5
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := 0; w < writers; w++ {
			s := []*store.Store{s1, s2}[w%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					name := fmt.Sprintf("agg-%d-%d", w, i)
					if err := s.CreateAggregate(context.Background(), admin, &models.Aggregate{Name: name}); err != nil {
						errs <- fmt.Errorf("%s: %w", name, err)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		_, total, err := s1.ListAggregates(ctx, store.AggregateQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if total != writers*each {
			t.Fatalf("%d aggregates, want %d", total, writers*each)
		}
		rev, _ := s2.Revision(ctx)
		if rev-rev0 != writers*each {
			t.Fatalf("revision moved by %d, want %d", rev-rev0, writers*each)
		}
	})
}

// TestSQLiteNeverSaysLocked: many writers and readers at once on one SQLite
// file; every write succeeds (writers queue on the busy timeout), and no
// error anyone could see says "database is locked".
func TestSQLiteNeverSaysLocked(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	a := &models.Aggregate{Name: "busy"}
	if err := s.CreateAggregate(ctx, admin, a); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64*20)
	for i := range 64 {
		wg.Go(func() {
			for j := range 20 {
				if i%2 == 0 {
					_, err := s.UpdateAggregate(ctx, admin, a.UUID, store.AnyGeneration, func(x *models.Aggregate) error {
						x.Metadata[fmt.Sprintf("k%d", i)] = strconv.Itoa(j)
						return nil
					})
					errs <- err
				} else {
					_, _, err := s.ListAggregates(ctx, store.AggregateQuery{Search: "bus"})
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("%v (kind %v)", err, models.KindOf(err))
			if strings.Contains(err.Error(), "locked") {
				t.Fatal("an error says the database is locked")
			}
		}
	}
}
