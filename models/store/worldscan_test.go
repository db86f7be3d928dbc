package store_test

import (
	"encoding/json"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
	"corral/models/store"
	"corral/models/store/storetest"
)

// TestLoadWorldEqualsColumnScan: the world LoadWorld reads (on SQLite one
// text per row, memberships one row per aggregate, parts side by side) is
// exactly the world read column by column in one transaction, and a name
// holding the separator makes it fall back, not misread.
func TestLoadWorldEqualsColumnScan(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		w := cloudgen.Generate(cloudgen.Small())
		if err := s.ImportWorld(ctx, admin, w, true); err != nil {
			t.Fatal(err)
		}
		same := func(step string) {
			t.Helper()
			got, _, err := s.LoadWorld(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want, err := s.LoadWorldByColumns()
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Providers) == 0 || len(got.Servers) == 0 {
				t.Fatalf("%s: an empty world", step)
			}
			for i := range want.Providers {
				if !got.Providers[i].CreatedAt.Equal(want.Providers[i].CreatedAt) || got.Providers[i].CreatedAt.Location() != want.Providers[i].CreatedAt.Location() {
					t.Fatalf("%s: provider %d created %v, by columns %v", step, i, got.Providers[i].CreatedAt, want.Providers[i].CreatedAt)
				}
			}
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(want)
			if string(a) != string(b) {
				t.Fatalf("%s: LoadWorld differs from the column scan:\n%.2000s\n%.2000s", step, a, b)
			}
		}
		same("generated")
		if s.IsPostgres() {
			return
		}
		if p, v, err := s.JoinedScansRefuse(); err != nil || p || v {
			t.Fatalf("the joined scans refuse a plain world: %v %v %v", p, v, err)
		}
		p := models.Provider{UUID: "0f0e0d0c-0000-4000-8000-000000000001", Name: "odd\x1fname"}
		if err := s.CreateProvider(ctx, admin, &p); err != nil {
			t.Fatal(err)
		}
		if refused, _, err := s.JoinedScansRefuse(); err != nil || !refused {
			t.Fatalf("a name with the separator was read joined (refused %v, %v)", refused, err)
		}
		same("separator in a name")
	})
}
