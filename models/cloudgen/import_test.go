package cloudgen_test

import (
	"context"
	"slices"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
	"corral/models/store"
	"corral/models/store/storetest"
)

// The generated cloud is only useful if the store takes it as it is: this
// imports cloudgen.Small() into a real store (SQLite, and PostgreSQL when
// configured) and reads everything back.
func TestSmallImportsIntoStore(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		w := cloudgen.Generate(cloudgen.Small())
		if err := s.ImportWorld(ctx, store.Actor{Name: "test", Via: "cli"}, w, true); err != nil {
			t.Fatalf("import: %v", err)
		}
		got, err := s.ExportWorld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Providers) != len(w.Providers) || len(got.Aggregates) != len(w.Aggregates) || len(got.Flavors) != len(w.Flavors) ||
			len(got.Servers) != len(w.Servers) || len(got.ServerGroups) != len(w.ServerGroups) {
			t.Fatalf("exported %d providers, %d aggregates, %d flavors, %d servers, %d groups; imported %d, %d, %d, %d, %d",
				len(got.Providers), len(got.Aggregates), len(got.Flavors), len(got.Servers), len(got.ServerGroups),
				len(w.Providers), len(w.Aggregates), len(w.Flavors), len(w.Servers), len(w.ServerGroups))
		}
		// Memberships and group members arrive whole.
		wantAgg := map[string][]string{}
		for _, a := range w.Aggregates {
			wantAgg[a.UUID] = sorted(a.Members)
		}
		for _, a := range got.Aggregates {
			if !slices.Equal(sorted(a.Members), wantAgg[a.UUID]) {
				t.Errorf("aggregate %s: %d members back, %d imported", a.Name, len(a.Members), len(wantAgg[a.UUID]))
			}
		}
		wantGroup := map[string][]string{}
		for _, g := range w.ServerGroups {
			wantGroup[g.UUID] = sorted(g.Members)
		}
		for _, g := range got.ServerGroups {
			if !slices.Equal(sorted(g.Members), wantGroup[g.UUID]) {
				t.Errorf("server group %s: members %v back, %v imported", g.Name, g.Members, wantGroup[g.UUID])
			}
		}
		// The well-known objects benchmarks rely on are there.
		if a, err := s.GetAggregate(ctx, cloudgen.FreePool); err != nil || len(a.Members) == 0 {
			t.Errorf("free pool: %+v, %v", a, err)
		}
		if f, err := s.GetFlavor(ctx, cloudgen.FlavorWindows); err != nil || f.ExtraSpecs["trait:"+cloudgen.WindowsTrait] != "required" {
			t.Errorf("windows flavor: %+v, %v", f, err)
		}
		sharing, total, err := s.ListProviders(ctx, store.ProviderQuery{Kind: store.ProviderKindSharing})
		if err != nil || total != cloudgen.Small().SharingProviders || !sharing[0].HasTrait(models.TraitSharesViaAggregate) {
			t.Errorf("sharing providers: %d, %v", total, err)
		}
	})
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
