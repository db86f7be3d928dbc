package scheduling

import (
	"fmt"
	"strings"
	"testing"

	"corral/models"
)

// resourceWorld has one host per free-RAM size, as nova's
// test_weights_ram.py _get_all_hosts builds them (512, 1024, 3072, 8192
// MiB free), with as much free disk and VCPUs in the reverse order.
func resourceWorld(settings models.Settings) *models.World {
	w := &models.World{Settings: settings}
	rams := []int64{512, 1024, 3072, 8192}
	for i, ram := range rams {
		w.Providers = append(w.Providers, models.Provider{
			UUID: fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i+1), Name: fmt.Sprintf("host%d", i+1),
			Inventories: map[string]models.Inventory{
				"MEMORY_MB": {Total: ram + 512, Reserved: 512, AllocationRatio: 1.5},
				"VCPU":      {Total: int64(8 - 2*i), AllocationRatio: 1},
				"DISK_GB":   {Total: int64(100 * (4 - i)), AllocationRatio: 1},
			},
		})
	}
	return w
}

func weighOnly(classes string) models.Settings {
	st := models.DefaultSettings()
	st.WeightClasses = classes
	return st
}

// The RAM weigher spreads by default (the host with the most free RAM
// first) and stacks with a negative multiplier: nova's test_weights_ram.py
// test_default_of_spreading_first and test_ram_filter_multiplier2/negative.
func TestRAMWeigherSpreadsAndStacks(t *testing.T) {
	for _, tc := range []struct {
		mult  float64
		first string
		want  float64
	}{{1, "host4", 1}, {2, "host4", 2}, {-1, "host1", 0}, {0, "host1", 0}} {
		st := weighOnly("nova.scheduler.weights.ram.RAMWeigher")
		st.RAMWeightMultiplier = tc.mult
		s, err := NewSnapshot(resourceWorld(st))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := s.Run(&RequestSpec{Flavor: FlavorRef{Inline: &models.Flavor{VCPUs: 1, RAMMB: 256, DiskGB: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Hosts[0].Name != tc.first || tr.Hosts[0].Weight == nil || *tr.Hosts[0].Weight != tc.want {
			t.Errorf("multiplier %v: first %s weight %v, want %s %v", tc.mult, tr.Hosts[0].Name, tr.Hosts[0].Weight, tc.first, tc.want)
		}
	}
}

// CPU and disk weighers read free VCPUs (total × ratio − used) and free
// disk; an aggregate's ram_weight_multiplier overrides the setting for
// its hosts (nova's test_ram_weigher_aggregate... get_weight_multiplier,
// the smallest value when several aggregates set it).
func TestResourceWeighersAndAggregateMultiplier(t *testing.T) {
	s, err := NewSnapshot(resourceWorld(weighOnly("nova.scheduler.weights.cpu.CPUWeigher,nova.scheduler.weights.disk.DiskWeigher")))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Run(&RequestSpec{Flavor: FlavorRef{Inline: &models.Flavor{VCPUs: 1, RAMMB: 256, DiskGB: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Hosts[0].Name != "host1" || *tr.Hosts[0].Weight != 2 {
		t.Errorf("first %s %v, want host1 with 2 (most free VCPUs and disk)", tr.Hosts[0].Name, *tr.Hosts[0].Weight)
	}
	w := resourceWorld(weighOnly("nova.scheduler.weights.ram.RAMWeigher"))
	w.Aggregates = []models.Aggregate{
		{ID: 1, UUID: "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa1", Name: "a1", Metadata: map[string]string{"ram_weight_multiplier": "-3"}, Members: []string{w.Providers[3].UUID}},
		{ID: 2, UUID: "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa2", Name: "a2", Metadata: map[string]string{"ram_weight_multiplier": "-1"}, Members: []string{w.Providers[3].UUID}},
	}
	s, err = NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	tr, err = s.Run(&RequestSpec{Flavor: FlavorRef{Inline: &models.Flavor{VCPUs: 1, RAMMB: 256, DiskGB: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	last := tr.Hosts[len(tr.Hosts)-1]
	if last.Name != "host4" || *last.Weight != -3 {
		t.Errorf("last %s %v, want host4 at -3 (its aggregates' smallest multiplier)", last.Name, *last.Weight)
	}
}

// A multi-create consumes each pick's RAM before the next round, as
// HostState.consume_from_request does: with RAM spreading, the instances
// do not all land on the host that was best at first.
func TestMultiCreateConsumesHostState(t *testing.T) {
	w := resourceWorld(weighOnly("nova.scheduler.weights.ram.RAMWeigher"))
	s, err := NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Run(&RequestSpec{NumInstances: 3, Flavor: FlavorRef{Inline: &models.Flavor{VCPUs: 1, RAMMB: 3000}}})
	if err != nil {
		t.Fatal(err)
	}
	// host4 (8192 free) then 5192, host3 has 3072: 5192 > 3072, so
	// host4 again; then 2192 < 3072: host3.
	if got := strings.Join(tr.Selections, ","); got != "host4,host4,host3" {
		t.Errorf("selections %s, want host4,host4,host3", got)
	}
}

// weight_classes and the release choose the weighers: all_weighers on Zed
// has no NumInstancesWeigher; PCI and metrics are named as not modelled;
// host_subset_size is said.
func TestWeighersFollowSettingsAndRelease(t *testing.T) {
	st := models.DefaultSettings()
	st.WeightClasses = models.AllWeighers
	st.NovaRelease = "zed"
	var names []string
	for _, w := range WeighersFor(st) {
		names = append(names, w.Name())
	}
	if got := strings.Join(names, ","); got != "RAMWeigher,CPUWeigher,DiskWeigher,IoOpsWeigher,BuildFailureWeigher,ServerGroupSoftAffinityWeigher,ServerGroupSoftAntiAffinityWeigher,CrossCellWeigher" {
		t.Errorf("zed weighers %s", got)
	}
	st.NovaRelease = "bobcat"
	if ws := WeighersFor(st); len(ws) != 9 || ws[8].Name() != "NumInstancesWeigher" {
		t.Errorf("bobcat weighers %v", ws)
	}
	st.HostSubsetSize = 3
	st.EnabledFilters = append(st.EnabledFilters, "ImagePropertiesFilter")
	s, err := NewSnapshot(&models.World{Settings: st, Providers: []models.Provider{{UUID: "00000000-0000-0000-0000-000000000001", Name: "h"}}})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Run(&RequestSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tr.Nova.NotModelled, ","); got != "HypervisorVersionWeigher,ImagePropertiesFilter,MetricsWeigher,PCIWeigher" {
		t.Errorf("not modelled %s", got)
	}
	if !strings.Contains(tr.Nova.Ranking, "at random among the 3 best") || tr.Nova.Release != "2023.2 Bobcat (nova 28)" {
		t.Errorf("nova view %+v", tr.Nova)
	}
	found := false
	for _, c := range tr.Hosts[0].Checks {
		if c.Stage == "ImagePropertiesFilter" && c.Passed != nil && *c.Passed {
			found = true
		}
	}
	if !found {
		t.Errorf("ImagePropertiesFilter is not a passing stage: %+v", tr.Hosts[0].Checks)
	}
}

// More hosts than max_placement_results pass placement: the trace says
// Nova sees only a subset.
func TestTraceSaysPlacementLimit(t *testing.T) {
	st := weighOnly(models.NovaDefaultWeightClasses)
	st.MaxPlacementResults = 2
	s, err := NewSnapshot(resourceWorld(st))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Run(&RequestSpec{Flavor: FlavorRef{Inline: &models.Flavor{VCPUs: 1, RAMMB: 256}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tr.Nova.Ranking, "4 hosts pass placement but Nova asks for 2 candidates") || !strings.Contains(tr.Nova.AllocationCandidatesQuery, "limit=2&") {
		t.Errorf("nova view %+v", tr.Nova)
	}
}
