package store_test

import (
	"context"
	"testing"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
)

// set_quotas (the console's quota page and Nova's os-quota-sets) goes
// through Apply: limits change, a stale expectation writes nothing, a
// change that changes nothing is no write, its revert restores the rows
// as they were (a reset where there was none).
func TestApplySetsQuotas(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		actor := store.Actor{Name: "admin", Via: "console"}
		sg, members := models.QuotaServerGroups, models.QuotaServerGroupMembers
		quotas := func() map[string]int {
			t.Helper()
			qs, err := s.ListQuotas(ctx, "qp")
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]int{}
			for _, q := range qs {
				out[q.Resource] = q.Limit
			}
			return out
		}
		set := func(f scheduling.QuotaFields) (*scheduling.Applied, error) {
			return s.Apply(ctx, actor, []scheduling.Change{{Op: scheduling.OpSetQuotas, Project: "qp", QuotaFields: f}})
		}
		if _, err := set(scheduling.QuotaFields{Quotas: map[string]int{sg: 7}}); err != nil {
			t.Fatal(err)
		}
		before := quotas()
		applied, err := set(scheduling.QuotaFields{Quotas: map[string]int{sg: 3, members: 5}})
		if err != nil {
			t.Fatal(err)
		}
		if got := quotas(); got[sg] != 3 || got[members] != 5 {
			t.Fatalf("quotas after the change: %v", got)
		}
		rev, _ := s.Revision(ctx)
		if again, err := set(scheduling.QuotaFields{Quotas: map[string]int{sg: 3}}); err != nil || again.Revision != 0 {
			t.Fatalf("a change that changes nothing: %+v, %v", again, err)
		}
		if now, _ := s.Revision(ctx); now != rev {
			t.Fatalf("a change that changes nothing moved the revision %d → %d", rev, now)
		}
		_, err = set(scheduling.QuotaFields{Quotas: map[string]int{sg: 9}, Expect: map[string]int{sg: 7}})
		wantKind(t, err, models.Conflict, "generation")
		if got := quotas(); got[sg] != 3 {
			t.Fatalf("a stale expectation wrote: %v", got)
		}
		_, err = set(scheduling.QuotaFields{Quotas: map[string]int{"cores": 9}})
		if models.KindOf(err) != models.Invalid {
			t.Fatalf("an unknown resource: %v, want Invalid", err)
		}
		if _, err := s.Apply(ctx, actor, applied.Revert); err != nil {
			t.Fatalf("revert %+v: %v", applied.Revert, err)
		}
		if got := quotas(); len(got) != len(before) || got[sg] != before[sg] {
			t.Fatalf("after the revert: %v, want %v", got, before)
		}
	})
}
