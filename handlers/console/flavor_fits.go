package console

import (
	"net/url"

	"corral/models"
	"corral/models/scheduling"
	cv "corral/views/console"
)

// flavorFitProjects caps the projects the flavor page runs the whole
// pipeline for: each is one run over every host.
const flavorFitProjects = 8

// flavorFitsByProject runs the whole pipeline (request filters,
// Placement, host filters) for one instance of fl per project the world
// names (the first few) and for a project it does not name: where each
// may land now, with the query page's address that shows why.
func flavorFitsByProject(snap *scheduling.Snapshot, fl *models.Flavor) []cv.FlavorFitRow {
	named := scheduling.KnownProjects(snap.World())
	more := max(len(named)-flavorFitProjects, 0)
	named = named[:min(len(named), flavorFitProjects)]
	var rows []cv.FlavorFitRow
	run := func(label, project string) {
		row := cv.FlavorFitRow{Project: label,
			XRay: "/query?" + url.Values{"project": {project}, "flavor": {fl.Name}}.Encode()}
		tr, err := snap.Run(&scheduling.RequestSpec{ProjectID: project, Flavor: scheduling.FlavorRef{Name: fl.Name}, Limit: 1})
		switch {
		case err != nil:
			row.Error = errMsg(err)
		case tr.Error != nil:
			row.Error = *tr.Error
			row.Hosts = tr.Summary.Hosts
		default:
			row.Passed, row.Hosts = tr.Summary.HostsPassed, tr.Summary.Hosts
		}
		rows = append(rows, row)
	}
	for _, p := range named {
		run(p, p)
	}
	run(scheduling.AnyOtherProject, "any-other-project")
	if more > 0 {
		rows = append(rows, cv.FlavorFitRow{More: more})
	}
	return rows
}
