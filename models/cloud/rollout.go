package cloud

import (
	"context"
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
	novaID := map[string]int64{}
	for _, a := range kept.Aggregates {
		novaID[a.UUID] = a.ID
	}
	provs := map[string]*models.Provider{}
	for i := range live.Providers {
		provs[live.Providers[i].UUID] = &live.Providers[i]
	}
	hostOf := novaHosts(kept, provs)
	before := map[string]*models.Aggregate{}
	for i := range live.Aggregates {
		before[live.Aggregates[i].UUID] = &live.Aggregates[i]
	}
	after := map[string]*models.Aggregate{}
	for i := range next.Aggregates {
		after[next.Aggregates[i].UUID] = &next.Aggregates[i]
	}
	ref := func(a *models.Aggregate) (string, string) { // path base, openstack ref
		if id, ok := novaID[a.UUID]; ok && before[a.UUID] != nil {
			return fmt.Sprintf("/os-aggregates/%d", id), a.Name
		}
		return "/os-aggregates/{id}", a.Name
	}
	var creates, zones, sets, adds, removes, unsets, deletes []Step
	for _, a := range next.Aggregates {
		old := before[a.UUID]
		path, name := ref(&a)
		if old == nil {
			p.newNames = append(p.newNames, a.Name)
			body := map[string]any{"name": a.Name}
			cmd := "openstack aggregate create"
			if a.AvailabilityZone != nil {
				body["availability_zone"] = *a.AvailabilityZone
				cmd += " --zone " + shq(*a.AvailabilityZone)
			}
			creates = append(creates, Step{Kind: "create", Aggregate: a.Name, Service: "nova", Method: "POST", Path: "/os-aggregates",
				Body: map[string]any{"aggregate": body}, Openstack: cmd + " " + shq(a.Name),
				undo: []scheduling.Change{{Op: scheduling.OpDeleteAggregate, Aggregate: a.Name}}})
			old = &models.Aggregate{Metadata: map[string]string{}}
		} else {
			if _, known := novaID[a.UUID]; !known {
				// Placement-only aggregate: only its members can change.
				if !maps.Equal(old.Metadata, a.Metadata) || old.Name != a.Name {
					return nil, models.E(models.Invalid, "changes", "aggregate %s exists in placement only: nova has no metadata or name for it", a.Name)
				}
			} else if zone(old) != zone(&a) {
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
				zones = append(zones, Step{Kind: "zone", Aggregate: a.Name, AggregateUUID: a.UUID, Service: "nova", Method: "PUT", Path: path,
					Body: map[string]any{"aggregate": body}, Openstack: cmd, undo: []scheduling.Change{undo}})
			}
			p.touchedAggs = append(p.touchedAggs, a.UUID)
		}
		// Metadata: sets first, removals at the end.
		set, unset := map[string]*string{}, map[string]*string{}
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
		mdStep := func(m map[string]*string) Step {
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
		if len(set) > 0 {
			sets = append(sets, mdStep(set))
		}
		if len(unset) > 0 {
			unsets = append(unsets, mdStep(unset))
		}
		// Members.
		oldM, newM := setOf(old.Members), setOf(a.Members)
		for _, u := range a.Members {
			if !oldM[u] {
				st, err := memberStep(&a, path, name, u, true, provs, hostOf, kept)
				if err != nil {
					return nil, err
				}
				adds = append(adds, st)
			}
		}
		for _, u := range old.Members {
			if !newM[u] {
				st, err := memberStep(&a, path, name, u, false, provs, hostOf, kept)
				if err != nil {
					return nil, err
				}
				removes = append(removes, st)
			}
		}
	}
	for _, old := range live.Aggregates {
		if after[old.UUID] != nil {
			continue
		}
		id, known := novaID[old.UUID]
		p.touchedAggs = append(p.touchedAggs, old.UUID)
		undo := []scheduling.Change{{Op: scheduling.OpCreateAggregate, Aggregate: old.Name, AvailabilityZone: old.AvailabilityZone, Metadata: maps.Clone(old.Metadata)}}
		// Whatever members are left go first (Nova refuses to delete an
		// aggregate with hosts; Placement keeps memberships of a uuid
		// nobody names any more).
		for _, u := range old.Members {
			st, err := memberStep(&old, fmt.Sprintf("/os-aggregates/%d", id), old.Name, u, false, provs, hostOf, kept)
			if err != nil {
				return nil, err
			}
			removes = append(removes, st)
		}
		if known {
			deletes = append(deletes, Step{Kind: "delete", Aggregate: old.Name, AggregateUUID: old.UUID, Service: "nova", Method: "DELETE",
				Path: fmt.Sprintf("/os-aggregates/%d", id), Openstack: "openstack aggregate delete " + shq(old.Name), undo: undo})
		}
	}
	specSets, specUnsets := flavorSteps(p, live, next)
	traitSets := traitSteps(live, next, kept)
	sets = append(sets, specSets...)
	unsets = append(unsets, specUnsets...)
	for _, group := range [][]Step{creates, zones, sets, traitSets, adds, removes, unsets, deletes} {
		p.Steps = append(p.Steps, group...)
	}
	return p, nil
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

// RolloutReport says what a rollout did.
type RolloutReport struct {
	Plan *Plan
	// Drift lists, object by object and field by field, what the cloud
	// changed since the last sync; a rollout with drift sends nothing.
	Drift    []string
	Done     []Step
	Failed   *Step
	Error    string
	NotDone  []Step
	Mirrored []string // hosts whose Placement copy does not agree after the rollout
	UndoID   string   // the draft that undoes what was done (on failure)
	// NoUndo are calls done that a draft cannot express (flavors' extra
	// specs, traits): undo them by hand.
	NoUndo []string
	Sync   *SyncResult
}

// Rollout sends a plan to the cloud: it re-reads every object the plan
// touches and refuses on drift; then makes the calls in order, each
// audited, stopping at the first failure; checks that Placement mirrors
// the host memberships Nova changed; re-syncs; and on failure stores a
// draft that undoes what was done.
func (c *Client) Rollout(ctx context.Context, st RolloutStore, actor models.Actor, plan *Plan, connection string) (*RolloutReport, error) {
	r := &RolloutReport{Plan: plan}
	drift, err := c.drift(ctx, plan)
	if err != nil {
		return nil, err
	}
	if len(drift) > 0 {
		r.Drift = drift
		return r, nil
	}
	created := map[string]int64{}      // aggregate name → nova id
	createdUUID := map[string]string{} // aggregate name → nova's uuid
	var mirrorChecks []Step
	for i := range plan.Steps {
		s := plan.Steps[i]
		path := s.Path
		if strings.Contains(path, "{id}") {
			id, ok := created[s.Aggregate]
			if !ok {
				r.Failed, r.Error = &s, "the aggregate was not created"
				r.NotDone = plan.Steps[i+1:]
				break
			}
			path = strings.Replace(path, "{id}", fmt.Sprint(id), 1)
			s.Path, s.AggregateUUID = path, createdUUID[s.Aggregate]
		}
		var answer any
		var callErr error
		switch s.Kind {
		case "create":
			var out struct {
				Aggregate NovaAggregate `json:"aggregate"`
			}
			callErr = c.send(ctx, c.Compute, "POST", strings.TrimPrefix(path, "/"), s.Body, &out, 200)
			if callErr == nil {
				created[s.Aggregate] = out.Aggregate.ID
				createdUUID[s.Aggregate] = out.Aggregate.UUID
				s.AggregateUUID = out.Aggregate.UUID
				answer = map[string]any{"id": out.Aggregate.ID, "uuid": out.Aggregate.UUID}
			}
		case "placement_aggregates":
			// Generations guard the write: read the provider's current
			// list and generation, change only this aggregate.
			var cur struct {
				Aggregates []string `json:"aggregates"`
				Generation int64    `json:"resource_provider_generation"`
			}
			if callErr = c.get(ctx, c.Placement, strings.TrimPrefix(path, "/"), &cur); callErr == nil {
				next := slices.DeleteFunc(cur.Aggregates, func(x string) bool { return x == s.AggregateUUID })
				if s.add {
					next = append(next, s.AggregateUUID)
				}
				slices.Sort(next)
				s.Body = map[string]any{"aggregates": next, "resource_provider_generation": cur.Generation}
				callErr = c.send(ctx, c.Placement, "PUT", strings.TrimPrefix(path, "/"), s.Body, nil, 200)
			}
		case "provider_traits":
			var cur struct {
				Traits     []string `json:"traits"`
				Generation int64    `json:"resource_provider_generation"`
			}
			if callErr = c.get(ctx, c.Placement, strings.TrimPrefix(path, "/"), &cur); callErr == nil {
				next := slices.DeleteFunc(cur.Traits, func(t string) bool { return slices.Contains(s.traitsRemove, t) })
				for _, t := range s.traitsAdd {
					if !slices.Contains(next, t) {
						next = append(next, t)
					}
				}
				slices.Sort(next)
				s.Body = map[string]any{"traits": next, "resource_provider_generation": cur.Generation}
				callErr = c.send(ctx, c.Placement, "PUT", strings.TrimPrefix(path, "/"), s.Body, nil, 200)
			}
		default:
			ok := []int{200}
			if s.Method == "DELETE" {
				ok = []int{200, 204}
			}
			callErr = c.send(ctx, c.Compute, s.Method, strings.TrimPrefix(path, "/"), s.Body, nil, ok...)
		}
		status := "ok"
		if callErr != nil {
			status = callErr.Error()
		}
		if answer == nil {
			answer = map[string]any{"status": status}
		}
		objType, objID := "aggregate", s.AggregateUUID
		switch s.Kind {
		case "flavor_extra_specs", "flavor_unset_extra_spec":
			objType, objID = "flavor", strings.Split(strings.TrimPrefix(s.Path, "/flavors/"), "/")[0]
		case "provider_traits":
			objType, objID = "provider", s.Provider
		}
		_ = st.AuditCloudCall(context.WithoutCancel(ctx), actor, "rollout-call", objType, objID, s.Aggregate,
			map[string]any{"call": s.String(), "openstack": s.Openstack}, answer)
		if callErr != nil {
			r.Failed, r.Error = &s, callErr.Error()
			r.NotDone = plan.Steps[i+1:]
			break
		}
		r.Done = append(r.Done, s)
		if s.Kind == "add_host" || s.Kind == "remove_host" {
			mirrorChecks = append(mirrorChecks, s)
		}
	}
	// Nova mirrors host membership into Placement; check it did.
	for _, s := range mirrorChecks {
		var cur struct {
			Aggregates []string `json:"aggregates"`
		}
		if err = c.get(ctx, c.Placement, "resource_providers/"+s.Provider+"/aggregates", &cur); err != nil {
			r.Mirrored = append(r.Mirrored, fmt.Sprintf("%s: %v", s.Host, err))
			continue
		}
		uuid := s.AggregateUUID
		if uuid == "" {
			continue
		}
		if in := slices.Contains(cur.Aggregates, uuid); in != (s.Kind == "add_host") {
			r.Mirrored = append(r.Mirrored, fmt.Sprintf("nova %s %s for aggregate %s, but placement's provider %s says otherwise: member_of will not see it (nova-manage placement sync_aggregates repairs it)",
				strings.Replace(s.Kind, "_", " ", 1), s.Host, s.Aggregate, s.ProviderName))
		}
	}
	// Bring the change in, whatever happened.
	res, err := Sync(ctx, st, c, actor, SyncOptions{Connection: connection})
	if err != nil {
		return r, fmt.Errorf("the rollout's calls were made but the re-sync failed: %w", err)
	}
	r.Sync = res
	if r.Failed != nil && len(r.Done) > 0 && slices.ContainsFunc(r.Done, func(s Step) bool { return s.undo != nil }) {
		var undo []scheduling.Change
		for i := len(r.Done) - 1; i >= 0; i-- {
			undo = append(undo, r.Done[i].undo...)
			if r.Done[i].undo == nil {
				r.NoUndo = append(r.NoUndo, r.Done[i].String())
			}
		}
		id, err := st.SaveDraft(ctx, actor, "undo partial rollout", undo)
		if err != nil {
			return r, fmt.Errorf("the rollout stopped and its undo draft could not be saved: %w", err)
		}
		r.UndoID = id
	}
	return r, nil
}

// drift re-reads the objects the plan touches and compares them with what
// the last sync read: any difference means the draft was made against a
// cloud that is no longer there.
func (c *Client) drift(ctx context.Context, plan *Plan) ([]string, error) {
	var out []string
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
			out = append(out, fmt.Sprintf("aggregate %s: deleted in nova since the last sync", old.Name))
			continue
		}
		if cur.Name != old.Name {
			out = append(out, fmt.Sprintf("aggregate %s: name is now %q", old.Name, cur.Name))
		}
		if z := strOr(cur.AvailabilityZone); z != strOr(old.AvailabilityZone) {
			out = append(out, fmt.Sprintf("aggregate %s: availability_zone %q → %q", old.Name, strOr(old.AvailabilityZone), z))
		}
		for _, k := range slices.Sorted(maps.Keys(union(old.Metadata, cur.Metadata))) {
			if k == "availability_zone" {
				continue
			}
			ov, ook := old.Metadata[k]
			nv, nok := cur.Metadata[k]
			switch {
			case ook && !nok:
				out = append(out, fmt.Sprintf("aggregate %s: metadata %s was removed (was %q)", old.Name, k, ov))
			case !ook && nok:
				out = append(out, fmt.Sprintf("aggregate %s: metadata %s was added (%q)", old.Name, k, nv))
			case ov != nv:
				out = append(out, fmt.Sprintf("aggregate %s: metadata %s %q → %q", old.Name, k, ov, nv))
			}
		}
		oh, nh := setOf(old.Hosts), setOf(cur.Hosts)
		for _, h := range slices.Sorted(maps.Keys(nh)) {
			if !oh[h] {
				out = append(out, fmt.Sprintf("aggregate %s: host %s was added", old.Name, h))
			}
		}
		for _, h := range slices.Sorted(maps.Keys(oh)) {
			if !nh[h] {
				out = append(out, fmt.Sprintf("aggregate %s: host %s was removed", old.Name, h))
			}
		}
	}
	for _, n := range plan.newNames {
		if names[n] {
			out = append(out, fmt.Sprintf("aggregate %s: created in nova since the last sync", n))
		}
	}
	keptFlavors := map[string]NovaFlavor{}
	for _, f := range plan.kept.Flavors {
		keptFlavors[f.ID] = f
	}
	seen := map[string]bool{}
	for _, s := range plan.Steps {
		switch s.Kind {
		case "flavor_extra_specs", "flavor_unset_extra_spec":
			id := strings.Split(strings.TrimPrefix(s.Path, "/flavors/"), "/")[0]
			if seen["f"+id] {
				continue
			}
			seen["f"+id] = true
			var cur struct {
				ExtraSpecs map[string]string `json:"extra_specs"`
			}
			if err := c.get(ctx, c.Compute, "flavors/"+id+"/os-extra_specs", &cur); err != nil {
				return nil, err
			}
			old := keptFlavors[id].ExtraSpecs
			for _, k := range slices.Sorted(maps.Keys(union(old, cur.ExtraSpecs))) {
				ov, ook := old[k]
				nv, nok := cur.ExtraSpecs[k]
				switch {
				case ook && !nok:
					out = append(out, fmt.Sprintf("flavor %s: extra spec %s was removed (was %q)", s.Aggregate, k, ov))
				case !ook && nok:
					out = append(out, fmt.Sprintf("flavor %s: extra spec %s was added (%q)", s.Aggregate, k, nv))
				case ov != nv:
					out = append(out, fmt.Sprintf("flavor %s: extra spec %s %q → %q", s.Aggregate, k, ov, nv))
				}
			}
			continue
		case "provider_traits":
			if seen["t"+s.Provider] {
				continue
			}
			seen["t"+s.Provider] = true
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
				out = append(out, fmt.Sprintf("provider %s: traits [%s] → [%s]", s.ProviderName, strings.Join(a, " "), strings.Join(b, " ")))
			}
			continue
		}
		if s.Kind != "placement_aggregates" || seen[s.Provider] {
			continue
		}
		seen[s.Provider] = true
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
			out = append(out, fmt.Sprintf("provider %s: placement aggregates [%s] → [%s]", s.ProviderName, strings.Join(a, " "), strings.Join(b, " ")))
		}
	}
	return out, nil
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

// PlanDraft plans the rollout of a stored draft against the last sync. The
// store refuses a draft whose live objects changed since it touched them.
func PlanDraft(ctx context.Context, st DraftStore, draftID string) (*Plan, error) {
	name, changes, err := st.PendingDraft(ctx, draftID)
	if err != nil {
		return nil, err
	}
	kept, err := LoadKept(ctx, st)
	if err != nil {
		return nil, err
	}
	live, err := st.ExportWorld(ctx)
	if err != nil {
		return nil, err
	}
	p, err := PlanRollout(kept, live, changes)
	if err != nil {
		return nil, err
	}
	p.changes, p.DraftID, p.DraftName = changes, draftID, name
	return p, nil
}

// RolloutDraft rolls a planned draft out; when every call succeeded, the
// part without an API (settings) is applied to corral itself and the
// draft is done (deleted): the re-sync brought the rest in.
func (c *Client) RolloutDraft(ctx context.Context, st RolloutStore, actor models.Actor, p *Plan, connection string) (*RolloutReport, error) {
	rep, err := c.Rollout(ctx, st, actor, p, connection)
	if err != nil || len(rep.Drift) > 0 || rep.Failed != nil {
		return rep, err
	}
	var local []scheduling.Change
	for _, ch := range p.changes {
		if ch.Op == scheduling.OpSetSettings {
			local = append(local, ch)
		}
	}
	if len(local) > 0 {
		if _, err := st.Apply(ctx, actor, local); err != nil {
			return rep, fmt.Errorf("rolled out, but the settings could not be applied to corral: %w", err)
		}
	}
	return rep, st.DiscardDraft(ctx, actor, p.DraftID)
}
