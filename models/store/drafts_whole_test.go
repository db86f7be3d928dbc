package store_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/models/store/storetest"
)

// worldText is the export of the store's world, for comparing states.
func worldText(t *testing.T, s *store.Store) string {
	t.Helper()
	w, err := s.ExportWorld(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := models.EncodeWorld(&buf, w); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// A draft carrying flavor extra specs, server groups and provider traits
// and inventories applies in one step; the audit's apply event then
// yields a revert draft which, applied, restores every object.
func TestApplyWholeDraftThenRevert(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := s.LoadDemo(ctx); err != nil {
			t.Fatal(err)
		}
		before := worldText(t, s)
		d, err := s.CreateDraft(ctx, draftActor, "gpu rollout")
		if err != nil {
			t.Fatal(err)
		}
		changes := []scheduling.Change{
			{Op: scheduling.OpSetMetadata, Aggregate: "gpu", Key: "reservation:gpu", Value: "true"},
			{Op: scheduling.OpSetExtraSpec, Flavor: "g1.gpu", Key: "reservation:gpu", Value: "true"},
			{Op: scheduling.OpCreateServerGroup, ServerGroup: "gpu-batch", Project: "globex", Policy: models.PolicyAntiAffinity,
				Rules: map[string]int{models.RuleMaxServerPerHost: 2}},
			{Op: scheduling.OpRemoveGroupMember, ServerGroup: "batch", Server: "batch-3"},
			{Op: scheduling.OpAddGroupMember, ServerGroup: "gpu-batch", Server: "batch-3"},
			{Op: scheduling.OpDeleteServerGroup, ServerGroup: "spread"},
			{Op: scheduling.OpAddTrait, Provider: "cn7", Trait: "CUSTOM_GPU"},
			{Op: scheduling.OpSetInventory, Provider: "cn7", ResourceClass: "VGPU", Inventory: &models.Inventory{Total: 4, AllocationRatio: 1}},
		}
		d, err = s.SetDraftChanges(ctx, draftActor, d.ID, d.Version, changes)
		if err != nil {
			t.Fatalf("SetDraftChanges: %v", err)
		}
		for _, key := range []string{"flavor:" + store.DemoUUID("flavor", "g1.gpu"), "server_group:" + store.DemoUUID("server_group", "batch"),
			"server_group:" + store.DemoUUID("server_group", "spread"), "server_group-new:globex/gpu-batch", "provider:" + store.DemoUUID("provider", "cn7")} {
			if _, ok := d.Generations[key]; !ok {
				t.Errorf("draft records no generation for %s: %v", key, d.Generations)
			}
		}
		if _, err := s.ApplyDraft(ctx, draftActor, d.ID, d.Version); err != nil {
			t.Fatalf("ApplyDraft: %v", err)
		}
		w, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range w.Flavors {
			if f.Name == "g1.gpu" && f.ExtraSpecs["reservation:gpu"] != "true" {
				t.Errorf("g1.gpu extra specs %v", f.ExtraSpecs)
			}
		}
		groups := map[string]models.ServerGroup{}
		for _, g := range w.ServerGroups {
			groups[g.Name] = g
		}
		if _, ok := groups["spread"]; ok {
			t.Error("server group spread still exists")
		}
		if g := groups["gpu-batch"]; !slices.Equal(g.Members, []string{store.DemoUUID("server", "batch-3")}) || g.Rules[models.RuleMaxServerPerHost] != 2 {
			t.Errorf("gpu-batch = %+v", g)
		}
		if len(groups["batch"].Members) != 2 {
			t.Errorf("batch members %v", groups["batch"].Members)
		}
		for _, p := range w.Providers {
			if p.Name == "cn7" && (!slices.Contains(p.Traits, "CUSTOM_GPU") || p.Inventories["VGPU"].Total != 4) {
				t.Errorf("cn7 = %+v", p)
			}
		}

		events, _, err := s.ListAudit(ctx, store.AuditQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var applyID int64
		for _, e := range events {
			if e.Action == "apply" && e.ObjectType == "draft" && e.ObjectID == d.ID {
				applyID = e.ID
			}
		}
		if applyID == 0 {
			t.Fatal("no apply event in the audit")
		}
		rd, err := s.RevertDraftApply(ctx, draftActor, applyID)
		if err != nil {
			t.Fatalf("RevertDraftApply: %v", err)
		}
		if rd.Name != "Revert of gpu rollout" {
			t.Errorf("revert draft named %q", rd.Name)
		}
		if worldText(t, s) == before {
			t.Fatal("creating the revert draft already changed live data")
		}
		if _, err := s.ApplyDraft(ctx, draftActor, rd.ID, rd.Version); err != nil {
			t.Fatalf("apply the revert: %v", err)
		}
		if got := worldText(t, s); got != before {
			t.Errorf("after the revert the world differs from before the draft:\n%s\nwant\n%s", got, before)
		}
		if _, err := s.RevertDraftApply(ctx, draftActor, 999999); models.KindOf(err) != models.NotFound {
			t.Errorf("revert of a missing event: %v", err)
		}
	})
}
