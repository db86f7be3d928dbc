package scheduling

import (
	"regexp"
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
// for them, with no image and a root disk (NovaResourceRequest).
func FlavorGroups(f *models.Flavor) (groups []placement.Group, groupPolicy string) {
	if f == nil {
		return nil, ""
	}
	rr := NovaResourceRequest(f, nil, false)
	return rr.Groups, rr.GroupPolicy
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
