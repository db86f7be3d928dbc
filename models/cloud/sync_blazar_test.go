package cloud_test

import (
	"context"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/scheduling"
	"corral/models/store/storetest"
)

// TestSyncRestatesBlazarKeys syncs an aggregate Blazar made for a host
// reservation (reservation=<id>, blazar:owner=<project>): as on import,
// corral stores it with the reservation tag and the owner's tenant tag
// its request filters read, next to Blazar's own keys; a second sync
// finds nothing changed.
func TestSyncRestatesBlazarKeys(t *testing.T) {
	c := cloudtest.Shared(t)
	f := &fixture{c: c, prefix: "blz-"}
	_, agg := f.aggregate(t, "blz-r7", "", nil, map[string]string{"reservation": "r7", "blazar:owner": "p7"})
	st := storetest.Open(t)
	ctx := context.Background()
	cl := connect(t, c, cloudtest.Token)
	res, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)
	if len(res.Blazar) == 0 {
		t.Error("the sync reports no Blazar key restated")
	}
	w, err := st.ExportWorld(ctx)
	must(t, err)
	a := find(t, w.Aggregates, func(a models.Aggregate) bool { return a.UUID == agg }, "blz-r7")
	prefix := w.Settings.RequiredMemberPrefix
	if a.Metadata[prefix+"r7"] != scheduling.ReservationTagValue {
		t.Errorf("aggregate metadata %v has no reservation tag %s", a.Metadata, prefix+"r7")
	}
	if tags := scheduling.TenantTags(a.Metadata); len(tags) != 1 || tags[0] != "p7" {
		t.Errorf("aggregate metadata %v: tenant tags %v, want [p7]", a.Metadata, tags)
	}
	if a.Metadata["reservation"] != "r7" || a.Metadata["blazar:owner"] != "p7" {
		t.Errorf("Blazar's own keys are gone: %v", a.Metadata)
	}
	res, err = cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)
	if len(res.Changes) != 0 {
		t.Errorf("a second sync found changes: %v", res.Changes)
	}
}
