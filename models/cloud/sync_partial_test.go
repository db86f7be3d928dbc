package cloud_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/store/storetest"
)

// TestSyncLeavesOutAProviderDeletedWhileRead deletes a provider after
// Placement listed it and before corral read its details (Placement then
// answers 404): the sync stores the rest and names the provider in a
// warning.
func TestSyncLeavesOutAProviderDeletedWhileRead(t *testing.T) {
	c := cloudtest.Shared(t)
	f := &fixture{c: c, prefix: "gone-"}
	kept := f.provider(t, "gone-kept", "")
	gone := f.provider(t, "gone-deleted", "")
	st := storetest.Open(t)
	ctx := context.Background()
	cl := connect(t, c, cloudtest.Token)

	deleted := false
	res, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test", Parallel: 1, Progress: func(done, total int) {
		// One at a time, in Placement's order: the provider created last
		// is read last, so it is deleted before it is read.
		if !deleted {
			deleted = true
			must(t, c.Call("placement", "DELETE", "resource_providers/"+gone, nil, nil, 204))
		}
	}})
	if err != nil {
		t.Fatalf("a provider deleted mid-sync failed the whole sync: %v", err)
	}
	if !res.Stored {
		t.Fatal("the sync stored nothing")
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, "gone-deleted") && strings.Contains(w, gone) && strings.Contains(w, "404")
	}) {
		t.Errorf("warnings %q do not name the deleted provider %s", res.Warnings, gone)
	}
	w, err := st.ExportWorld(ctx)
	must(t, err)
	if !slices.ContainsFunc(w.Providers, func(p models.Provider) bool { return p.UUID == kept }) {
		t.Error("the provider that was read is not stored")
	}
	if slices.ContainsFunc(w.Providers, func(p models.Provider) bool { return p.UUID == gone }) {
		t.Error("the deleted provider is stored")
	}
}
