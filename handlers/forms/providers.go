package forms

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"corral/models"
	corePlacement "corral/models/placement"
	"corral/models/scheduling"
)

// maxTraitsForm bounds the traits box.
const maxTraitsForm = 64 << 10

// Traits reads the provider page's traits box: one trait per line (or
// comma separated), replacing the provider's traits.
func Traits(form url.Values, p *models.Provider) Read {
	r := Read{Title: "Traits of " + p.Name}
	raw := form.Get("traits")
	if len(raw) > maxTraitsForm {
		r.refuse("traits", "Too many traits.")
		return r
	}
	var want []string
	for _, line := range strings.FieldsFunc(raw, func(c rune) bool { return c == '\n' || c == '\r' || c == ',' }) {
		t := strings.TrimSpace(line)
		if t == "" || slices.Contains(want, t) {
			continue
		}
		if !nameClass.MatchString(t) || len(t) > 255 {
			r.refuse("traits", fmt.Sprintf("%q is not a trait name: upper-case letters, digits and '_'.", t))
			return r
		}
		want = append(want, t)
	}
	for _, t := range p.Traits {
		if !slices.Contains(want, t) {
			r.add(scheduling.Change{Op: scheduling.OpRemoveTrait, Provider: p.UUID, Trait: t})
		}
	}
	for _, t := range want {
		if !slices.Contains(p.Traits, t) {
			r.add(scheduling.Change{Op: scheduling.OpAddTrait, Provider: p.UUID, Trait: t})
		}
	}
	return r.stamped(form)
}

// Inventory reads the provider page's inventory row: set one resource
// class's total, reserved and allocation ratio (other fields kept), or
// delete it ("delete").
func Inventory(form url.Values, p *models.Provider) Read {
	r := Read{Title: "Inventory of " + p.Name}
	rc := strings.TrimSpace(form.Get("class"))
	if !nameClass.MatchString(rc) || len(rc) > 255 {
		r.refuse("class", "A resource class is upper-case letters, digits and '_' (VCPU, CUSTOM_FPGA).")
		return r
	}
	if form.Get("delete") != "" {
		if _, ok := p.Inventories[rc]; ok {
			r.add(scheduling.Change{Op: scheduling.OpDeleteInventory, Provider: p.UUID, ResourceClass: rc})
		}
		return r
	}
	total, err1 := strconv.ParseInt(strings.TrimSpace(form.Get("total")), 10, 64)
	reserved, err2 := strconv.ParseInt(strings.TrimSpace(orDefault(form.Get("reserved"), "0")), 10, 64)
	ratio, err3 := strconv.ParseFloat(strings.TrimSpace(orDefault(form.Get("allocation_ratio"), "1")), 64)
	switch {
	case err1 != nil || total < 1 || total > corePlacement.DefaultMaxUnit:
		r.refuse("total", "Total must be a whole number from 1 to 2147483647.")
	case err2 != nil || reserved < 0 || reserved > total:
		r.refuse("reserved", "Reserved must be a whole number from 0 to the total.")
	case err3 != nil || !(ratio > 0) || ratio > 1e6:
		r.refuse("allocation_ratio", "The allocation ratio must be a number above 0.")
	}
	if len(r.Errors) > 0 {
		return r
	}
	inv := corePlacement.Normalized(p.Inventories[rc])
	inv.Total, inv.Reserved, inv.AllocationRatio = total, reserved, ratio
	if cur, ok := p.Inventories[rc]; !ok || cur != inv {
		r.add(scheduling.Change{Op: scheduling.OpSetInventory, Provider: p.UUID, ResourceClass: rc, Inventory: &inv})
	}
	return r.stamped(form)
}

func orDefault(s, d string) string {
	if strings.TrimSpace(s) == "" {
		return d
	}
	return s
}
