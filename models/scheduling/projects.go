package scheduling

import (
	"slices"
	"strings"

	"corral/models"
)

// KnownProjects are the projects world w names: in tenant tags, as the
// owners of servers and server groups, on private flavors' access lists.
// Sorted, without duplicates.
func KnownProjects(w *models.World) []string {
	var named []string
	for _, a := range w.Aggregates {
		for k, v := range a.Metadata {
			if IsTenantKey(k) {
				named = append(named, TenantProjects(v)...)
			}
		}
	}
	for _, s := range w.Servers {
		named = append(named, s.ProjectID)
	}
	for _, g := range w.ServerGroups {
		named = append(named, g.ProjectID)
	}
	for _, f := range w.Flavors {
		named = append(named, f.Projects...)
	}
	slices.Sort(named)
	return slices.DeleteFunc(slices.Compact(named), func(p string) bool { return p == "" })
}

// UnknownProjects lists the projects that changes tag aggregates for or
// create server groups in and that w names nowhere: most often a typing
// mistake ("globx"), which nothing else would catch, since a project
// need not be known to corral to be valid.
func UnknownProjects(w *models.World, changes []Change) []string {
	known := KnownProjects(w)
	var out []string
	for _, c := range changes {
		p := strings.TrimSpace(c.Project)
		if p == "" || (c.Op != OpAddTenant && c.Op != OpCreateServerGroup) {
			continue
		}
		if _, found := slices.BinarySearch(known, p); !found && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
