package forms

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"corral/models"
	"corral/models/scheduling"
)

// The aggregate page's forms: create, name and zone, the metadata editor,
// tenant and reservation tags, members (picker, bulk paste, removal) and
// delete.

// aggRef names an aggregate in a change: by name, readable in previews,
// unless another aggregate answers to that name.
func aggRef(snap *scheduling.Snapshot, a *models.Aggregate) string {
	if b, ok := snap.Aggregate(a.Name); ok && b.UUID == a.UUID {
		return a.Name
	}
	return a.UUID
}

// providerRef names a provider in a change: by name unless another
// provider answers to it.
func providerRef(snap *scheduling.Snapshot, p *models.Provider) string {
	if q, ok := snap.Provider(p.Name); ok && q.UUID == p.UUID {
		return p.Name
	}
	return p.UUID
}

func zoneOf(a *models.Aggregate) string {
	if a.AvailabilityZone == nil {
		return ""
	}
	return *a.AvailabilityZone
}

// nameAndZone checks the name and zone fields of the aggregate forms, and
// asks for the acknowledgement when the zone changes from current.
func nameAndZone(r *Read, form url.Values, current string) (name, zone string) {
	name = strings.TrimSpace(form.Get("name"))
	zone = strings.TrimSpace(form.Get("availability_zone"))
	if name == "" {
		r.refuse("name", "An aggregate needs a name.")
	} else if len(name) > 255 {
		r.refuse("name", "Use at most 255 characters.")
	}
	zoneOK := true
	if len(zone) > 255 {
		r.refuse("availability_zone", "Use at most 255 characters.")
		zoneOK = false
	} else if strings.Contains(zone, ":") {
		// Nova refuses zone names with a colon: "az:host" is its syntax
		// for forcing a host.
		r.refuse("availability_zone", "A zone name cannot contain “:” (Nova reads “zone:host” as a forced host).")
		zoneOK = false
	}
	if zone != current && form.Get("confirm_az") == "" && zoneOK {
		r.Confirm = map[string]string{}
		if zone == "" {
			r.Confirm["confirm_az"] = fmt.Sprintf("Clearing zone “%s” needs your confirmation: tick the box.", current)
		} else {
			r.Confirm["confirm_az"] = fmt.Sprintf("Setting zone “%s” needs your confirmation: tick the box.", zone)
		}
	}
	return name, zone
}

// AggregateCreate reads the new-aggregate form: name, zone and the hosts
// to add, all in one step. The create change has no UUID: the save gives
// it one.
func AggregateCreate(form url.Values, snap *scheduling.Snapshot) Read {
	var r Read
	name, zone := nameAndZone(&r, form, "")
	r.Title = "New aggregate " + name
	create := scheduling.Change{Op: scheduling.OpCreateAggregate, Aggregate: name}
	if zone != "" {
		create.AvailabilityZone = &zone
	}
	r.add(create)
	var missing []string
	seen := map[string]bool{}
	for _, ref := range SplitList(form.Get("hosts")) {
		p, ok := snap.Provider(ref)
		if !ok {
			missing = append(missing, ref)
			continue
		}
		if !seen[p.UUID] {
			seen[p.UUID] = true
			r.add(scheduling.Change{Op: scheduling.OpAddMember, Aggregate: name, Provider: providerRef(snap, p)})
		}
	}
	if len(missing) > 0 {
		r.refuse("hosts", "No such provider: "+strings.Join(missing, ", ")+". Nothing was created.")
	}
	return r
}

// AggregateUpdate reads the name and zone form of agg. Nothing changed is
// no change (and needs no acknowledgement).
func AggregateUpdate(form url.Values, agg *models.Aggregate, snap *scheduling.Snapshot) Read {
	r := Read{Title: "Zone of " + agg.Name}
	cur := zoneOf(agg)
	name, zone := nameAndZone(&r, form, cur)
	if name == agg.Name && zone == cur {
		r.Confirm = nil
		return r
	}
	ref := aggRef(snap, agg)
	if zone != cur {
		r.add(scheduling.Change{Op: scheduling.OpSetZone, Aggregate: ref, AvailabilityZone: &zone})
	}
	if name != agg.Name && name != "" {
		r.add(scheduling.Change{Op: scheduling.OpRenameAggregate, Aggregate: ref, Value: name})
	}
	return r.stamped(form)
}

// TypedKey reports whether a metadata key is edited by a typed field of
// the aggregate page (zone, tenant and reservation tags), which the raw
// metadata editor leaves be.
func TypedKey(k string, st models.Settings) bool {
	return k == "availability_zone" || scheduling.IsTenantKey(k) || scheduling.IsReservationKey(k, st.RequiredMemberPrefix)
}

// TypedKeyMessage says which field edits a typed key.
func TypedKeyMessage(k string) string {
	switch {
	case k == "availability_zone":
		return "Set the zone with the Availability zone field above."
	case scheduling.IsTenantKey(k):
		return "Add projects with the Tenants field above; it writes one project per key."
	}
	return "Add reservations with the Reservations field above."
}

// EditorProblems are the findings about the keys the raw editor shows; the
// typed fields report on their own keys.
func EditorProblems(md map[string]string, st models.Settings) []Problem {
	var out []Problem
	for _, p := range ProblemsOf(scheduling.ValidateAggregateMetadata(md, st)) {
		if p.Key == "" || !TypedKey(p.Key, st) {
			out = append(out, p)
		}
	}
	return out
}

// Metadata reads the metadata editor of agg: its rows replace every key
// but the typed ones, which stay as stored.
func Metadata(form url.Values, agg *models.Aggregate, snap *scheduling.Snapshot) Read {
	st := snap.World().Settings
	r := Read{Title: "Metadata of " + agg.Name}
	_, md, probs := Rows(form)
	for _, k := range slices.Sorted(maps.Keys(md)) {
		if TypedKey(k, st) {
			probs = append(probs, Problem{Key: k, Message: TypedKeyMessage(k)})
			delete(md, k)
		}
	}
	for k, v := range agg.Metadata {
		if TypedKey(k, st) {
			md[k] = v
		}
	}
	r.Problems = append(probs, EditorProblems(md, st)...)
	r.Changes = metadataChanges(aggRef(snap, agg), agg.Metadata, md)
	return r.stamped(form)
}

// metadataChanges turns cur into next, key by key.
func metadataChanges(ref string, cur, next map[string]string) []scheduling.Change {
	var out []scheduling.Change
	for _, k := range slices.Sorted(maps.Keys(cur)) {
		if _, ok := next[k]; !ok {
			out = append(out, scheduling.Change{Op: scheduling.OpUnsetMetadata, Aggregate: ref, Key: k})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if v, ok := cur[k]; !ok || v != next[k] {
			out = append(out, scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: ref, Key: k, Value: next[k]})
		}
	}
	return out
}

// tagValue is the value a tag form posts: the add forms name their field
// after what it holds, the remove buttons send it as "value".
func tagValue(form url.Values, field string) string {
	if v := strings.TrimSpace(form.Get(field)); v != "" {
		return v
	}
	return strings.TrimSpace(form.Get("value"))
}

// tagError words the core's tag rule for the form.
func tagError(field, id string) string {
	e := scheduling.CheckTag(field, id)
	switch {
	case e == nil:
		return ""
	case id == "":
		return "Type a " + field + " id."
	}
	return UpperFirst(e.Msg) + "."
}

// HasTenantList reports whether a tenant key of md holds a comma list
// (or nothing), which "Split into one key per project" rewrites.
func HasTenantList(md map[string]string) bool {
	for k, v := range md {
		if scheduling.IsTenantKey(k) && len(scheduling.TenantProjects(v)) != 1 {
			return true
		}
	}
	return false
}

// Tenants reads the tenant field of agg: add one project, split the comma
// lists into one key per project ("split"), or remove a project.
func Tenants(form url.Values, agg *models.Aggregate, snap *scheduling.Snapshot, remove bool) Read {
	r := Read{Title: "Tenants of " + agg.Name}
	ref := aggRef(snap, agg)
	p := tagValue(form, "project")
	cur := scheduling.TenantTags(agg.Metadata)
	switch {
	case remove:
		if !slices.Contains(cur, p) {
			r.refuse("project", fmt.Sprintf("Project %s is not a tenant of this aggregate.", p))
			return r
		}
		r.add(scheduling.Change{Op: scheduling.OpRemoveTenant, Aggregate: ref, Project: p})
	case form.Get("split") != "":
		if !HasTenantList(agg.Metadata) {
			r.refuse("project", "There is no comma list to split.")
			return r
		}
		md := maps.Clone(agg.Metadata)
		r.Changes = metadataChanges(ref, agg.Metadata, scheduling.SetTenantTags(md, cur))
	default:
		if msg := tagError("project", p); msg != "" {
			r.refuse("project", msg)
			return r
		}
		if slices.Contains(cur, p) {
			r.refuse("project", fmt.Sprintf("Project %s is already a tenant of this aggregate.", p))
			return r
		}
		r.add(scheduling.Change{Op: scheduling.OpAddTenant, Aggregate: ref, Project: p})
	}
	return r.stamped(form)
}

// Reservations reads the reservation field of agg: add or remove one
// reservation tag (the settings' required-member prefix and the id).
func Reservations(form url.Values, agg *models.Aggregate, snap *scheduling.Snapshot, remove bool) Read {
	r := Read{Title: "Reservations of " + agg.Name}
	id := tagValue(form, "reservation")
	prefix := snap.World().Settings.RequiredMemberPrefix
	ref := aggRef(snap, agg)
	if remove {
		if _, ok := scheduling.RemoveReservationTag(maps.Clone(agg.Metadata), prefix, id); !ok {
			r.refuse("reservation", fmt.Sprintf("Reservation %s is not on this aggregate.", id))
			return r
		}
		r.add(scheduling.Change{Op: scheduling.OpRemoveReservation, Aggregate: ref, Reservation: id})
		return r.stamped(form)
	}
	if prefix == "" {
		r.refuse("reservation", "Reservation tags are off: set a required-member prefix in Settings first.")
		return r
	}
	if msg := tagError("reservation", id); msg != "" {
		r.refuse("reservation", msg)
		return r
	}
	if slices.Contains(scheduling.ReservationTags(agg.Metadata, prefix), id) {
		r.refuse("reservation", fmt.Sprintf("Reservation %s is already on this aggregate.", id))
		return r
	}
	r.add(scheduling.Change{Op: scheduling.OpAddReservation, Aggregate: ref, Reservation: id})
	return r.stamped(form)
}

// MemberRefs are the providers the members form names: the ticked ones,
// then those pasted in the box.
func MemberRefs(form url.Values) []string {
	return Dedupe(append(slices.Clone(form["provider"]), SplitList(form.Get("bulk"))...))
}

// MembersAdd reads the member picker of agg: ticked and pasted providers,
// added in one step. Providers that are members already are Skipped.
func MembersAdd(form url.Values, agg *models.Aggregate, snap *scheduling.Snapshot) Read {
	r := Read{Title: "Members of " + agg.Name}
	refs := MemberRefs(form)
	if len(refs) == 0 {
		r.refuse("", "Tick providers found above or paste names or uuids.")
		return r
	}
	var missing []string
	seen := map[string]bool{}
	ref := aggRef(snap, agg)
	for _, x := range refs {
		p, ok := snap.Provider(x)
		switch {
		case !ok:
			missing = append(missing, x)
		case seen[p.UUID] || slices.Contains(agg.Members, p.UUID):
			r.Skipped = append(r.Skipped, p.Name)
		default:
			r.add(scheduling.Change{Op: scheduling.OpAddMember, Aggregate: ref, Provider: providerRef(snap, p)})
		}
		if ok {
			seen[p.UUID] = true
		}
	}
	if len(missing) > 0 {
		r.refuse("", "No such provider: "+strings.Join(missing, ", ")+". Nothing was added.")
		r.Changes, r.Skipped = nil, nil
	}
	return r.stamped(form)
}

// MembersRemove reads the member list's removal of the ticked members of
// agg. Ticked providers that are no longer members are Skipped.
func MembersRemove(form url.Values, agg *models.Aggregate, snap *scheduling.Snapshot) Read {
	r := Read{Title: "Members of " + agg.Name}
	sel := Dedupe(form["provider"])
	if len(sel) == 0 {
		r.refuse("", "Nothing removed: tick the members to remove.")
		return r
	}
	ref := aggRef(snap, agg)
	for _, u := range sel {
		p, ok := snap.Provider(u)
		switch {
		case ok && slices.Contains(agg.Members, p.UUID):
			r.add(scheduling.Change{Op: scheduling.OpRemoveMember, Aggregate: ref, Provider: providerRef(snap, p)})
		case !ok && slices.Contains(agg.Members, u):
			r.add(scheduling.Change{Op: scheduling.OpRemoveMember, Aggregate: ref, Provider: u})
		default:
			r.Skipped = append(r.Skipped, u)
		}
	}
	return r.stamped(form)
}

// AggregateDelete reads the delete confirmation of agg. Like Nova, it is
// refused while hosts are members; other memberships go with it.
func AggregateDelete(agg *models.Aggregate, snap *scheduling.Snapshot) Read {
	r := Read{Title: "Delete " + agg.Name}
	var hosts []string
	for _, u := range agg.Members {
		if p, ok := snap.Provider(u); ok && p.IsHost() {
			hosts = append(hosts, p.Name)
		}
	}
	if len(hosts) > 0 {
		slices.Sort(hosts)
		r.refuse("", fmt.Sprintf("aggregate %s still has hosts: %s; remove them first", agg.Name, strings.Join(hosts, ", ")))
		return r
	}
	r.add(scheduling.Change{Op: scheduling.OpDeleteAggregate, Aggregate: aggRef(snap, agg)})
	return r
}
