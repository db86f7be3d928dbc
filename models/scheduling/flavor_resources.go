package scheduling

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"corral/models"
	"corral/models/placement"
)

// Flavor extra specs that shape the Placement request, as nova reads them
// (nova/scheduler/utils.py ResourceRequest.from_request_spec and
// nova/api/validation/extra_specs/{resources,traits}.py).
var (
	resourcesKeyRE = regexp.MustCompile(`^resources([a-zA-Z0-9_-]{1,64})?:([A-Z0-9_]+)$`)
	traitKeyRE     = regexp.MustCompile(`^trait([a-zA-Z0-9_-]{1,64})?:([A-Za-z0-9_]+)$`)
	resourceClass  = regexp.MustCompile(`^[A-Z0-9_]+$`)
)

// FlavorGroups turns a flavor into Placement request groups as nova asks
// for them: VCPU, MEMORY_MB and DISK_GB from the flavor's sizes in the
// unnumbered group; resources:CLASS=N overrides a class (0 removes it);
// resourcesS:CLASS=N and traitS:T=required|forbidden make numbered group S;
// trait:T=required|forbidden goes to the unnumbered group. group_policy
// comes from the extra spec of that name. Malformed specs are skipped here:
// ValidateExtraSpecsFor refuses them when the flavor is saved.
func FlavorGroups(f *models.Flavor) (groups []placement.Group, groupPolicy string) {
	if f == nil {
		return nil, ""
	}
	amounts := map[string]map[string]int64{"": {}}
	set := func(suffix, rc string, n int64) {
		if amounts[suffix] == nil {
			amounts[suffix] = map[string]int64{}
		}
		amounts[suffix][rc] = n
	}
	if f.VCPUs > 0 {
		set("", "VCPU", int64(f.VCPUs))
	}
	if f.RAMMB > 0 {
		set("", "MEMORY_MB", int64(f.RAMMB))
	}
	if f.DiskGB > 0 {
		set("", "DISK_GB", int64(f.DiskGB))
	}
	required := map[string][]string{}
	forbidden := map[string][]string{}
	keys := make([]string, 0, len(f.ExtraSpecs))
	for k := range f.ExtraSpecs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.TrimSpace(f.ExtraSpecs[k])
		if m := resourcesKeyRE.FindStringSubmatch(k); m != nil {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				continue
			}
			set(m[1], m[2], n)
			continue
		}
		if m := traitKeyRE.FindStringSubmatch(k); m != nil {
			switch v {
			case "required":
				required[m[1]] = append(required[m[1]], m[2])
			case "forbidden":
				forbidden[m[1]] = append(forbidden[m[1]], m[2])
			}
			if amounts[m[1]] == nil {
				amounts[m[1]] = map[string]int64{}
			}
			continue
		}
		if k == "group_policy" {
			groupPolicy = v
		}
	}
	suffixes := make([]string, 0, len(amounts))
	for s := range amounts {
		suffixes = append(suffixes, s)
	}
	sort.Strings(suffixes)
	for _, s := range suffixes {
		g := placement.Group{Suffix: s}
		classes := make([]string, 0, len(amounts[s]))
		for rc, n := range amounts[s] {
			if n > 0 {
				classes = append(classes, rc)
			}
		}
		sort.Strings(classes)
		for _, rc := range classes {
			g.Resources = append(g.Resources, placement.Amount{Class: rc, Amount: amounts[s][rc]})
		}
		for _, t := range required[s] {
			g.Required = append(g.Required, []string{t})
		}
		g.Forbidden = forbidden[s]
		if len(g.Resources) == 0 && s != "" {
			// nova drops a numbered group that asks for no resources.
			continue
		}
		groups = append(groups, g)
	}
	return groups, groupPolicy
}

// checkFlavorResource validates resources[S]:CLASS=N as nova's extra spec
// validator does: a resource class name and a non-negative integer.
func checkFlavorResource(ps *problems, key, v string) {
	m := resourcesKeyRE.FindStringSubmatch(key)
	if m == nil {
		_, rc, _ := strings.Cut(key, ":")
		if !resourceClass.MatchString(rc) {
			ps.add(key, SeverityError, "%q is not a resource class: upper-case letters, digits and '_' (custom classes start with CUSTOM_)", rc)
		} else {
			ps.add(key, SeverityError, "a request group suffix is 1 to 64 of letters, digits, '_' and '-'")
		}
		return
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	switch {
	case err != nil:
		ps.add(key, SeverityError, "the amount of %s must be an integer, not %q", m[2], v)
	case n < 0:
		ps.add(key, SeverityError, "the amount of %s must be 0 (to drop the class) or more, not %d", m[2], n)
	}
}

// isResourcesKey reports whether key is in nova's resources[S]: namespace.
func isResourcesKey(key string) bool {
	scope, _, ok := strings.Cut(key, ":")
	if !ok || !strings.HasPrefix(scope, "resources") {
		return false
	}
	suffix := scope[len("resources"):]
	return suffix == "" || regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`).MatchString(suffix)
}

// isNumberedTraitKey reports whether key is traitS:T with a suffix S.
func isNumberedTraitKey(key string) bool {
	scope, _, ok := strings.Cut(key, ":")
	return ok && strings.HasPrefix(scope, "trait") && len(scope) > len("trait") &&
		regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`).MatchString(scope[len("trait"):])
}
