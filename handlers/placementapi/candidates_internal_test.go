package placementapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"corral/models"
	"corral/models/placement"
)

// TestWriteCandidatesMatchesRender: the hand-written encoder says what
// encoding/json says of the map form, at every shape boundary.
func TestWriteCandidatesMatchesRender(t *testing.T) {
	root, child := "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	ix, err := placement.NewIndex([]models.Provider{
		{UUID: root, Name: "r", RootUUID: root, Traits: []string{"HW_CPU_X86_AVX2"},
			Inventories: map[string]models.Inventory{"VCPU": {Total: 8, AllocationRatio: 2}, "MEMORY_MB": {Total: 1024}},
			Usages:      map[string]int64{"VCPU": 3}},
		{UUID: child, Name: "c\"quoted\"", ParentUUID: &root, RootUUID: root, Traits: []string{},
			Inventories: map[string]models.Inventory{"CUSTOM_FPGA": {Total: 2}}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []int{10, 12, 17, 27, 29, 34, 39} {
		q, perr := parseCandidateQuery("resources=VCPU:1,CUSTOM_FPGA:1&resources1=MEMORY_MB:10&group_policy=none", placement.V(max(v, 25)))
		if perr != nil {
			q, perr = parseCandidateQuery("resources=VCPU:1", placement.V(v))
		}
		if perr != nil {
			t.Fatal(perr)
		}
		q.q.NestedAware = v >= 29
		res, err := ix.AllocationCandidates(q.q, anyNames{})
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		want, _ := json.Marshal(renderCandidates(ix, res, q, placement.V(v)))
		if err := json.Unmarshal(want, &a); err != nil {
			t.Fatal(err)
		}
		// Without the snapshot's encoded summaries, and with them (twice:
		// encoding them, then reusing them).
		enc := &encodedProviders{ix: ix, encodings: &encodings{}}
		for _, e := range []*encodedProviders{nil, enc, enc} {
			got := writeCandidates(ix, e, res, q, placement.V(v))
			b = nil
			if err := json.Unmarshal(got, &b); err != nil {
				t.Fatalf("1.%d: %v\n%s", v, err, got)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("1.%d (encoded summaries: %v):\n got %s\nwant %s", v, e != nil, got, want)
			}
		}
	}
}

type anyNames struct{}

func (anyNames) HasClass(string) bool { return true }
func (anyNames) HasTrait(string) bool { return true }

// FuzzCandidateQuery: any query string gets a parsed request or a 400, and
// a parsed request gets candidates or an unknown-name error over a small
// nested world with sharing, never a panic.
func FuzzCandidateQuery(f *testing.F) {
	root, child, ss := "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"
	agg := "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	ix, err := placement.NewIndex([]models.Provider{
		{UUID: root, Name: "r", RootUUID: root, Traits: []string{"HW_CPU_X86_AVX2"},
			Inventories: map[string]models.Inventory{"VCPU": {Total: 8, AllocationRatio: 2}, "MEMORY_MB": {Total: 1024}}},
		{UUID: child, Name: "c", ParentUUID: &root, RootUUID: root, Inventories: map[string]models.Inventory{"VCPU": {Total: 2, MaxUnit: 1}}},
		{UUID: ss, Name: "s", RootUUID: ss, Traits: []string{models.TraitSharesViaAggregate}, Inventories: map[string]models.Inventory{"DISK_GB": {Total: 100, StepSize: 10}}},
	}, []models.Aggregate{{UUID: agg, Name: "a", Members: []string{root, ss}}})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"resources=VCPU:1,DISK_GB:10&member_of=!" + agg, "resources1=VCPU:1&resources2=VCPU:1&group_policy=isolate",
		"resources=VCPU:1&member_of2=" + agg + "&same_subtree=2", "resources=VCPU:1&root_required=!HW_CPU_X86_AVX2&limit=1",
		"resources=VCPU:1&required=in:A,B&required=!C", "resources_X=DISK_GB:20&in_tree_X=" + root, "limit=0&group_policy=x",
	} {
		f.Add(s, 39)
		f.Add(s, 25)
	}
	f.Fuzz(func(t *testing.T, raw string, minor int) {
		if minor < 10 || minor > 39 {
			return
		}
		req, perr := parseCandidateQuery(raw, placement.V(minor))
		if perr != nil {
			if perr.Status != http.StatusBadRequest {
				t.Fatalf("%q: status %d", raw, perr.Status)
			}
			return
		}
		res, err := ix.AllocationCandidates(req.q, anyNames{})
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		_ = writeCandidates(ix, &encodedProviders{ix: ix, encodings: &encodings{}}, res, req, placement.V(minor))
	})
}
