package scheduling

import (
	"slices"
	"strconv"
	"strings"

	"corral/models"
	"corral/models/pycompat"
)

// Tenant and reservation tags are metadata keys the console shows as typed
// fields. The helpers below read them and write them back, never touching
// other keys, and return a new map (the input is not modified).

// TenantTags lists the projects an aggregate's tenant keys name (every key
// starting with filter_tenant_id, comma lists split, spaces stripped, empty
// entries dropped), sorted and unique.
func TenantTags(md map[string]string) []string {
	var ts []string
	for k, v := range md {
		if !IsTenantKey(k) {
			continue
		}
		eachPiece(v, func(t string) bool {
			if t != "" {
				ts = append(ts, t)
			}
			return true
		})
	}
	return hfSortedUnique(ts)
}

// tenantKey is the n-th tenant key: filter_tenant_id, filter_tenant_id2, ...
func tenantKey(n int) string {
	if n <= 1 {
		return TenantKeyPrefix
	}
	return TenantKeyPrefix + strconv.Itoa(n)
}

// SetTenantTags returns md with its tenant keys replaced so that they name
// exactly projects, one project per key, as Placement's pre-filter needs.
// Suffixes are stable: a project that already had a key of its own keeps
// it; new projects take the first free key of filter_tenant_id,
// filter_tenant_id2, filter_tenant_id3, ... A comma in a project splits it.
func SetTenantTags(md map[string]string, projects []string) map[string]string {
	want := cleanTags(projects, true)
	out := make(map[string]string, len(md)+len(want))
	keep := map[string]string{} // project -> its existing single-project key
	for _, k := range hfSortedKeys(md) {
		v := md[k]
		if !IsTenantKey(k) {
			out[k] = v
			continue
		}
		p := pycompat.Strip(v)
		if p != "" && !strings.Contains(p, ",") && want[p] && keep[p] == "" {
			keep[p] = k
		}
	}
	used := map[string]bool{}
	for p, k := range keep {
		out[k] = p
		used[k] = true
	}
	n := 1
	for _, p := range orderedTags(projects, true) {
		if keep[p] != "" {
			continue
		}
		for used[tenantKey(n)] {
			n++
		}
		out[tenantKey(n)] = p
		used[tenantKey(n)] = true
	}
	return out
}

// ReservationTags lists the reservation ids of an aggregate: the keys that
// start with prefix (e.g. "reservation:"), without it, sorted. An empty
// prefix means reservations are off: none.
func ReservationTags(md map[string]string, prefix string) []string {
	if prefix == "" {
		return nil
	}
	var ids []string
	for k := range md {
		if id, ok := strings.CutPrefix(k, prefix); ok && strings.TrimSpace(id) != "" {
			ids = append(ids, id)
		}
	}
	return hfSortedUnique(ids)
}

// ReservationTagValue is the value SetReservationTags gives a new
// reservation key; only the key matters to the reservation filter.
const ReservationTagValue = "true"

// SetReservationTags returns md with exactly one key prefix+id per id:
// keys of ids that stay keep their values, new ones get
// ReservationTagValue, other keys with the prefix are removed. With an empty
// prefix md is returned unchanged (as a copy).
func SetReservationTags(md map[string]string, prefix string, ids []string) map[string]string {
	out := make(map[string]string, len(md)+len(ids))
	want := cleanTags(ids, false)
	for k, v := range md {
		if prefix != "" && strings.HasPrefix(k, prefix) && !want[k[len(prefix):]] {
			continue
		}
		out[k] = v
	}
	if prefix == "" {
		return out
	}
	for _, id := range orderedTags(ids, false) {
		if _, ok := out[prefix+id]; !ok {
			out[prefix+id] = ReservationTagValue
		}
	}
	return out
}

// orderedTags trims tags, drops empty ones and duplicates, and (for
// projects) splits comma lists, keeping the caller's order.
func orderedTags(tags []string, splitCommas bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range tags {
		pieces := []string{t}
		if splitCommas {
			pieces = strings.Split(t, ",")
		}
		for _, p := range pieces {
			p = pycompat.Strip(p)
			if p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

func cleanTags(tags []string, splitCommas bool) map[string]bool {
	set := map[string]bool{}
	for _, t := range orderedTags(tags, splitCommas) {
		set[t] = true
	}
	return set
}

// TenantProjects splits one tenant key's value the way the tenant filters
// read it: a comma list, each piece stripped of (Python's) whitespace,
// empty pieces dropped.
func TenantProjects(v string) []string {
	var out []string
	eachPiece(v, func(t string) bool {
		if t != "" {
			out = append(out, t)
		}
		return true
	})
	return out
}

// Longest tag ids: a project id is a Keystone id (255), a reservation id
// is kept short enough that prefix+id fits a 255-character metadata key.
const (
	MaxProjectTag     = 255
	MaxReservationTag = 200
)

// CheckTag checks one tag id a person or a draft adds: field is "project"
// or "reservation". A tag is one id: not empty, no comma (it would be read
// as a list), no whitespace (the filters strip it), not over-long.
func CheckTag(field, id string) *models.Error {
	limit := MaxProjectTag
	if field == "reservation" {
		limit = MaxReservationTag
	}
	switch {
	case id == "":
		return models.E(models.Invalid, field, "a %s id is needed", field)
	case strings.ContainsRune(id, ',') || strings.ContainsFunc(id, pycompat.IsSpace):
		return models.E(models.Invalid, field, "one %s id, without commas or spaces", field)
	case len(id) > limit:
		return models.E(models.Invalid, field, "a %s id has at most %d characters", field, limit)
	}
	return nil
}

// AddTenantTag returns md with project p among its tenants, one project
// per key (comma lists are rewritten), as SetTenantTags writes them.
func AddTenantTag(md map[string]string, p string) map[string]string {
	return SetTenantTags(md, append(TenantTags(md), p))
}

// RemoveTenantTag returns md without project p among its tenants, and
// whether p was one.
func RemoveTenantTag(md map[string]string, p string) (map[string]string, bool) {
	cur := TenantTags(md)
	if !slices.Contains(cur, p) {
		return md, false
	}
	return SetTenantTags(md, slices.DeleteFunc(cur, func(x string) bool { return x == p })), true
}

// AddReservationTag returns md tagged with reservation id under prefix,
// with the value SetReservationTags writes.
func AddReservationTag(md map[string]string, prefix, id string) map[string]string {
	return SetReservationTags(md, prefix, append(ReservationTags(md, prefix), id))
}

// RemoveReservationTag returns md without reservation id, and whether it
// was there.
func RemoveReservationTag(md map[string]string, prefix, id string) (map[string]string, bool) {
	cur := ReservationTags(md, prefix)
	if !slices.Contains(cur, id) {
		return md, false
	}
	return SetReservationTags(md, prefix, slices.DeleteFunc(cur, func(x string) bool { return x == id })), true
}

// IsReservationKey reports whether metadata key k is a reservation tag
// under prefix.
func IsReservationKey(k, prefix string) bool {
	return prefix != "" && strings.HasPrefix(k, prefix) && len(k) > len(prefix)
}
