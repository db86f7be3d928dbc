package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/config"

	"corral/models"
	"corral/models/scheduling"
)

// callMore makes the calls of flavors, server groups, providers'
// inventories and the catalog, and the plain ones.
func (c *Client) callMore(ctx context.Context, s *Step, path string, scoped map[string]*gophercloud.ServiceClient) (map[string]any, error) {
	rel := strings.TrimPrefix(path, "/")
	switch s.Kind {
	case "group_create":
		return c.createGroup(ctx, s, scoped[s.Project])
	case "provider_inventories":
		if err := c.ensure(ctx, s, "resource_classes/"); err != nil {
			return nil, err
		}
		return nil, retryConflict(func() error { return c.providerInventories(ctx, s, rel) })
	case "trait_create":
		return nil, c.ensure(ctx, s, "traits/")
	case "resource_class_create":
		return nil, c.ensure(ctx, s, "resource_classes/")
	case "provider_create":
		return nil, c.send(ctx, c.Placement, "POST", rel, s.Body, nil, 200, 201)
	case "quota_set":
		return nil, c.setQuotas(ctx, s, rel)
	}
	sc, ok := c.Compute, []int{200}
	if s.Service == "placement" {
		sc = c.Placement
	}
	switch {
	case s.Method == "DELETE":
		ok = []int{200, 202, 204}
	case s.Kind == "flavor_create":
		ok = []int{200}
	}
	return nil, c.send(ctx, sc, s.Method, rel, s.Body, nil, ok...)
}

// retryConflict makes a generation-guarded write and, when Placement
// answers 409 (the generation moved under it), once more: the write
// re-reads the generation itself.
func retryConflict(write func() error) error {
	err := write()
	var se *ServiceError
	if errors.As(err, &se) && se.Status() == 409 {
		err = write()
	}
	return err
}

// providerAggregates changes one aggregate of a provider's Placement list,
// at the generation it reads.
func (c *Client) providerAggregates(ctx context.Context, s *Step, path string) error {
	rel := strings.TrimPrefix(path, "/")
	return retryConflict(func() error {
		var cur struct {
			Aggregates []string `json:"aggregates"`
			Generation int64    `json:"resource_provider_generation"`
		}
		if err := c.get(ctx, c.Placement, rel, &cur); err != nil {
			return err
		}
		next := slices.DeleteFunc(cur.Aggregates, func(x string) bool { return x == s.AggregateUUID })
		if s.add {
			next = append(next, s.AggregateUUID)
		}
		slices.Sort(next)
		s.Body = map[string]any{"aggregates": next, "resource_provider_generation": cur.Generation}
		return c.send(ctx, c.Placement, "PUT", rel, s.Body, nil, 200)
	})
}

// providerTraits adds and removes the step's traits, at the generation it
// reads; custom traits Placement does not know are created first.
func (c *Client) providerTraits(ctx context.Context, s *Step, path string) error {
	if err := c.ensure(ctx, s, "traits/"); err != nil {
		return err
	}
	rel := strings.TrimPrefix(path, "/")
	return retryConflict(func() error {
		var cur struct {
			Traits     []string `json:"traits"`
			Generation int64    `json:"resource_provider_generation"`
		}
		if err := c.get(ctx, c.Placement, rel, &cur); err != nil {
			return err
		}
		next := slices.DeleteFunc(cur.Traits, func(t string) bool { return slices.Contains(s.traitsRemove, t) })
		for _, t := range s.traitsAdd {
			if !slices.Contains(next, t) {
				next = append(next, t)
			}
		}
		slices.Sort(next)
		s.Body = map[string]any{"traits": next, "resource_provider_generation": cur.Generation}
		return c.send(ctx, c.Placement, "PUT", rel, s.Body, nil, 200)
	})
}

// providerInventories sets and removes the step's classes in the
// provider's whole inventory, at the generation it reads.
func (c *Client) providerInventories(ctx context.Context, s *Step, rel string) error {
	var cur struct {
		Inventories map[string]map[string]any `json:"inventories"`
		Generation  int64                     `json:"resource_provider_generation"`
	}
	if err := c.get(ctx, c.Placement, rel, &cur); err != nil {
		return err
	}
	next := maps.Clone(cur.Inventories)
	if next == nil {
		next = map[string]map[string]any{}
	}
	for rc, inv := range s.inv {
		if inv == nil {
			delete(next, rc)
		} else {
			next[rc] = placementInventory(*inv)
		}
	}
	s.Body = map[string]any{"inventories": next, "resource_provider_generation": cur.Generation}
	return c.send(ctx, c.Placement, "PUT", rel, s.Body, nil, 200)
}

// placementInventory is corral's inventory as Placement takes it: the
// bounds corral leaves at 0 are Placement's defaults, a ratio of 0 is 1.
func placementInventory(i models.Inventory) map[string]any {
	out := map[string]any{"total": i.Total, "reserved": i.Reserved, "allocation_ratio": i.AllocationRatio}
	if i.AllocationRatio == 0 {
		out["allocation_ratio"] = 1.0
	}
	for k, v := range map[string]int64{"min_unit": i.MinUnit, "max_unit": i.MaxUnit, "step_size": i.StepSize} {
		if v > 0 {
			out[k] = v
		}
	}
	return out
}

// ensure creates the step's custom traits or resource classes (under
// base) that Placement does not have; the ones it created go into the
// step's created undo.
func (c *Client) ensure(ctx context.Context, s *Step, base string) error {
	undoOp, field := scheduling.OpDeleteTrait, "trait"
	if base == "resource_classes/" {
		undoOp, field = scheduling.OpDeleteResourceClass, "resource_class"
	}
	for _, name := range s.ensure {
		err := c.send(ctx, c.Placement, "GET", base+name, nil, nil, 200, 204)
		var se *ServiceError
		if err == nil {
			continue
		} else if !errors.As(err, &se) || se.Status() != 404 {
			return err
		}
		if err := c.send(ctx, c.Placement, "PUT", base+name, nil, nil, 201, 204); err != nil {
			return err
		}
		u := scheduling.Change{Op: undoOp}
		if field == "trait" {
			u.Trait = name
		} else {
			u.ResourceClass = name
		}
		s.created = append(s.created, u)
	}
	return nil
}

// createGroup creates a server group in its project (sc acts in it); the
// undo deletes it by the id Nova gave it.
func (c *Client) createGroup(ctx context.Context, s *Step, sc *gophercloud.ServiceClient) (map[string]any, error) {
	if sc == nil {
		return nil, fmt.Errorf("no client acting in project %s", s.Project)
	}
	var out struct {
		Group NovaServerGroup `json:"server_group"`
	}
	if err := c.send(ctx, sc, "POST", "os-server-groups", s.Body, &out, 200); err != nil {
		return nil, err
	}
	s.id = out.Group.ID
	s.undo = []scheduling.Change{{Op: scheduling.OpDeleteServerGroup, ServerGroup: out.Group.ID}}
	return map[string]any{"id": out.Group.ID, "project_id": out.Group.ProjectID}, nil
}

// groupClients makes, before anything is sent, a compute client acting in
// the project of each server group the plan creates: Nova creates a
// group in the project of the token it is sent with. Acting for a
// person, that token is theirs (the request layer sends it): the group is
// theirs, in their token's project, and another project is refused.
func (c *Client) groupClients(ctx context.Context, plan *Plan) (map[string]*gophercloud.ServiceClient, error) {
	out := map[string]*gophercloud.ServiceClient{}
	for _, s := range plan.Steps {
		if s.Kind != "group_create" || out[s.Project] != nil {
			continue
		}
		if models.PersonToken(ctx) != "" {
			if p := models.PersonProject(ctx); p != "" && p != s.Project {
				return nil, models.E(models.Invalid, "server_group", "server group %s belongs to project %s, and nova creates a group in the project of your token (%s): switch to project %s to create it", s.Aggregate, s.Project, p, s.Project)
			}
			out[s.Project] = c.Compute
			continue
		}
		sc, err := c.computeIn(ctx, s.Project)
		if err != nil {
			return nil, models.E(models.Invalid, "server_group", "server group %s belongs to project %s, and nova creates a group in the project of the token: %v", s.Aggregate, s.Project, err)
		}
		out[s.Project] = sc
	}
	return out, nil
}

// computeIn is a compute client acting in project: with Keystone
// credentials a token scoped to it; with a noauth token ("user:project")
// the same user in that project. A bare token cannot be re-scoped.
func (c *Client) computeIn(ctx context.Context, project string) (*gophercloud.ServiceClient, error) {
	if c.scope != nil {
		return c.scope(ctx, project)
	}
	user, _, noauth := strings.Cut(c.Compute.ProviderClient.Token(), ":")
	if !noauth {
		return nil, fmt.Errorf("a bare --token cannot act in another project: connect with --os-cloud (Keystone credentials with a role in the project), or create the group yourself (openstack --os-project-id %s server group create …)", project)
	}
	pc := &gophercloud.ProviderClient{HTTPClient: c.Compute.ProviderClient.HTTPClient}
	pc.SetToken(user + ":" + project)
	sc := *c.Compute
	sc.ProviderClient = pc
	return &sc, nil
}

// scopedCompute authenticates the same credentials scoped to project and
// returns its compute client.
func scopedCompute(ctx context.Context, ao gophercloud.AuthOptions, eo gophercloud.EndpointOpts, hc http.Client, project, mv string) (*gophercloud.ServiceClient, error) {
	ao.TenantID, ao.TenantName = "", ""
	ao.Scope = &gophercloud.AuthScope{ProjectID: project}
	pc, err := config.NewProviderClient(ctx, ao, config.WithHTTPClient(hc))
	if err != nil {
		return nil, fmt.Errorf("keystone %s gave no token of project %s (the user needs a role in it): %s", ao.IdentityEndpoint, project, answerOf(err))
	}
	sc, err := openstack.NewComputeV2(pc, eo)
	if err != nil {
		return nil, err
	}
	sc.Microversion = mv
	return sc, nil
}

// quotaSet is Nova's os-quota-sets answer: limits by resource (and the
// project's id, which is not a limit).
type quotaSet struct {
	QuotaSet map[string]any `json:"quota_set"`
}

func (q quotaSet) limits() map[string]int {
	out := map[string]int{}
	for k, v := range q.QuotaSet {
		// The services' answers are decoded with numbers kept as text.
		switch n := v.(type) {
		case float64:
			out[k] = int(n)
		case json.Number:
			if i, err := n.Int64(); err == nil {
				out[k] = int(i)
			}
		}
	}
	return out
}

// setQuotas sets the step's limits (the reset ones to Nova's defaults);
// the undo puts back the limits read just before.
func (c *Client) setQuotas(ctx context.Context, s *Step, rel string) error {
	var cur, defaults quotaSet
	if err := c.get(ctx, c.Compute, rel, &cur); err != nil {
		return err
	}
	body := maps.Clone(s.Body.(map[string]any)["quota_set"].(map[string]any))
	if len(s.reset) > 0 {
		if err := c.get(ctx, c.Compute, rel+"/defaults", &defaults); err != nil {
			return err
		}
		for _, k := range s.reset {
			body[k] = defaults.limits()[k]
		}
	}
	s.Body = map[string]any{"quota_set": body}
	if err := c.send(ctx, c.Compute, "PUT", rel, s.Body, nil, 200); err != nil {
		return err
	}
	old := map[string]int{}
	for k := range body {
		if v, ok := cur.limits()[k]; ok {
			old[k] = v
		}
	}
	s.undo = []scheduling.Change{{Op: scheduling.OpSetQuotas, Project: s.Project, QuotaFields: scheduling.QuotaFields{Quotas: old, Force: true}}}
	return nil
}
