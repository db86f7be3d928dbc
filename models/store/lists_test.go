package store_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
)

// listFixture is a small cloud with every kind of provider: hosts (one
// with a capitalised name, one whose traits column is NULL, as rows
// written by older versions may be), children two levels deep, a sharing
// root and a sharing provider inside a host's tree.
type listFixture struct {
	cn1, cn2, upper, legacy, numa11, pf1, numa21, ss1, ss2 *models.Provider
	aggA, aggB, aggC, aggD                                 *models.Aggregate
}

func newListFixture(t *testing.T, s *store.Store) *listFixture {
	t.Helper()
	f := &listFixture{}
	f.cn1 = mustProvider(t, s, "cn1", "")
	f.numa11 = mustProvider(t, s, "numa1_1", "cn1")
	f.pf1 = mustProvider(t, s, "pf1", "numa1_1")
	f.cn2 = mustProvider(t, s, "cn2", "")
	f.numa21 = mustProvider(t, s, "numa2_1", "cn2")
	f.ss2 = mustProvider(t, s, "nic-pool", "cn2", models.TraitSharesViaAggregate)
	f.upper = mustProvider(t, s, "CN-Upper", "", "CUSTOM_X")
	f.legacy = mustProvider(t, s, "legacy", "")
	f.ss1 = mustProvider(t, s, "ss1", "", models.TraitSharesViaAggregate)
	if err := s.ExecRaw("UPDATE providers SET traits = NULL WHERE uuid = ?", f.legacy.UUID); err != nil {
		t.Fatal(err)
	}
	f.aggA = mustAggregate(t, s, "aggA", f.cn1, f.ss1)
	f.aggB = mustAggregate(t, s, "aggB", f.cn2, f.numa11, f.ss1)
	f.aggC = mustAggregate(t, s, "aggC")
	f.aggD = mustAggregate(t, s, "aggD", f.upper)
	return f
}

// providerNames returns the names sorted in Go: the databases collate
// mixed case differently.
func providerNames(ps []models.Provider) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

func sortedNames(names ...string) []string {
	slices.Sort(names)
	return names
}

func TestListProvidersByKind(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		f := newListFixture(t, s)
		hosts := sortedNames("cn1", "cn2", "CN-Upper", "legacy")
		cases := []struct {
			name  string
			q     store.ProviderQuery
			want  []string
			total int // when paged
		}{
			{"any", store.ProviderQuery{}, sortedNames("cn1", "numa1_1", "pf1", "cn2", "numa2_1", "nic-pool", "CN-Upper", "legacy", "ss1"), 0},
			{"roots", store.ProviderQuery{Kind: store.ProviderKindRoot}, sortedNames(append(slices.Clone(hosts), "ss1")...), 0},
			{"roots only flag", store.ProviderQuery{RootsOnly: true}, sortedNames(append(slices.Clone(hosts), "ss1")...), 0},
			{"hosts", store.ProviderQuery{Kind: store.ProviderKindHost}, hosts, 0},
			{"sharing", store.ProviderQuery{Kind: store.ProviderKindSharing}, sortedNames("nic-pool", "ss1"), 0},
			{"sharing roots", store.ProviderQuery{Kind: store.ProviderKindSharing, RootsOnly: true}, []string{"ss1"}, 0},
			{"children", store.ProviderQuery{Kind: store.ProviderKindChild}, sortedNames("numa1_1", "pf1", "numa2_1"), 0},
			{"hosts searched", store.ProviderQuery{Kind: store.ProviderKindHost, Search: "cn"}, sortedNames("cn1", "cn2", "CN-Upper"), 0},
			{"hosts searched by uuid", store.ProviderQuery{Kind: store.ProviderKindHost, Search: "-"}, hosts, 0},
			{"sharing searched by uuid", store.ProviderQuery{Kind: store.ProviderKindSharing, Search: strings.ToUpper(f.ss2.UUID[:13])}, []string{"nic-pool"}, 0},
			{"children paged", store.ProviderQuery{Kind: store.ProviderKindChild, Limit: 2}, []string{"numa1_1", "numa2_1"}, 3},
			{"by uuids", store.ProviderQuery{UUIDs: []string{f.cn1.UUID, f.ss1.UUID, "00000000-0000-4000-8000-000000000000"}}, []string{"cn1", "ss1"}, 0},
			{"no uuids", store.ProviderQuery{UUIDs: []string{}}, []string{}, 0},
			{"trees", store.ProviderQuery{InTrees: []string{f.cn1.UUID, f.cn2.UUID}}, sortedNames("cn1", "numa1_1", "pf1", "cn2", "numa2_1", "nic-pool"), 0},
			{"children of trees", store.ProviderQuery{InTrees: []string{f.cn2.UUID}, Kind: store.ProviderKindChild}, []string{"numa2_1"}, 0},
			{"no trees", store.ProviderQuery{InTrees: []string{}}, []string{}, 0},
		}
		for _, tc := range cases {
			got, total, err := s.ListProviders(ctx, tc.q)
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			wantTotal := tc.total
			if wantTotal == 0 {
				wantTotal = len(tc.want)
			}
			if !slices.Equal(providerNames(got), tc.want) || total != wantTotal {
				t.Errorf("%s: got %v (total %d), want %v (total %d)", tc.name, providerNames(got), total, tc.want, wantTotal)
			}
			for _, p := range got {
				if p.Traits == nil {
					t.Errorf("%s: %s has nil traits", tc.name, p.Name)
				}
			}
		}
		_, _, err := s.ListProviders(ctx, store.ProviderQuery{Kind: "compute"})
		wantKind(t, err, models.Invalid, "kind")
	})
}

func TestSearchProviders(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		f := newListFixture(t, s)
		mid := f.ss1.UUID[9:18] // "xxxx-xxxx": hex and a dash
		cases := []struct {
			search string
			want   []string
		}{
			{"cn-up", []string{"CN-Upper"}},
			{"CN1", []string{"cn1"}},
			{"UPPER", []string{"CN-Upper"}},
			{mid, []string{"ss1"}},
			{strings.ToUpper(mid), []string{"ss1"}},
			{f.ss1.UUID, []string{"ss1"}},
			{"_1", sortedNames("numa1_1", "numa2_1")}, // "_" is literal, not LIKE's wildcard
			{"numa", sortedNames("numa1_1", "numa2_1")},
			{"zz", []string{}},
		}
		for _, tc := range cases {
			got, total, err := s.ListProviders(ctx, store.ProviderQuery{Search: tc.search})
			if err != nil || !slices.Equal(providerNames(got), tc.want) || total != len(tc.want) {
				t.Errorf("search %q: %v (total %d), %v; want %v", tc.search, providerNames(got), total, err, tc.want)
			}
		}
		// Every uuid holds a dash, so a dash alone matches every provider:
		// the uuid half of the search is kept for hex-and-dash input.
		if _, total, _ := s.ListProviders(ctx, store.ProviderQuery{Search: "-"}); total != 9 {
			t.Errorf(`search "-": %d providers, want all 9`, total)
		}
	})
}

func TestProviderBatchLookups(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		f := newListFixture(t, s)
		unknown := "00000000-0000-4000-8000-000000000000"
		aggs, err := s.AggregatesOfProviders(ctx, []string{f.cn1.UUID, f.ss1.UUID, f.numa11.UUID, f.pf1.UUID, unknown, f.cn1.UUID})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{
			f.cn1.UUID:    {f.aggA.UUID},
			f.ss1.UUID:    sortedNames(f.aggA.UUID, f.aggB.UUID),
			f.numa11.UUID: {f.aggB.UUID},
		}
		if !maps.EqualFunc(aggs, want, slices.Equal) {
			t.Errorf("AggregatesOfProviders = %v, want %v", aggs, want)
		}
		// Each answer is what the one-provider call says.
		for u, list := range aggs {
			one, _, err := s.ProviderAggregates(ctx, u)
			if err != nil || !slices.Equal(one, list) {
				t.Errorf("ProviderAggregates(%s) = %v, %v; batch said %v", u, one, err, list)
			}
		}

		names, err := s.AggregateNames(ctx, []string{f.aggA.UUID, f.aggC.UUID, unknown})
		wantNames := map[string]string{f.aggA.UUID: "aggA", f.aggC.UUID: "aggC"}
		if err != nil || !maps.Equal(names, wantNames) {
			t.Errorf("AggregateNames = %v, %v; want %v", names, err, wantNames)
		}
		if got, err := s.AggregateNames(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("AggregateNames(nil) = %v, %v", got, err)
		}

		// ss1 shares aggA with cn1 and aggB with cn2 and numa1_1 (a child,
		// not a host): it serves the trees of cn1 and cn2. cn1 shares aggA
		// with ss1 only, a sharing provider; CN-Upper is alone in aggD;
		// legacy is in no aggregate.
		all := []string{f.ss1.UUID, f.cn1.UUID, f.upper.UUID, f.numa11.UUID, f.legacy.UUID, unknown}
		cases := []struct {
			name  string
			limit int
			want  map[string]store.SharedHosts
		}{
			{"all", 0, map[string]store.SharedHosts{
				f.ss1.UUID:    {Hosts: []store.ProviderRef{{f.cn1.UUID, "cn1"}, {f.cn2.UUID, "cn2"}}, Total: 2},
				f.numa11.UUID: {Hosts: []store.ProviderRef{{f.cn2.UUID, "cn2"}}, Total: 1},
			}},
			{"limited", 1, map[string]store.SharedHosts{
				f.ss1.UUID:    {Hosts: []store.ProviderRef{{f.cn1.UUID, "cn1"}}, Total: 2},
				f.numa11.UUID: {Hosts: []store.ProviderRef{{f.cn2.UUID, "cn2"}}, Total: 1},
			}},
		}
		same := func(a, b store.SharedHosts) bool { return a.Total == b.Total && slices.Equal(a.Hosts, b.Hosts) }
		for _, tc := range cases {
			got, err := s.HostsSharingWith(ctx, all, tc.limit)
			if err != nil || !maps.EqualFunc(got, tc.want, same) {
				t.Errorf("HostsSharingWith %s = %+v, %v; want %+v", tc.name, got, err, tc.want)
			}
		}
		// A host sharing two aggregates with the provider counts once.
		mustAggregate(t, s, "aggE", f.cn1, f.ss1)
		got, err := s.HostsSharingWith(ctx, []string{f.ss1.UUID}, 0)
		if want := (store.SharedHosts{Hosts: []store.ProviderRef{{f.cn1.UUID, "cn1"}, {f.cn2.UUID, "cn2"}}, Total: 2}); err != nil || !same(got[f.ss1.UUID], want) {
			t.Errorf("HostsSharingWith after aggE = %+v, %v", got, err)
		}
		if got, err := s.HostsSharingWith(ctx, nil, 8); err != nil || len(got) != 0 {
			t.Errorf("HostsSharingWith(nil) = %v, %v", got, err)
		}
	})
}

func TestListAggregateSummaries(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if _, err := s.LoadDemo(ctx); err != nil {
			t.Fatal(err)
		}
		cn1, _ := s.GetProvider(ctx, "cn1")
		cn2, _ := s.GetProvider(ctx, "cn2")
		mustAggregate(t, s, "agg-two", cn1, cn2)
		mustAggregate(t, s, "agg-none")
		for _, q := range []store.AggregateQuery{
			{},
			{Sort: "name", Desc: true, Offset: 2, Limit: 5},
			{Search: "agg"},
			{Search: "filter_tenant"},
		} {
			full, fullTotal, err := s.ListAggregates(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			sums, total, err := s.ListAggregateSummaries(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if total != fullTotal || len(sums) != len(full) || len(sums) == 0 {
				t.Fatalf("%+v: %d summaries of %d, want %d of %d", q, len(sums), total, len(full), fullTotal)
			}
			for i, sum := range sums {
				if sum.UUID != full[i].UUID || sum.Name != full[i].Name || !maps.Equal(sum.Metadata, full[i].Metadata) {
					t.Errorf("%+v: row %d is %s, ListAggregates has %s", q, i, sum.Name, full[i].Name)
				}
				if sum.MemberCount != len(full[i].Members) {
					t.Errorf("%+v: %s counts %d members, has %d", q, sum.Name, sum.MemberCount, len(full[i].Members))
				}
				if len(sum.Members) != 0 || sum.Metadata == nil {
					t.Errorf("%+v: %s: members loaded (%d) or nil metadata", q, sum.Name, len(sum.Members))
				}
			}
		}
		sums, _, err := s.ListAggregateSummaries(ctx, store.AggregateQuery{Search: "agg", Sort: "name"})
		counts := map[string]int{}
		for _, a := range sums {
			counts[a.Name] = a.MemberCount
		}
		if err != nil || counts["agg-two"] != 2 || counts["agg-none"] != 0 {
			t.Errorf("member counts = %v, %v", counts, err)
		}
		_, _, err = s.ListAggregateSummaries(ctx, store.AggregateQuery{Sort: "members"})
		wantKind(t, err, models.Invalid, "sort")
	})
}

// Placement does not move a provider's generation for a PUT of its
// aggregates below 1.19, nor for a rename or a move; KeepGeneration
// writes that way, still checking the generation it is given.
func TestKeepGeneration(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		f := newListFixture(t, s)
		cn1, _ := s.GetProvider(ctx, f.cn1.UUID)
		rev0, _ := s.Revision(ctx)

		gen, err := s.SetProviderAggregates(ctx, admin, cn1.UUID, cn1.Generation, []string{f.aggC.UUID}, store.KeepGeneration())
		if err != nil || gen != cn1.Generation {
			t.Fatalf("SetProviderAggregates kept = %d, %v; want %d", gen, err, cn1.Generation)
		}
		aggs, g, _ := s.ProviderAggregates(ctx, cn1.UUID)
		if g != cn1.Generation || !slices.Equal(aggs, []string{f.aggC.UUID}) {
			t.Fatalf("after kept PUT: %v generation %d", aggs, g)
		}
		if rev, _ := s.Revision(ctx); rev == rev0 {
			t.Error("a kept-generation write did not move the revision")
		}
		evs, _, _ := s.ListAudit(ctx, store.AuditQuery{ObjectID: cn1.UUID})
		if n := len(slices.DeleteFunc(evs, func(e models.AuditEvent) bool { return e.Action != "set-aggregates" })); n != 1 {
			t.Errorf("audit events for the kept PUT: %d", n)
		}
		_, err = s.SetProviderAggregates(ctx, admin, cn1.UUID, cn1.Generation+1, nil, store.KeepGeneration())
		wantKind(t, err, models.Conflict, "generation")
		// Without the option the generation moves, as from 1.19.
		if gen, err := s.SetProviderAggregates(ctx, admin, cn1.UUID, cn1.Generation, nil); err != nil || gen != cn1.Generation+1 {
			t.Fatalf("SetProviderAggregates = %d, %v; want %d", gen, err, cn1.Generation+1)
		}

		// A rename keeps the generation; so does moving a subtree, for the
		// moved provider and its descendants alike.
		numa, _ := s.GetProvider(ctx, f.numa11.UUID)
		pf, _ := s.GetProvider(ctx, f.pf1.UUID)
		renamed, err := s.UpdateProvider(ctx, admin, numa.UUID, numa.Generation, func(p *models.Provider) error {
			p.Name = "numa1_1-renamed"
			p.ParentUUID = &f.cn2.UUID
			return nil
		}, store.KeepGeneration())
		if err != nil || renamed.Generation != numa.Generation || renamed.RootUUID != f.cn2.UUID {
			t.Fatalf("kept rename: %+v, %v", renamed, err)
		}
		for _, want := range []*models.Provider{numa, pf} {
			got, _ := s.GetProvider(ctx, want.UUID)
			if got.Generation != want.Generation || got.RootUUID != f.cn2.UUID {
				t.Errorf("%s after kept move: generation %d (was %d), root %s", got.Name, got.Generation, want.Generation, got.RootUUID)
			}
		}
		_, err = s.UpdateProvider(ctx, admin, numa.UUID, numa.Generation+1, func(p *models.Provider) error { return nil }, store.KeepGeneration())
		wantKind(t, err, models.Conflict, "generation")
		// Without it, the move back bumps both.
		if _, err := s.UpdateProvider(ctx, admin, numa.UUID, numa.Generation, func(p *models.Provider) error {
			p.ParentUUID = &f.cn1.UUID
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []*models.Provider{numa, pf} {
			if got, _ := s.GetProvider(ctx, want.UUID); got.Generation != want.Generation+1 || got.RootUUID != f.cn1.UUID {
				t.Errorf("%s after move: generation %d (was %d), root %s", got.Name, got.Generation, want.Generation, got.RootUUID)
			}
		}
	})
}

// The provider pages on a big cloud rely on these plans: roots read in
// name order from an index (no sort of every root), sharing providers and
// hosts found through their partial indexes (no read of every row's
// traits). SQLite only: its plans do not depend on table statistics.
func TestProviderListPlans(t *testing.T) {
	s := storetest.Open(t)
	newListFixture(t, s)
	cases := []struct {
		name       string
		q          store.ProviderQuery
		count, use string
	}{
		{"roots page", store.ProviderQuery{RootsOnly: true, Limit: 50}, "idx_providers_parent", "idx_providers_parent_name"},
		{"hosts page", store.ProviderQuery{Kind: store.ProviderKindHost, Limit: 50}, "idx_providers_hosts", "idx_providers_hosts"},
		{"sharing page", store.ProviderQuery{Kind: store.ProviderKindSharing, Limit: 50}, "idx_providers_sharing", "idx_providers_sharing"},
		{"sharing roots page", store.ProviderQuery{Kind: store.ProviderKindSharing, RootsOnly: true, Limit: 50}, "idx_providers_sharing", "idx_providers_sharing"},
		{"children page", store.ProviderQuery{Kind: store.ProviderKindChild, Limit: 50}, "idx_providers_children", "idx_providers_children"},
		{"hosts searched", store.ProviderQuery{Kind: store.ProviderKindHost, Search: "cn", Limit: 50}, "idx_providers_hosts", "idx_providers_hosts"},
	}
	for _, tc := range cases {
		count, list, err := s.ProviderListPlans(tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !strings.Contains(count, tc.count) {
			t.Errorf("%s: count plan does not use %s:\n%s", tc.name, tc.count, count)
		}
		if !strings.Contains(list, tc.use) || strings.Contains(list, "TEMP B-TREE") {
			t.Errorf("%s: page plan does not read %s in order:\n%s", tc.name, tc.use, list)
		}
	}
}
