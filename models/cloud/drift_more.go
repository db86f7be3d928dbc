package cloud

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"corral/models"
)

// notFound says whether err is the service's 404.
func notFound(err error) bool {
	var se *ServiceError
	return errors.As(err, &se) && se.Status() == 404
}

// flavorDrift compares the step's flavor now with the last sync's: a new
// one must not exist yet; an existing one keeps its size, visibility,
// extra specs and access list.
func (c *Client) flavorDrift(ctx context.Context, plan *Plan, s Step) ([]models.Drift, error) {
	var cur struct {
		Flavor NovaFlavor `json:"flavor"`
	}
	err := c.get(ctx, c.Compute, "flavors/"+url.PathEscape(s.id), &cur)
	var old *NovaFlavor
	for i := range plan.kept.Flavors {
		if plan.kept.Flavors[i].ID == s.id {
			old = &plan.kept.Flavors[i]
		}
	}
	switch {
	case notFound(err) && old == nil:
		return c.flavorNameDrift(ctx, s)
	case notFound(err):
		return []models.Drift{drifted("flavor "+s.Aggregate, "", "exists", "deleted", fmt.Sprintf("flavor %s: deleted in nova since the last sync", s.Aggregate))}, nil
	case err != nil:
		return nil, err
	case old == nil:
		return []models.Drift{drifted("flavor "+s.Aggregate, "id "+s.id, none, "created as "+cur.Flavor.Name, fmt.Sprintf("flavor %s: id %s was created in nova since the last sync (as %q)", s.Aggregate, s.id, cur.Flavor.Name))}, nil
	}
	var out []models.Drift
	f := cur.Flavor
	if f.Name != old.Name {
		out = append(out, drifted("flavor "+old.Name, "name", old.Name, f.Name, fmt.Sprintf("flavor %s: name is now %q", old.Name, f.Name)))
	}
	if f.VCPUs != old.VCPUs || f.RAM != old.RAM || f.Disk != old.Disk {
		out = append(out, drifted("flavor "+old.Name, "size", fmt.Sprintf("%d vcpus %d MB %d GB", old.VCPUs, old.RAM, old.Disk), fmt.Sprintf("%d vcpus %d MB %d GB", f.VCPUs, f.RAM, f.Disk),
			fmt.Sprintf("flavor %s: size %d vcpus %d MB %d GB → %d vcpus %d MB %d GB", old.Name, old.VCPUs, old.RAM, old.Disk, f.VCPUs, f.RAM, f.Disk)))
	}
	if f.IsPublic != old.IsPublic {
		out = append(out, drifted("flavor "+old.Name, "is_public", fmt.Sprint(old.IsPublic), fmt.Sprint(f.IsPublic), fmt.Sprintf("flavor %s: is_public %t → %t", old.Name, old.IsPublic, f.IsPublic)))
	}
	specs, err := c.extraSpecDrift(ctx, s, s.id, old.ExtraSpecs)
	if err != nil {
		return nil, err
	}
	out = append(out, specs...)
	if !f.IsPublic {
		var acc struct {
			Access []struct {
				TenantID string `json:"tenant_id"`
			} `json:"flavor_access"`
		}
		if err := c.get(ctx, c.Compute, "flavors/"+url.PathEscape(s.id)+"/os-flavor-access", &acc); err != nil {
			return nil, err
		}
		var now []string
		for _, a := range acc.Access {
			now = append(now, a.TenantID)
		}
		if a, b := sorted(old.Projects), sorted(now); !slices.Equal(a, b) {
			out = append(out, drifted("flavor "+old.Name, "access", orNone(strings.Join(a, " ")), orNone(strings.Join(b, " ")), fmt.Sprintf("flavor %s: access [%s] → [%s]", old.Name, strings.Join(a, " "), strings.Join(b, " "))))
		}
	}
	return out, nil
}

// flavorNameDrift says whether a flavor of the name a new one takes was
// created since the last sync (Nova's names are unique).
func (c *Client) flavorNameDrift(ctx context.Context, s Step) ([]models.Drift, error) {
	var all struct {
		Flavors []NovaFlavor `json:"flavors"`
	}
	if err := c.get(ctx, c.Compute, "flavors?is_public=None&limit=1000", &all); err != nil {
		return nil, err
	}
	for _, f := range all.Flavors {
		if f.Name == s.Aggregate {
			return []models.Drift{drifted("flavor "+s.Aggregate, "", none, "created as "+f.ID, fmt.Sprintf("flavor %s: a flavor of that name (%s) was created in nova since the last sync", s.Aggregate, f.ID))}, nil
		}
	}
	return nil, nil
}

// groupDrift compares the step's server group now with the last sync's: a
// group to delete is still the same; a group to create has no namesake
// made in its project since.
func (c *Client) groupDrift(ctx context.Context, plan *Plan, s Step) ([]models.Drift, error) {
	if s.Kind == "group_create" {
		var all struct {
			Groups []NovaServerGroup `json:"server_groups"`
		}
		if err := c.get(ctx, c.Compute, "os-server-groups?all_projects=True&limit=1000", &all); err != nil {
			return nil, err
		}
		for _, g := range all.Groups {
			if _, known := plan.groups[g.ID]; !known && g.Name == s.Aggregate && g.ProjectID == s.Project {
				return []models.Drift{drifted("server group "+s.Aggregate, "", none, "created as "+g.ID, fmt.Sprintf("server group %s: project %s created a group of that name (%s) since the last sync", s.Aggregate, s.Project, g.ID))}, nil
			}
		}
		return nil, nil
	}
	old := plan.groups[s.id]
	var cur struct {
		Group NovaServerGroup `json:"server_group"`
	}
	err := c.get(ctx, c.Compute, "os-server-groups/"+s.id, &cur)
	switch {
	case notFound(err):
		return []models.Drift{drifted("server group "+s.Aggregate, "", "exists", "deleted", fmt.Sprintf("server group %s: deleted in nova since the last sync", s.Aggregate))}, nil
	case err != nil:
		return nil, err
	}
	g := cur.Group
	var out []models.Drift
	if g.Name != old.Name {
		out = append(out, drifted("server group "+old.Name, "name", old.Name, g.Name, fmt.Sprintf("server group %s: name is now %q", old.Name, g.Name)))
	}
	if g.Policy != old.Policy || !maps.Equal(g.Rules, old.Rules) && len(g.Rules)+len(old.Rules) > 0 {
		out = append(out, drifted("server group "+old.Name, "policy", fmt.Sprintf("%s %v", old.Policy, old.Rules), fmt.Sprintf("%s %v", g.Policy, g.Rules),
			fmt.Sprintf("server group %s: policy %s %v → %s %v", old.Name, old.Policy, old.Rules, g.Policy, g.Rules)))
	}
	if a, b := sorted(old.Members), sorted(g.Members); !slices.Equal(a, b) {
		out = append(out, drifted("server group "+old.Name, "members", orNone(strings.Join(a, " ")), orNone(strings.Join(b, " ")), fmt.Sprintf("server group %s: members [%s] → [%s]", old.Name, strings.Join(a, " "), strings.Join(b, " "))))
	}
	return out, nil
}

// providerDrift compares the step's provider now with the last sync's: a
// new one must not exist yet (by uuid or name); one renamed, moved or
// deleted keeps its name, parent, traits, aggregates and inventories.
func (c *Client) providerDrift(ctx context.Context, plan *Plan, s Step) ([]models.Drift, error) {
	var cur PlacementProvider
	err := c.get(ctx, c.Placement, "resource_providers/"+s.Provider, &cur)
	old := plan.kept.Placement.Providers[s.Provider]
	if s.Kind == "provider_create" {
		if err == nil {
			return []models.Drift{drifted("provider "+s.ProviderName, "uuid "+s.Provider, none, "created as "+cur.Name, fmt.Sprintf("provider %s: uuid %s was created in placement since the last sync (as %q)", s.ProviderName, s.Provider, cur.Name))}, nil
		} else if !notFound(err) {
			return nil, err
		}
		var named struct {
			Providers []PlacementProvider `json:"resource_providers"`
		}
		if err = c.get(ctx, c.Placement, "resource_providers?name="+url.QueryEscape(s.ProviderName), &named); err != nil {
			return nil, err
		}
		if len(named.Providers) > 0 {
			return []models.Drift{drifted("provider "+s.ProviderName, "", none, "created as "+named.Providers[0].UUID, fmt.Sprintf("provider %s: a provider of that name (%s) was created in placement since the last sync", s.ProviderName, named.Providers[0].UUID))}, nil
		}
		return nil, nil
	}
	switch {
	case notFound(err):
		return []models.Drift{drifted("provider "+s.ProviderName, "", "exists", "deleted", fmt.Sprintf("provider %s: deleted in placement since the last sync", s.ProviderName))}, nil
	case err != nil:
		return nil, err
	case old == nil:
		return nil, nil
	}
	var out []models.Drift
	if cur.Name != old.Name {
		out = append(out, drifted("provider "+old.Name, "name", old.Name, cur.Name, fmt.Sprintf("provider %s: name is now %q", old.Name, cur.Name)))
	}
	if ptrStr(cur.ParentUUID) != ptrStr(old.ParentUUID) {
		out = append(out, drifted("provider "+old.Name, "parent", orNone(ptrStr(old.ParentUUID)), orNone(ptrStr(cur.ParentUUID)), fmt.Sprintf("provider %s: parent %q → %q", old.Name, ptrStr(old.ParentUUID), ptrStr(cur.ParentUUID))))
	}
	if s.Kind != "provider_delete" {
		return out, nil
	}
	// A delete's undo restores what the last sync read: all of it must
	// still be so.
	s.ProviderName = old.Name
	for _, check := range []func(context.Context, *Plan, Step) ([]models.Drift, error){c.traitDrift, c.placementAggregatesDrift, c.inventoryDrift} {
		found, err := check(ctx, plan, s)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// inventoryDrift compares the inventories of the step's provider now with
// the last sync's, class by class and field by field.
func (c *Client) inventoryDrift(ctx context.Context, plan *Plan, s Step) ([]models.Drift, error) {
	var cur struct {
		Inventories map[string]Inventory `json:"inventories"`
	}
	err := c.get(ctx, c.Placement, "resource_providers/"+s.Provider+"/inventories", &cur)
	if notFound(err) {
		if plan.kept.Placement.Providers[s.Provider] == nil {
			return nil, nil // a provider the rollout creates
		}
		return []models.Drift{drifted("provider "+s.ProviderName, "", "exists", "deleted", fmt.Sprintf("provider %s: deleted in placement since the last sync", s.ProviderName))}, nil
	} else if err != nil {
		return nil, err
	}
	var old map[string]Inventory
	if kp := plan.kept.Placement.Providers[s.Provider]; kp != nil {
		old = kp.Inventories
	}
	var out []models.Drift
	for _, rc := range slices.Sorted(maps.Keys(unionInv(old, cur.Inventories))) {
		o, ook := old[rc]
		n, nok := cur.Inventories[rc]
		switch {
		case ook && !nok:
			out = append(out, drifted("provider "+s.ProviderName, "inventory "+rc, fmt.Sprintf("total %d", o.Total), none, fmt.Sprintf("provider %s: inventory %s was removed (total was %d)", s.ProviderName, rc, o.Total)))
		case !ook && nok:
			out = append(out, drifted("provider "+s.ProviderName, "inventory "+rc, none, fmt.Sprintf("total %d", n.Total), fmt.Sprintf("provider %s: inventory %s was added (total %d)", s.ProviderName, rc, n.Total)))
		default:
			out = append(out, inventoryFieldDrift(s.ProviderName, rc, o, n)...)
		}
	}
	return out, nil
}

func inventoryFieldDrift(provider, rc string, o, n Inventory) []models.Drift {
	var out []models.Drift
	for _, f := range []struct {
		name string
		a, b int64
	}{{"total", o.Total, n.Total}, {"reserved", o.Reserved, n.Reserved}, {"min_unit", o.MinUnit, n.MinUnit},
		{"max_unit", o.MaxUnit, n.MaxUnit}, {"step_size", o.StepSize, n.StepSize}} {
		if f.a != f.b {
			out = append(out, drifted("provider "+provider, "inventory "+rc+" "+f.name, fmt.Sprint(f.a), fmt.Sprint(f.b), fmt.Sprintf("provider %s: inventory %s %s %d → %d", provider, rc, f.name, f.a, f.b)))
		}
	}
	if o.AllocationRatio != n.AllocationRatio {
		out = append(out, drifted("provider "+provider, "inventory "+rc+" allocation_ratio", fmt.Sprint(o.AllocationRatio), fmt.Sprint(n.AllocationRatio),
			fmt.Sprintf("provider %s: inventory %s allocation_ratio %g → %g", provider, rc, o.AllocationRatio, n.AllocationRatio)))
	}
	return out
}

func unionInv(a, b map[string]Inventory) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// quotaDrift compares the project's limits now with those the writer saw
// (a set_quotas change's expect).
func (c *Client) quotaDrift(ctx context.Context, s Step) ([]models.Drift, error) {
	if len(s.expect) == 0 {
		return nil, nil
	}
	var cur quotaSet
	if err := c.get(ctx, c.Compute, "os-quota-sets/"+url.PathEscape(s.Project), &cur); err != nil {
		return nil, err
	}
	now := cur.limits()
	var out []models.Drift
	for _, k := range slices.Sorted(maps.Keys(s.expect)) {
		if now[k] != s.expect[k] {
			out = append(out, drifted("quota "+s.Project, k, fmt.Sprint(s.expect[k]), fmt.Sprint(now[k]), fmt.Sprintf("quota %s: %s %d → %d", s.Project, k, s.expect[k], now[k])))
		}
	}
	return out, nil
}
