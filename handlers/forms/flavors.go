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

// The flavor page's forms: create, edit (name, size and extra specs) and
// delete.

// FlavorCreate reads the new-flavor form: name, size and extra specs. The
// create change has no UUID (the flavor's id): the save gives it one.
func FlavorCreate(form url.Values, st models.Settings) Read {
	r := Read{}
	name, size := flavorSize(&r, form)
	r.Title = "New flavor " + name
	_, specs, probs := Rows(form)
	r.Problems = append(probs, ProblemsOf(scheduling.ValidateExtraSpecsFor(specs, st))...)
	r.add(scheduling.Change{Op: scheduling.OpCreateFlavor, Flavor: name, Size: &size, Metadata: specs})
	return r
}

// Flavor reads the edit form of flavor f: its extra-spec rows replace the
// flavor's extra specs, and its name and size fields (when posted) rename
// and resize it. The problems are the editor's own (a key given twice, a
// value without a key) and the scheduling rules' findings.
func Flavor(form url.Values, f *models.Flavor, st models.Settings) Read {
	r := Read{Title: "Extra specs of " + f.Name}
	name, size := flavorSize(&r, form)
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
	// The rename comes last: the changes above name the flavor as it is.
	up := scheduling.Change{Op: scheduling.OpUpdateFlavor, Flavor: f.Name}
	if form.Has("name") && name != "" && name != f.Name {
		up.Value = name
	}
	cur := scheduling.FlavorSize{VCPUs: f.VCPUs, RAMMB: f.RAMMB, DiskGB: f.DiskGB}
	if (form.Has("vcpus") || form.Has("ram_mb") || form.Has("disk_gb")) && len(r.Errors) == 0 && size != cur {
		up.Size = &size
	}
	if up.Value != "" || up.Size != nil {
		r.add(up)
	}
	return r.stamped(form)
}

// FlavorDelete reads the delete confirmation of flavor f.
func FlavorDelete(f *models.Flavor) Read {
	return Read{Title: "Delete flavor " + f.Name,
		Changes: []scheduling.Change{{Op: scheduling.OpDeleteFlavor, Flavor: f.ID}}}
}

// flavorSize reads and checks the name and size fields of the flavor
// forms. A field the form does not post keeps its zero value.
func flavorSize(r *Read, form url.Values) (string, scheduling.FlavorSize) {
	name := strings.TrimSpace(form.Get("name"))
	if form.Has("name") && name == "" {
		r.refuse("name", "A flavor needs a name.")
	}
	var size scheduling.FlavorSize
	for _, f := range []struct {
		field string
		min   int
		dst   *int
	}{{"vcpus", 1, &size.VCPUs}, {"ram_mb", 1, &size.RAMMB}, {"disk_gb", 0, &size.DiskGB}} {
		if !form.Has(f.field) {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(form.Get(f.field)))
		if err != nil || n < f.min {
			r.refuse(f.field, fmt.Sprintf("A whole number of at least %d.", f.min))
			continue
		}
		*f.dst = n
	}
	return name, size
}
