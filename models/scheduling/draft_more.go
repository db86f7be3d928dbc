package scheduling

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"corral/models"
)

// findFlavor finds a flavor by id, then name.
func findFlavor(w *models.World, ref string) int {
	for i := range w.Flavors {
		if w.Flavors[i].ID == ref {
			return i
		}
	}
	for i := range w.Flavors {
		if w.Flavors[i].Name == ref {
			return i
		}
	}
	return -1
}

func applyFlavorChange(w *models.World, c Change, at string) error {
	if c.Flavor == "" {
		return models.E(models.Invalid, at+".flavor", "%s needs a flavor", c.Op)
	}
	fi := findFlavor(w, c.Flavor)
	if fi < 0 {
		return models.E(models.Invalid, at+".flavor", "no flavor named %q", c.Flavor)
	}
	f := &w.Flavors[fi]
	if c.Key == "" {
		return models.E(models.Invalid, at+".key", "%s needs a key", c.Op)
	}
	switch c.Op {
	case OpSetExtraSpec:
		if len(c.Key) > 255 || len(c.Value) > 255 {
			return models.E(models.Invalid, at+".key", "extra spec keys and values are at most 255 characters")
		}
		f.ExtraSpecs[c.Key] = c.Value
	case OpUnsetExtraSpec:
		if _, ok := f.ExtraSpecs[c.Key]; !ok {
			return models.E(models.Invalid, at+".key", "flavor %s has no extra spec %q", f.Name, c.Key)
		}
		delete(f.ExtraSpecs, c.Key)
	}
	return nil
}

// findGroup finds a server group by UUID, or by a name that is unique
// (within project when project is given).
func findGroup(w *models.World, ref, project, at string) (int, error) {
	for i := range w.ServerGroups {
		if w.ServerGroups[i].UUID == ref {
			return i, nil
		}
	}
	found := -1
	for i := range w.ServerGroups {
		g := &w.ServerGroups[i]
		if g.Name != ref || project != "" && g.ProjectID != project {
			continue
		}
		if found >= 0 {
			return -1, models.E(models.Invalid, at+".server_group", "more than one server group is named %q; give its UUID", ref)
		}
		found = i
	}
	if found < 0 {
		return -1, models.E(models.Invalid, at+".server_group", "no server group named %q", ref)
	}
	return found, nil
}

// findServer finds a server by UUID, then name.
func findServer(w *models.World, ref string) (*models.Server, bool) {
	for i := range w.Servers {
		if w.Servers[i].UUID == ref {
			return &w.Servers[i], true
		}
	}
	for i := range w.Servers {
		if w.Servers[i].Name == ref {
			return &w.Servers[i], true
		}
	}
	return nil, false
}

func applyGroupChange(w *models.World, c Change, at string) error {
	if c.ServerGroup == "" {
		return models.E(models.Invalid, at+".server_group", "%s needs a server group", c.Op)
	}
	if c.Op == OpCreateServerGroup {
		if c.Project == "" {
			return models.E(models.Invalid, at+".project", "create_server_group needs a project")
		}
		switch c.Policy {
		case models.PolicyAffinity, models.PolicyAntiAffinity, models.PolicySoftAffinity, models.PolicySoftAntiAffinity:
		default:
			return models.E(models.Invalid, at+".policy", "unknown policy %q (want affinity, anti-affinity, soft-affinity or soft-anti-affinity)", c.Policy)
		}
		if len(c.Rules) > 0 && c.Policy != models.PolicyAntiAffinity {
			return models.E(models.Invalid, at+".rules", "only the anti-affinity policy takes rules")
		}
		for k, v := range c.Rules {
			if k != models.RuleMaxServerPerHost || v < 1 {
				return models.E(models.Invalid, at+".rules", "the only rule is %s, at least 1", models.RuleMaxServerPerHost)
			}
		}
		u := c.UUID
		if u == "" {
			u = models.NewUUID()
		} else if !models.ValidUUID(u) {
			return models.E(models.Invalid, at+".uuid", "%q is not a UUID", u)
		}
		for _, g := range w.ServerGroups {
			if g.UUID == u {
				return models.E(models.Invalid, at+".uuid", "server group %s already exists", u)
			}
			// Later changes name the group; without a UUID, by this name,
			// which must then be the project's only one (Nova allows more).
			if g.Name == c.ServerGroup && g.ProjectID == c.Project && c.UUID == "" {
				return models.E(models.Invalid, at+".server_group", "project %s already has a server group named %q", c.Project, c.ServerGroup)
			}
		}
		g := models.ServerGroup{UUID: u, Name: c.ServerGroup, ProjectID: c.Project, UserID: c.User, Policy: c.Policy, Rules: maps.Clone(c.Rules)}
		w.ServerGroups = append(w.ServerGroups, g)
		for _, m := range c.Members {
			if err := addGroupMember(w, len(w.ServerGroups)-1, m, at+".members"); err != nil {
				return err
			}
		}
		return nil
	}
	gi, err := findGroup(w, c.ServerGroup, c.Project, at)
	if err != nil {
		return err
	}
	switch c.Op {
	case OpDeleteServerGroup:
		w.ServerGroups = append(w.ServerGroups[:gi:gi], w.ServerGroups[gi+1:]...)
	case OpAddGroupMember:
		return addGroupMember(w, gi, c.Server, at+".server")
	case OpRemoveGroupMember:
		g := &w.ServerGroups[gi]
		srv, ok := findServer(w, c.Server)
		pos := -1
		if ok {
			pos = slices.Index(g.Members, srv.UUID)
		}
		if pos < 0 {
			return models.E(models.Invalid, at+".server", "%q is not a member of server group %s", c.Server, g.Name)
		}
		g.Members = slices.Delete(g.Members, pos, pos+1)
	}
	return nil
}

// addGroupMember adds a server to group gi; a server is in at most one
// group, as in nova.
func addGroupMember(w *models.World, gi int, ref, field string) error {
	srv, ok := findServer(w, ref)
	if !ok {
		return models.E(models.Invalid, field, "no server named %q", ref)
	}
	g := &w.ServerGroups[gi]
	for i := range w.ServerGroups {
		if i != gi && slices.Contains(w.ServerGroups[i].Members, srv.UUID) {
			return models.E(models.Invalid, field, "server %s is already in server group %s", srv.Name, w.ServerGroups[i].Name)
		}
	}
	if srv.ProjectID != g.ProjectID {
		return models.E(models.Invalid, field, "server %s belongs to project %s, not to the group's project %s", srv.Name, srv.ProjectID, g.ProjectID)
	}
	if !slices.Contains(g.Members, srv.UUID) {
		g.Members = append(g.Members, srv.UUID)
	}
	return nil
}

func applyProviderChange(provs map[string]*models.Provider, c Change, at string) error {
	if c.Provider == "" {
		return models.E(models.Invalid, at+".provider", "%s needs a provider", c.Op)
	}
	p, ok := provs[c.Provider]
	if !ok {
		return models.E(models.Invalid, at+".provider", "no provider named %q", c.Provider)
	}
	switch c.Op {
	case OpAddTrait, OpRemoveTrait:
		if !validTraitName(c.Trait) {
			return models.E(models.Invalid, at+".trait", "%q is not a trait name (A-Z, 0-9 and _, at most 255)", c.Trait)
		}
		has := slices.Contains(p.Traits, c.Trait)
		switch {
		case c.Op == OpAddTrait && !has:
			p.Traits = append(slices.Clone(p.Traits), c.Trait)
			slices.Sort(p.Traits)
		case c.Op == OpRemoveTrait && !has:
			return models.E(models.Invalid, at+".trait", "provider %s has no trait %s", p.Name, c.Trait)
		case c.Op == OpRemoveTrait:
			p.Traits = slices.DeleteFunc(slices.Clone(p.Traits), func(t string) bool { return t == c.Trait })
		}
	case OpSetInventory, OpDeleteInventory:
		if !validTraitName(c.ResourceClass) {
			return models.E(models.Invalid, at+".resource_class", "%q is not a resource class (A-Z, 0-9 and _, at most 255)", c.ResourceClass)
		}
		inv := maps.Clone(p.Inventories)
		if inv == nil {
			inv = map[string]models.Inventory{}
		}
		if c.Op == OpDeleteInventory {
			if _, ok := inv[c.ResourceClass]; !ok {
				return models.E(models.Invalid, at+".resource_class", "provider %s has no %s inventory", p.Name, c.ResourceClass)
			}
			delete(inv, c.ResourceClass)
		} else {
			if c.Inventory == nil {
				return models.E(models.Invalid, at+".inventory", "set_inventory needs an inventory")
			}
			v := *c.Inventory
			if v.Total < 1 || v.Reserved < 0 || v.Reserved > v.Total || v.AllocationRatio < 0 {
				return models.E(models.Invalid, at+".inventory", "an inventory needs total ≥ 1, 0 ≤ reserved ≤ total and allocation_ratio ≥ 0")
			}
			if v.AllocationRatio == 0 {
				v.AllocationRatio = 1
			}
			inv[c.ResourceClass] = v
		}
		p.Inventories = inv
	}
	return nil
}

// validTraitName accepts Placement's trait and resource class alphabet.
func validTraitName(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// DescribeChange is a change in a sentence, for lists and audit views.
func DescribeChange(c Change) string {
	switch c.Op {
	case OpSetMetadata:
		return fmt.Sprintf("set %s=%s on aggregate %s", c.Key, c.Value, c.Aggregate)
	case OpUnsetMetadata:
		return fmt.Sprintf("unset %s on aggregate %s", c.Key, c.Aggregate)
	case OpAddTenant:
		return fmt.Sprintf("tag aggregate %s for project %s", c.Aggregate, c.Project)
	case OpRemoveTenant:
		return fmt.Sprintf("untag project %s from aggregate %s", c.Project, c.Aggregate)
	case OpAddReservation:
		return fmt.Sprintf("add reservation tag %s to aggregate %s", c.Reservation, c.Aggregate)
	case OpRemoveReservation:
		return fmt.Sprintf("remove reservation tag %s from aggregate %s", c.Reservation, c.Aggregate)
	case OpAddMember:
		return fmt.Sprintf("add %s to aggregate %s", c.Provider, c.Aggregate)
	case OpRemoveMember:
		return fmt.Sprintf("remove %s from aggregate %s", c.Provider, c.Aggregate)
	case OpCreateAggregate:
		if c.AvailabilityZone != nil {
			return fmt.Sprintf("create aggregate %s in zone %s", c.Aggregate, *c.AvailabilityZone)
		}
		return "create aggregate " + c.Aggregate
	case OpDeleteAggregate:
		return "delete aggregate " + c.Aggregate
	case OpSetZone:
		if c.AvailabilityZone == nil || *c.AvailabilityZone == "" {
			return "clear the zone of aggregate " + c.Aggregate
		}
		return fmt.Sprintf("put aggregate %s in zone %s", c.Aggregate, *c.AvailabilityZone)
	case OpCreateFlavor:
		return fmt.Sprintf("create flavor %s (%s)", c.Flavor, describeSize(c.Size))
	case OpUpdateFlavor:
		var parts []string
		if c.Value != "" {
			parts = append(parts, "rename it to "+c.Value)
		}
		if c.Size != nil {
			parts = append(parts, "resize it to "+describeSize(c.Size))
		}
		return fmt.Sprintf("flavor %s: %s", c.Flavor, strings.Join(parts, ", "))
	case OpDeleteFlavor:
		return "delete flavor " + c.Flavor
	case OpRenameAggregate:
		return fmt.Sprintf("rename aggregate %s to %s", c.Aggregate, c.Value)
	case OpSetSettings:
		return "change settings: " + describeSettings(c.Settings)
	case OpSetExtraSpec:
		return fmt.Sprintf("set extra spec %s=%s on flavor %s", c.Key, c.Value, c.Flavor)
	case OpUnsetExtraSpec:
		return fmt.Sprintf("remove extra spec %s from flavor %s", c.Key, c.Flavor)
	case OpCreateServerGroup:
		return fmt.Sprintf("create %s server group %s for project %s", c.Policy, c.ServerGroup, c.Project)
	case OpDeleteServerGroup:
		return "delete server group " + c.ServerGroup
	case OpAddGroupMember:
		return fmt.Sprintf("add server %s to server group %s", c.Server, c.ServerGroup)
	case OpRemoveGroupMember:
		return fmt.Sprintf("remove server %s from server group %s", c.Server, c.ServerGroup)
	case OpAddTrait:
		return fmt.Sprintf("add trait %s to provider %s", c.Trait, c.Provider)
	case OpRemoveTrait:
		return fmt.Sprintf("remove trait %s from provider %s", c.Trait, c.Provider)
	case OpSetInventory:
		total := int64(0)
		if c.Inventory != nil {
			total = c.Inventory.Total
		}
		return fmt.Sprintf("set %s inventory of provider %s to %d", c.ResourceClass, c.Provider, total)
	case OpDeleteInventory:
		return fmt.Sprintf("remove the %s inventory of provider %s", c.ResourceClass, c.Provider)
	}
	return describePlacementChange(c)
}

func describeSize(z *FlavorSize) string {
	if z == nil {
		return "no size"
	}
	return fmt.Sprintf("%d vCPU, %d MB RAM, %d GB disk", z.VCPUs, z.RAMMB, z.DiskGB)
}
