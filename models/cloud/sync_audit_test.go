package cloud_test

import (
	"context"
	"encoding/json"
	"testing"

	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/store"
	"corral/models/store/storetest"
)

// TestSyncAuditCountsConsumers syncs a cloud with consumers twice: each
// sync's audit event counts the consumers before and after as they are,
// in its counts as in its consumers.
func TestSyncAuditCountsConsumers(t *testing.T) {
	c := cloudtest.Shared(t)
	build(t, c, "audit-")
	st := storetest.Open(t)
	ctx := context.Background()
	cl := connect(t, c, cloudtest.Token)
	var want int
	for i, n := range []int{1, 2} {
		res, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
		must(t, err)
		w, err := st.ExportWorld(ctx)
		must(t, err)
		if len(w.Consumers) == 0 {
			t.Fatal("the cloud has no consumers")
		}
		ev, _, err := st.ListAudit(ctx, store.AuditQuery{ObjectType: "world", Limit: 1})
		must(t, err)
		if len(ev) != 1 || ev[0].Action != "sync" {
			t.Fatalf("sync %d: %d audit events", n, len(ev))
		}
		var before map[string]int
		var after struct {
			Counts    map[string]int `json:"counts"`
			Consumers int            `json:"consumers"`
		}
		must(t, json.Unmarshal([]byte(ev[0].Before), &before))
		must(t, json.Unmarshal([]byte(ev[0].After), &after))
		if after.Consumers != len(w.Consumers) || after.Counts["consumers"] != len(w.Consumers) {
			t.Errorf("sync %d: audit after says consumers %d, counts %d; stored %d", n, after.Consumers, after.Counts["consumers"], len(w.Consumers))
		}
		if before["consumers"] != want {
			t.Errorf("sync %d: audit before says consumers %d, want %d", n, before["consumers"], want)
		}
		if i == 0 && res.Counts["providers"] != after.Counts["providers"] {
			t.Errorf("sync %d: providers %d in the result, %d in the audit", n, res.Counts["providers"], after.Counts["providers"])
		}
		want = len(w.Consumers)
	}
}
