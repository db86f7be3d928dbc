package scheduling

import (
	"reflect"
	"testing"

	"corral/models"
)

func TestSoftAffinityWeighers(t *testing.T) {
	hosts := []*HostState{hfHost("cn1"), hfHost("cn2"), hfHost("cn3")}
	counts := map[string]int{"cn1": 2, "cn2": 0, "cn3": 1}
	cases := []struct {
		policy string
		w      Weigher
		raw    []float64
		norm   []float64
	}{
		{models.PolicySoftAffinity, ServerGroupSoftAffinityWeigher{}, []float64{2, 0, 1}, []float64{1, 0, 0.5}},
		{models.PolicySoftAntiAffinity, ServerGroupSoftAntiAffinityWeigher{}, []float64{-2, 0, -1}, []float64{0, 1, 0.5}},
		// A weigher ignores groups of the other policies: every host 0.
		{models.PolicySoftAntiAffinity, ServerGroupSoftAffinityWeigher{}, []float64{0, 0, 0}, []float64{0, 0, 0}},
		{models.PolicyAntiAffinity, ServerGroupSoftAntiAffinityWeigher{}, []float64{0, 0, 0}, []float64{0, 0, 0}},
	}
	for _, c := range cases {
		r := hfGroupRequest(c.policy, nil, 1)
		r.GroupHosts = counts
		raw := make([]float64, len(hosts))
		for i, h := range hosts {
			raw[i] = c.w.Weigh(h, r)
		}
		if !reflect.DeepEqual(raw, c.raw) {
			t.Errorf("%s for %s: raw %v, want %v", c.w.Name(), c.policy, raw, c.raw)
		}
		if got := NormalizeWeigherWeights(raw); !reflect.DeepEqual(got, c.norm) {
			t.Errorf("%s for %s: normalised %v, want %v", c.w.Name(), c.policy, got, c.norm)
		}
	}
	if w := (ServerGroupSoftAffinityWeigher{}).Weigh(hosts[0], hfRequest(nil)); w != 0 {
		t.Errorf("no group: weight %v", w)
	}
	if got := NormalizeWeigherWeights(nil); len(got) != 0 {
		t.Errorf("normalise nothing = %v", got)
	}
}

func TestWeigherMultipliers(t *testing.T) {
	s := models.DefaultSettings()
	s.SoftAffinityWeightMultiplier = 2.5
	s.SoftAntiAffinityWeightMultiplier = 4
	aff, anti := ServerGroupSoftAffinityWeigher{}, ServerGroupSoftAntiAffinityWeigher{}
	if aff.Multiplier(s) != 2.5 || anti.Multiplier(s) != 4 {
		t.Fatalf("multipliers %v %v", aff.Multiplier(s), anti.Multiplier(s))
	}
	cases := []struct {
		name string
		aggs []map[string]string
		aff  float64
		anti float64
	}{
		{"no override", []map[string]string{{"ssd": "true"}}, 2.5, 4},
		{"override", []map[string]string{{KeySoftAffinityMultiplier: "10"}}, 10, 4},
		{"smallest wins", []map[string]string{{KeySoftAntiAffinityMultiplier: "3"}, {KeySoftAntiAffinityMultiplier: " 1.5 "}}, 2.5, 1.5},
		{"not a number falls back", []map[string]string{{KeySoftAffinityMultiplier: "1"}, {KeySoftAffinityMultiplier: "high"}}, 2.5, 4},
		{"not comma-split", []map[string]string{{KeySoftAffinityMultiplier: "1,2"}}, 2.5, 4},
	}
	for _, c := range cases {
		h := hfHost("h", c.aggs...)
		var ah, anh HostWeightMultiplier = aff, anti
		if got := ah.HostMultiplier(h, s); got != c.aff {
			t.Errorf("%s: soft-affinity multiplier %v, want %v", c.name, got, c.aff)
		}
		if got := anh.HostMultiplier(h, s); got != c.anti {
			t.Errorf("%s: soft-anti-affinity multiplier %v, want %v", c.name, got, c.anti)
		}
	}
}
