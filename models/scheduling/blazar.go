package scheduling

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"corral/models"
	"corral/models/pycompat"
)

// Blazar's own conventions (blazar/utils/openstack/nova.py,
// blazar/plugins/oshosts and blazar/plugins/instances, with their default
// configuration). corral's reservation request filter speaks reservation
// tags (<prefix><id> keys) and its tenant filters speak filter_tenant_id*
// keys; a world imported from a Blazar deployment says the same things in
// Blazar's words, so TranslateBlazar restates them.
const (
	// BlazarFreepoolName is [nova] aggregate_freepool_name: the aggregate
	// holding every host that is free to be reserved.
	BlazarFreepoolName = models.FreePoolName
	// BlazarAZPrefix is [physical:host] blazar_az_prefix: a host
	// reservation's aggregate has availability zone blazar_<id>.
	BlazarAZPrefix = "blazar_"
	// blazarLegacyAZPrefix is what older Blazar releases used; blazar-nova's
	// filter still recognises it.
	blazarLegacyAZPrefix = "blazar:"
	// BlazarReservationKey is an instance reservation aggregate's key; its
	// value is the reservation id.
	BlazarReservationKey = "reservation"
	// BlazarOwnerKey is [nova] blazar_owner: the project owning a pool.
	BlazarOwnerKey = "blazar:owner"
	// BlazarProjectValue is [nova] project_id_key: an extra project is a
	// key <project id> with this value.
	BlazarProjectValue = "blazar:project"
	// BlazarFlavorKey is the extra spec of an instance reservation's flavor;
	// its value is the reservation id.
	BlazarFlavorKey = ScopeExtra + ":" + BlazarReservationKey
)

// TranslateBlazar returns a copy of w in which Blazar's conventions are
// also written the way corral's request filters read them, and one line
// per addition for a person ("aggregate r-1: reservation=r-1 →
// reservation:r-1"). w itself is not modified, and Blazar's own keys are
// kept: Blazar goes on working against the same aggregates and flavors.
//
//   - The free pool (named freepool) gets the tag <prefix>freepool, so that
//     flavors without a reservation key are kept off it by the
//     default-forbidden prefix, as Blazar's filter keeps them off.
//   - A reservation's aggregate (metadata reservation=<id>, or availability
//     zone blazar_<id>) gets <prefix><id>, so the reservation's flavor
//     requires it and other flavors are kept off it.
//   - On a reservation's aggregate, blazar:owner=<project> and
//     <project>=blazar:project become tenant tags (filter_tenant_id*, one
//     project per key) unless the project already has one.
//   - A flavor with aggregate_instance_extra_specs:reservation=<id> gets
//     <prefix><id>.
//
// <prefix> is each of s's non-empty reservation prefixes (the required one
// finds the reservation, the default-forbidden one keeps other flavors off
// and, on the flavor, marks it as naming a reservation); usually both are
// "reservation:", giving one key. With both prefixes empty the reservation
// filter is off and nothing is translated. Tags already present are left
// as they are, so translating twice adds nothing the second time.
func TranslateBlazar(w *models.World, s models.Settings) (*models.World, []string) {
	if w == nil {
		return nil, nil
	}
	out := cloneWorldForBlazar(w)
	prefixes := blazarPrefixes(s)
	if len(prefixes) == 0 {
		return out, nil
	}
	var lines []string
	for i := range out.Aggregates {
		a := &out.Aggregates[i]
		id, why, reservation := blazarPool(a)
		if id == "" {
			continue
		}
		for _, p := range prefixes {
			key := p + id
			if _, ok := a.Metadata[key]; ok {
				continue
			}
			if a.Metadata == nil {
				a.Metadata = map[string]string{}
			}
			a.Metadata[key] = ReservationTagValue
			lines = append(lines, fmt.Sprintf("aggregate %s: %s → %s", a.Name, why, key))
		}
		if reservation {
			lines = append(lines, blazarTenants(a)...)
		}
	}
	for i := range out.Flavors {
		f := &out.Flavors[i]
		id := pycompat.Strip(f.ExtraSpecs[BlazarFlavorKey])
		if id == "" {
			continue
		}
		for _, p := range prefixes {
			key := p + id
			if _, ok := f.ExtraSpecs[key]; ok {
				continue
			}
			f.ExtraSpecs[key] = ReservationTagValue
			lines = append(lines, fmt.Sprintf("flavor %s: %s=%s → %s", f.Name, BlazarFlavorKey, id, key))
		}
	}
	return out, lines
}

// blazarPrefixes lists the distinct non-empty reservation prefixes.
func blazarPrefixes(s models.Settings) []string {
	var ps []string
	for _, p := range []string{s.RequiredMemberPrefix, s.DefaultForbiddenMemberPrefix} {
		if p != "" && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// blazarPool tells whether a is one of Blazar's pools: the reservation id
// it stands for ("freepool" for the free pool), the Blazar convention that
// says so (for the report), and whether it is a reservation's own pool
// rather than the free pool.
func blazarPool(a *models.Aggregate) (id, why string, reservation bool) {
	if a.Name == BlazarFreepoolName {
		return BlazarFreepoolName, "Blazar free pool", false
	}
	if v := pycompat.Strip(a.Metadata[BlazarReservationKey]); v != "" {
		return v, BlazarReservationKey + "=" + v, true
	}
	if a.AvailabilityZone != nil {
		az := *a.AvailabilityZone
		for _, p := range []string{BlazarAZPrefix, blazarLegacyAZPrefix} {
			if id, ok := strings.CutPrefix(az, p); ok && pycompat.Strip(id) != "" {
				return pycompat.Strip(id), "availability zone " + az, true
			}
		}
	}
	return "", "", false
}

// blazarTenants turns a reservation pool's owner and extra projects into
// tenant tags. Only reservation pools: the free pool is shared by every
// reservation, so an owner there must not fence its hosts in.
func blazarTenants(a *models.Aggregate) []string {
	type source struct{ project, why string }
	var srcs []source
	if p := pycompat.Strip(a.Metadata[BlazarOwnerKey]); p != "" {
		srcs = append(srcs, source{p, BlazarOwnerKey + "=" + p})
	}
	keys := make([]string, 0, len(a.Metadata))
	for k := range a.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if pycompat.Strip(a.Metadata[k]) == BlazarProjectValue && !IsTenantKey(k) && k != BlazarOwnerKey && pycompat.Strip(k) != "" {
			srcs = append(srcs, source{pycompat.Strip(k), k + "=" + BlazarProjectValue})
		}
	}
	have := TenantTags(a.Metadata)
	var add []source
	for _, s := range srcs {
		// A comma would make one key name two projects, which Placement's
		// pre-filter cannot read; Blazar never writes one.
		if strings.Contains(s.project, ",") || slices.Contains(have, s.project) {
			continue
		}
		have = append(have, s.project)
		add = append(add, s)
	}
	if len(add) == 0 {
		return nil
	}
	projects := TenantTags(a.Metadata)
	for _, s := range add {
		projects = append(projects, s.project)
	}
	a.Metadata = SetTenantTags(a.Metadata, projects)
	lines := make([]string, 0, len(add))
	for _, s := range add {
		lines = append(lines, fmt.Sprintf("aggregate %s: %s → %s=%s", a.Name, s.why, tenantKeyOf(a.Metadata, s.project), s.project))
	}
	return lines
}

// tenantKeyOf is the tenant key that names project alone.
func tenantKeyOf(md map[string]string, project string) string {
	for _, k := range hfSortedKeys(md) {
		if IsTenantKey(k) && pycompat.Strip(md[k]) == project {
			return k
		}
	}
	return TenantKeyPrefix
}

// cloneWorldForBlazar copies w deeply enough that changing the copy's
// aggregates, flavors or settings leaves w as it was.
func cloneWorldForBlazar(w *models.World) *models.World {
	c := &models.World{
		Providers:    slices.Clone(w.Providers),
		Aggregates:   slices.Clone(w.Aggregates),
		Flavors:      slices.Clone(w.Flavors),
		Servers:      slices.Clone(w.Servers),
		ServerGroups: slices.Clone(w.ServerGroups),
		Settings:     w.Settings,
		Consumers:    w.Consumers, // not translated, never changed
	}
	c.Settings.EnabledFilters = slices.Clone(w.Settings.EnabledFilters)
	for i := range c.Aggregates {
		a := &c.Aggregates[i]
		a.Metadata = maps.Clone(a.Metadata)
		a.Members = slices.Clone(a.Members)
		if a.AvailabilityZone != nil {
			az := *a.AvailabilityZone
			a.AvailabilityZone = &az
		}
	}
	for i := range c.Flavors {
		f := &c.Flavors[i]
		f.ExtraSpecs = maps.Clone(f.ExtraSpecs)
	}
	return c
}
