package forms

import (
	"maps"
	"net/url"
	"slices"

	"corral/models"
	"corral/models/scheduling"
)

// FlavorSpecs reads the extra-spec editor of flavor f: its rows replace
// the flavor's extra specs. The problems are the editor's own (a key
// given twice, a value without a key) and the scheduling rules' findings.
func FlavorSpecs(form url.Values, f *models.Flavor, st models.Settings) Read {
	r := Read{Title: "Extra specs of " + f.Name}
	_, specs, probs := Rows(form)
	r.Problems = append(probs, ProblemsOf(scheduling.ValidateExtraSpecsFor(specs, st))...)
	for _, k := range slices.Sorted(maps.Keys(f.ExtraSpecs)) {
		if _, ok := specs[k]; !ok {
			r.add(scheduling.Change{Op: scheduling.OpUnsetExtraSpec, Flavor: f.Name, Key: k})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(specs)) {
		if v, ok := f.ExtraSpecs[k]; !ok || v != specs[k] {
			r.add(scheduling.Change{Op: scheduling.OpSetExtraSpec, Flavor: f.Name, Key: k, Value: specs[k]})
		}
	}
	return r
}
