package cloud_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
)

// TestBulkReadsEqualPerProviderReads generates a cloud through Placement's
// API — nested trees two levels deep, sharing providers, providers without
// inventories, traits, Placement-only aggregates, consumers spread over
// roots, children and sharing providers, of two types — and reads it twice:
// with the bulk reads a large sync uses, and provider by provider. The two
// snapshots must be equal.
func TestBulkReadsEqualPerProviderReads(t *testing.T) {
	c := cloudtest.Shared(t)
	f := &fixture{c: c, prefix: "bulk-"}
	rnd := rand.New(rand.NewPCG(13, 5))
	aggs := []string{newUUID(), newUUID(), newUUID(), newUUID()}
	traits := []string{"CUSTOM_BULK_A", "CUSTOM_BULK_B", "HW_CPU_X86_AVX2", "STORAGE_DISK_SSD"}
	var roots, children, sharing []string
	must(t, c.Call("placement", "PUT", "resource_classes/CUSTOM_BULK_VF", nil, nil, 201))
	for i := 0; i < 12; i++ {
		root := f.provider(t, fmt.Sprintf("bulk-cn%02d", i), "")
		roots = append(roots, root)
		if i%3 != 2 {
			f.inventories(t, root, map[string]any{"VCPU": map[string]any{"total": 8 + i, "reserved": i % 2, "max_unit": 8},
				"MEMORY_MB": map[string]any{"total": 4096 * (i + 1), "allocation_ratio": 1.5, "step_size": 256}})
		} // every third root has no inventories of its own
		for k := 0; k < i%3; k++ {
			child := f.provider(t, fmt.Sprintf("bulk-cn%02d-numa%d", i, k), root)
			children = append(children, child)
			if k == 0 {
				f.inventories(t, child, map[string]any{"PCPU": map[string]any{"total": 4, "min_unit": 1}})
				grand := f.provider(t, fmt.Sprintf("bulk-cn%02d-numa%d-pf", i, k), child)
				children = append(children, grand)
				f.inventories(t, grand, map[string]any{"CUSTOM_BULK_VF": map[string]any{"total": 16}})
			}
		}
		var mine []string
		for _, tr := range traits {
			if rnd.IntN(2) == 0 {
				mine = append(mine, tr)
			}
		}
		if len(mine) > 0 {
			f.traits(t, root, mine...)
		}
		if rnd.IntN(3) > 0 {
			f.placementAggregates(t, root, aggs[rnd.IntN(len(aggs))])
		}
	}
	for i := 0; i < 2; i++ {
		ss := f.provider(t, fmt.Sprintf("bulk-ss%d", i), "")
		sharing = append(sharing, ss)
		f.inventories(t, ss, map[string]any{"DISK_GB": map[string]any{"total": 1000}})
		f.traits(t, ss, models.TraitSharesViaAggregate, "STORAGE_DISK_SSD")
		f.placementAggregates(t, ss, aggs[i], aggs[i+2])
	}
	// A provider with aggregates but nothing else.
	f.placementAggregates(t, f.provider(t, "bulk-bare", ""), aggs[3])

	// Consumers: on a root, on a root and its child and grandchild, with
	// sharing disk; INSTANCE and MIGRATION; some moved twice.
	for i, root := range roots {
		if i%3 == 2 {
			continue
		}
		alloc := map[string]any{root: map[string]any{"resources": map[string]any{"VCPU": 1 + i%3, "MEMORY_MB": 512}}}
		if i%3 == 1 {
			alloc[sharing[i%2]] = map[string]any{"resources": map[string]any{"DISK_GB": 10}}
		}
		ctype := "INSTANCE"
		if i%4 == 3 {
			ctype = "MIGRATION"
		}
		consumer := newUUID()
		must(t, c.Call("placement", "PUT", "allocations/"+consumer, map[string]any{"allocations": alloc,
			"project_id": fmt.Sprintf("bulk-p%d", i%3), "user_id": "bulk-u", "consumer_generation": nil, "consumer_type": ctype}, nil, 204))
		if i%5 == 0 {
			alloc[root].(map[string]any)["resources"].(map[string]any)["VCPU"] = 2
			must(t, c.Call("placement", "PUT", "allocations/"+consumer, map[string]any{"allocations": alloc,
				"project_id": fmt.Sprintf("bulk-p%d", i%3), "user_id": "bulk-u", "consumer_generation": 1, "consumer_type": ctype}, nil, 204))
		}
	}
	for i, child := range children {
		var inv struct {
			Inventories map[string]any `json:"inventories"`
		}
		must(t, c.Call("placement", "GET", "resource_providers/"+child+"/inventories", nil, &inv, 200))
		if i%2 == 0 {
			continue
		}
		for rc := range inv.Inventories {
			must(t, c.Call("placement", "PUT", "allocations/"+newUUID(), map[string]any{
				"allocations": map[string]any{child: map[string]any{"resources": map[string]any{rc: 1}}},
				"project_id":  "bulk-p9", "user_id": "bulk-u", "consumer_generation": nil, "consumer_type": "INSTANCE"}, nil, 204))
		}
	}

	ctx := context.Background()
	cl := connect(t, c, cloudtest.Token)
	defer cloud.ReadTraitsInBulkFrom(1)()
	bulk, err := cl.Read(ctx, cloud.ReadOptions{})
	must(t, err)
	one, err := cl.Read(ctx, cloud.ReadOptions{PerProvider: true})
	must(t, err)
	if bulk.ReadStats.Requests >= one.ReadStats.Requests {
		t.Errorf("bulk read made %d requests, provider by provider %d", bulk.ReadStats.Requests, one.ReadStats.Requests)
	}
	b, _ := json.MarshalIndent(bulk.Placement, "", " ")
	o, _ := json.MarshalIndent(one.Placement, "", " ")
	if string(b) != string(o) {
		t.Fatalf("bulk and per-provider reads differ:\nbulk %s\nper provider %s", b, o)
	}
	// The generated cloud is in both, consumers with type and generation.
	var bulkConsumers, migrations, moved int
	for _, p := range bulk.Placement.Providers {
		for cu := range p.Allocations {
			pc := bulk.Placement.Consumers[cu]
			if pc == nil {
				t.Fatalf("consumer %s of %s not read", cu, p.Name)
			}
			if len(pc.ProjectID) > 5 && pc.ProjectID[:5] == "bulk-" {
				bulkConsumers++
				if pc.Type == "MIGRATION" {
					migrations++
				}
				if pc.Generation == 2 {
					moved++
				}
			}
		}
	}
	if bulkConsumers < 10 || migrations == 0 || moved == 0 {
		t.Errorf("generated consumers seen %d, migrations %d, moved %d", bulkConsumers, migrations, moved)
	}
	t.Logf("bulk read %d requests, provider by provider %d", bulk.ReadStats.Requests, one.ReadStats.Requests)

	// Read again on top of the first: nothing moved, nothing is re-read.
	again, err := cl.Read(ctx, cloud.ReadOptions{Previous: &bulk.Placement})
	must(t, err)
	if again.ReadStats.ProvidersRead != 0 || again.ReadStats.ConsumersRead != 0 || again.ReadStats.ConsumersReused != len(bulk.Placement.Consumers) {
		t.Errorf("unchanged read: %+v", again.ReadStats)
	}
	// A state kept without consumer generations (an older sync's): the
	// providers with allocations are read once more, then kept.
	old := cloud.PlacementState{Providers: map[string]*cloud.PlacementProvider{}, ResourceClasses: bulk.Placement.ResourceClasses}
	withAllocations := 0
	for u, p := range bulk.Placement.Providers {
		kept := *p
		kept.ConsumerGenerations = nil
		if len(p.Allocations) > 0 {
			withAllocations++
		}
		old.Providers[u] = &kept
	}
	upgraded, err := cl.Read(ctx, cloud.ReadOptions{Previous: &old})
	must(t, err)
	if upgraded.ReadStats.ProvidersRead != withAllocations || withAllocations == 0 {
		t.Errorf("read on an older state re-read %d providers, want the %d with allocations", upgraded.ReadStats.ProvidersRead, withAllocations)
	}
}
