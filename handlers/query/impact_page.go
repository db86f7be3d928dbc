package query

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/views"
)

// Default matrix size when no subset is chosen: a page of 80,000 cells
// (2,000 projects × 40 flavors) helps nobody.
const (
	defaultMatrixProjects = 100
	defaultMatrixFlavors  = 20
)

// pageNames is how many hosts a cell of the page names; 2,000 cells of
// 50 names each would make a page nobody loads.
const pageNames = 10

// matrixFor computes the impact matrix of draft id for the chosen projects
// and flavors (all, capped, when none are chosen).
func (h *Handler) matrixFor(ctx context.Context, id string, projects, flavors []string) (*Matrix, string, *state, time.Duration, error) {
	live, rev, err := h.liveState(ctx)
	if err != nil {
		return nil, "", nil, 0, err
	}
	d, err := h.env.Store.GetDraft(ctx, id)
	if err != nil {
		return nil, "", nil, 0, err
	}
	ds, err := h.draftWorld(ctx, d, live, rev)
	if err != nil {
		return nil, "", nil, 0, err
	}
	if len(projects) == 0 {
		projects = capList(live.options().Projects, defaultMatrixProjects)
	}
	if len(flavors) == 0 {
		flavors = capList(live.options().Flavors, defaultMatrixFlavors)
	}
	start := time.Now()
	m, err := ComputeMatrix(live, ds.st, projects, flavors)
	if err != nil {
		return nil, "", nil, 0, err
	}
	return m, d.Name, live, time.Since(start), nil
}

func capList(l []string, n int) []string {
	if len(l) > n {
		return l[:n]
	}
	return l
}

// Impact is GET /drafts/:id/impact: the matrix page.
func (h *Handler) Impact(c echo.Context) error {
	q := c.QueryParams()
	id := c.Param("id")
	m, name, live, took, err := h.matrixFor(c.Request().Context(), id, q["project"], q["flavor"])
	if err != nil {
		return err
	}
	note := ""
	if len(q["project"]) == 0 && len(live.options().Projects) > len(m.Projects) || len(q["flavor"]) == 0 && len(live.options().Flavors) > len(m.Flavors) {
		note = fmt.Sprintf("Showing the first %d of %d projects and %d of %d flavors; choose a subset above to see others.",
			len(m.Projects), len(live.options().Projects), len(m.Flavors), len(live.options().Flavors))
	}
	props := views.ImpactProps{
		Note:    note,
		DraftID: id, DraftName: name, Flavors: m.Flavors,
		AllProjects: live.options().Projects, AllFlavors: live.options().Flavors,
		ChosenProjects: set(q["project"]), ChosenFlavors: set(q["flavor"]),
		Pairs: len(m.Projects) * len(m.Flavors), Dropped: m.Dropped, Stranded: m.Stranded,
		Elapsed: fmt.Sprintf("computed in %.1f ms", float64(took.Microseconds())/1000),
	}
	for i, p := range m.Projects {
		row := views.ImpactRow{Project: p}
		for _, cell := range m.Cells[i] {
			row.Cells = append(row.Cells, views.ImpactCell{Live: cell.Live, Draft: cell.Draft,
				Lost: capList(cell.Lost, pageNames), Gained: capList(cell.Gained, pageNames),
				LostCount: cell.LostCount, GainedCount: cell.GainedCount, Error: cell.Error})
		}
		props.Rows = append(props.Rows, row)
	}
	return handlers.Render(c, http.StatusOK, views.Impact(layout.Page(c, "Impact of "+name, "drafts"), props))
}

// APIImpact is GET /api/drafts/:id/impact: the matrix as JSON, for
// pipelines (?project=…&flavor=… choose a subset).
func (h *Handler) APIImpact(c echo.Context) error {
	q := c.QueryParams()
	m, _, _, _, err := h.matrixFor(c.Request().Context(), c.Param("id"), q["project"], q["flavor"])
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, m)
}

func set(l []string) map[string]bool {
	out := make(map[string]bool, len(l))
	for _, s := range l {
		out[s] = true
	}
	return out
}
