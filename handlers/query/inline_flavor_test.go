package query

import (
	"net/url"
	"strings"
	"testing"

	"corral/handlers/forms"
	"corral/models/cloudgen"
)

// A flavor's own edit shows in its inline impact even when the flavor is
// not among the first the matrix takes (a cloud with more flavors than
// the matrix has columns).
func TestInlineImpactShowsTheEditedFlavor(t *testing.T) {
	cfg := cloudgen.Small()
	cfg.Flavors = defaultMatrixFlavors + 10
	st := mustState(t, cloudgen.Generate(cfg))
	all := st.options().Flavors
	if len(all) <= defaultMatrixFlavors {
		t.Fatalf("the cloud has %d flavors; the case needs more than %d", len(all), defaultMatrixFlavors)
	}
	// A generated flavor without extra specs: on live data it may land
	// on many hosts.
	edited := ""
	for _, f := range all[defaultMatrixFlavors:] {
		if strings.HasPrefix(f, "gen.") {
			edited = f
		}
	}
	if edited == "" {
		t.Fatalf("no generated flavor beyond the first %d: %v", defaultMatrixFlavors, all)
	}
	props, err := inlineImpactOn(st, url.Values{"impact_form": {"flavor"}, "impact_target": {edited},
		"key": {"aggregate_instance_extra_specs:ssd"}, "value": {"no-host-has-this"}}, forms.Who{})
	if err != nil || props.Error != "" {
		t.Fatalf("inline impact: %v %+v", err, props)
	}
	if len(props.Rows) == 0 {
		t.Fatalf("no pair loses hosts; want %s's pairs to", edited)
	}
	for _, r := range props.Rows {
		if r.Flavor != edited {
			t.Errorf("pair %s × %s changed; only %s was edited", r.Project, r.Flavor, edited)
		}
	}
}
