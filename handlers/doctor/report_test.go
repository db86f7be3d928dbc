package doctor_test

import (
	"context"
	"testing"

	hdoctor "corral/handlers/doctor"
	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

// syncRecord is a successful sync record with these disagreements.
func syncRecord(dis ...models.Disagreement) store.SyncRecord {
	return store.SyncRecord{Connection: "test cloud", Disagreements: dis}
}

// TestReportReadsTheLastSyncsDrift: a host the last sync found in Nova's
// aggregate and not in Placement's is a membership_drift finding.
func TestReportReadsTheLastSyncsDrift(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	w := &models.World{Settings: models.DefaultSettings(),
		Providers:  []models.Provider{{UUID: "11111111-0000-4000-8000-000000000001", Name: "cn1"}},
		Aggregates: []models.Aggregate{{UUID: "22222222-0000-4000-8000-000000000001", Name: "agg", Metadata: map[string]string{}}},
	}
	a := store.Actor{Name: "sync", Via: "cli"}
	if err := st.ReplaceLiveState(ctx, a, &store.LiveState{World: w, Record: syncRecord()}); err != nil {
		t.Fatal(err)
	}
	r, err := hdoctor.Build(ctx, st)
	if err != nil || len(r.Findings) != 0 {
		t.Fatalf("no drift: %+v %v", r, err)
	}
	dis := models.Disagreement{Aggregate: "agg", AggregateUUID: "22222222-0000-4000-8000-000000000001", Host: "cn1", InNova: true, Message: "cn1 is in Nova's agg only"}
	if err := st.ReplaceLiveState(ctx, a, &store.LiveState{World: w, Record: syncRecord(dis)}); err != nil {
		t.Fatal(err)
	}
	r, err = hdoctor.Build(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 || r.Findings[0].Code != "membership_drift" || r.Findings[0].Objects[1].UUID != w.Providers[0].UUID || !r.Failing() {
		t.Fatalf("with drift: %+v", r)
	}
}

// TestReportReadsPlacementsConsumers: the live snapshot has no consumers,
// so the report reads them from the store; one whose server is unknown is
// an orphaned allocation.
func TestReportReadsPlacementsConsumers(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	host := "11111111-0000-4000-8000-000000000001"
	alloc := func(consumer string) []models.Allocation {
		return []models.Allocation{{ConsumerUUID: consumer, ProviderUUID: host, ResourceClass: "VCPU", Used: 1}}
	}
	w := &models.World{Settings: models.DefaultSettings(),
		Providers: []models.Provider{{UUID: host, Name: "cn1",
			Inventories: map[string]models.Inventory{"VCPU": {Total: 8, AllocationRatio: 1}}}},
		Servers: []models.Server{{UUID: "33333333-0000-4000-8000-000000000001", Name: "vm", ProjectID: "p1", Host: "cn1"}},
		Consumers: []models.Consumer{
			{UUID: "33333333-0000-4000-8000-000000000001", ProjectID: "p1", UserID: "u", Allocations: alloc("33333333-0000-4000-8000-000000000001")},
			{UUID: "44444444-0000-4000-8000-000000000001", ProjectID: "p2", UserID: "u", Allocations: alloc("44444444-0000-4000-8000-000000000001")},
		},
	}
	if err := st.ImportWorld(ctx, store.Actor{Name: "t", Via: "cli", Role: models.RoleAdmin}, w, true); err != nil {
		t.Fatal(err)
	}
	r, err := hdoctor.Build(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 || r.Findings[0].Code != "orphaned_allocation" || r.Findings[0].Objects[0].UUID != "44444444-0000-4000-8000-000000000001" {
		t.Fatalf("findings %+v", r.Findings)
	}
}
