package scheduling

import "corral/models"

// OpSetQuotas changes some of one project's quota limits (Nova's
// os-quota-sets): project, quotas, [reset, expect, force]. Quotas are not
// part of the world the core schedules on (so it is not in Ops, whose
// changes each edit the world); the store's applier writes it.
const OpSetQuotas = "set_quotas"

// QuotaFields are the fields of a set_quotas change.
type QuotaFields struct {
	// Quotas are new limits by resource (-1 = unlimited).
	Quotas map[string]int `json:"quotas,omitempty"`
	// Reset puts resources back to the default limit.
	Reset []string `json:"reset,omitempty"`
	// Expect holds each resource's limit as the writer last saw it; the
	// write is refused as a Conflict when a stored limit differs.
	Expect map[string]int `json:"expect,omitempty"`
	// Force allows a limit below what the project already uses, as Nova's
	// "force" does.
	Force bool `json:"force,omitempty"`
}

// applyQuotaChange checks a set_quotas change's shape. Quotas are not part
// of the world the core runs on, so a preview is unchanged by it; the
// store writes it (and its undo) when a list of changes is applied.
func applyQuotaChange(c Change, at string) error {
	if c.Project == "" {
		return models.E(models.Invalid, at+".project", "set_quotas needs a project")
	}
	return nil
}
