package scheduling

import (
	"fmt"
	"maps"
	"slices"

	"corral/models"
)

// Change operations of a draft.
const (
	OpSetMetadata       = "set_metadata"       // aggregate, key, value
	OpUnsetMetadata     = "unset_metadata"     // aggregate, key
	OpAddTenant         = "add_tenant"         // aggregate, project
	OpRemoveTenant      = "remove_tenant"      // aggregate, project
	OpAddReservation    = "add_reservation"    // aggregate, reservation
	OpRemoveReservation = "remove_reservation" // aggregate, reservation
	OpAddMember         = "add_member"         // aggregate, provider
	OpRemoveMember      = "remove_member"      // aggregate, provider
	OpCreateAggregate   = "create_aggregate"   // aggregate (name), [uuid, availability_zone, metadata]
	OpDeleteAggregate   = "delete_aggregate"   // aggregate
	OpSetSettings       = "set_settings"       // settings
	OpSetZone           = "set_zone"           // aggregate, availability_zone ("" or absent clears it)
	// OpRenameAggregate is in draft_compute.go.

	OpSetExtraSpec      = "set_extra_spec"      // flavor, key, value
	OpUnsetExtraSpec    = "unset_extra_spec"    // flavor, key
	OpCreateServerGroup = "create_server_group" // server_group (name), project, policy, [user, uuid, rules, members]
	OpDeleteServerGroup = "delete_server_group" // server_group
	OpAddGroupMember    = "add_group_member"    // server_group, server
	OpRemoveGroupMember = "remove_group_member" // server_group, server
	OpAddTrait          = "add_trait"           // provider, trait
	OpRemoveTrait       = "remove_trait"        // provider, trait
	OpSetInventory      = "set_inventory"       // provider, resource_class, inventory
	OpDeleteInventory   = "delete_inventory"    // provider, resource_class
)

// Ops lists every change operation, in the order docs/drafts.md
// describes them.
var Ops = []string{
	OpSetMetadata, OpUnsetMetadata, OpAddTenant, OpRemoveTenant, OpAddReservation, OpRemoveReservation,
	OpAddMember, OpRemoveMember, OpCreateAggregate, OpDeleteAggregate, OpSetZone, OpRenameAggregate, OpSetSettings,
	OpSetExtraSpec, OpUnsetExtraSpec, OpCreateFlavor, OpUpdateFlavor, OpDeleteFlavor, OpCreateServerGroup, OpDeleteServerGroup, OpAddGroupMember, OpRemoveGroupMember,
	OpAddTrait, OpRemoveTrait, OpSetInventory, OpDeleteInventory,
}

func init() { Ops = append(Ops, PlacementOps...) }

// Change is one staged edit of a draft. Aggregates, providers and flavors
// are named by name or UUID (a flavor also by id); server groups by UUID,
// or by name when the name is unique (within Project when it is given);
// servers by UUID or name. docs/drafts.md is the reference of the format.
type Change struct {
	Op               string            `json:"op"`
	Aggregate        string            `json:"aggregate,omitempty"`
	Flavor           string            `json:"flavor,omitempty"`
	ServerGroup      string            `json:"server_group,omitempty"`
	Server           string            `json:"server,omitempty"`
	Key              string            `json:"key,omitempty"`
	Value            string            `json:"value,omitempty"`
	Project          string            `json:"project,omitempty"`
	User             string            `json:"user,omitempty"`
	Reservation      string            `json:"reservation,omitempty"`
	Provider         string            `json:"provider,omitempty"`
	Trait            string            `json:"trait,omitempty"`
	ResourceClass    string            `json:"resource_class,omitempty"`
	Inventory        *models.Inventory `json:"inventory,omitempty"`
	Policy           string            `json:"policy,omitempty"`
	Rules            map[string]int    `json:"rules,omitempty"`
	Members          []string          `json:"members,omitempty"`
	UUID             string            `json:"uuid,omitempty"`
	AvailabilityZone *string           `json:"availability_zone,omitempty"`
	Metadata         map[string]string `json:"metadata,omitempty"`
	Settings         *SettingsOverride `json:"settings,omitempty"`
	// Generation is the generation of the object the change names as the
	// writer read it (the aggregate, flavor, server group, provider, the
	// settings; a set_allocations' consumer): applying refuses with a
	// Conflict when the object moved since (a form saved after someone
	// else's save). Nil applies whatever the live generation.
	Generation *int64 `json:"generation,omitempty"`
	PlacementFields
	QuotaFields
	Size *FlavorSize `json:"size,omitempty"`
}

// ApplyChanges returns a new world with the changes applied in order. The
// input world is not modified (aggregates are copied, and flavors, groups
// and providers when a change edits one; the rest is shared). A change that does not apply — an unknown
// aggregate or provider, a duplicate name, removing a tag that is not
// there — is an Invalid error naming the change ("changes[2].aggregate").
func ApplyChanges(w *models.World, changes []Change) (*models.World, error) {
	out := *w
	out.Aggregates = make([]models.Aggregate, len(w.Aggregates))
	for i, a := range w.Aggregates {
		out.Aggregates[i] = cloneAggregate(a)
	}
	out.Settings.EnabledFilters = append([]string(nil), w.Settings.EnabledFilters...)
	// Flavors, server groups and providers are copied only when a change
	// edits one, so that a draft of aggregates alone shares them with the
	// live world (and Snapshot.WithAggregates can build on the live
	// snapshot).
	var flavors, groups, providers bool
	for _, c := range changes {
		switch {
		case editsFlavor(c.Op):
			flavors = true
		case c.Op == OpCreateServerGroup || c.Op == OpDeleteServerGroup || c.Op == OpAddGroupMember || c.Op == OpRemoveGroupMember:
			groups = true
		case editsProvider(c.Op) || IsPlacementOp(c.Op):
			providers = true
		}
	}
	if flavors {
		out.Flavors = make([]models.Flavor, len(w.Flavors))
		for i, f := range w.Flavors {
			f.ExtraSpecs = maps.Clone(f.ExtraSpecs)
			if f.ExtraSpecs == nil {
				f.ExtraSpecs = map[string]string{}
			}
			out.Flavors[i] = f
		}
	}
	if groups {
		out.ServerGroups = make([]models.ServerGroup, len(w.ServerGroups))
		for i, g := range w.ServerGroups {
			g.Members, g.Rules = slices.Clone(g.Members), maps.Clone(g.Rules)
			out.ServerGroups[i] = g
		}
	}
	if providers {
		out.Providers = slices.Clone(w.Providers)
	}
	// Providers by name and UUID, only for changes that name one: the map
	// costs more than the rest on a cloud of 100,000 providers.
	var provs map[string]*models.Provider
	for _, c := range changes {
		if c.Op == OpAddMember || c.Op == OpRemoveMember || editsProvider(c.Op) {
			provs = indexProviders(out.Providers)
			break
		}
	}
	for i, c := range changes {
		at := fmt.Sprintf("changes[%d]", i)
		var err error
		switch {
		case c.Op == OpSetExtraSpec || c.Op == OpUnsetExtraSpec:
			err = applyFlavorChange(&out, c, at)
		case editsFlavor(c.Op):
			err = applyFlavorLifecycle(&out, c, at)
		case c.Op == OpCreateServerGroup || c.Op == OpDeleteServerGroup || c.Op == OpAddGroupMember || c.Op == OpRemoveGroupMember:
			err = applyGroupChange(&out, c, at)
		case editsProvider(c.Op):
			err = applyProviderChange(provs, c, at)
		case c.Op == OpSetQuotas:
			err = applyQuotaChange(c, at)
		case IsPlacementOp(c.Op):
			err = applyPlacementChange(&out, c, at)
			if provs != nil && reshapesProviders(c.Op) {
				provs = indexProviders(out.Providers)
			}
		case c.Op == OpRenameAggregate:
			err = applyRename(&out, c, at)
		default:
			err = applyChange(&out, provs, c, at)
		}
		if err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// indexProviders maps providers by name and UUID (UUIDs win over names).
func indexProviders(ps []models.Provider) map[string]*models.Provider {
	provs := make(map[string]*models.Provider, len(ps)*2)
	for i := range ps {
		provs[ps[i].Name] = &ps[i]
	}
	for i := range ps {
		provs[ps[i].UUID] = &ps[i]
	}
	return provs
}

// editsProvider reports whether op changes a provider itself.
func editsProvider(op string) bool {
	return op == OpAddTrait || op == OpRemoveTrait || op == OpSetInventory || op == OpDeleteInventory
}

func cloneAggregate(a models.Aggregate) models.Aggregate {
	md := make(map[string]string, len(a.Metadata))
	for k, v := range a.Metadata {
		md[k] = v
	}
	a.Metadata = md
	a.Members = append([]string(nil), a.Members...)
	a.NotInPlacement, a.NotInNova = slices.Clone(a.NotInPlacement), slices.Clone(a.NotInNova)
	if a.AvailabilityZone != nil {
		az := *a.AvailabilityZone
		a.AvailabilityZone = &az
	}
	return a
}

func findAggregate(w *models.World, ref string) int {
	for i := range w.Aggregates {
		if w.Aggregates[i].UUID == ref {
			return i
		}
	}
	for i := range w.Aggregates {
		if w.Aggregates[i].Name == ref {
			return i
		}
	}
	return -1
}

func applyChange(w *models.World, provs map[string]*models.Provider, c Change, at string) error {
	if c.Op == OpSetSettings {
		if c.Settings == nil {
			return models.E(models.Invalid, at+".settings", "set_settings needs settings")
		}
		w.Settings = c.Settings.Apply(w.Settings)
		return nil
	}
	if c.Aggregate == "" {
		return models.E(models.Invalid, at+".aggregate", "%s needs an aggregate", c.Op)
	}
	if c.Op == OpCreateAggregate {
		return createAggregate(w, c, at)
	}
	ai := findAggregate(w, c.Aggregate)
	if ai < 0 {
		return models.E(models.Invalid, at+".aggregate", "no aggregate named %q", c.Aggregate)
	}
	agg := &w.Aggregates[ai]
	switch c.Op {
	case OpDeleteAggregate:
		w.Aggregates = append(w.Aggregates[:ai:ai], w.Aggregates[ai+1:]...)
	case OpSetZone:
		agg.AvailabilityZone = nil
		if c.AvailabilityZone != nil && *c.AvailabilityZone != "" {
			z := *c.AvailabilityZone
			agg.AvailabilityZone = &z
		}
		syncZone(agg, true)
	case OpSetMetadata:
		if c.Key == "" {
			return models.E(models.Invalid, at+".key", "set_metadata needs a key")
		}
		if _, ok := agg.Metadata[c.Key]; !ok {
			if err := models.CheckMetadataCount(agg.Name, len(agg.Metadata)+1); err != nil {
				err.Field = at + ".key"
				return err
			}
		}
		agg.Metadata[c.Key] = c.Value
		if c.Key == "availability_zone" {
			syncZone(agg, false)
		}
	case OpUnsetMetadata:
		if _, ok := agg.Metadata[c.Key]; !ok {
			return models.E(models.Invalid, at+".key", "aggregate %s has no metadata key %q", agg.Name, c.Key)
		}
		delete(agg.Metadata, c.Key)
		if c.Key == "availability_zone" {
			syncZone(agg, false)
		}
	case OpAddTenant:
		if err := CheckTag("project", c.Project); err != nil {
			err.Field = at + ".project"
			return err
		}
		if !slices.Contains(TenantTags(agg.Metadata), c.Project) {
			if err := models.CheckMetadataCount(agg.Name, len(agg.Metadata)+1); err != nil {
				err.Field = at + ".project"
				return err
			}
			agg.Metadata = AddTenantTag(agg.Metadata, c.Project)
		}
	case OpRemoveTenant:
		md, found := RemoveTenantTag(agg.Metadata, c.Project)
		if !found {
			return models.E(models.Invalid, at+".project", "aggregate %s has no tenant tag for project %q", agg.Name, c.Project)
		}
		agg.Metadata = md
	case OpAddReservation, OpRemoveReservation:
		return applyReservation(w, agg, c, at)
	case OpAddMember, OpRemoveMember:
		p, ok := provs[c.Provider]
		if !ok {
			return models.E(models.Invalid, at+".provider", "no provider named %q", c.Provider)
		}
		pos := -1
		for i, m := range agg.Members {
			if m == p.UUID {
				pos = i
			}
		}
		switch {
		case c.Op == OpAddMember && pos < 0:
			agg.Members = append(agg.Members, p.UUID)
		case c.Op == OpRemoveMember && pos < 0:
			return models.E(models.Invalid, at+".provider", "%s is not a member of aggregate %s", p.Name, agg.Name)
		case c.Op == OpRemoveMember:
			agg.Members = append(agg.Members[:pos:pos], agg.Members[pos+1:]...)
		}
		// Nova's add_host and remove_host change both memberships.
		agg.Mirror(p.UUID)
	default:
		return models.E(models.Invalid, at+".op", "unknown change %q", c.Op)
	}
	return nil
}

// createAggregate applies a create_aggregate change: a new aggregate with
// a free name and UUID and the next id.
func createAggregate(w *models.World, c Change, at string) error {
	if findAggregate(w, c.Aggregate) >= 0 {
		return models.E(models.Invalid, at+".aggregate", "an aggregate named %q already exists", c.Aggregate)
	}
	u := c.UUID
	if u == "" {
		u = models.NewUUID()
	} else if !models.ValidUUID(u) || findAggregate(w, u) >= 0 {
		return models.E(models.Invalid, at+".uuid", "%q is not a free UUID", u)
	}
	if err := models.CheckMetadataCount(c.Aggregate, len(c.Metadata)); err != nil {
		err.Field = at + ".metadata"
		return err
	}
	var id int64
	for _, a := range w.Aggregates {
		id = max(id, a.ID)
	}
	a := cloneAggregate(models.Aggregate{ID: id + 1, UUID: u, Name: c.Aggregate, AvailabilityZone: c.AvailabilityZone, Metadata: c.Metadata})
	syncZone(&a, a.AvailabilityZone != nil)
	w.Aggregates = append(w.Aggregates, a)
	return nil
}

// applyReservation adds or removes a reservation tag on agg.
func applyReservation(w *models.World, agg *models.Aggregate, c Change, at string) error {
	if c.Reservation == "" {
		return models.E(models.Invalid, at+".reservation", "%s needs a reservation id", c.Op)
	}
	prefix := w.Settings.RequiredMemberPrefix
	if prefix == "" {
		prefix = models.DefaultSettings().RequiredMemberPrefix
	}
	if c.Op == OpAddReservation {
		if err := CheckTag("reservation", c.Reservation); err != nil {
			err.Field = at + ".reservation"
			return err
		}
		agg.Metadata = AddReservationTag(agg.Metadata, prefix, c.Reservation)
	} else if md, ok := RemoveReservationTag(agg.Metadata, prefix, c.Reservation); !ok {
		return models.E(models.Invalid, at+".reservation", "aggregate %s has no reservation tag %s", agg.Name, prefix+c.Reservation)
	} else {
		agg.Metadata = md
	}
	return nil
}

// HostChange is one host whose eligibility differs between two traces.
type HostChange struct {
	Name string `json:"name"`
	// Stage and Reason say why the host fails in the trace where it fails.
	Stage  string `json:"stage,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// TraceDiff is what a draft changes: hosts that pass live but fail in the
// draft (NewlyExcluded) and the reverse (NewlyEligible), by host name.
type TraceDiff struct {
	NewlyExcluded []HostChange `json:"newly_excluded"`
	NewlyEligible []HostChange `json:"newly_eligible"`
	// Incomplete is set when a trace came from JSON with a limit, so some
	// hosts could not be compared.
	Incomplete bool `json:"incomplete"`
}

// DiffTraces compares two traces of the same request (live world vs draft).
// Traces returned by Run are compared completely even when a limit cut
// their host lists; traces decoded from JSON are compared on what they list.
func DiffTraces(live, draft *Trace) TraceDiff {
	a, ca := live.hostOutcomes()
	b, cb := draft.hostOutcomes()
	d := TraceDiff{NewlyExcluded: []HostChange{}, NewlyEligible: []HostChange{}, Incomplete: !ca || !cb}
	for _, name := range slices.Sorted(maps.Keys(a)) {
		was := a[name]
		now, ok := b[name]
		if !ok {
			if was.Passed {
				d.NewlyExcluded = append(d.NewlyExcluded, HostChange{Name: name, Stage: "world", Reason: "host no longer exists"})
			}
			continue
		}
		switch {
		case was.Passed && !now.Passed:
			d.NewlyExcluded = append(d.NewlyExcluded, HostChange{Name: name, Stage: now.Stage, Reason: now.reason()})
		case !was.Passed && now.Passed:
			d.NewlyEligible = append(d.NewlyEligible, HostChange{Name: name, Stage: was.Stage, Reason: was.reason()})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[name]; !ok && b[name].Passed {
			d.NewlyEligible = append(d.NewlyEligible, HostChange{Name: name, Stage: "world", Reason: "host is new"})
		}
	}
	return d
}

// OnlyAggregates reports whether changes edit aggregates alone (not the
// settings, flavors, server groups or providers), and names, by name or
// UUID as the changes do, every aggregate they touch.
func OnlyAggregates(changes []Change) (bool, []string) {
	var refs []string
	for _, c := range changes {
		switch c.Op {
		case OpSetSettings, OpSetExtraSpec, OpUnsetExtraSpec, OpCreateFlavor, OpUpdateFlavor, OpDeleteFlavor, OpCreateServerGroup, OpDeleteServerGroup,
			OpAddGroupMember, OpRemoveGroupMember, OpAddTrait, OpRemoveTrait, OpSetInventory, OpDeleteInventory:
			return false, nil
		}
		if IsPlacementOp(c.Op) {
			return false, nil
		}
		refs = append(refs, c.Aggregate)
		if c.UUID != "" {
			refs = append(refs, c.UUID)
		}
	}
	return true, refs
}
