package scheduling

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
	"corral/models/placement"
)

// capacityWorld is the seed topology with inventories: VCPU and memory on
// the NUMA nodes (numa1_1 has 2 of 64 VCPU free, numa1_2 none), DISK_GB on
// the sharing providers.
func capacityWorld(t *testing.T) *Snapshot {
	return seedSnapshot(t, func(w *models.World) {
		for i := range w.Providers {
			p := &w.Providers[i]
			switch p.Name {
			case "numa1_1":
				p.Inventories = map[string]models.Inventory{"VCPU": {Total: 16, AllocationRatio: 4}, "MEMORY_MB": {Total: 8192, AllocationRatio: 1}}
				p.Usages = map[string]int64{"VCPU": 62}
			case "numa2_1", "numa2_2":
				p.Inventories = map[string]models.Inventory{"VCPU": {Total: 16, AllocationRatio: 4}, "MEMORY_MB": {Total: 8192, AllocationRatio: 1}}
			case "ss1", "ss2":
				p.Inventories = map[string]models.Inventory{"DISK_GB": {Total: 1000, AllocationRatio: 1}}
			}
		}
	})
}

func hostFates(tr *Trace) map[string]string {
	out := map[string]string{}
	for _, h := range tr.Hosts {
		if h.Passed {
			out[h.Name] = "passed"
		} else {
			out[h.Name] = h.Reason
		}
	}
	return out
}

func TestCapacityStage(t *testing.T) {
	s := capacityWorld(t)
	flavor := func(vcpus int, specs map[string]string) FlavorRef {
		return FlavorRef{Inline: &models.Flavor{Name: "f", VCPUs: vcpus, RAMMB: 2048, DiskGB: 20, ExtraSpecs: specs}}
	}
	// m1.small fits both hosts: cn1 takes DISK_GB from ss2 (aggC shared
	// with numa1_1), cn2 from ss1.
	tr := mustRun(t, s, &RequestSpec{Flavor: FlavorRef{Name: "m1.small"}})
	if got := hostFates(tr); got["cn1"] != "passed" || got["cn2"] != "passed" {
		t.Errorf("m1.small: %v", got)
	}
	// 4 VCPU: numa1_1 has 2 left, numa1_2 has no VCPU.
	tr = mustRun(t, s, &RequestSpec{Flavor: flavor(4, nil)})
	got := hostFates(tr)
	if want := "no allocation candidate: VCPU: need 4, free 2 of 64 (16 × ratio 4.0, 62 used)"; got["cn1"] != want || got["cn2"] != "passed" {
		t.Errorf("4 VCPU:\n got %q\nwant %q", got["cn1"], want)
	}
	// 100,000 VCPU fits nowhere.
	tr = mustRun(t, s, &RequestSpec{Flavor: flavor(100000, nil)})
	if tr.Summary.HostsPassed != 0 || tr.Error == nil || !strings.Contains(hostFates(tr)["cn2"], "VCPU: need 100000, free 64 of 64") {
		t.Errorf("100000 VCPU: %v", hostFates(tr))
	}
	// A required trait nobody has is named.
	tr = mustRun(t, s, &RequestSpec{Flavor: flavor(1, map[string]string{"trait:CUSTOM_GPU": "required"})})
	if r := hostFates(tr)["cn2"]; r != "no allocation candidate: trait CUSTOM_GPU is required and no provider of the tree has it" {
		t.Errorf("trait: %q", r)
	}
	// resources:DISK_GB=0 drops the class: no sharing provider needed.
	tr = mustRun(t, s, &RequestSpec{Flavor: flavor(1, map[string]string{"resources:DISK_GB": "0"}), Placement: PlacementSpec{MemberOf: []string{"!" + uuidAggC}}})
	if got := hostFates(tr); got["cn2"] != "passed" {
		t.Errorf("DISK_GB=0: %v", got)
	}
	// Seed 000 with sharing storage: member_of=aggC keeps cn1, VCPU and
	// memory from numa1_1, DISK_GB from ss2.
	tr = mustRun(t, s, &RequestSpec{Flavor: FlavorRef{Name: "m1.small"}, Placement: PlacementSpec{MemberOf: []string{uuidAggC}}})
	if got := hostFates(tr); got["cn1"] != "passed" || got["cn2"] == "passed" {
		t.Errorf("member_of=aggC: %v", got)
	}
	// The groups' verdicts are in the JSON trace.
	b, _ := json.Marshal(tr)
	if !strings.Contains(string(b), `"groups":[{"suffix":"","member_of":["in:`+uuidAggC+`"],"resources":"DISK_GB:20,MEMORY_MB:2048,VCPU:1","hosts_excluded":1}]`) {
		t.Errorf("trace groups: %s", b)
	}
}

// TestMultiCreateConsumesCapacity: each instance takes its share before the
// next round, so cn1 (2 VCPU free) takes two and the third goes to cn2.
func TestMultiCreateConsumesCapacity(t *testing.T) {
	s := capacityWorld(t)
	tr := mustRun(t, s, &RequestSpec{Flavor: FlavorRef{Inline: &models.Flavor{Name: "one", VCPUs: 1, RAMMB: 512}}, NumInstances: 3})
	if want := []string{"cn1", "cn1", "cn2"}; !reflect.DeepEqual(tr.Selections, want) {
		t.Errorf("selections %v, want %v", tr.Selections, want)
	}
	tr = mustRun(t, s, &RequestSpec{Flavor: FlavorRef{Inline: &models.Flavor{Name: "big", VCPUs: 40, RAMMB: 512}}, NumInstances: 4})
	if tr.Error == nil || !strings.Contains(*tr.Error, "instance 3 of 4") {
		t.Errorf("4 × 40 VCPU on 2 × 64 + 2 (one per NUMA node): %v %v", tr.Selections, tr.Error)
	}
}

func TestFlavorGroupsAndValidation(t *testing.T) {
	groups, policy := FlavorGroups(&models.Flavor{VCPUs: 2, RAMMB: 1024, DiskGB: 10, ExtraSpecs: map[string]string{
		"resources:DISK_GB": "0", "resources:CUSTOM_FPGA": "1", "resources1:SRIOV_NET_VF": "2",
		"trait1:CUSTOM_PHYSNET": "required", "trait:HW_CPU_X86_AVX2": "forbidden", "group_policy": "isolate"}})
	if policy != "isolate" || len(groups) != 2 || groups[0].Suffix != "" || groups[1].Suffix != "1" {
		t.Fatalf("groups %+v policy %q", groups, policy)
	}
	if got := resourcesText(groups[0]); got != "CUSTOM_FPGA:1,MEMORY_MB:1024,VCPU:2" {
		t.Errorf("unnumbered resources %s", got)
	}
	if !reflect.DeepEqual(groups[0].Forbidden, []string{"HW_CPU_X86_AVX2"}) || !reflect.DeepEqual(groups[1].Required, [][]string{{"CUSTOM_PHYSNET"}}) {
		t.Errorf("traits %+v", groups)
	}
	for spec, want := range map[string]string{
		"resources:VCPU=abc":      "must be an integer",
		"resources:VCPU=-1":       "0 (to drop the class) or more",
		"resources:vcpu=1":        "is not a resource class",
		"resources_NET:VF=x":      "must be an integer",
		"trait2:CUSTOM_X=maybe":   "'required' or 'forbidden'",
		"group_policy=everything": "group_policy is 'none' or 'isolate'",
	} {
		k, v, _ := strings.Cut(spec, "=")
		ps := ValidateExtraSpecs(map[string]string{k: v})
		if !HasErrors(ps) || !strings.Contains(ps[0].Message, want) {
			t.Errorf("%s: %+v, want %q", spec, ps, want)
		}
	}
	if ps := ValidateExtraSpecs(map[string]string{"resources:VCPU": "0", "resources1:CUSTOM_FPGA": "2", "trait1:CUSTOM_X": "required"}); HasErrors(ps) {
		t.Errorf("valid specs refused: %+v", ps)
	}
}

// TestCapacityQuickSummary: the summary read from fit sets for a host
// whose children have nothing asked for is the one explain gives, for every host and flavor of
// a generated cloud (hosts full, empty and in between; flavors asking for
// no resources, one class missing, more than any host has).
func TestCapacityQuickSummary(t *testing.T) {
	w := cloudgen.Generate(cloudgen.Small())
	for i := range w.Providers {
		if p := &w.Providers[i]; p.ParentUUID != nil && i%3 == 1 {
			// Some trees hold memory below the root: explain alone.
			p.Inventories = map[string]models.Inventory{"MEMORY_MB": {Total: 400000, AllocationRatio: 1}}
		}
	}
	w.Flavors = append(w.Flavors,
		models.Flavor{Name: "huge", VCPUs: 100000, RAMMB: 512, DiskGB: 1},
		models.Flavor{Name: "gpu-class", VCPUs: 1, RAMMB: 512, ExtraSpecs: map[string]string{"resources:CUSTOM_GPU": "1"}},
		models.Flavor{Name: "fat-disk", VCPUs: 1, RAMMB: 512, DiskGB: 1999},
		models.Flavor{Name: "more-memory-than-a-root", VCPUs: 100000, RAMMB: 300000, DiskGB: 1},
		models.Flavor{Name: "two-groups", VCPUs: 1, RAMMB: 512, ExtraSpecs: map[string]string{"resources1:VCPU": "200", "group_policy": "none"}})
	w.Providers = append(w.Providers, models.Provider{UUID: "bare-host", Name: "bare"})
	s, err := NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	summaries := map[string]bool{}
	for fi := range w.Flavors {
		c := s.newCapacity(&Request{Flavor: &w.Flavors[fi]}, placement.Terms{}, nil)
		if c == nil || !c.quick {
			continue // no resources, or traits: explain alone
		}
		for _, h := range s.ix.Hosts() {
			p := int(h)
			if c.fitsHost(p) {
				continue
			}
			_, want, _ := c.explain(p, false, nil)
			if got := c.summary(p); got != want {
				t.Fatalf("flavor %s, host %s: summary %q, explain says %q", w.Flavors[fi].Name, s.ix.Name(p), got, want)
			}
			summaries[want] = true
		}
	}
	if len(summaries) < 3 {
		t.Fatalf("only %v: the test should see short, missing and ill-fitting hosts", summaries)
	}
}
