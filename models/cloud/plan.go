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

// Step is one API call of a rollout.
type Step struct {
	Kind          string `json:"kind"` // create, zone, set_metadata, add_host, remove_host, placement_aggregates, delete
	Aggregate     string `json:"aggregate"`
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
	traitsAdd     []string
	traitsRemove  []string
	undo          []scheduling.Change
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
	touchedAggs        []string // uuids of live aggregates the plan changes
	newNames           []string // aggregates the plan creates
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
	next, err := scheduling.ApplyChanges(live, changes)
	if err != nil {
		return nil, err
	}
	return PlanWorlds(kept, live, next)
}

// PlanWorlds plans the calls that turn the cloud from live (as last
// synced) into next: aggregates, flavors' extra specs and providers'
// traits.
func PlanWorlds(kept *Kept, live, next *models.World) (*Plan, error) {
	if kept == nil {
		return nil, models.E(models.Invalid, "sync", "corral has not synced this cloud yet: run corral sync first")
	}
	p := &Plan{kept: kept}
	if !equalSettings(live.Settings, next.Settings) {
		p.NotRolledOut = append(p.NotRolledOut, "settings: the scheduler's settings live in nova.conf ([scheduler], [filter_scheduler]); corral keeps them but cannot roll them out")
	}
	pl := newPlanner(p, kept, live, next)
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
	specSets, specUnsets := flavorSteps(p, live, next)
	traitSets := traitSteps(live, next, kept)
	pl.sets = append(pl.sets, specSets...)
	pl.unsets = append(pl.unsets, specUnsets...)
	for _, group := range [][]Step{pl.creates, pl.zones, pl.sets, traitSets, pl.adds, pl.removes, pl.unsets, pl.deletes} {
		p.Steps = append(p.Steps, group...)
	}
	return p, nil
}

// planner collects a plan's aggregate calls by group, in the order
// PlanWorlds sends the groups.
type planner struct {
	p                                                    *Plan
	kept                                                 *Kept
	novaID                                               map[string]int64 // aggregate uuid → nova id
	provs                                                map[string]*models.Provider
	hostOf                                               map[string]string
	before, after                                        map[string]*models.Aggregate
	creates, zones, sets, adds, removes, unsets, deletes []Step
}

func newPlanner(p *Plan, kept *Kept, live, next *models.World) *planner {
	pl := &planner{p: p, kept: kept, novaID: map[string]int64{}, provs: map[string]*models.Provider{},
		before: map[string]*models.Aggregate{}, after: map[string]*models.Aggregate{}}
	for _, a := range kept.Aggregates {
		pl.novaID[a.UUID] = a.ID
	}
	for i := range live.Providers {
		pl.provs[live.Providers[i].UUID] = &live.Providers[i]
	}
	pl.hostOf = novaHosts(kept, pl.provs)
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
// its creation or zone, its metadata, its members.
func (pl *planner) aggregate(a models.Aggregate) error {
	old := pl.before[a.UUID]
	path, name := pl.ref(&a)
	if old == nil {
		pl.p.newNames = append(pl.p.newNames, a.Name)
		pl.creates = append(pl.creates, createStep(a))
		old = &models.Aggregate{Metadata: map[string]string{}}
	} else {
		if _, known := pl.novaID[a.UUID]; !known {
			// Placement-only aggregate: only its members can change.
			if !maps.Equal(old.Metadata, a.Metadata) || old.Name != a.Name {
				return models.E(models.Invalid, "changes", "aggregate %s exists in placement only: nova has no metadata or name for it", a.Name)
			}
		} else if zone(old) != zone(&a) {
			pl.zones = append(pl.zones, zoneStep(old, a, path, name))
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
	return pl.members(old, a, path, name)
}

// members plans the hosts and providers that join or leave aggregate a.
func (pl *planner) members(old *models.Aggregate, a models.Aggregate, path, name string) error {
	oldM, newM := setOf(old.Members), setOf(a.Members)
	for _, u := range a.Members {
		if !oldM[u] {
			st, err := memberStep(&a, path, name, u, true, pl.provs, pl.hostOf, pl.kept)
			if err != nil {
				return err
			}
			pl.adds = append(pl.adds, st)
		}
	}
	for _, u := range old.Members {
		if !newM[u] {
			st, err := memberStep(&a, path, name, u, false, pl.provs, pl.hostOf, pl.kept)
			if err != nil {
				return err
			}
			pl.removes = append(pl.removes, st)
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
		st, err := memberStep(&old, fmt.Sprintf("/os-aggregates/%d", id), old.Name, u, false, pl.provs, pl.hostOf, pl.kept)
		if err != nil {
			return err
		}
		pl.removes = append(pl.removes, st)
	}
	if known {
		pl.deletes = append(pl.deletes, Step{Kind: "delete", Aggregate: old.Name, AggregateUUID: old.UUID, Service: "nova", Method: "DELETE",
			Path: fmt.Sprintf("/os-aggregates/%d", id), Openstack: "openstack aggregate delete " + shq(old.Name), undo: undo})
	}
	return nil
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

func memberStep(a *models.Aggregate, path, name, provider string, add bool, provs map[string]*models.Provider,
	hostOf map[string]string, k *Kept) (Step, error) {
	p := provs[provider]
	if p == nil {
		return Step{}, models.E(models.Invalid, "changes", "no provider %s", provider)
	}
	undoOp := scheduling.OpRemoveMember
	if !add {
		undoOp = scheduling.OpAddMember
	}
	undo := []scheduling.Change{{Op: undoOp, Aggregate: a.Name, Provider: p.UUID}}
	if host, ok := hostOf[p.UUID]; ok {
		action, cmd := "add_host", "openstack aggregate add host "
		if !add {
			action, cmd = "remove_host", "openstack aggregate remove host "
		}
		return Step{Kind: action, Aggregate: a.Name, AggregateUUID: a.UUID, Host: host, Provider: p.UUID, ProviderName: p.Name,
			Service: "nova", Method: "POST", Path: path + "/action", Body: map[string]any{action: map[string]any{"host": host}},
			Openstack: cmd + shq(name) + " " + shq(host), undo: undo}, nil
	}
	if strings.Contains(path, "{id}") || a.UUID == "" {
		// A new aggregate's uuid is Nova's to choose: Placement cannot be
		// told about it before it exists.
		return Step{}, models.E(models.Invalid, "changes", "provider %s is not a compute host: it can join aggregate %s only once the aggregate exists in the cloud (roll out the aggregate first)", p.Name, a.Name)
	}
	var cur []string
	var gen int64
	if kp := k.Placement.Providers[p.UUID]; kp != nil {
		cur, gen = slices.Clone(kp.Aggregates), kp.Generation
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
	return Step{Kind: "placement_aggregates", Aggregate: a.Name, AggregateUUID: a.UUID, Provider: p.UUID, ProviderName: p.Name, add: add,
		Service: "placement", Method: "PUT", Path: "/resource_providers/" + p.UUID + "/aggregates",
		Body:      map[string]any{"aggregates": next, "resource_provider_generation": gen},
		Openstack: fmt.Sprintf("openstack --os-placement-api-version 1.19 resource provider aggregate set %s %s", strings.Join(flags, " "), p.UUID),
		undo:      undo}, nil
}

// flavorSteps sets and removes flavors' extra specs (Nova's
// os-extra_specs); flavors themselves are not created or deleted.
func flavorSteps(p *Plan, live, next *models.World) (sets, unsets []Step) {
	old := map[string]*models.Flavor{}
	for i := range live.Flavors {
		old[live.Flavors[i].ID] = &live.Flavors[i]
	}
	seen := map[string]bool{}
	for _, f := range next.Flavors {
		seen[f.ID] = true
		o := old[f.ID]
		if o == nil {
			p.NotRolledOut = append(p.NotRolledOut, "flavor "+f.Name+": corral does not create flavors in the cloud")
			continue
		}
		set := map[string]any{}
		var props []string
		for _, k := range slices.Sorted(maps.Keys(f.ExtraSpecs)) {
			if ov, ok := o.ExtraSpecs[k]; !ok || ov != f.ExtraSpecs[k] {
				set[k] = f.ExtraSpecs[k]
				props = append(props, "--property "+shq(k+"="+f.ExtraSpecs[k]))
			}
		}
		if len(set) > 0 {
			sets = append(sets, Step{Kind: "flavor_extra_specs", Aggregate: f.Name, Service: "nova", Method: "POST",
				Path: "/flavors/" + f.ID + "/os-extra_specs", Body: map[string]any{"extra_specs": set},
				Openstack: "openstack flavor set " + strings.Join(props, " ") + " " + shq(f.Name)})
		}
		for _, k := range slices.Sorted(maps.Keys(o.ExtraSpecs)) {
			if _, ok := f.ExtraSpecs[k]; !ok {
				unsets = append(unsets, Step{Kind: "flavor_unset_extra_spec", Aggregate: f.Name, Service: "nova", Method: "DELETE",
					Path: "/flavors/" + f.ID + "/os-extra_specs/" + url.PathEscape(k), Openstack: "openstack flavor unset --property " + shq(k) + " " + shq(f.Name)})
			}
		}
	}
	for _, f := range live.Flavors {
		if !seen[f.ID] {
			p.NotRolledOut = append(p.NotRolledOut, "flavor "+f.Name+": corral does not delete flavors in the cloud")
		}
	}
	return sets, unsets
}

// traitSteps changes providers' traits in Placement, each guarded by the
// provider's generation (re-read when the call is made).
func traitSteps(live, next *models.World, kept *Kept) []Step {
	old := map[string]*models.Provider{}
	for i := range live.Providers {
		old[live.Providers[i].UUID] = &live.Providers[i]
	}
	var out []Step
	for _, pr := range next.Providers {
		o := old[pr.UUID]
		if o == nil {
			continue
		}
		a, b := setOf(o.Traits), setOf(pr.Traits)
		var add, remove []string
		for _, t := range slices.Sorted(maps.Keys(b)) {
			if !a[t] {
				add = append(add, t)
			}
		}
		for _, t := range slices.Sorted(maps.Keys(a)) {
			if !b[t] {
				remove = append(remove, t)
			}
		}
		if len(add)+len(remove) == 0 {
			continue
		}
		var gen int64
		if kp := kept.Placement.Providers[pr.UUID]; kp != nil {
			gen = kp.Generation
		}
		traits := sorted(pr.Traits)
		var flags []string
		for _, t := range traits {
			flags = append(flags, "--trait "+t)
		}
		out = append(out, Step{Kind: "provider_traits", Aggregate: pr.Name, Provider: pr.UUID, ProviderName: pr.Name, Service: "placement",
			Method: "PUT", Path: "/resource_providers/" + pr.UUID + "/traits",
			Body:      map[string]any{"traits": traits, "resource_provider_generation": gen},
			Openstack: "openstack --os-placement-api-version 1.6 resource provider trait set " + strings.Join(flags, " ") + " " + pr.UUID,
			traitsAdd: add, traitsRemove: remove})
	}
	return out
}
