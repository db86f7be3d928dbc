package world_test

import (
	"context"
	"path/filepath"
	"testing"

	"corral/handlers/world"
	"corral/models/cloudgen"
	"corral/models/store"
)

// BenchmarkPlanWorldImport measures the preview of a merge on a tenth of
// the benchmark cloud (10,000 providers in trees, 500 aggregates): the
// check runs the import on a scratch copy of the current world, so it
// costs about two imports.
func BenchmarkPlanWorldImport(b *testing.B) {
	ctx := context.Background()
	cfg := cloudgen.Default()
	cfg.Hosts, cfg.SharingProviders, cfg.Aggregates = cfg.Hosts/10, cfg.SharingProviders/10, cfg.Aggregates/10
	cfg.TenantAggregates, cfg.ReservationAggregates = cfg.TenantAggregates/10, cfg.ReservationAggregates/10
	cfg.Servers, cfg.ServerGroups, cfg.Projects = cfg.Servers/10, cfg.ServerGroups/10, cfg.Projects/10
	w := cloudgen.Generate(cfg)
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.ImportWorld(ctx, store.Actor{Name: "bench", Via: "cli"}, w, true); err != nil {
		b.Fatal(err)
	}
	file, err := st.ExportWorld(ctx)
	if err != nil {
		b.Fatal(err)
	}
	file.Aggregates[0].Metadata["colour"] = "blue"
	b.ResetTimer()
	for b.Loop() {
		plan, err := world.PlanWorldImport(ctx, st, file, false, true)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(plan.Kinds[1].Changed); n != 1 {
			b.Fatalf("aggregates changed: %d, want 1", n)
		}
	}
}
