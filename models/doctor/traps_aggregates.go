package doctor

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"corral/models"
	"corral/models/scheduling"
)

// Nova refuses (or its database truncates) aggregate metadata and extra
// spec keys and values longer than 255 characters; nearLimit warns first.
const (
	novaMetadataLimit = 255
	nearLimit         = 230
)

// traitStatusDisabled is the trait Nova puts on a disabled compute
// service's provider.
const traitStatusDisabled = "COMPUTE_STATUS_DISABLED"

func aggObject(a *models.Aggregate) Object {
	return Object{Kind: KindAggregate, UUID: a.UUID, Name: a.Name}
}

func providerObject(p *models.Provider) Object {
	return Object{Kind: KindProvider, UUID: p.UUID, Name: p.Name}
}

func flavorObject(f *models.Flavor) Object {
	return Object{Kind: KindFlavor, UUID: f.ID, Name: f.Name}
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// isolationTraitMissing: an isolated aggregate (trait:CUSTOM_X=required)
// whose hosts lack the trait. A flavor requiring the trait cannot land on
// them, and with isolated-aggregate filtering other flavors are kept off
// them too: they serve no one.
func isolationTraitMissing(in *Input) ([]Finding, error) {
	s := in.Snapshot
	var out []Finding
	for i := range s.World().Aggregates {
		a := &s.World().Aggregates[i]
		for _, k := range sortedKeys(a.Metadata) {
			trait, ok := strings.CutPrefix(k, "trait:")
			if !ok || a.Metadata[k] != "required" || trait == "" {
				continue
			}
			f := Finding{Code: "isolation_trait_missing", Severity: SeverityWarning, Objects: []Object{aggObject(a)},
				Why: "Flavors requiring " + trait + " cannot land on hosts without the trait, so the aggregate's hosts that lack it are wasted (Nova's isolated aggregates need the trait on every host)."}
			if s.World().Settings.EnableIsolatedAggregateFiltering {
				f.Severity = SeverityError
			}
			var names []string
			for _, m := range a.Members {
				p, ok := s.Provider(m)
				if !ok || !p.IsHost() || p.HasTrait(trait) {
					continue
				}
				names = append(names, p.Name)
				f.Objects = append(f.Objects, providerObject(p))
				f.Fix = append(f.Fix, scheduling.Change{Op: scheduling.OpAddTrait, Provider: p.Name, Trait: trait})
			}
			if len(names) == 0 {
				continue
			}
			f.Detail = fmt.Sprintf("aggregate %s requires %s; %d host(s) lack it: %s", a.Name, trait, len(names), namesList(names, 20))
			out = append(out, f)
		}
	}
	return out, nil
}

// tenantCommaLists: a filter_tenant_id* value listing several projects.
// The host filter splits it, Placement's tenant request filter does not:
// with tenant isolation in Placement, none of the listed projects finds
// the aggregate.
func tenantCommaLists(in *Input) ([]Finding, error) {
	s := in.Snapshot
	var out []Finding
	for i := range s.World().Aggregates {
		a := &s.World().Aggregates[i]
		var keys, projects []string
		fixable := true
		for _, k := range sortedKeys(a.Metadata) {
			if !scheduling.IsTenantKey(k) || !strings.Contains(a.Metadata[k], ",") {
				continue
			}
			keys = append(keys, k)
			for _, p := range scheduling.TenantProjects(a.Metadata[k]) {
				fixable = fixable && scheduling.CheckTag("project", p) == nil
				if !slices.Contains(projects, p) {
					projects = append(projects, p)
				}
			}
		}
		if len(keys) == 0 {
			continue
		}
		f := Finding{Code: "tenant_comma_list", Severity: SeverityWarning, Objects: []Object{aggObject(a)},
			Why:    "Placement's tenant request filter reads a filter_tenant_id value as one project, so the projects of a comma list do not find this aggregate there; write one project per key.",
			Detail: fmt.Sprintf("aggregate %s: %s list %s", a.Name, strings.Join(keys, ", "), strings.Join(projects, ", "))}
		if s.World().Settings.LimitTenantsToPlacementAggregate {
			f.Severity = SeverityError
		}
		if fixable {
			for _, k := range keys {
				f.Fix = append(f.Fix, scheduling.Change{Op: scheduling.OpUnsetMetadata, Aggregate: a.Name, Key: k})
			}
			for _, p := range projects {
				f.Fix = append(f.Fix, scheduling.Change{Op: scheduling.OpAddTenant, Aggregate: a.Name, Project: p})
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// metadataTooLong: aggregate metadata and flavor extra specs at or near
// Nova's 255-character limit. Over it, Nova refuses the write (a sync or
// rollout fails); near it, the next project or reservation added to the
// value will.
func metadataTooLong(in *Input) ([]Finding, error) {
	s := in.Snapshot
	var out []Finding
	judge := func(obj Object, what string, md map[string]string) {
		for _, k := range sortedKeys(md) {
			n := max(len(k), len(md[k]))
			if n < nearLimit {
				continue
			}
			f := Finding{Code: "metadata_near_limit", Severity: SeverityWarning, Objects: []Object{obj},
				Why:    "Nova keeps keys and values of at most 255 characters; one this long is refused as soon as it grows.",
				Detail: fmt.Sprintf("%s %s: %s is %d characters long", what, obj.Name, k, n)}
			if n > novaMetadataLimit {
				f.Code, f.Severity = "metadata_over_limit", SeverityError
				f.Why = "Nova refuses keys and values over 255 characters: this one cannot be written to the cloud."
			}
			out = append(out, f)
		}
	}
	for i := range s.World().Aggregates {
		a := &s.World().Aggregates[i]
		judge(aggObject(a), "aggregate", a.Metadata)
	}
	for i := range s.World().Flavors {
		f := &s.World().Flavors[i]
		judge(flavorObject(f), "flavor", f.ExtraSpecs)
	}
	return out, nil
}

// hostInTwoZones: a host whose aggregates put it in two availability
// zones. Nova refuses to make such a host, and one that got there (zones
// renamed under it) is scheduled by whichever zone a request names.
func hostInTwoZones(in *Input) ([]Finding, error) {
	s := in.Snapshot
	var out []Finding
	hosts := s.Hosts()
	for i := range hosts {
		h := &hosts[i]
		first := ""
		two := false
		for _, a := range h.Aggregates {
			if z := zoneOf(a); z != "" {
				if first == "" {
					first = z
				} else if z != first {
					two = true
				}
			}
		}
		if !two {
			continue
		}
		f := Finding{Code: "host_in_two_zones", Severity: SeverityError, Objects: []Object{providerObject(h.Provider)},
			Why: "A host belongs to one availability zone: in two, requests for either zone may or may not find it and moves between them break."}
		var parts []string
		for _, a := range h.Aggregates {
			if z := zoneOf(a); z != "" {
				f.Objects = append(f.Objects, aggObject(a))
				parts = append(parts, a.Name+" ("+z+")")
			}
		}
		slices.Sort(parts)
		f.Detail = fmt.Sprintf("host %s is in zones through %s", h.Provider.Name, strings.Join(parts, ", "))
		out = append(out, f)
	}
	return out, nil
}

func zoneOf(a *models.Aggregate) string {
	if a.AvailabilityZone == nil {
		return ""
	}
	return *a.AvailabilityZone
}

// disabledHostInTenantAggregate: a disabled compute service still in a
// tenant aggregate (Nova's COMPUTE_STATUS_DISABLED trait on its provider,
// or the service as synced). The project counts on a host Nova will not
// schedule to.
func disabledHostInTenantAggregate(in *Input) ([]Finding, error) {
	return unschedulableInTenantAggregates(in, "disabled_host_in_tenant_aggregate",
		"The host's compute service is disabled, so the projects of its tenant aggregates count on capacity Nova will not schedule to.",
		func(p *models.Provider) string {
			if hostDisabled(p) {
				return "disabled"
			}
			return ""
		})
}

// downHostInTenantAggregate: a compute service Nova holds down (forced
// down, or dead: no heartbeat within service_down_time) still in a tenant
// aggregate; ComputeFilter fails it for every request. A disabled one is
// the trap above's.
func downHostInTenantAggregate(in *Input) ([]Finding, error) {
	return unschedulableInTenantAggregates(in, "down_host_in_tenant_aggregate",
		"The host's compute service is down, so ComputeFilter fails it and the projects of its tenant aggregates count on capacity that is not there.",
		func(p *models.Provider) string {
			cs := p.Compute
			switch {
			case hostDisabled(p) || !cs.Down():
				return ""
			case cs.ForcedDown:
				return "forced down"
			case cs.LastSeen != "":
				return "down (last heartbeat " + cs.LastSeen + ")"
			}
			return "down"
		})
}

// hostDisabled: Nova's COMPUTE_STATUS_DISABLED trait on the provider, or
// the service as synced (before Nova has set the trait).
func hostDisabled(p *models.Provider) bool {
	return p.HasTrait(traitStatusDisabled) || p.Compute.Disabled()
}

// unschedulableInTenantAggregates finds the hosts state names a condition
// of ("" for none) that are in tenant aggregates; the fix takes them out.
func unschedulableInTenantAggregates(in *Input, code, why string, state func(*models.Provider) string) ([]Finding, error) {
	s := in.Snapshot
	var out []Finding
	hosts := s.Hosts()
	for i := range hosts {
		h := &hosts[i]
		cond := state(h.Provider)
		if cond == "" {
			continue
		}
		f := Finding{Code: code, Severity: SeverityWarning, Objects: []Object{providerObject(h.Provider)}, Why: why}
		var names []string
		for _, a := range h.Aggregates {
			if len(scheduling.TenantTags(a.Metadata)) == 0 {
				continue
			}
			names = append(names, a.Name)
			f.Objects = append(f.Objects, aggObject(a))
			f.Fix = append(f.Fix, scheduling.Change{Op: scheduling.OpRemoveMember, Aggregate: a.Name, Provider: h.Provider.Name})
		}
		if len(names) == 0 {
			continue
		}
		f.Detail = fmt.Sprintf("%s host %s is in tenant aggregate(s) %s", cond, h.Provider.Name, strings.Join(names, ", "))
		out = append(out, f)
	}
	return out, nil
}
