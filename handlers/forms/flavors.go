package forms

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"corral/models"
	"corral/models/scheduling"
)

// FlavorSpecs reads the extra-spec editor of flavor f: its rows replace
// the flavor's extra specs. The problems are the editor's own (a key
// given twice, a value without a key) and the scheduling rules' findings.
func FlavorSpecs(form url.Values, f *models.Flavor, st models.Settings) Read {
	r := Read{Title: "Extra specs of " + f.Name}
	flavorSize(&r, form)
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

// flavorSize checks the name and size fields the flavor page posts with
// its extra specs (when it posts them), as its save does.
func flavorSize(r *Read, form url.Values) {
	if form.Has("name") && strings.TrimSpace(form.Get("name")) == "" {
		r.refuse("name", "A flavor needs a name.")
	}
	for _, f := range []struct {
		field string
		min   int
	}{{"vcpus", 1}, {"ram_mb", 1}, {"disk_gb", 0}} {
		if !form.Has(f.field) {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(form.Get(f.field))); err != nil || n < f.min {
			r.refuse(f.field, fmt.Sprintf("A whole number of at least %d.", f.min))
		}
	}
}
