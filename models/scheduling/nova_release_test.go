package scheduling

import (
	"fmt"
	"testing"

	"corral/models"
)

// AggregateMultiTenancyIsolation follows the release: Zed reads the exact
// filter_tenant_id key alone, nova 30 (Dalmatian) and later every
// filter_tenant_id… key. Cases from nova's
// test_aggregate_multitenancy_isolation_filters.py
// (test_aggregate_multi_tenancy_isolation_with_prefix at 30.0.0, and the
// same metadata read by 26.0.0's filter).
func TestMultiTenancyFollowsRelease(t *testing.T) {
	host := hfHost("host1", map[string]string{
		"filter_tenant_id":     "my_tenantid",
		"filter_tenant_id_gr1": "my_tenantid1, my_tenantid2",
		"filter_tenant_id_gr2": "my_tenantid5,my_tenantid4",
	})
	suffixedOnly := hfHost("host2", map[string]string{"filter_tenant_id_2": "other", "filter_tenant_id_x": "other"})
	for _, tc := range []struct {
		release, project string
		host             *HostState
		want             bool
	}{
		{"dalmatian", "my_tenantid", host, true},
		{"dalmatian", "my_tenantid2", host, true},
		{"dalmatian", "my_tenantid6", host, false},
		{"gazpacho", "my_tenantid2", host, true},
		{"", "my_tenantid2", host, true}, // empty is the latest
		{"zed", "my_tenantid", host, true},
		{"zed", "my_tenantid2", host, false}, // Zed does not read _gr1
		{"caracal", "my_tenantid2", host, false},
		{"zed", "my_tenantid6", host, false},
		{"zed", "p", suffixedOnly, true}, // only suffixed keys: unrestricted for Zed
		{"dalmatian", "p", suffixedOnly, false},
		{"zed", "other", suffixedOnly, true},
	} {
		r := hfRequest(nil)
		r.ProjectID = tc.project
		r.Settings.NovaRelease = tc.release
		v := AggregateMultiTenancyIsolation{}.Filter(tc.host, r)
		if v.Passed != tc.want {
			t.Errorf("%s, project %s on %s: passed %v (%s), want %v", tc.release, tc.project, tc.host.Name(), v.Passed, v.Reason, tc.want)
		}
	}
}

// A whole run follows the release set in the world's settings.
func TestRunFollowsReleaseForTenants(t *testing.T) {
	w := &models.World{Settings: models.DefaultSettings(),
		Providers:  []models.Provider{{UUID: "11111111-1111-1111-1111-111111111111", Name: "cn1"}, {UUID: "22222222-2222-2222-2222-222222222222", Name: "cn2"}},
		Aggregates: []models.Aggregate{{ID: 1, UUID: "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa", Name: "agg", Metadata: map[string]string{"filter_tenant_id_2": "other"}, Members: []string{"11111111-1111-1111-1111-111111111111"}}},
	}
	for release, want := range map[string]int{"zed": 2, "dalmatian": 1} {
		w.Settings.NovaRelease = release
		s, err := NewSnapshot(w)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := s.Run(&RequestSpec{ProjectID: "p"})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Summary.HostsPassed != want {
			t.Errorf("%s: %d hosts passed, want %d", release, tr.Summary.HostsPassed, want)
		}
	}
}

// The release is detected from the compute API's maximum microversion;
// releases that share one are all named.
func TestNovaReleasesAtMicroversion(t *testing.T) {
	for mv, want := range map[string][]string{
		"2.93": {"zed"}, "2.95": {"antelope", "bobcat"}, "2.96": {"caracal", "dalmatian"},
		"2.100": {"epoxy", "flamingo"}, "2.103": {"gazpacho"}, "2.104": {"gazpacho"}, "2.90": nil,
	} {
		var got []string
		for _, r := range models.NovaReleasesAt(mv) {
			got = append(got, r.Name)
		}
		if len(got) != len(want) || len(got) > 0 && (got[0] != want[0] || got[len(got)-1] != want[len(want)-1]) {
			t.Errorf("%s: %v, want %v", mv, got, want)
		}
	}
	for _, text := range []string{"Zed", "2022.2", "26", " zed "} {
		if r, ok := models.LookupNovaRelease(text); !ok || r.Name != "zed" {
			t.Errorf("%q read as %+v %v", text, r, ok)
		}
	}
	s, _ := models.LookupSetting("nova_release")
	if v, err := s.Parse("2024.2"); err != nil || v != "dalmatian" {
		t.Errorf("parse 2024.2: %v %v", v, err)
	}
	if _, err := s.Parse("yoga"); err == nil {
		t.Error("yoga was accepted")
	}
}

// The impact matrix follows the release as the preview does: hosts that
// differ only in which tenant key names a project, or restricted only by
// suffixed keys, are told apart (factored impact = whole runs).
func TestImpactFollowsReleaseForTenants(t *testing.T) {
	mk := func(release string) *Snapshot {
		w := &models.World{Settings: models.DefaultSettings(), Flavors: []models.Flavor{{ID: "f", Name: "f", ExtraSpecs: map[string]string{}}}}
		w.Settings.NovaRelease = release
		metas := []map[string]string{
			{"filter_tenant_id": "q"},
			{"filter_tenant_id_2": "q"},
			{"filter_tenant_id": "q", "filter_tenant_id_2": "p"},
			{"filter_tenant_id": "p", "filter_tenant_id_2": "q"},
			{"filter_tenant_id_x": "r"},
			nil,
		}
		for i, md := range metas {
			u := fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i+1)
			w.Providers = append(w.Providers, models.Provider{UUID: u, Name: fmt.Sprintf("h%d", i+1)})
			if md != nil {
				w.Aggregates = append(w.Aggregates, models.Aggregate{ID: int64(i + 1), UUID: fmt.Sprintf("aaaaaaaa-0000-0000-0000-00000000000%d", i+1),
					Name: fmt.Sprintf("a%d", i+1), Metadata: md, Members: []string{u}})
			}
		}
		s, err := NewSnapshot(w)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	zed, latest := mk("zed"), mk("dalmatian")
	projects := []string{"p", "q", "r", AnyOtherProject}
	for _, pair := range [][2]*Snapshot{{zed, latest}, {latest, zed}} {
		got, err := ComputeImpact(pair[0], pair[1], projects, []string{"f"})
		if err != nil {
			t.Fatal(err)
		}
		want, err := ComputeImpactWith(pair[0], pair[1], ImpactOptions{Projects: projects, Flavors: []string{"f"}, WholeRuns: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range got.Cells {
			if g, w := fmt.Sprint(got.Cells[i][0]), fmt.Sprint(want.Cells[i][0]); g != w {
				t.Errorf("factored %s, whole runs %s", g, w)
			}
		}
	}
	// Zed admits p on h2 (suffixed only), h4, h5, h6; Dalmatian on h3, h4, h6.
	for s, want := range map[*Snapshot]int{zed: 4, latest: 3} {
		tr, err := s.Run(&RequestSpec{ProjectID: "p", Flavor: FlavorRef{Name: "f"}})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Summary.HostsPassed != want {
			t.Errorf("%d hosts passed, want %d", tr.Summary.HostsPassed, want)
		}
	}
}
