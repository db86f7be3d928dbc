package cloud_test

import (
	"context"
	"testing"

	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/store/storetest"
)

// TestUnchangedSyncStoresNoRevision syncs the same cloud twice: the second
// sync is recorded but stores no new revision; a change in the cloud then
// moves it again.
func TestUnchangedSyncStoresNoRevision(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "same-")
	st := storetest.Open(t)
	ctx := context.Background()
	cl := connect(t, c, cloudtest.Token)
	first, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)
	second, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)
	rev, err := st.Revision(ctx)
	must(t, err)
	if len(second.Changes) != 0 || second.Record.Revision != first.Record.Revision || rev != first.Record.Revision {
		t.Errorf("an unchanged sync moved the revision: %d → %d (store at %d), changes %v", first.Record.Revision, second.Record.Revision, rev, second.Changes)
	}
	recs, err := st.RecentSyncs(ctx, 5)
	must(t, err)
	if len(recs) != 2 {
		t.Errorf("%d sync records, want both syncs recorded", len(recs))
	}
	f.traits(t, f.cn1, "CUSTOM_SAME_CHANGED")
	third, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)
	if len(third.Changes) == 0 || third.Record.Revision <= first.Record.Revision {
		t.Errorf("a changed sync: revision %d after %d, changes %v", third.Record.Revision, first.Record.Revision, third.Changes)
	}
}
