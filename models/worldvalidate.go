package models

import (
	"errors"
	"fmt"
	"strings"
)

// Validate checks what a world says about itself: every object's fields,
// identities (well-formed, not given twice) and the references it can
// resolve on its own (parent cycles, a server in two groups). It changes
// nothing. Errors are Invalid and name the field by index
// ("aggregates[3].metadata", "server_groups[0].members[1]"), so a bad file
// gets the same answer through `corral import`, the world page and
// `corral preview`. An empty uuid or flavor id is allowed (a new object
// gets one). Fields a merge document leaves out (see Given) are not
// checked: what they keep, and every reference to an object the world
// does not hold, is for the store to check against its rows.
func (w *World) Validate() error {
	if err := checkConsumers(w.Consumers); err != nil {
		return err
	}
	given := func(list []Fields, i int, f Fields) bool {
		return w.Given == nil || i >= len(list) || list[i].Has(f)
	}
	var g Given
	if w.Given != nil {
		g = *w.Given
	}
	if err := w.validateProviders(); err != nil {
		return err
	}
	uuids, names := map[string]int{}, map[string]int{}
	for i := range w.Aggregates {
		a := &w.Aggregates[i]
		at := fmt.Sprintf("aggregates[%d]", i)
		if err := firstOf(checkIdentity(at+".uuid", a.UUID, uuids, i), unique(at+".name", strings.TrimSpace(a.Name), names, i)); err != nil {
			return err
		}
		if err := CheckAggregate(a); err != nil {
			return under(at, err)
		}
	}
	uuids, names = map[string]int{}, map[string]int{}
	for i := range w.Flavors {
		f := &w.Flavors[i]
		at := fmt.Sprintf("flavors[%d]", i)
		if err := unique(at+".name", strings.TrimSpace(f.Name), names, i); err != nil {
			return err
		}
		if f.ID != "" {
			if err := unique(at+".id", f.ID, uuids, i); err != nil {
				return err
			}
		}
		if err := CheckFlavor(f); err != nil {
			return under(at, err)
		}
	}
	uuids = map[string]int{}
	for i := range w.Servers {
		if err := checkIdentity(fmt.Sprintf("servers[%d].uuid", i), w.Servers[i].UUID, uuids, i); err != nil {
			return err
		}
	}
	uuids = map[string]int{}
	inGroup := map[string]int{}
	for i := range w.ServerGroups {
		sg := &w.ServerGroups[i]
		at := fmt.Sprintf("server_groups[%d]", i)
		if err := checkIdentity(at+".uuid", sg.UUID, uuids, i); err != nil {
			return err
		}
		// A group's name may be left empty here: a merge keeps the
		// current one, and only the store knows whether there is one.
		if len(strings.TrimSpace(sg.Name)) > 255 {
			return E(Invalid, at+".name", "server group name is longer than 255 characters")
		}
		if given(g.ServerGroups, i, FieldPolicy) {
			if err := checkGroupPolicy(sg, given(g.ServerGroups, i, FieldRules)); err != nil {
				return under(at, err)
			}
		}
		for j, m := range sg.Members {
			if k, ok := inGroup[m]; ok && k != i {
				return E(Invalid, fmt.Sprintf("%s.members[%d]", at, j), "server %s is already in server_groups[%d]", m, k)
			}
			inGroup[m] = i
		}
	}
	if err := w.Settings.Validate(); err != nil {
		return under("settings", err)
	}
	return nil
}

// validateProviders checks the providers and that their parents, where
// the world holds them, form no cycle.
func (w *World) validateProviders() error {
	uuids, names := map[string]int{}, map[string]int{}
	for i := range w.Providers {
		p := &w.Providers[i]
		at := fmt.Sprintf("providers[%d]", i)
		if err := firstOf(checkIdentity(at+".uuid", p.UUID, uuids, i), unique(at+".name", strings.TrimSpace(p.Name), names, i)); err != nil {
			return err
		}
		if err := CheckProvider(p); err != nil {
			return under(at, err)
		}
	}
	for i := range w.Providers {
		j := i
		for steps := 0; ; steps++ {
			parent := w.Providers[j].ParentUUID
			if parent == nil || *parent == "" {
				break
			}
			k, ok := uuids[*parent]
			if !ok {
				break // a provider the world does not hold: the store's to find
			}
			if k == i || steps > len(w.Providers) {
				return E(Invalid, fmt.Sprintf("providers[%d].parent", i), "provider parents form a cycle through %s", w.Providers[i].Name)
			}
			j = k
		}
	}
	return nil
}

// checkIdentity checks a uuid (empty: one will be given) and that no
// earlier object of the list has it.
func checkIdentity(field, u string, seen map[string]int, i int) error {
	if u == "" {
		return nil
	}
	if !ValidUUID(u) {
		return E(Invalid, field, "%q is not a uuid", u)
	}
	return unique(field, u, seen, i)
}

// unique records v for object i and refuses a value an earlier object has.
func unique(field, v string, seen map[string]int, i int) error {
	if _, dup := seen[v]; dup {
		key := field[strings.LastIndexByte(field, '.')+1:]
		return E(Invalid, field, "%s %q appears twice", key, v)
	}
	seen[v] = i
	return nil
}

func firstOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// under puts a field-relative error under an object's path.
func under(path string, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	c.Field = JoinPath(path, c.Field)
	return &c
}

// checkName checks a name the way every object's is: what is the kind of
// object with its article ("an aggregate").
func checkName(name string, max int, what string) *Error {
	name = strings.TrimSpace(name)
	if name == "" {
		return E(Invalid, "name", "%s needs a name", what)
	}
	if len(name) > max {
		_, kind, _ := strings.Cut(what, " ")
		return E(Invalid, "name", "%s name is longer than %d characters", kind, max)
	}
	return nil
}

// CheckProvider checks a provider's own fields (name, traits,
// inventories); field paths are relative to the provider.
func CheckProvider(p *Provider) error {
	if err := checkName(p.Name, 200, "a resource provider"); err != nil {
		return err
	}
	for _, tr := range p.Traits {
		if strings.TrimSpace(tr) == "" {
			return E(Invalid, "traits", "a trait name cannot be empty")
		}
	}
	for rc, inv := range p.Inventories {
		if rc == "" {
			return E(Invalid, "inventories", "a resource class name cannot be empty")
		}
		if inv.Total < 0 || inv.Reserved < 0 || inv.AllocationRatio < 0 {
			return E(Invalid, "inventories", "inventory %s has a negative value", rc)
		}
	}
	return checkCompute(p)
}

// checkCompute checks a host's service: Nova's words for its
// status and state, and fields of the lengths Nova's columns allow.
func checkCompute(p *Provider) error {
	s := p.Compute
	if s == nil {
		return nil
	}
	if p.ParentUUID != nil && *p.ParentUUID != "" {
		return E(Invalid, "compute", "only a host (a provider without a parent) runs a compute service")
	}
	if s.Status != "" && s.Status != ServiceEnabled && s.Status != ServiceDisabled {
		return E(Invalid, "compute.status", "status must be %q or %q, not %q", ServiceEnabled, ServiceDisabled, s.Status)
	}
	if s.State != "" && s.State != ServiceUp && s.State != ServiceDown {
		return E(Invalid, "compute.state", "state must be %q or %q, not %q", ServiceUp, ServiceDown, s.State)
	}
	for _, f := range [][2]string{{"host", s.Host}, {"disabled_reason", s.DisabledReason}, {"last_seen", s.LastSeen},
		{"hypervisor_type", s.HypervisorType}, {"host_ip", s.HostIP}} {
		if len(f[1]) > 255 {
			return E(Invalid, "compute."+f[0], "%s is longer than 255 characters", f[0])
		}
	}
	return nil
}

// MaxAggregateMetadataKeys bounds the metadata keys of one aggregate.
// Nova's API schema sets no count (only 255 characters a key and a value),
// but every key is kept, compared and sent on each preview, so corral
// refuses an aggregate past a thousand keys, far above any real use.
const MaxAggregateMetadataKeys = 1000

// CheckAggregate checks the fields of an aggregate a person types.
func CheckAggregate(a *Aggregate) error {
	if err := checkName(a.Name, 255, "an aggregate"); err != nil {
		return err
	}
	// The count of keys is bounded where changes add them (the core's
	// change checks), not here: a synced cloud is stored as Nova has it.
	for k, v := range a.Metadata {
		if strings.TrimSpace(k) == "" || len(k) > 255 {
			return E(Invalid, "metadata", "metadata key %q must be 1 to 255 characters", k)
		}
		if len(v) > 255 {
			return E(Invalid, "metadata", "metadata value of %q is longer than 255 characters", k)
		}
	}
	return checkMemberships(a)
}

// CheckFlavor checks a flavor's fields: sizes, access list, extra specs.
func CheckFlavor(f *Flavor) error {
	if err := checkName(f.Name, 255, "a flavor"); err != nil {
		return err
	}
	switch {
	case f.VCPUs < 0:
		return E(Invalid, "vcpus", "vcpus cannot be negative")
	case f.RAMMB < 0:
		return E(Invalid, "ram_mb", "ram cannot be negative")
	case f.DiskGB < 0:
		return E(Invalid, "disk_gb", "disk cannot be negative")
	case f.EphemeralGB < 0:
		return E(Invalid, "ephemeral_gb", "ephemeral disk cannot be negative")
	case f.SwapMB < 0:
		return E(Invalid, "swap_mb", "swap cannot be negative")
	}
	if len(f.Projects) > 0 && !f.Private {
		return E(Invalid, "projects", "only a private flavor has an access list")
	}
	for _, p := range f.Projects {
		if p == "" || len(p) > 255 {
			return E(Invalid, "projects", "a project id is 1 to 255 characters")
		}
	}
	for k, v := range f.ExtraSpecs {
		if strings.TrimSpace(k) == "" || len(k) > 255 {
			return E(Invalid, "extra_specs", "extra spec key %q must be 1 to 255 characters", k)
		}
		if len(v) > 255 {
			return E(Invalid, "extra_specs", "extra spec %q: value is longer than 255 characters", k)
		}
	}
	return nil
}

// CheckServerGroup checks a group's name, policy and rules as Nova's API
// does at 2.64.
func CheckServerGroup(g *ServerGroup) error {
	if err := checkName(g.Name, 255, "a server group"); err != nil {
		return err
	}
	if err := checkGroupPolicy(g, true); err != nil {
		return err
	}
	return nil
}

// checkGroupPolicy checks the policy and, with rules, the rules.
func checkGroupPolicy(g *ServerGroup, rules bool) *Error {
	switch g.Policy {
	case PolicyAffinity, PolicyAntiAffinity, PolicySoftAffinity, PolicySoftAntiAffinity:
	default:
		return E(Invalid, "policy", "unknown policy %q (want affinity, anti-affinity, soft-affinity or soft-anti-affinity)", g.Policy)
	}
	if rules {
		return CheckGroupRules(g.Policy, g.Rules)
	}
	return nil
}

// checkConsumers checks a world's consumers on their own: uuids, sizes,
// amounts.
func checkConsumers(cs []Consumer) error {
	seen := map[string]bool{}
	for i, c := range cs {
		at := fmt.Sprintf("allocations[%d]", i)
		switch {
		case !ValidUUID(c.UUID):
			return E(Invalid, at+".consumer", "%q is not a UUID", c.UUID)
		case seen[c.UUID]:
			return E(Invalid, at+".consumer", "consumer %q appears twice", c.UUID)
		case len(c.ProjectID) > 255 || len(c.UserID) > 255 || len(c.ConsumerType) > 255:
			return E(Invalid, at, "project_id, user_id and consumer_type have at most 255 characters")
		case c.Generation < 0:
			return E(Invalid, at+".consumer_generation", "a consumer's generation is at least 1, got %d", c.Generation)
		}
		seen[c.UUID] = true
		for _, a := range c.Allocations {
			if a.ResourceClass == "" || len(a.ResourceClass) > 255 || a.Used < 1 {
				return E(Invalid, at+".resources", "class %q: an amount is at least 1, got %d", a.ResourceClass, a.Used)
			}
		}
	}
	return nil
}

// CheckMetadataCount refuses an aggregate with more than
// MaxAggregateMetadataKeys metadata keys.
func CheckMetadataCount(aggregate string, keys int) *Error {
	if keys > MaxAggregateMetadataKeys {
		return E(Invalid, "metadata", "aggregate %s would have %d metadata keys; at most %d are allowed", aggregate, keys, MaxAggregateMetadataKeys)
	}
	return nil
}
