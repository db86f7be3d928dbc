package scheduling

import (
	"slices"
	"testing"

	"corral/models"
)

func TestCheckGroupPlacement(t *testing.T) {
	anti := &models.ServerGroup{Policy: models.PolicyAntiAffinity, Rules: map[string]int{models.RuleMaxServerPerHost: 2}}
	counts, v := CheckGroupPlacement(anti, []string{"a", "b", "a", "a", "", "b"})
	if len(counts) != 2 || counts[0] != (GroupHostCount{Host: "a", Count: 3, Limit: 2, Over: true}) || counts[1].Over {
		t.Errorf("anti-affinity counts %+v", counts)
	}
	if len(v) != 1 || v[0].Host != "a" || v[0].Count != 3 || v[0].Limit != 2 {
		t.Errorf("anti-affinity violations %+v", v)
	}
	aff := &models.ServerGroup{Policy: models.PolicyAffinity}
	if _, v := CheckGroupPlacement(aff, []string{"b", "a", "b"}); len(v) != 1 || !slices.Equal(v[0].Hosts, []string{"a", "b"}) {
		t.Errorf("affinity violations %+v", v)
	}
	soft := &models.ServerGroup{Policy: models.PolicySoftAntiAffinity}
	if _, v := CheckGroupPlacement(soft, []string{"a", "a", "a"}); len(v) != 0 {
		t.Errorf("soft policy violated: %+v", v)
	}
}
