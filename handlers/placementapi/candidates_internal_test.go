package placementapi

import (
	"encoding/json"
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
		got := writeCandidates(ix, res, q, placement.V(v))
		if err := json.Unmarshal(got, &b); err != nil {
			t.Fatalf("1.%d: %v\n%s", v, err, got)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("1.%d:\n got %s\nwant %s", v, got, want)
		}
	}
}

type anyNames struct{}

func (anyNames) HasClass(string) bool { return true }
func (anyNames) HasTrait(string) bool { return true }
