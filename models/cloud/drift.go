package cloud

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"corral/models"
)

// drift re-reads the objects the plan touches and compares them with what
// the last sync read: any difference means the draft was made against a
// cloud that is no longer there.
func (c *Client) drift(ctx context.Context, plan *Plan) ([]models.Drift, error) {
	out, err := c.aggregateDrift(ctx, plan)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, s := range plan.Steps {
		var found []models.Drift
		switch s.Kind {
		case "flavor_create", "flavor_delete", "flavor_extra_specs", "flavor_unset_extra_spec", "flavor_access_add", "flavor_access_remove":
			if seen["f"+s.id] {
				continue
			}
			seen["f"+s.id] = true
			found, err = c.flavorDrift(ctx, plan, s)
		case "group_create", "group_delete":
			found, err = c.groupDrift(ctx, plan, s)
		case "quota_set":
			found, err = c.quotaDrift(ctx, s)
		case "provider_create", "provider_update", "provider_delete":
			if seen["p"+s.Provider] {
				continue
			}
			seen["p"+s.Provider] = true
			found, err = c.providerDrift(ctx, plan, s)
		case "provider_inventories":
			if seen["i"+s.Provider] {
				continue
			}
			seen["i"+s.Provider] = true
			found, err = c.inventoryDrift(ctx, plan, s)
		case "provider_traits":
			if seen["t"+s.Provider] || plan.kept.Placement.Providers[s.Provider] == nil {
				continue
			}
			seen["t"+s.Provider] = true
			found, err = c.traitDrift(ctx, plan, s)
		case "placement_aggregates":
			if seen[s.Provider] || plan.kept.Placement.Providers[s.Provider] == nil {
				continue
			}
			seen[s.Provider] = true
			found, err = c.placementAggregatesDrift(ctx, plan, s)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// aggregateDrift compares the aggregates the plan touches, and the names
// it creates, with Nova's now.
func (c *Client) aggregateDrift(ctx context.Context, plan *Plan) ([]models.Drift, error) {
	var out []models.Drift
	if len(plan.touchedAggs) == 0 && len(plan.newNames) == 0 {
		// Nothing to compare; and the person a write acts for may not
		// read aggregates (a member creating a server group).
		return nil, nil
	}
	var aggs struct {
		Aggregates []NovaAggregate `json:"aggregates"`
	}
	if err := c.get(ctx, c.Compute, "os-aggregates", &aggs); err != nil {
		return nil, err
	}
	now := map[string]NovaAggregate{}
	names := map[string]bool{}
	for _, a := range aggs.Aggregates {
		now[a.UUID] = a
		names[a.Name] = true
	}
	then := map[string]NovaAggregate{}
	for _, a := range plan.kept.Aggregates {
		then[a.UUID] = a
	}
	for _, u := range plan.touchedAggs {
		old, known := then[u]
		if !known {
			continue // placement-only: checked through its providers
		}
		cur, ok := now[u]
		if !ok {
			out = append(out, drifted("aggregate "+old.Name, "", "exists", "deleted", fmt.Sprintf("aggregate %s: deleted in nova since the last sync", old.Name)))
			continue
		}
		out = append(out, oneAggregateDrift(old, cur)...)
	}
	for _, n := range plan.newNames {
		if names[n] {
			out = append(out, drifted("aggregate "+n, "", none, "created", fmt.Sprintf("aggregate %s: created in nova since the last sync", n)))
		}
	}
	return out, nil
}

// oneAggregateDrift is what changed in one aggregate from old to cur:
// name, zone, metadata, hosts.
func oneAggregateDrift(old, cur NovaAggregate) []models.Drift {
	var out []models.Drift
	if cur.Name != old.Name {
		out = append(out, drifted("aggregate "+old.Name, "name", old.Name, cur.Name, fmt.Sprintf("aggregate %s: name is now %q", old.Name, cur.Name)))
	}
	if z := strOr(cur.AvailabilityZone); z != strOr(old.AvailabilityZone) {
		out = append(out, drifted("aggregate "+old.Name, "availability_zone", orNone(strOr(old.AvailabilityZone)), orNone(z), fmt.Sprintf("aggregate %s: availability_zone %q → %q", old.Name, strOr(old.AvailabilityZone), z)))
	}
	for _, k := range slices.Sorted(maps.Keys(union(old.Metadata, cur.Metadata))) {
		if k == "availability_zone" {
			continue
		}
		ov, ook := old.Metadata[k]
		nv, nok := cur.Metadata[k]
		switch {
		case ook && !nok:
			out = append(out, drifted("aggregate "+old.Name, "metadata "+k, ov, none, fmt.Sprintf("aggregate %s: metadata %s was removed (was %q)", old.Name, k, ov)))
		case !ook && nok:
			out = append(out, drifted("aggregate "+old.Name, "metadata "+k, none, nv, fmt.Sprintf("aggregate %s: metadata %s was added (%q)", old.Name, k, nv)))
		case ov != nv:
			out = append(out, drifted("aggregate "+old.Name, "metadata "+k, ov, nv, fmt.Sprintf("aggregate %s: metadata %s %q → %q", old.Name, k, ov, nv)))
		}
	}
	oh, nh := setOf(old.Hosts), setOf(cur.Hosts)
	for _, h := range slices.Sorted(maps.Keys(nh)) {
		if !oh[h] {
			out = append(out, drifted("aggregate "+old.Name, "host "+h, "not a member", "member", fmt.Sprintf("aggregate %s: host %s was added", old.Name, h)))
		}
	}
	for _, h := range slices.Sorted(maps.Keys(oh)) {
		if !nh[h] {
			out = append(out, drifted("aggregate "+old.Name, "host "+h, "member", "not a member", fmt.Sprintf("aggregate %s: host %s was removed", old.Name, h)))
		}
	}
	return out
}

// extraSpecDrift compares flavor id's extra specs now with old.
func (c *Client) extraSpecDrift(ctx context.Context, s Step, id string, old map[string]string) ([]models.Drift, error) {
	var cur struct {
		ExtraSpecs map[string]string `json:"extra_specs"`
	}
	if err := c.get(ctx, c.Compute, "flavors/"+id+"/os-extra_specs", &cur); err != nil {
		return nil, err
	}
	var out []models.Drift
	for _, k := range slices.Sorted(maps.Keys(union(old, cur.ExtraSpecs))) {
		ov, ook := old[k]
		nv, nok := cur.ExtraSpecs[k]
		switch {
		case ook && !nok:
			out = append(out, drifted("flavor "+s.Aggregate, "extra spec "+k, ov, none, fmt.Sprintf("flavor %s: extra spec %s was removed (was %q)", s.Aggregate, k, ov)))
		case !ook && nok:
			out = append(out, drifted("flavor "+s.Aggregate, "extra spec "+k, none, nv, fmt.Sprintf("flavor %s: extra spec %s was added (%q)", s.Aggregate, k, nv)))
		case ov != nv:
			out = append(out, drifted("flavor "+s.Aggregate, "extra spec "+k, ov, nv, fmt.Sprintf("flavor %s: extra spec %s %q → %q", s.Aggregate, k, ov, nv)))
		}
	}
	return out, nil
}

// traitDrift compares the traits of the step's provider now with the
// last sync's.
func (c *Client) traitDrift(ctx context.Context, plan *Plan, s Step) ([]models.Drift, error) {
	var cur struct {
		Traits []string `json:"traits"`
	}
	if err := c.get(ctx, c.Placement, "resource_providers/"+s.Provider+"/traits", &cur); err != nil {
		return nil, err
	}
	var old []string
	if kp := plan.kept.Placement.Providers[s.Provider]; kp != nil {
		old = kp.Traits
	}
	if a, b := sorted(old), sorted(cur.Traits); !slices.Equal(a, b) {
		return []models.Drift{drifted("provider "+s.ProviderName, "traits", orNone(strings.Join(a, " ")), orNone(strings.Join(b, " ")), fmt.Sprintf("provider %s: traits [%s] → [%s]", s.ProviderName, strings.Join(a, " "), strings.Join(b, " ")))}, nil
	}
	return nil, nil
}

// placementAggregatesDrift compares the Placement aggregates of the step's
// provider now with the last sync's.
func (c *Client) placementAggregatesDrift(ctx context.Context, plan *Plan, s Step) ([]models.Drift, error) {
	var cur struct {
		Aggregates []string `json:"aggregates"`
	}
	if err := c.get(ctx, c.Placement, "resource_providers/"+s.Provider+"/aggregates", &cur); err != nil {
		return nil, err
	}
	var old []string
	if kp := plan.kept.Placement.Providers[s.Provider]; kp != nil {
		old = kp.Aggregates
	}
	a, b := slices.Clone(old), slices.Clone(cur.Aggregates)
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		return []models.Drift{drifted("provider "+s.ProviderName, "placement aggregates", orNone(strings.Join(a, " ")), orNone(strings.Join(b, " ")), fmt.Sprintf("provider %s: placement aggregates [%s] → [%s]", s.ProviderName, strings.Join(a, " "), strings.Join(b, " ")))}, nil
	}
	return nil, nil
}

// none stands for a value the object does not have.
const none = "(none)"

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

// drifted is one drifted field: its value at the last sync (base), the
// cloud's now, and the finding as one sentence.
func drifted(object, field, base, now, text string) models.Drift {
	return models.Drift{Object: object, Field: field, Base: base, Cloud: now, Text: text}
}

func strOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func union(a, b map[string]string) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}
