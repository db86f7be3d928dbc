package cloud

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"corral/models"
	"corral/models/scheduling"
)

// Step is one API call of a rollout.
type Step struct {
	// Kind is the call: create, rename, zone, set_metadata, add_host,
	// remove_host, placement_aggregates, delete (aggregates);
	// flavor_create, flavor_extra_specs, flavor_unset_extra_spec,
	// flavor_access_add, flavor_access_remove, flavor_delete;
	// group_create, group_delete; provider_create, provider_update,
	// provider_traits, provider_inventories, provider_delete;
	// resource_class_create, resource_class_delete, trait_create,
	// trait_delete; quota_set.
	Kind string `json:"kind"`
	// Aggregate is the name of the object the call changes (an aggregate,
	// or the flavor, server group, provider, class or trait Object names).
	Aggregate     string `json:"aggregate"`
	Object        string `json:"object,omitempty"`         // empty for an aggregate
	Project       string `json:"project,omitempty"`        // group_create: the project the group is created in
	AggregateUUID string `json:"aggregate_uuid,omitempty"` // empty for an aggregate the rollout creates
	Host          string `json:"host,omitempty"`
	Provider      string `json:"provider,omitempty"` // uuid
	ProviderName  string `json:"provider_name,omitempty"`
	Service       string `json:"service"` // nova, placement
	Method        string `json:"method"`
	Path          string `json:"path"` // {id} stands for the id of an aggregate created earlier in the rollout
	Body          any    `json:"body,omitempty"`
	Openstack     string `json:"openstack"` // the same call with the openstack CLI
	// Metadata keys a set_metadata step sets (nil value: removes), and the
	// values they had, for the undo draft.
	meta, oldMeta map[string]*string
	add           bool // placement_aggregates: add (else remove)
	// newAgg: a member of an aggregate this rollout creates, whose uuid
	// is Nova's to choose (known once the create is done).
	newAgg       bool
	traitsAdd    []string
	traitsRemove []string
	inv          map[string]*models.Inventory // provider_inventories: classes set (nil: removed)
	ensure       []string                     // custom traits or resource classes created first when missing
	id           string                       // the flavor's id, the server group's or provider's uuid
	// planned is the uuid a created server group had in corral's plan;
	// Nova gives it another (id, once the call is made).
	planned string
	// undo restores what the call changes; created undoes what the call
	// created before its main write (a trait, a resource class), kept
	// even when that write fails; noUndo says what no draft restores.
	undo, created []scheduling.Change
	noUndo        string
	// quota_set: the resources put back to their default, and the
	// limits the writer saw.
	reset  []string
	expect map[string]int
}

// String is the call on one line.
func (s Step) String() string {
	line := s.Method + " " + s.Path
	if s.Body != nil {
		b, _ := json.Marshal(s.Body)
		line += " " + string(b)
	}
	return line
}

// Plan is a draft's rollout: the calls in order, and what stays in corral.
type Plan struct {
	Steps []Step `json:"steps"`
	// NotRolledOut are changes that have no API (the scheduler settings
	// live in nova.conf).
	NotRolledOut []string `json:"not_rolled_out,omitempty"`
	// DraftID and DraftName name the draft PlanDraft planned (empty for a
	// plan of bare changes).
	DraftID, DraftName string `json:"-"`
	kept               *Kept
	changes            []scheduling.Change
	touchedAggs        []string                   // uuids of live aggregates the plan changes
	newNames           []string                   // aggregates the plan creates
	groups             map[string]NovaServerGroup // by uuid, as the last sync read them
}

func strp(s string) *string { return &s }

// PlanRollout turns a draft's changes into calls, in a safe order: creates,
// zones, metadata that is set, hosts added; then hosts removed, metadata
// removed, deletes — so an aggregate never has hosts without its tags, nor
// loses a tag while it still has the hosts. Members that are compute hosts
// go through Nova's add_host/remove_host (Nova mirrors them into
// Placement: corral must not write them twice); other providers (sharing,
// children) through Placement's provider aggregates.
func PlanRollout(kept *Kept, live *models.World, changes []scheduling.Change) (*Plan, error) {
	if kept == nil {
		return nil, models.E(models.Invalid, "sync", "corral has not synced this cloud yet: run corral sync first")
	}
	if err := refuseChanges(changes); err != nil {
		return nil, err
	}
	next, err := scheduling.ApplyChanges(live, changes)
	if err != nil {
		return nil, err
	}
	return PlanWorlds(kept, live, next, changes...)
}

// PlanWorlds plans the calls that turn the cloud from live (as last
// synced) into next: aggregates, flavors, server groups and Placement's
// providers, inventories, traits and aggregates. What the cloud's APIs
// cannot carry is refused (Invalid, naming the object and what to do
// instead); the scheduler settings alone are noted as not rolled out.
// The changes that made next, when given, add what a world does not hold:
// traits and resource classes created or deleted by name, quotas.
func PlanWorlds(kept *Kept, live, next *models.World, changes ...scheduling.Change) (*Plan, error) {
	if kept == nil {
		return nil, models.E(models.Invalid, "sync", "corral has not synced this cloud yet: run corral sync first")
	}
	p := &Plan{kept: kept, groups: keptGroups(kept, live)}
	if !equalSettings(live.Settings, next.Settings) {
		p.NotRolledOut = append(p.NotRolledOut, "settings: the scheduler's settings live in nova.conf ([scheduler], [filter_scheduler]); corral keeps them but cannot roll them out")
	}
	pl := newPlanner(p, kept, live, next)
	pl.catalog(changes)
	pl.quotas(changes)
	if err := pl.providers(live, next); err != nil {
		return nil, err
	}
	for _, a := range next.Aggregates {
		if err := pl.aggregate(a); err != nil {
			return nil, err
		}
	}
	for _, old := range live.Aggregates {
		if err := pl.deletedAggregate(old); err != nil {
			return nil, err
		}
	}
	if err := pl.flavors(live, next); err != nil {
		return nil, err
	}
	if err := pl.groups(live, next); err != nil {
		return nil, err
	}
	if err := refuseConsumers(live, next); err != nil {
		return nil, err
	}
	// Creates, then what they carry, then memberships; removals in the
	// reverse order.
	for _, group := range [][]Step{pl.catalogCreates, pl.renames, pl.creates, pl.reparents, pl.zones, pl.sets, pl.traitSets,
		pl.adds, pl.removes, pl.unsets, pl.deletes, pl.catalogDeletes} {
		p.Steps = append(p.Steps, group...)
	}
	return p, nil
}

// keptGroups are the server groups as the last sync read them; a sync
// before they were kept has them in the live world.
func keptGroups(kept *Kept, live *models.World) map[string]NovaServerGroup {
	out := map[string]NovaServerGroup{}
	for _, g := range kept.ServerGroups {
		out[g.ID] = g
	}
	if kept.ServerGroups == nil {
		for _, g := range live.ServerGroups {
			out[g.UUID] = NovaServerGroup{ID: g.UUID, Name: g.Name, ProjectID: g.ProjectID, UserID: g.UserID, Policy: g.Policy, Rules: g.Rules, Members: g.Members}
		}
	}
	return out
}

// planner collects a plan's calls by group, in the order PlanWorlds
// sends the groups.
type planner struct {
	p      *Plan
	kept   *Kept
	novaID map[string]int64 // aggregate uuid → nova id
	provs  map[string]*models.Provider
	hostOf map[string]string
	// gone are the providers next deletes: Placement drops their
	// memberships with them.
	gone                                                 map[string]bool
	before, after                                        map[string]*models.Aggregate
	creates, zones, sets, adds, removes, unsets, deletes []Step
	catalogCreates, renames, reparents, traitSets        []Step
	catalogDeletes                                       []Step
	traits                                               map[string]bool // carried by some provider at the last sync
	servers                                              map[string]int  // running servers by host
}

func newPlanner(p *Plan, kept *Kept, live, next *models.World) *planner {
	pl := &planner{p: p, kept: kept, novaID: map[string]int64{}, provs: map[string]*models.Provider{}, gone: map[string]bool{},
		before: map[string]*models.Aggregate{}, after: map[string]*models.Aggregate{}}
	for _, a := range kept.Aggregates {
		pl.novaID[a.UUID] = a.ID
	}
	for i := range live.Providers {
		pl.provs[live.Providers[i].UUID] = &live.Providers[i]
		pl.gone[live.Providers[i].UUID] = true
	}
	pl.hostOf = novaHosts(kept, pl.provs)
	pl.servers = map[string]int{}
	for i := range live.Servers {
		pl.servers[live.Servers[i].Host]++
	}
	for i := range next.Providers {
		delete(pl.gone, next.Providers[i].UUID)
		if pl.provs[next.Providers[i].UUID] == nil {
			pl.provs[next.Providers[i].UUID] = &next.Providers[i]
		}
	}
	for i := range live.Aggregates {
		pl.before[live.Aggregates[i].UUID] = &live.Aggregates[i]
	}
	for i := range next.Aggregates {
		pl.after[next.Aggregates[i].UUID] = &next.Aggregates[i]
	}
	return pl
}

// ref is an aggregate's path base and its name for the openstack CLI.
func (pl *planner) ref(a *models.Aggregate) (string, string) {
	if id, ok := pl.novaID[a.UUID]; ok && pl.before[a.UUID] != nil {
		return fmt.Sprintf("/os-aggregates/%d", id), a.Name
	}
	return "/os-aggregates/{id}", a.Name
}

// aggregate plans the calls that bring aggregate a (as next has it) about:
// its creation, name or zone, its metadata, its members.
func (pl *planner) aggregate(a models.Aggregate) error {
	old := pl.before[a.UUID]
	path, name := pl.ref(&a)
	_, inNova := pl.novaID[a.UUID]
	if old == nil {
		if placementOnly(&a) {
			// set_provider_aggregates named a uuid nobody knows: an
			// aggregate of Placement's alone, made by its members.
			return pl.members(&models.Aggregate{}, a, "", a.Name, false)
		}
		pl.p.newNames = append(pl.p.newNames, a.Name)
		pl.creates = append(pl.creates, createStep(a))
		old = &models.Aggregate{Metadata: map[string]string{}}
		inNova = true
	} else {
		if !inNova {
			// Placement-only aggregate: only its members can change.
			if !maps.Equal(old.Metadata, a.Metadata) || old.Name != a.Name || zone(old) != zone(&a) {
				return models.E(models.Invalid, "changes", "aggregate %s exists in placement only: nova has no name, zone or metadata for it; create a nova aggregate instead", a.Name)
			}
		} else {
			if old.Name != a.Name {
				pl.p.newNames = append(pl.p.newNames, a.Name) // must still be free
				pl.renames = append(pl.renames, renameStep(old, a, path))
			}
			if zone(old) != zone(&a) {
				if err := pl.refuseZone(a); err != nil {
					return err
				}
				pl.zones = append(pl.zones, zoneStep(old, a, path, name))
			}
		}
		pl.p.touchedAggs = append(pl.p.touchedAggs, a.UUID)
	}
	// Metadata: sets first, removals at the end.
	set, unset := metadataDiff(old, &a)
	if len(set) > 0 {
		pl.sets = append(pl.sets, metadataStep(old, a, path, name, set))
	}
	if len(unset) > 0 {
		pl.unsets = append(pl.unsets, metadataStep(old, a, path, name, unset))
	}
	return pl.members(old, a, path, name, inNova)
}

// placementOnly says whether a new aggregate is one Placement makes for a
// provider's aggregates: named after its uuid, with nothing Nova keeps.
func placementOnly(a *models.Aggregate) bool {
	return strings.TrimRight(a.Name, "+") == a.UUID && len(a.Metadata) == 0 && a.AvailabilityZone == nil
}

// members plans the hosts and providers that join or leave aggregate a;
// inNova says whether Nova has the aggregate (else every member goes
// through Placement).
func (pl *planner) members(old *models.Aggregate, a models.Aggregate, path, name string, inNova bool) error {
	oldM, newM := setOf(old.Members), setOf(a.Members)
	for _, u := range a.Members {
		if !oldM[u] {
			st, err := pl.memberStep(&a, path, name, u, true, inNova)
			if err != nil {
				return err
			}
			pl.adds = append(pl.adds, st)
		}
	}
	for _, u := range old.Members {
		if !newM[u] && !pl.gone[u] {
			// A host only Placement has is not Nova's to remove.
			st, err := pl.memberStep(&a, path, name, u, false, inNova && !slices.Contains(old.NotInNova, u))
			if err != nil {
				return err
			}
			pl.removes = append(pl.removes, st)
		}
	}
	return pl.mendDrift(old, a, path, name, inNova)
}

// mendDrift plans the calls that make a member one side lacked a member
// of both (the Doctor's fix for a membership drift): Placement's provider
// aggregates for a host only Nova had, Nova's add_host for one only
// Placement had.
func (pl *planner) mendDrift(old *models.Aggregate, a models.Aggregate, path, name string, inNova bool) error {
	for _, side := range []struct {
		lacked []string
		still  []string
		nova   bool
	}{{old.NotInPlacement, a.NotInPlacement, false}, {old.NotInNova, a.NotInNova, true}} {
		for _, u := range side.lacked {
			if !slices.Contains(a.Members, u) || slices.Contains(side.still, u) || (side.nova && !inNova) {
				continue
			}
			st, err := pl.memberStep(&a, path, name, u, true, side.nova)
			if err != nil {
				return err
			}
			pl.adds = append(pl.adds, st)
		}
	}
	return nil
}

// deletedAggregate plans the removal of a live aggregate next no longer
// has: whatever members are left go first (Nova refuses to delete an
// aggregate with hosts; Placement keeps memberships of a uuid nobody names
// any more), then the aggregate itself.
func (pl *planner) deletedAggregate(old models.Aggregate) error {
	if pl.after[old.UUID] != nil {
		return nil
	}
	id, known := pl.novaID[old.UUID]
	pl.p.touchedAggs = append(pl.p.touchedAggs, old.UUID)
	undo := []scheduling.Change{{Op: scheduling.OpCreateAggregate, Aggregate: old.Name, AvailabilityZone: old.AvailabilityZone, Metadata: maps.Clone(old.Metadata)}}
	for _, u := range old.Members {
		if pl.gone[u] {
			continue
		}
		st, err := pl.memberStep(&old, fmt.Sprintf("/os-aggregates/%d", id), old.Name, u, false, known)
		if err != nil {
			return err
		}
		pl.removes = append(pl.removes, st)
	}
	if known {
		pl.deletes = append(pl.deletes, Step{Kind: "delete", Aggregate: old.Name, AggregateUUID: old.UUID, Service: "nova", Method: "DELETE",
			Path: fmt.Sprintf("/os-aggregates/%d", id), Openstack: "openstack aggregate delete " + shq(old.Name), undo: undo,
			noUndo: fmt.Sprintf("aggregate %s (%s) is deleted: the undo draft creates it again, with a new id and uuid", old.Name, old.UUID)})
	}
	return nil
}

// renameStep renames aggregate old to a's name (Nova's PUT).
func renameStep(old *models.Aggregate, a models.Aggregate, path string) Step {
	return Step{Kind: "rename", Aggregate: a.Name, AggregateUUID: a.UUID, Service: "nova", Method: "PUT", Path: path,
		Body:      map[string]any{"aggregate": map[string]any{"name": a.Name}},
		Openstack: "openstack aggregate set --name " + shq(a.Name) + " " + shq(old.Name),
		undo:      []scheduling.Change{{Op: scheduling.OpRenameAggregate, Aggregate: a.Name, Value: old.Name}}}
}

// createStep creates aggregate a with its zone.
func createStep(a models.Aggregate) Step {
	body := map[string]any{"name": a.Name}
	cmd := "openstack aggregate create"
	if a.AvailabilityZone != nil {
		body["availability_zone"] = *a.AvailabilityZone
		cmd += " --zone " + shq(*a.AvailabilityZone)
	}
	return Step{Kind: "create", Aggregate: a.Name, Service: "nova", Method: "POST", Path: "/os-aggregates",
		Body: map[string]any{"aggregate": body}, Openstack: cmd + " " + shq(a.Name),
		undo: []scheduling.Change{{Op: scheduling.OpDeleteAggregate, Aggregate: a.Name}}}
}

// refuseZone refuses what Nova's API refuses of a zone change on an
// aggregate it has (nova.compute.api's is_safe_to_update_az): taking the
// zone away ("does not support empty named availability zone"), and any
// change while the aggregate's hosts, as the last sync read them, run
// servers ("One or more hosts contain instances in this zone").
func (pl *planner) refuseZone(a models.Aggregate) error {
	if zone(&a) == "" {
		return models.E(models.Invalid, "changes", "aggregate %s: nova refuses to take an aggregate out of its zone: move its hosts to an aggregate without one instead", a.Name)
	}
	var busy []string
	for _, k := range pl.kept.Aggregates {
		if k.UUID != a.UUID {
			continue
		}
		for _, h := range k.Hosts {
			if n := pl.servers[h]; n > 0 {
				busy = append(busy, fmt.Sprintf("%s runs %d", h, n))
			}
		}
	}
	if len(busy) > 0 {
		slices.Sort(busy)
		return models.E(models.Invalid, "changes", "aggregate %s: nova refuses to change the zone of an aggregate whose hosts run servers (%s): take those hosts out of it in a rollout of their own first, or move the servers", a.Name, strings.Join(busy, ", "))
	}
	return nil
}

// zoneStep moves aggregate a from old's zone to its own.
func zoneStep(old *models.Aggregate, a models.Aggregate, path, name string) Step {
	body := map[string]any{"availability_zone": nil}
	cmd := "openstack aggregate set --no-zone " + shq(name) // not in every client; the API call is what counts
	if a.AvailabilityZone != nil {
		body["availability_zone"] = *a.AvailabilityZone
		cmd = "openstack aggregate set --zone " + shq(*a.AvailabilityZone) + " " + shq(name)
	}
	undo := scheduling.Change{Op: scheduling.OpUnsetMetadata, Aggregate: a.Name, Key: "availability_zone"}
	if old.AvailabilityZone != nil {
		undo = scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: a.Name, Key: "availability_zone", Value: *old.AvailabilityZone}
	}
	return Step{Kind: "zone", Aggregate: a.Name, AggregateUUID: a.UUID, Service: "nova", Method: "PUT", Path: path,
		Body: map[string]any{"aggregate": body}, Openstack: cmd, undo: []scheduling.Change{undo}}
}

// metadataDiff is the metadata keys a sets (with their values) and the
// keys it removes (nil values) compared with old; the zone key follows
// the zone.
func metadataDiff(old, a *models.Aggregate) (set, unset map[string]*string) {
	set, unset = map[string]*string{}, map[string]*string{}
	for k, v := range a.Metadata {
		if k == "availability_zone" {
			continue
		}
		if ov, ok := old.Metadata[k]; !ok || ov != v {
			set[k] = strp(v)
		}
	}
	for k := range old.Metadata {
		if _, ok := a.Metadata[k]; !ok && k != "availability_zone" {
			unset[k] = nil
		}
	}
	return set, unset
}

// metadataStep sets (or, for nil values, removes) the metadata keys of m
// on aggregate a, with the undo that restores old's values.
func metadataStep(old *models.Aggregate, a models.Aggregate, path, name string, m map[string]*string) Step {
	body := map[string]any{}
	var props, unprops []string
	oldMeta := map[string]*string{}
	var undo []scheduling.Change
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] == nil {
			body[k] = nil
			unprops = append(unprops, "--property "+shq(k))
		} else {
			body[k] = *m[k]
			props = append(props, "--property "+shq(k+"="+*m[k]))
		}
		if ov, ok := old.Metadata[k]; ok {
			oldMeta[k] = strp(ov)
			undo = append(undo, scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: a.Name, Key: k, Value: ov})
		} else {
			undo = append(undo, scheduling.Change{Op: scheduling.OpUnsetMetadata, Aggregate: a.Name, Key: k})
		}
	}
	cmd := "openstack aggregate set " + strings.Join(props, " ") + " " + shq(name)
	if len(props) == 0 {
		cmd = "openstack aggregate unset " + strings.Join(unprops, " ") + " " + shq(name)
	}
	return Step{Kind: "set_metadata", Aggregate: a.Name, AggregateUUID: old.UUID, Service: "nova", Method: "POST", Path: path + "/action",
		Body: map[string]any{"set_metadata": map[string]any{"metadata": body}}, Openstack: cmd, meta: m, oldMeta: oldMeta, undo: undo}
}

func equalSettings(a, b models.Settings) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func zone(a *models.Aggregate) string {
	if a.AvailabilityZone == nil {
		return ""
	}
	return *a.AvailabilityZone
}

func setOf(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

// shq quotes for a POSIX shell when needed.
func shq(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/=@,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// novaHosts maps root providers that are compute hosts to Nova's host name.
func novaHosts(k *Kept, provs map[string]*models.Provider) map[string]string {
	out := map[string]string{}
	for _, h := range k.Hypervisors {
		if provs[h.ID] != nil {
			out[h.ID] = h.ServiceHost
		}
	}
	hosts := setOf(k.ComputeHosts)
	for u, p := range provs {
		if _, ok := out[u]; !ok && p.ParentUUID == nil && hosts[p.Name] {
			out[u] = p.Name
		}
	}
	return out
}

// memberStep adds (or removes) provider to aggregate a: a compute host
// through Nova's add_host when Nova has the aggregate (Nova mirrors it into
// Placement: corral must not write it twice), any other provider through
// Placement's provider aggregates.
func (pl *planner) memberStep(a *models.Aggregate, path, name, provider string, add, inNova bool) (Step, error) {
	p := pl.provs[provider]
	if p == nil {
		return Step{}, models.E(models.Invalid, "changes", "no provider %s", provider)
	}
	undoOp := scheduling.OpRemoveMember
	if !add {
		undoOp = scheduling.OpAddMember
	}
	undo := []scheduling.Change{{Op: undoOp, Aggregate: a.Name, Provider: p.UUID}}
	if host, ok := pl.hostOf[p.UUID]; ok && inNova {
		action, cmd := "add_host", "openstack aggregate add host "
		if !add {
			action, cmd = "remove_host", "openstack aggregate remove host "
		}
		return Step{Kind: action, Aggregate: a.Name, AggregateUUID: a.UUID, Host: host, Provider: p.UUID, ProviderName: p.Name,
			Service: "nova", Method: "POST", Path: path + "/action", Body: map[string]any{action: map[string]any{"host": host}},
			Openstack: cmd + shq(name) + " " + shq(host), undo: undo}, nil
	}
	newAgg := strings.Contains(path, "{id}")
	aggUUID := a.UUID
	if newAgg {
		aggUUID = "" // Nova chooses it: known once the create is done
	}
	var cur []string
	var gen int64
	if kp := pl.kept.Placement.Providers[p.UUID]; kp != nil {
		cur, gen = slices.Clone(kp.Aggregates), kp.Generation
	}
	if !inNova {
		// An aggregate of Placement's alone exists through its members:
		// the undo sets the provider's list back.
		undo = []scheduling.Change{{Op: scheduling.OpSetProviderAggregates, Provider: p.UUID, PlacementFields: scheduling.PlacementFields{Aggregates: append([]string{}, cur...)}}}
	}
	next := slices.DeleteFunc(slices.Clone(cur), func(s string) bool { return s == a.UUID })
	if add {
		next = append(next, a.UUID)
	}
	slices.Sort(next)
	var flags []string
	for _, ag := range next {
		flags = append(flags, "--aggregate "+ag)
	}
	flags = append(flags, fmt.Sprintf("--generation %d", gen))
	return Step{Kind: "placement_aggregates", Aggregate: a.Name, AggregateUUID: aggUUID, Provider: p.UUID, ProviderName: p.Name, add: add, newAgg: newAgg,
		Service: "placement", Method: "PUT", Path: "/resource_providers/" + p.UUID + "/aggregates",
		Body:      map[string]any{"aggregates": next, "resource_provider_generation": gen},
		Openstack: fmt.Sprintf("openstack --os-placement-api-version 1.19 resource provider aggregate set %s %s", strings.Join(flags, " "), p.UUID),
		undo:      undo}, nil
}
