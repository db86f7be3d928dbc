package store_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

// TestExportImportKeepsAllocations: a world exported with consumers and
// allocations, written as a document and read back, imports into a fresh
// database (and over the same one) to the same inventories, usages and
// allocations — consumers with their project, user, type and generation.
func TestExportImportKeepsAllocations(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if _, err := s.LoadDemo(ctx); err != nil {
			t.Fatal(err)
		}
		numa, ss1 := store.DemoUUID("provider", "numa1_1"), store.DemoUUID("provider", "ss1")
		cn2, numa2 := store.DemoUUID("provider", "cn2"), store.DemoUUID("provider", "numa2_1")
		c1, c2 := "aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002"
		writes := []store.ConsumerAllocations{
			{ConsumerUUID: c1, ProjectID: "acme", UserID: "alice", ConsumerType: "INSTANCE",
				Allocations: []models.Allocation{{ProviderUUID: numa, ResourceClass: "VCPU", Used: 2}, {ProviderUUID: ss1, ResourceClass: "DISK_GB", Used: 20}}},
			{ConsumerUUID: c2, ProjectID: "globex", UserID: "bob",
				Allocations: []models.Allocation{{ProviderUUID: numa2, ResourceClass: "MEMORY_MB", Used: 1024}, {ProviderUUID: cn2, ResourceClass: "DISK_GB", Used: 10}}},
		}
		if err := s.SetAllocations(ctx, admin, writes); err != nil {
			t.Fatal(err)
		}
		// c1 written again: generation 2.
		writes[0].Allocations[0].Used = 3
		if err := s.SetAllocations(ctx, admin, writes[:1]); err != nil {
			t.Fatal(err)
		}
		w, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Consumers) != 2 || w.Consumers[0].Generation != 2 || w.Consumers[1].Generation != 1 {
			t.Fatalf("exported consumers %+v", w.Consumers)
		}
		var doc bytes.Buffer
		if err = models.EncodeWorld(&doc, w); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(doc.String(), `"consumer_type": "INSTANCE"`) || !strings.Contains(doc.String(), `"consumer_generation": 2`) {
			t.Fatalf("the document lacks the consumers:\n%.2000s", doc.String())
		}
		back, err := models.DecodeWorld(bytes.NewReader(doc.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		other := storetest.Open(t)
		if strings.HasSuffix(t.Name(), "postgres") {
			other = storetest.OpenPostgres(t)
		}
		if err = other.ImportWorld(ctx, admin, back, true); err != nil {
			t.Fatal(err)
		}
		w2, err := other.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sameResources(t, w, w2)
		var doc2 bytes.Buffer
		if err = models.EncodeWorld(&doc2, w2); err != nil {
			t.Fatal(err)
		}
		if doc.String() != doc2.String() {
			t.Errorf("the second export differs from the first")
		}
		// Placement's reads agree too.
		got, err := other.ConsumerAllocationsOf(ctx, c1)
		if err != nil || got.ProjectID != "acme" || got.UserID != "alice" || got.ConsumerType != "INSTANCE" || got.Generation != 2 || len(got.Allocations) != 2 {
			t.Errorf("consumer %s after import: %+v, %v", c1, got, err)
		}
		u1, n1, _ := s.ProjectUsages(ctx, "acme", "")
		u2, n2, _ := other.ProjectUsages(ctx, "acme", "")
		if !reflect.DeepEqual(u1, u2) || !reflect.DeepEqual(n1, n2) {
			t.Errorf("project usages %v %v, after import %v %v", u1, n1, u2, n2)
		}
		// Over the same database, replacing: nothing moves.
		if err = s.ImportWorld(ctx, admin, back, true); err != nil {
			t.Fatal(err)
		}
		w3, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sameResources(t, w, w3)
		// A merge of a world without allocations keeps them; a replace
		// with a world whose provider is gone drops that provider's.
		back.Consumers = nil
		if err = other.ImportWorld(ctx, admin, back, false); err != nil {
			t.Fatal(err)
		}
		if w4, _ := other.ExportWorld(ctx); len(w4.Consumers) != 2 {
			t.Errorf("a merge without allocations left %d consumers", len(w4.Consumers))
		}
	})
}

// sameResources compares inventories, usages and consumers.
func sameResources(t *testing.T, a, b *models.World) {
	t.Helper()
	byUUID := map[string]models.Provider{}
	for _, p := range b.Providers {
		byUUID[p.UUID] = p
	}
	if len(a.Providers) != len(b.Providers) {
		t.Errorf("%d providers, then %d", len(a.Providers), len(b.Providers))
	}
	for _, p := range a.Providers {
		q := byUUID[p.UUID]
		if !reflect.DeepEqual(p.Inventories, q.Inventories) || !reflect.DeepEqual(p.Usages, q.Usages) {
			t.Errorf("%s: inventories %v usages %v, then %v %v", p.Name, p.Inventories, p.Usages, q.Inventories, q.Usages)
		}
	}
	if !reflect.DeepEqual(a.Consumers, b.Consumers) {
		t.Errorf("consumers %+v, then %+v", a.Consumers, b.Consumers)
	}
}
