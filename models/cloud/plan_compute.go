package cloud

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"corral/models"
	"corral/models/scheduling"
)

// refuseChanges refuses, before anything is planned, the changes no API
// of the cloud carries, each with what to do instead.
func refuseChanges(changes []scheduling.Change) error {
	for i, c := range changes {
		at := fmt.Sprintf("changes[%d]", i)
		switch c.Op {
		case scheduling.OpSetAllocations:
			return models.E(models.Invalid, at+".op", "set_allocations of consumer %s: a cloud's allocations are nova's (they follow its servers); corral does not write them — boot, resize or delete the server instead", c.Consumer)
		}
	}
	return nil
}

// quotas plans Nova's os-quota-sets calls of the set_quotas changes (a
// world does not hold quotas). The limits the writer saw are checked
// before anything is sent; the undo puts back the limits read just before
// the call.
func (pl *planner) quotas(changes []scheduling.Change) {
	for _, c := range changes {
		if c.Op != scheduling.OpSetQuotas {
			continue
		}
		body := map[string]any{}
		var flags []string
		for _, k := range slices.Sorted(maps.Keys(c.Quotas)) {
			body[k] = c.Quotas[k]
			flags = append(flags, fmt.Sprintf("--%s %d", strings.ReplaceAll(k, "_", "-"), c.Quotas[k]))
		}
		for _, k := range c.Reset {
			flags = append(flags, fmt.Sprintf("--%s <default>", strings.ReplaceAll(k, "_", "-")))
		}
		if c.Force {
			body["force"] = true
			flags = append(flags, "--force")
		}
		pl.sets = append(pl.sets, Step{Kind: "quota_set", Object: "quota", Aggregate: c.Project, Project: c.Project, Service: "nova", Method: "PUT",
			Path: "/os-quota-sets/" + url.PathEscape(c.Project), Body: map[string]any{"quota_set": body},
			Openstack: "openstack quota set " + strings.Join(flags, " ") + " " + shq(c.Project),
			reset:     slices.Clone(c.Reset), expect: maps.Clone(c.Expect)})
	}
}

// refuseConsumers refuses a next world whose allocations differ from
// live's (a world that carries consumers at all).
func refuseConsumers(live, next *models.World) error {
	if next.Consumers == nil {
		return nil
	}
	a, _ := json.Marshal(live.Consumers)
	b, _ := json.Marshal(next.Consumers)
	if string(a) != string(b) {
		return models.E(models.Invalid, "consumers", "the allocations differ from the cloud's: they are nova's (they follow its servers); corral does not write them")
	}
	return nil
}

// flavors plans Nova's flavor calls: creates (with their extra specs and
// access), extra specs set and removed, access added and removed,
// deletes. Nova's flavors are immutable otherwise: a new name, size or
// visibility is refused.
func (pl *planner) flavors(live, next *models.World) error {
	old := map[string]*models.Flavor{}
	for i := range live.Flavors {
		old[live.Flavors[i].ID] = &live.Flavors[i]
	}
	seen := map[string]bool{}
	for _, f := range next.Flavors {
		seen[f.ID] = true
		o := old[f.ID]
		if o == nil {
			pl.creates = append(pl.creates, flavorCreateStep(f))
			o = &models.Flavor{ID: f.ID, Name: f.Name, Private: f.Private}
		} else if err := immutableFlavor(o, &f); err != nil {
			return err
		}
		pl.extraSpecs(o, f)
		pl.flavorAccess(o, f)
	}
	for _, f := range live.Flavors {
		if !seen[f.ID] {
			pl.deletes = append(pl.deletes, flavorDeleteStep(f))
		}
	}
	return nil
}

// immutableFlavor refuses what Nova cannot change in a flavor.
func immutableFlavor(o, f *models.Flavor) error {
	var what []string
	if o.Name != f.Name {
		what = append(what, fmt.Sprintf("name %s → %s", o.Name, f.Name))
	}
	if o.VCPUs != f.VCPUs || o.RAMMB != f.RAMMB || o.DiskGB != f.DiskGB {
		what = append(what, fmt.Sprintf("size %d vcpus %d MB %d GB → %d vcpus %d MB %d GB", o.VCPUs, o.RAMMB, o.DiskGB, f.VCPUs, f.RAMMB, f.DiskGB))
	}
	if o.Private != f.Private {
		what = append(what, fmt.Sprintf("private %t → %t", o.Private, f.Private))
	}
	if len(what) == 0 {
		return nil
	}
	return models.E(models.Invalid, "flavor", "flavor %s: %s: Nova's flavors are immutable — create a new flavor with these values (and delete this one when no server uses it)", o.Name, strings.Join(what, ", "))
}

func flavorCreateStep(f models.Flavor) Step {
	body := map[string]any{"name": f.Name, "id": f.ID, "vcpus": f.VCPUs, "ram": f.RAMMB, "disk": f.DiskGB, "os-flavor-access:is_public": !f.Private}
	cmd := fmt.Sprintf("openstack flavor create --id %s --vcpus %d --ram %d --disk %d", shq(f.ID), f.VCPUs, f.RAMMB, f.DiskGB)
	if f.Private {
		cmd += " --private"
	}
	return Step{Kind: "flavor_create", Object: "flavor", Aggregate: f.Name, id: f.ID, Service: "nova", Method: "POST", Path: "/flavors",
		Body: map[string]any{"flavor": body}, Openstack: cmd + " " + shq(f.Name),
		undo: []scheduling.Change{{Op: scheduling.OpDeleteFlavor, Flavor: f.ID}}}
}

// flavorDeleteStep deletes flavor f; the undo creates it again with its
// id, size and extra specs — but a draft cannot make a private flavor,
// so a private one is left to the operator.
func flavorDeleteStep(f models.Flavor) Step {
	st := Step{Kind: "flavor_delete", Object: "flavor", Aggregate: f.Name, id: f.ID, Service: "nova", Method: "DELETE",
		Path: "/flavors/" + url.PathEscape(f.ID), Openstack: "openstack flavor delete " + shq(f.Name)}
	if f.Private {
		var access []string
		for _, p := range f.Projects {
			access = append(access, "openstack flavor set --project "+shq(p)+" "+shq(f.Name))
		}
		st.noUndo = fmt.Sprintf("flavor %s (%s) is deleted and was private: a draft cannot create a private flavor; run openstack flavor create --private --id %s --vcpus %d --ram %d --disk %d %s%s",
			f.Name, f.ID, shq(f.ID), f.VCPUs, f.RAMMB, f.DiskGB, shq(f.Name), strings.Join(append([]string{""}, access...), "; "))
		return st
	}
	st.undo = []scheduling.Change{{Op: scheduling.OpCreateFlavor, Flavor: f.Name, UUID: f.ID,
		Size: &scheduling.FlavorSize{VCPUs: f.VCPUs, RAMMB: f.RAMMB, DiskGB: f.DiskGB}, Metadata: maps.Clone(f.ExtraSpecs)}}
	return st
}

// extraSpecs sets and removes f's extra specs (Nova's os-extra_specs),
// each with the undo that restores o's.
func (pl *planner) extraSpecs(o *models.Flavor, f models.Flavor) {
	set := map[string]any{}
	var props []string
	var undo []scheduling.Change
	for _, k := range slices.Sorted(maps.Keys(f.ExtraSpecs)) {
		ov, ok := o.ExtraSpecs[k]
		if ok && ov == f.ExtraSpecs[k] {
			continue
		}
		set[k] = f.ExtraSpecs[k]
		props = append(props, "--property "+shq(k+"="+f.ExtraSpecs[k]))
		if ok {
			undo = append(undo, scheduling.Change{Op: scheduling.OpSetExtraSpec, Flavor: f.ID, Key: k, Value: ov})
		} else {
			undo = append(undo, scheduling.Change{Op: scheduling.OpUnsetExtraSpec, Flavor: f.ID, Key: k})
		}
	}
	if len(set) > 0 {
		pl.sets = append(pl.sets, Step{Kind: "flavor_extra_specs", Object: "flavor", Aggregate: f.Name, id: f.ID, Service: "nova", Method: "POST",
			Path: "/flavors/" + url.PathEscape(f.ID) + "/os-extra_specs", Body: map[string]any{"extra_specs": set},
			Openstack: "openstack flavor set " + strings.Join(props, " ") + " " + shq(f.Name), undo: undo})
	}
	for _, k := range slices.Sorted(maps.Keys(o.ExtraSpecs)) {
		if _, ok := f.ExtraSpecs[k]; !ok {
			pl.unsets = append(pl.unsets, Step{Kind: "flavor_unset_extra_spec", Object: "flavor", Aggregate: f.Name, id: f.ID, Service: "nova", Method: "DELETE",
				Path: "/flavors/" + url.PathEscape(f.ID) + "/os-extra_specs/" + url.PathEscape(k), Openstack: "openstack flavor unset --property " + shq(k) + " " + shq(f.Name),
				undo: []scheduling.Change{{Op: scheduling.OpSetExtraSpec, Flavor: f.ID, Key: k, Value: o.ExtraSpecs[k]}}})
		}
	}
}

// flavorAccess adds and removes the projects of a private flavor (Nova's
// addTenantAccess and removeTenantAccess). No change of a draft names a
// flavor's access: the undo is the openstack command.
func (pl *planner) flavorAccess(o *models.Flavor, f models.Flavor) {
	if !f.Private {
		return
	}
	was, is := setOf(o.Projects), setOf(f.Projects)
	for _, p := range slices.Sorted(maps.Keys(is)) {
		if !was[p] {
			pl.sets = append(pl.sets, Step{Kind: "flavor_access_add", Object: "flavor", Aggregate: f.Name, id: f.ID, Project: p, Service: "nova", Method: "POST",
				Path: "/flavors/" + url.PathEscape(f.ID) + "/action", Body: map[string]any{"addTenantAccess": map[string]any{"tenant": p}},
				Openstack: "openstack flavor set --project " + shq(p) + " " + shq(f.Name),
				noUndo:    fmt.Sprintf("flavor %s: project %s was given access; a draft cannot take it away: openstack flavor unset --project %s %s", f.Name, p, shq(p), shq(f.Name))})
		}
	}
	for _, p := range slices.Sorted(maps.Keys(was)) {
		if !is[p] {
			pl.unsets = append(pl.unsets, Step{Kind: "flavor_access_remove", Object: "flavor", Aggregate: f.Name, id: f.ID, Project: p, Service: "nova", Method: "POST",
				Path: "/flavors/" + url.PathEscape(f.ID) + "/action", Body: map[string]any{"removeTenantAccess": map[string]any{"tenant": p}},
				Openstack: "openstack flavor unset --project " + shq(p) + " " + shq(f.Name),
				noUndo:    fmt.Sprintf("flavor %s: project %s lost access; a draft cannot give it back: openstack flavor set --project %s %s", f.Name, p, shq(p), shq(f.Name))})
		}
	}
}

// groups plans Nova's server group calls: creates (in the group's
// project) and deletes. Nova fixes a group's policy and rules when it is
// made, and adds a server to a group only when the server boots.
func (pl *planner) groups(live, next *models.World) error {
	old := map[string]*models.ServerGroup{}
	for i := range live.ServerGroups {
		old[live.ServerGroups[i].UUID] = &live.ServerGroups[i]
	}
	seen := map[string]bool{}
	for _, g := range next.ServerGroups {
		seen[g.UUID] = true
		o := old[g.UUID]
		if o == nil {
			if len(g.Members) > 0 {
				return models.E(models.Invalid, "server_group", "server group %s: nova adds a server to a group only when the server boots (openstack server create --hint group=<id>): create the group without members", g.Name)
			}
			pl.creates = append(pl.creates, groupCreateStep(g))
			continue
		}
		if err := immutableGroup(o, &g); err != nil {
			return err
		}
	}
	for _, g := range live.ServerGroups {
		if !seen[g.UUID] {
			pl.deletes = append(pl.deletes, groupDeleteStep(g))
		}
	}
	return nil
}

// immutableGroup refuses what Nova cannot change in a server group.
func immutableGroup(o, g *models.ServerGroup) error {
	switch {
	case o.Name != g.Name || o.Policy != g.Policy || !maps.Equal(o.Rules, g.Rules) || o.ProjectID != g.ProjectID:
		return models.E(models.Invalid, "server_group", "server group %s: nova fixes a group's name, policy and rules when it is created — create a new group (and move the servers by rebuilding them into it)", o.Name)
	case !slices.Equal(sorted(o.Members), sorted(g.Members)):
		return models.E(models.Invalid, "server_group", "server group %s: nova has no call that adds a server to a group or removes one: a server joins a group when it boots (openstack server create --hint group=%s) and leaves it when deleted", o.Name, o.UUID)
	}
	return nil
}

func groupCreateStep(g models.ServerGroup) Step {
	body := map[string]any{"name": g.Name, "policy": g.Policy}
	cmd := "openstack --os-compute-api-version 2.64 --os-project-id " + shq(g.ProjectID) + " server group create --policy " + shq(g.Policy)
	if len(g.Rules) > 0 {
		body["rules"] = g.Rules
		for _, k := range slices.Sorted(maps.Keys(g.Rules)) {
			cmd += fmt.Sprintf(" --rule %s=%d", k, g.Rules[k])
		}
	}
	// The undo deletes the group by the id Nova gives it (set when the
	// call is made).
	return Step{Kind: "group_create", Object: "server_group", Aggregate: g.Name, Project: g.ProjectID, planned: g.UUID, Service: "nova", Method: "POST",
		Path: "/os-server-groups", Body: map[string]any{"server_group": body}, Openstack: cmd + " " + shq(g.Name)}
}

// groupDeleteStep deletes server group g; the undo creates a group like
// it, which Nova gives a new id, without its members.
func groupDeleteStep(g models.ServerGroup) Step {
	st := Step{Kind: "group_delete", Object: "server_group", Aggregate: g.Name, id: g.UUID, Project: g.ProjectID, Service: "nova", Method: "DELETE",
		Path: "/os-server-groups/" + g.UUID, Openstack: "openstack server group delete " + g.UUID,
		undo: []scheduling.Change{{Op: scheduling.OpCreateServerGroup, ServerGroup: g.Name, Project: g.ProjectID, User: g.UserID, Policy: g.Policy, Rules: maps.Clone(g.Rules)}}}
	st.noUndo = fmt.Sprintf("server group %s (%s) is deleted: the undo draft creates it again, but nova gives it a new id", g.Name, g.UUID)
	if len(g.Members) > 0 {
		st.noUndo += fmt.Sprintf(", and its %d server(s) cannot rejoin it (a server joins a group only when it boots)", len(g.Members))
	}
	return st
}
