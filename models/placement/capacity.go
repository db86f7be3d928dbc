package placement

import (
	"fmt"
	"math"

	"corral/models"
)

// Placement's inventory defaults (schemas/inventory.py): a field left at
// zero in corral's world format means the default.
const (
	DefaultMinUnit  = 1
	DefaultMaxUnit  = math.MaxInt32
	DefaultStepSize = 1
	DefaultRatio    = 1.0
)

// Normalized fills an inventory's zero fields with Placement's defaults.
func Normalized(inv models.Inventory) models.Inventory {
	if inv.MinUnit == 0 {
		inv.MinUnit = DefaultMinUnit
	}
	if inv.MaxUnit == 0 {
		inv.MaxUnit = DefaultMaxUnit
	}
	if inv.StepSize == 0 {
		inv.StepSize = DefaultStepSize
	}
	if inv.AllocationRatio == 0 {
		inv.AllocationRatio = DefaultRatio
	}
	return inv
}

// Capacity is what Placement reports as a class's capacity:
// int((total − reserved) × allocation_ratio), truncated as Python's int().
func Capacity(inv models.Inventory) int64 {
	inv = Normalized(inv)
	return int64(float64(inv.Total-inv.Reserved) * inv.AllocationRatio)
}

// Shortfall says why amount of one class does not fit on a provider; the
// zero value (Short == false) means it fits.
type Shortfall struct {
	Short  bool
	Class  string
	Need   int64
	Free   int64 // capacity − used, never below zero
	Inv    models.Inventory
	Used   int64
	Reason string // "capacity", "min_unit", "max_unit", "step_size", "no inventory"
}

// String renders the shortfall for a person, e.g.
// "VCPU: need 4, free 2 of 64 (16 × ratio 4.0, 62 used)".
func (s Shortfall) String() string {
	if !s.Short {
		return ""
	}
	switch s.Reason {
	case "no inventory":
		return fmt.Sprintf("%s: need %d, provider has no %s inventory", s.Class, s.Need, s.Class)
	case "min_unit":
		return fmt.Sprintf("%s: need %d, below min_unit %d", s.Class, s.Need, s.Inv.MinUnit)
	case "max_unit":
		return fmt.Sprintf("%s: need %d, above max_unit %d", s.Class, s.Need, s.Inv.MaxUnit)
	case "step_size":
		return fmt.Sprintf("%s: need %d, not a multiple of step_size %d", s.Class, s.Need, s.Inv.StepSize)
	}
	capText := fmt.Sprintf("%d × ratio %s", s.Inv.Total, ratioText(s.Inv.AllocationRatio))
	if s.Inv.Reserved > 0 {
		capText = fmt.Sprintf("(%d − %d reserved) × ratio %s", s.Inv.Total, s.Inv.Reserved, ratioText(s.Inv.AllocationRatio))
	}
	return fmt.Sprintf("%s: need %d, free %d of %d (%s, %d used)", s.Class, s.Need, s.Free, Capacity(s.Inv), capText, s.Used)
}

func ratioText(r float64) string {
	if r == math.Trunc(r) {
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%g", r)
}

// Check is Placement's per-class test (research_context
// _capacity_check_clause): used + amount ≤ (total − reserved) × ratio,
// min_unit ≤ amount ≤ max_unit, amount a multiple of step_size.
func Check(p *models.Provider, class string, amount int64) Shortfall {
	return CheckUsed(p, class, amount, p.Usages[class])
}

// CheckUsed is Check with the usage given (a preview consuming capacity
// round by round passes its running total).
func CheckUsed(p *models.Provider, class string, amount, used int64) Shortfall {
	raw, ok := p.Inventories[class]
	if !ok {
		return Shortfall{Short: true, Class: class, Need: amount, Reason: "no inventory"}
	}
	return CheckInventory(raw, class, amount, used)
}

// CheckInventory is CheckUsed on an inventory already looked up.
func CheckInventory(raw models.Inventory, class string, amount, used int64) Shortfall {
	inv := Normalized(raw)
	s := Shortfall{Class: class, Need: amount, Inv: inv, Used: used}
	s.Free = Capacity(inv) - used
	if s.Free < 0 {
		s.Free = 0
	}
	switch {
	case float64(used+amount) > float64(inv.Total-inv.Reserved)*inv.AllocationRatio:
		s.Short, s.Reason = true, "capacity"
	case amount < inv.MinUnit:
		s.Short, s.Reason = true, "min_unit"
	case amount > inv.MaxUnit:
		s.Short, s.Reason = true, "max_unit"
	case amount%inv.StepSize != 0:
		s.Short, s.Reason = true, "step_size"
	}
	return s
}
