package doctor

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"corral/models"
	"corral/models/scheduling"
)

// unscopedAllowed are extra-spec keys without a namespace that Nova reads
// itself, and host-state attributes ComputeCapabilitiesFilter can match.
var unscopedAllowed = map[string]bool{
	"group_policy": true, "hide_hypervisor_id": true,
	"hypervisor_type": true, "hypervisor_version": true, "hypervisor_hostname": true, "cpu_info": true,
	"vcpus_total": true, "vcpus_used": true, "memory_mb": true, "free_ram_mb": true, "free_disk_mb": true,
	"total_usable_ram_mb": true, "total_usable_disk_gb": true, "disk_mb_used": true, "num_instances": true,
	"num_io_ops": true, "host": true, "nodename": true, "host_ip": true, "supported_instances": true,
}

// unscopedExtraSpecs: flavor extra specs without a namespace. Nova's
// ComputeCapabilitiesFilter (enabled by default) reads every unscoped key
// as a host capability; one that is no host attribute fails every host.
// Scoped under aggregate_instance_extra_specs the key keeps its meaning
// for AggregateInstanceExtraSpecsFilter, which reads both spellings.
func unscopedExtraSpecs(in *Input) ([]Finding, error) {
	s := in.Snapshot
	var out []Finding
	for i := range s.World().Flavors {
		fl := &s.World().Flavors[i]
		var keys []string
		var fix []scheduling.Change
		for _, k := range sortedKeys(fl.ExtraSpecs) {
			if strings.Contains(k, ":") || unscopedAllowed[k] {
				continue
			}
			keys = append(keys, k)
			scoped := scheduling.ScopeExtra + ":" + k
			if _, taken := fl.ExtraSpecs[scoped]; !taken {
				fix = append(fix, scheduling.Change{Op: scheduling.OpSetExtraSpec, Flavor: fl.Name, Key: scoped, Value: fl.ExtraSpecs[k]})
			}
			fix = append(fix, scheduling.Change{Op: scheduling.OpUnsetExtraSpec, Flavor: fl.Name, Key: k})
		}
		if len(keys) == 0 {
			continue
		}
		out = append(out, Finding{Code: "flavor_unscoped_extra_spec", Severity: SeverityError, Objects: []Object{flavorObject(fl)},
			Why:    "Nova's ComputeCapabilitiesFilter reads an extra spec without a namespace as a host capability and fails every host that has no such attribute; scope it under aggregate_instance_extra_specs.",
			Detail: fmt.Sprintf("flavor %s: unscoped extra spec(s) %s", fl.Name, strings.Join(keys, ", ")),
			Fix:    fix})
	}
	return out, nil
}

// flavorsFitNoHost: a flavor no project may land anywhere, not a project
// tenant keys or access lists name and not a new one (scheduling's
// FlavorsReach, the impact matrix's parts).
func flavorsFitNoHost(in *Input) ([]Finding, error) {
	s := in.Snapshot
	w := s.World()
	var flavors []string
	for i := range w.Flavors {
		// A private flavor nobody may use is a choice, not a trap.
		if f := &w.Flavors[i]; !f.Private || len(f.Projects) > 0 {
			flavors = append(flavors, f.Name)
		}
	}
	if len(flavors) == 0 || len(s.Hosts()) == 0 {
		return nil, nil
	}
	reach, err := s.FlavorsReach(flavors)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, r := range reach {
		if r.Fits {
			continue
		}
		fl, _ := s.Flavor(r.Flavor)
		detail := fmt.Sprintf("flavor %s fits no host for any project", r.Flavor)
		if r.Error != "" {
			detail += ": " + r.Error
		}
		out = append(out, Finding{Code: "flavor_fits_no_host", Severity: SeverityError, Objects: []Object{flavorObject(fl)},
			Why:    "Every boot with this flavor ends in \"No valid host was found\", whoever asks.",
			Detail: detail})
	}
	return out, nil
}

// reservationPrefixMissing: a flavor asks for a reservation
// (<required prefix><id>) that no aggregate carries, while an aggregate
// looks like that reservation's pool (Blazar's reservation=<id>, a key <id>
// or <other prefix><id>, zone blazar_<id>): its tag lacks the prefix.
func reservationPrefixMissing(in *Input) ([]Finding, error) {
	s := in.Snapshot
	w := s.World()
	prefix := w.Settings.RequiredMemberPrefix
	if prefix == "" {
		return nil, nil
	}
	asked := map[string][]*models.Flavor{}
	for i := range w.Flavors {
		for k := range w.Flavors[i].ExtraSpecs {
			if scheduling.IsReservationKey(k, prefix) {
				asked[k[len(prefix):]] = append(asked[k[len(prefix):]], &w.Flavors[i])
			}
		}
	}
	var out []Finding
	for _, id := range slices.Sorted(maps.Keys(asked)) {
		var pools []*models.Aggregate
		carried := false
		for i := range w.Aggregates {
			a := &w.Aggregates[i]
			if _, ok := a.Metadata[prefix+id]; ok {
				carried = true
				break
			}
			if looksLikePool(a, id) {
				pools = append(pools, a)
			}
		}
		if carried {
			continue
		}
		fs := asked[id]
		slices.SortFunc(fs, func(a, b *models.Flavor) int { return strings.Compare(a.Name, b.Name) })
		f := Finding{Code: "reservation_prefix_missing", Severity: SeverityError,
			Why: "A flavor asking for a reservation finds only the aggregates carrying " + prefix + "<id>; without it every boot with the flavor fails."}
		var fnames, anames []string
		for _, fl := range fs {
			f.Objects = append(f.Objects, flavorObject(fl))
			fnames = append(fnames, fl.Name)
		}
		for _, a := range pools {
			f.Objects = append(f.Objects, aggObject(a))
			anames = append(anames, a.Name)
			f.Fix = append(f.Fix, scheduling.Change{Op: scheduling.OpAddReservation, Aggregate: a.Name, Reservation: id})
		}
		f.Detail = fmt.Sprintf("flavor(s) %s ask for %s%s; no aggregate carries it", strings.Join(fnames, ", "), prefix, id)
		if len(anames) > 0 {
			f.Detail += "; reservation pool(s) without the prefix: " + strings.Join(anames, ", ")
		}
		out = append(out, f)
	}
	return out, nil
}

// looksLikePool says whether aggregate a names reservation id without the
// configured prefix.
func looksLikePool(a *models.Aggregate, id string) bool {
	if strings.TrimSpace(a.Metadata[scheduling.BlazarReservationKey]) == id {
		return true
	}
	if z := zoneOf(a); z == scheduling.BlazarAZPrefix+id {
		return true
	}
	for k := range a.Metadata {
		if k == id || strings.HasSuffix(k, ":"+id) {
			return true
		}
	}
	return false
}

// reservationNotForbidden: with a default-forbidden prefix other than the
// required one, an aggregate carrying a reservation a flavor asks for
// (<required prefix><id>) but not <forbidden prefix><id> is not kept from
// other flavors: they land on the reserved hosts. The fix tags the
// aggregate and the reservation's flavors with both, as a Blazar import
// does, so the reservation's flavors still reach it.
func reservationNotForbidden(in *Input) ([]Finding, error) {
	w := in.Snapshot.World()
	req, forb := w.Settings.RequiredMemberPrefix, w.Settings.DefaultForbiddenMemberPrefix
	if req == "" || forb == "" || req == forb {
		return nil, nil
	}
	asked := map[string][]*models.Flavor{}
	for i := range w.Flavors {
		for k := range w.Flavors[i].ExtraSpecs {
			if scheduling.IsReservationKey(k, req) {
				asked[k[len(req):]] = append(asked[k[len(req):]], &w.Flavors[i])
			}
		}
	}
	var out []Finding
	for i := range w.Aggregates {
		a := &w.Aggregates[i]
		var ids []string
		for _, k := range sortedKeys(a.Metadata) {
			id, ok := strings.CutPrefix(k, req)
			if _, forbidden := a.Metadata[forb+id]; ok && id != "" && len(asked[id]) > 0 && !forbidden {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		f := Finding{Code: "reservation_not_forbidden", Severity: SeverityWarning, Objects: []Object{aggObject(a)},
			Why: "Flavors without a " + forb + " key are kept only off aggregates carrying one, so other flavors land on this reservation's hosts."}
		var keys []string
		fixed := map[string]bool{}
		for _, id := range ids {
			keys = append(keys, req+id)
			f.Fix = append(f.Fix, scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: a.Name, Key: forb + id, Value: scheduling.ReservationTagValue})
			for _, fl := range asked[id] {
				if _, has := fl.ExtraSpecs[forb+id]; has || fixed[fl.Name+forb+id] {
					continue
				}
				fixed[fl.Name+forb+id] = true
				f.Objects = append(f.Objects, flavorObject(fl))
				f.Fix = append(f.Fix, scheduling.Change{Op: scheduling.OpSetExtraSpec, Flavor: fl.Name, Key: forb + id, Value: scheduling.ReservationTagValue})
			}
		}
		f.Detail = fmt.Sprintf("aggregate %s carries %s but not the default-forbidden %s key", a.Name, strings.Join(keys, ", "), forb+"<id>")
		out = append(out, f)
	}
	return out, nil
}
