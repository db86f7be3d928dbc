package query

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/scheduling"
	"corral/views"
)

// Default matrix size when no subset is chosen: a page of 80,000 cells
// (2,000 projects × 40 flavors) helps nobody.
const (
	defaultMatrixProjects = 100
	defaultMatrixFlavors  = 20
)

// Bounds of a chosen matrix: what a request may ask for.
const (
	maxMatrixProjects = 2000
	maxMatrixFlavors  = 200
	maxProjectID      = 255
)

// pageNames is how many hosts a cell of the page names; 2,000 cells of
// 50 names each would make a page nobody loads.
const pageNames = 10

// matrixQuery is what a matrix request chooses.
type matrixQuery struct {
	projects []string // chosen or typed; empty: the first ones corral knows
	flavors  []string
	byZone   bool
}

// parseMatrixQuery reads ?project=…&flavor=…&projects=a,b&by=zone. Typed
// projects need not be known to corral: the matrix shows what a project
// with no aggregate of its own would get.
func parseMatrixQuery(q url.Values) (matrixQuery, error) {
	m := matrixQuery{byZone: q.Get("by") == "zone"}
	if by := q.Get("by"); by != "" && by != "zone" && by != "flavor" {
		return m, models.E(models.Invalid, "by", "by takes flavor or zone, not %q", by)
	}
	seen := map[string]bool{}
	add := func(p string) error {
		p = strings.TrimSpace(p)
		if p == "" || seen[p] {
			return nil
		}
		if len(p) > maxProjectID {
			return models.E(models.Invalid, "project", "a project id is at most %d characters", maxProjectID)
		}
		seen[p] = true
		m.projects = append(m.projects, p)
		return nil
	}
	for _, p := range q["project"] {
		if err := add(p); err != nil {
			return m, err
		}
	}
	for _, list := range q["projects"] {
		for _, p := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' }) {
			if err := add(p); err != nil {
				return m, err
			}
		}
	}
	if len(m.projects) > maxMatrixProjects {
		return m, models.E(models.Invalid, "project", "at most %d projects at once, got %d", maxMatrixProjects, len(m.projects))
	}
	for _, f := range q["flavor"] {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(m.flavors, f) {
			m.flavors = append(m.flavors, f)
		}
	}
	if len(m.flavors) > maxMatrixFlavors {
		return m, models.E(models.Invalid, "flavor", "at most %d flavors at once, got %d", maxMatrixFlavors, len(m.flavors))
	}
	return m, nil
}

// matrixFor computes the impact matrix of draft id for the chosen projects
// and flavors (the first ones, capped, when none are chosen); the last row
// is always "any other project".
func (h *Handler) matrixFor(ctx context.Context, id string, mq matrixQuery) (*scheduling.Impact, string, *state, time.Duration, error) {
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
	projects, flavors := mq.projects, mq.flavors
	if len(projects) == 0 {
		projects = capList(live.options().Projects, defaultMatrixProjects)
	}
	projects = append(slices.DeleteFunc(slices.Clone(projects), func(p string) bool { return p == scheduling.AnyOtherProject }), scheduling.AnyOtherProject)
	if len(flavors) == 0 {
		flavors = capList(live.options().Flavors, defaultMatrixFlavors)
	}
	for _, f := range flavors {
		if _, ok := live.snap.Flavor(f); !ok {
			return nil, "", nil, 0, models.E(models.Invalid, "flavor", "no flavor named %q", f)
		}
	}
	start := time.Now()
	m, err := scheduling.ComputeImpactWith(live.snap, ds.st.snap, scheduling.ImpactOptions{Projects: projects, Flavors: flavors, ByZone: mq.byZone})
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
	mq, err := parseMatrixQuery(q)
	if err != nil {
		return err
	}
	m, name, live, took, err := h.matrixFor(c.Request().Context(), id, mq)
	if err != nil {
		return err
	}
	if q.Get("format") == "csv" {
		return writeImpactCSV(c, name, m)
	}
	note := ""
	if len(mq.projects) == 0 && len(live.options().Projects) > defaultMatrixProjects || len(mq.flavors) == 0 && len(live.options().Flavors) > len(m.Flavors) {
		note = fmt.Sprintf("Showing the first %d of %d projects and %d of %d flavors; choose a subset above to see others.",
			min(len(live.options().Projects), defaultMatrixProjects), len(live.options().Projects), len(capList(live.options().Flavors, defaultMatrixFlavors)), len(live.options().Flavors))
	}
	known := set(live.options().Projects)
	var typed []string
	for _, p := range mq.projects {
		if !known[p] {
			typed = append(typed, p)
		}
	}
	csvQuery := c.Request().URL.Query()
	csvQuery.Set("format", "csv")
	props := views.ImpactProps{
		Note:    note,
		DraftID: id, DraftName: name, Flavors: m.Flavors,
		AllProjects: live.options().Projects, AllFlavors: live.options().Flavors,
		ChosenProjects: set(mq.projects), ChosenFlavors: set(mq.flavors),
		TypedProjects: strings.Join(typed, ", "), ByZone: mq.byZone,
		CSVURL: "/drafts/" + id + "/impact?" + csvQuery.Encode(),
		Pairs:  len(m.Projects) * len(m.Flavors), Dropped: m.Dropped, Stranded: m.Stranded,
		Elapsed: fmt.Sprintf("computed in %.1f ms", float64(took.Microseconds())/1000),
	}
	for i, p := range m.Projects {
		row := views.ImpactRow{Project: p, Unknown: !known[p] && p != scheduling.AnyOtherProject, AnyOther: p == scheduling.AnyOtherProject}
		if label := h.env.ProjectLabel(c, p); label != p {
			row.Label = label
		}
		for _, cell := range m.Cells[i] {
			row.Cells = append(row.Cells, views.ImpactCell{Live: cell.Live, Draft: cell.Draft,
				Lost: capList(cell.Lost, pageNames), Gained: capList(cell.Gained, pageNames),
				LostCount: cell.LostCount, GainedCount: cell.GainedCount, Error: cell.Error})
		}
		props.Rows = append(props.Rows, row)
	}
	return handlers.Render(c, http.StatusOK, views.Impact(layout.Page(c, "Impact of "+name, "drafts"), props))
}

// APIImpact is GET /api/drafts/:id/impact: the matrix as JSON, or CSV with
// ?format=csv, for pipelines (?project=…&flavor=…&projects=a,b&by=zone).
func (h *Handler) APIImpact(c echo.Context) error {
	q := c.QueryParams()
	mq, err := parseMatrixQuery(q)
	if err != nil {
		return err
	}
	m, name, _, _, err := h.matrixFor(c.Request().Context(), c.Param("id"), mq)
	if err != nil {
		return err
	}
	if q.Get("format") == "csv" {
		return writeImpactCSV(c, name, m)
	}
	return c.JSON(http.StatusOK, m)
}

// writeImpactCSV sends the matrix one pair a line: project, flavor, zone,
// eligible hosts live and with the draft, hosts lost and gained (counts
// and the first names), and an error if the pair could not be judged.
func writeImpactCSV(c echo.Context, draftName string, m *scheduling.Impact) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, fmt.Sprintf("attachment; filename=%q", "impact-"+safeFileName(draftName)+".csv"))
	c.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(c.Response())
	_ = w.Write([]string{"project", "flavor", "zone", "live", "draft", "lost", "gained", "lost_hosts", "gained_hosts", "error"})
	for i := range m.Cells {
		for _, cell := range m.Cells[i] {
			_ = w.Write([]string{csvSafe(cell.Project), csvSafe(cell.Flavor), csvSafe(cell.Zone), strconv.Itoa(cell.Live), strconv.Itoa(cell.Draft),
				strconv.Itoa(cell.LostCount), strconv.Itoa(cell.GainedCount),
				csvSafe(strings.Join(cell.Lost, " ")), csvSafe(strings.Join(cell.Gained, " ")), csvSafe(cell.Error)})
		}
	}
	w.Flush()
	return w.Error()
}

// csvSafe keeps a spreadsheet from reading a typed project id as a
// formula.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func safeFileName(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

func set(l []string) map[string]bool {
	out := make(map[string]bool, len(l))
	for _, s := range l {
		out[s] = true
	}
	return out
}
