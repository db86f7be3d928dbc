package store_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
)

var draftActor = store.Actor{Name: "alice", Via: "console", Role: models.RoleAdmin}

// seedAggregate creates one host provider and an aggregate holding it.
func seedAggregate(t *testing.T, s *store.Store, host, agg string) *models.Aggregate {
	t.Helper()
	ctx := context.Background()
	p := &models.Provider{Name: host}
	if err := s.CreateProvider(ctx, draftActor, p); err != nil {
		t.Fatalf("create provider %s: %v", host, err)
	}
	a := &models.Aggregate{Name: agg, Metadata: map[string]string{"ssd": "true"}, Members: []string{p.UUID}}
	if err := s.CreateAggregate(ctx, draftActor, a); err != nil {
		t.Fatalf("create aggregate %s: %v", agg, err)
	}
	return a
}

func TestCreateDraftValidatesName(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		for _, name := range []string{"", "   ", strings.Repeat("x", 256)} {
			_, err := s.CreateDraft(context.Background(), draftActor, name)
			if models.KindOf(err) != models.Invalid || models.FieldOf(err) != "name" {
				t.Errorf("CreateDraft(%q) = %v, want an Invalid error on name", name, err)
			}
		}
	})
}

func TestDraftEditsRecordGenerationsAndLeaveLiveDataAlone(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		agg := seedAggregate(t, s, "cn1", "aggA")
		rev0, err := s.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.CreateDraft(ctx, draftActor, "forbid aggA")
		if err != nil {
			t.Fatalf("CreateDraft: %v", err)
		}
		if d.BaseRevision != rev0 || d.Author != "alice" || d.Version != 0 {
			t.Fatalf("new draft = %+v, want base revision %d, author alice, version 0", d, rev0)
		}
		on := true
		changes := []scheduling.Change{
			{Op: scheduling.OpSetMetadata, Aggregate: "aggA", Key: "reservation:x", Value: "1"},
			{Op: scheduling.OpSetSettings, Settings: &scheduling.SettingsOverride{LimitTenantsToPlacementAggregate: &on}},
			{Op: scheduling.OpCreateAggregate, Aggregate: "aggNew"},
			{Op: scheduling.OpAddTenant, Aggregate: "aggNew", Project: "acme"},
		}
		d2, err := s.SetDraftChanges(ctx, draftActor, d.ID, d.Version, changes)
		if err != nil {
			t.Fatalf("SetDraftChanges: %v", err)
		}
		if d2.Version != 1 {
			t.Errorf("version after one edit = %d, want 1", d2.Version)
		}
		if got := d2.Generations["aggregate:"+agg.UUID]; got != agg.Generation {
			t.Errorf("recorded generation of aggA = %d, want %d", got, agg.Generation)
		}
		if _, ok := d2.Generations["settings"]; !ok {
			t.Errorf("settings generation not recorded: %v", d2.Generations)
		}
		if got, ok := d2.Generations["aggregate-new:aggNew"]; !ok || got != -1 {
			t.Errorf("new aggregate not recorded as absent: %v", d2.Generations)
		}

		// A stale version is refused, whoever sends it.
		if _, err := s.SetDraftChanges(ctx, draftActor, d.ID, 0, nil); models.KindOf(err) != models.Conflict {
			t.Errorf("edit at stale version = %v, want a conflict", err)
		}
		// Unknown aggregates and taken names are refused before anything is saved.
		if _, err := s.SetDraftChanges(ctx, draftActor, d.ID, 1, []scheduling.Change{{Op: scheduling.OpUnsetMetadata, Aggregate: "nope", Key: "k"}}); models.KindOf(err) != models.NotFound {
			t.Errorf("touching an unknown aggregate = %v, want not found", err)
		}
		if _, err := s.SetDraftChanges(ctx, draftActor, d.ID, 1, []scheduling.Change{{Op: scheduling.OpCreateAggregate, Aggregate: "aggA"}}); models.KindOf(err) != models.Conflict {
			t.Errorf("creating an aggregate under a taken name = %v, want a conflict", err)
		}
		got, err := s.GetDraft(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != 1 || !strings.Contains(got.Changes, "reservation:x") {
			t.Errorf("stored draft = version %d changes %s; refused edits must not be saved", got.Version, got.Changes)
		}

		rev1, _ := s.Revision(ctx)
		if rev1 != rev0 {
			t.Errorf("revision moved from %d to %d on draft edits; drafts are not live data", rev0, rev1)
		}
		live, err := s.GetAggregate(ctx, agg.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if live.Generation != agg.Generation || len(live.Metadata) != 1 {
			t.Errorf("live aggregate changed by a draft edit: %+v", live)
		}
	})
}

func TestDraftConflictsNameChangedObjects(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		agg := seedAggregate(t, s, "cn1", "aggA")
		d, err := s.CreateDraft(ctx, draftActor, "d")
		if err != nil {
			t.Fatal(err)
		}
		d, err = s.SetDraftChanges(ctx, draftActor, d.ID, d.Version, []scheduling.Change{
			{Op: scheduling.OpSetMetadata, Aggregate: agg.UUID, Key: "k", Value: "v"},
			{Op: scheduling.OpCreateAggregate, Aggregate: "aggNew"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if c, err := s.DraftConflicts(ctx, d); err != nil || len(c) != 0 {
			t.Fatalf("fresh draft conflicts = %v, %v; want none", c, err)
		}
		if _, err := s.UpdateAggregate(ctx, draftActor, agg.UUID, agg.Generation, func(a *models.Aggregate) error {
			a.Metadata["ssd"] = "false"
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateAggregate(ctx, draftActor, &models.Aggregate{Name: "aggNew"}); err != nil {
			t.Fatal(err)
		}
		c, err := s.DraftConflicts(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"aggregate aggA was changed", "an aggregate named aggNew was created"}
		if len(c) != len(want) {
			t.Fatalf("conflicts = %q, want %d", c, len(want))
		}
		for _, w := range want {
			found := false
			for _, x := range c {
				found = found || strings.Contains(x, w)
			}
			if !found {
				t.Errorf("conflicts %q do not mention %q", c, w)
			}
		}
	})
}

func TestDiscardDraftChangesNothingLive(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		agg := seedAggregate(t, s, "cn1", "aggA")
		d, err := s.CreateDraft(ctx, draftActor, "d")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetDraftChanges(ctx, draftActor, d.ID, d.Version, []scheduling.Change{{Op: scheduling.OpUnsetMetadata, Aggregate: "aggA", Key: "ssd"}}); err != nil {
			t.Fatal(err)
		}
		rev0, _ := s.Revision(ctx)
		if err := s.DiscardDraft(ctx, draftActor, d.ID); err != nil {
			t.Fatalf("DiscardDraft: %v", err)
		}
		if _, err := s.GetDraft(ctx, d.ID); models.KindOf(err) != models.NotFound {
			t.Errorf("GetDraft after discard = %v, want not found", err)
		}
		if err := s.DiscardDraft(ctx, draftActor, d.ID); models.KindOf(err) != models.NotFound {
			t.Errorf("second discard = %v, want not found", err)
		}
		if rev1, _ := s.Revision(ctx); rev1 != rev0 {
			t.Errorf("discard moved the revision %d → %d", rev0, rev1)
		}
		live, err := s.GetAggregate(ctx, "aggA")
		if err != nil {
			t.Fatal(err)
		}
		if live.Generation != agg.Generation || live.Metadata["ssd"] != "true" {
			t.Errorf("aggregate changed by discard: %+v", live)
		}
		list, err := s.ListDrafts(ctx)
		if err != nil || len(list) != 0 {
			t.Errorf("ListDrafts after discard = %v, %v; want empty", list, err)
		}
	})
}

// seedTwoHosts creates hosts cn1 and cn2 and aggregates aggA {cn1} and
// aggB {cn2}.
func seedTwoHosts(t *testing.T, s *store.Store) (a, b *models.Aggregate) {
	t.Helper()
	a = seedAggregate(t, s, "cn1", "aggA")
	b = seedAggregate(t, s, "cn2", "aggB")
	return a, b
}

func draftWith(t *testing.T, s *store.Store, changes ...scheduling.Change) *store.Draft {
	t.Helper()
	ctx := context.Background()
	d, err := s.CreateDraft(ctx, draftActor, "d")
	if err != nil {
		t.Fatal(err)
	}
	d, err = s.SetDraftChanges(ctx, draftActor, d.ID, d.Version, changes)
	if err != nil {
		t.Fatalf("SetDraftChanges: %v", err)
	}
	return d
}

func TestApplyDraftWritesEveryChangeAtOnce(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedTwoHosts(t, s)
		on := true
		d := draftWith(t, s,
			scheduling.Change{Op: scheduling.OpAddReservation, Aggregate: "aggA", Reservation: "freepool"},
			scheduling.Change{Op: scheduling.OpAddMember, Aggregate: "aggA", Provider: "cn2"},
			scheduling.Change{Op: scheduling.OpCreateAggregate, Aggregate: "tenant-acme"},
			scheduling.Change{Op: scheduling.OpAddTenant, Aggregate: "tenant-acme", Project: "acme"},
			scheduling.Change{Op: scheduling.OpAddMember, Aggregate: "tenant-acme", Provider: "cn1"},
			scheduling.Change{Op: scheduling.OpUnsetMetadata, Aggregate: "aggB", Key: "ssd"},
			scheduling.Change{Op: scheduling.OpSetSettings, Settings: &scheduling.SettingsOverride{LimitTenantsToPlacementAggregate: &on}},
		)
		rev0, _ := s.Revision(ctx)
		if _, err := s.ApplyDraft(ctx, draftActor, d.ID, d.Version); err != nil {
			t.Fatalf("ApplyDraft: %v", err)
		}
		w, rev1, err := s.LoadWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rev1 != rev0+1 {
			t.Errorf("revision %d → %d; applying is one write", rev0, rev1)
		}
		names := map[string]string{}
		for _, p := range w.Providers {
			names[p.UUID] = p.Name
		}
		got := map[string]string{}
		for _, a := range w.Aggregates {
			var ms []string
			for _, m := range a.Members {
				ms = append(ms, names[m])
			}
			sort.Strings(ms)
			got[a.Name] = fmt.Sprint(a.Metadata, ms)
		}
		want := map[string]string{
			"aggA":        "map[reservation:freepool:true ssd:true] [cn1 cn2]",
			"aggB":        "map[] [cn2]",
			"tenant-acme": "map[filter_tenant_id:acme] [cn1]",
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("aggregates after apply:\n got %v\nwant %v", got, want)
		}
		if !w.Settings.LimitTenantsToPlacementAggregate {
			t.Errorf("settings change not applied")
		}
		if _, err := s.GetDraft(ctx, d.ID); models.KindOf(err) != models.NotFound {
			t.Errorf("draft still there after apply: %v", err)
		}
		events, _, err := s.ListAudit(ctx, store.AuditQuery{ObjectType: "draft"})
		if err != nil {
			t.Fatal(err)
		}
		if len(events) == 0 || events[0].Action != "apply" {
			t.Errorf("no audit event for the apply: %+v", events)
		}
	})
}

func TestApplyDraftConflictsWhenLiveDataMoved(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, _ := seedTwoHosts(t, s)
		d := draftWith(t, s,
			scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "aggB", Key: "reservation:x", Value: "x"},
			scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "aggA", Key: "reservation:x", Value: "x"},
		)
		// Someone edits aggA after the draft was made.
		if _, err := s.UpdateAggregate(ctx, draftActor, a.UUID, a.Generation, func(x *models.Aggregate) error {
			x.Metadata["ssd"] = "false"
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		rev0, _ := s.Revision(ctx)
		_, err := s.ApplyDraft(ctx, draftActor, d.ID, d.Version)
		if models.KindOf(err) != models.Conflict || !strings.Contains(err.Error(), "aggregate aggA was changed") {
			t.Fatalf("ApplyDraft after a concurrent edit = %v, want a conflict naming aggA", err)
		}
		if rev1, _ := s.Revision(ctx); rev1 != rev0 {
			t.Errorf("a refused apply moved the revision %d → %d", rev0, rev1)
		}
		b, err := s.GetAggregate(ctx, "aggB")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := b.Metadata["reservation:x"]; ok {
			t.Errorf("aggB changed by a refused apply: %v", b.Metadata)
		}
		if _, err := s.GetDraft(ctx, d.ID); err != nil {
			t.Errorf("the draft must survive a refused apply: %v", err)
		}
		// A stale review is refused too.
		if _, err := s.ApplyDraft(ctx, draftActor, d.ID, d.Version-1); models.KindOf(err) != models.Conflict {
			t.Errorf("apply at a stale version = %v, want a conflict", err)
		}
	})
}

func TestApplyDraftIsAllOrNothing(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedTwoHosts(t, s)
		// The second change cannot be written (aggB still holds cn2), so
		// the first must not be either.
		d := draftWith(t, s,
			scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "aggA", Key: "k", Value: "v"},
			scheduling.Change{Op: scheduling.OpDeleteAggregate, Aggregate: "aggB"},
		)
		_, err := s.ApplyDraft(ctx, draftActor, d.ID, d.Version)
		if models.KindOf(err) != models.Conflict || !strings.Contains(err.Error(), "cn2") {
			t.Fatalf("ApplyDraft = %v, want a conflict naming host cn2", err)
		}
		a, err := s.GetAggregate(ctx, "aggA")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := a.Metadata["k"]; ok {
			t.Errorf("aggA changed although the apply failed")
		}
		// Removing the host in the draft first makes the delete go through.
		d, err = s.SetDraftChanges(ctx, draftActor, d.ID, d.Version, []scheduling.Change{
			{Op: scheduling.OpRemoveMember, Aggregate: "aggB", Provider: "cn2"},
			{Op: scheduling.OpDeleteAggregate, Aggregate: "aggB"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ApplyDraft(ctx, draftActor, d.ID, d.Version); err != nil {
			t.Fatalf("ApplyDraft: %v", err)
		}
		if _, err := s.GetAggregate(ctx, "aggB"); models.KindOf(err) != models.NotFound {
			t.Errorf("aggB after the delete = %v, want not found", err)
		}
	})
}

// TestStaleDraftCanBeRebased: a draft gone stale recovers when its
// conflicting change is removed, and a rebase checks each change against
// live data, reports the stale and the broken ones, drops what the person
// drops and leaves a draft that applies.
func TestStaleDraftCanBeRebased(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, b := seedTwoHosts(t, s)
		d := draftWith(t, s,
			scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "aggA", Key: "ssd", Value: "true"},
			scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "aggB", Key: "gpu", Value: "1"},
			scheduling.Change{Op: scheduling.OpRemoveMember, Aggregate: "aggB", Provider: "cn2"},
		)
		// Someone edits aggB live: the draft is stale, and its last change
		// no longer applies (cn2 left aggB).
		if _, err := s.UpdateAggregate(ctx, draftActor, b.UUID, store.AnyGeneration, func(x *models.Aggregate) error {
			x.Members = nil
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ApplyDraft(ctx, draftActor, d.ID, d.Version); models.KindOf(err) != models.Conflict {
			t.Fatalf("stale draft applied: %v", err)
		}
		checks, err := s.CheckDraft(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if len(checks) != 3 || checks[0].Stale || checks[0].Problem != "" || !checks[1].Stale || checks[1].Problem != "" || !checks[2].Stale || checks[2].Problem == "" {
			t.Fatalf("checks = %+v", checks)
		}
		if _, err := s.RebaseDraft(ctx, draftActor, d.ID, d.Version, []bool{true, true, true}); models.KindOf(err) != models.Conflict || models.FieldOf(err) != "changes[2]" {
			t.Fatalf("rebase keeping a broken change: %v", err)
		}
		d, err = s.RebaseDraft(ctx, draftActor, d.ID, d.Version, []bool{true, true, false})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ApplyDraft(ctx, draftActor, d.ID, d.Version); err != nil {
			t.Fatalf("rebased draft: %v", err)
		}
		if got, _ := s.GetAggregate(ctx, b.UUID); got.Metadata["gpu"] != "1" {
			t.Errorf("aggB after apply: %v", got.Metadata)
		}

		// Removing the change that conflicts is enough on its own.
		d = draftWith(t, s,
			scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "aggA", Key: "x", Value: "1"},
			scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: "aggB", Key: "y", Value: "1"},
		)
		if _, err := s.UpdateAggregate(ctx, draftActor, a.UUID, store.AnyGeneration, func(x *models.Aggregate) error {
			x.Metadata["z"] = "1"
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		d, err = s.SetDraftChanges(ctx, draftActor, d.ID, d.Version, []scheduling.Change{{Op: scheduling.OpSetMetadata, Aggregate: "aggB", Key: "y", Value: "1"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ApplyDraft(ctx, draftActor, d.ID, d.Version); err != nil {
			t.Errorf("draft without its conflicting change: %v", err)
		}
	})
}
