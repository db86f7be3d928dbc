package views

import (
	"net/url"
	"strconv"
	"strings"
)

// QueryForm is the live query form as the URL carries it, so that a preview
// can be shared by its address. Term errors sit next to the term at fault.
type QueryForm struct {
	Project    string
	User       string
	Flavor     string
	ExtraSpecs string // "key=value" lines, laid over the flavor's own
	AZ         string
	Group      string
	Num        string
	// Image is the booted image's properties, "key=value" lines; BFV a
	// boot from volume.
	Image string
	BFV   bool
	// SameHost and DifferentHost are those scheduler hints: servers by
	// name or uuid, separated by commas or spaces.
	SameHost      string
	DifferentHost string
	MemberOf      []QueryTerm
	Numbered      []QueryNumberedTerm
	Draft         string
	More          bool              // the admin asked for more blank term rows
	Errors        map[string]string // by form field name
	// What the host × stage matrix shows: failed hosts only, those a
	// stage excluded first, names containing a text, and the page.
	HostsFailed bool
	HostsStage  string
	HostsName   string
	HostsPage   int
}

// QueryTerm is one unnumbered member_of term.
type QueryTerm struct {
	Value string
	Error string
}

// QueryNumberedTerm is one member_of<N> term of numbered group N.
type QueryNumberedTerm struct {
	Group string
	Value string
	Error string
}

// QueryOptions are the choices the form offers: aggregates by name, known
// projects, flavors, zones, server groups and drafts.
type QueryOptions struct {
	Projects   []string
	Flavors    []string
	AZs        []string
	Groups     []Option
	Aggregates []string
	Drafts     []Option
}

// QueryResult is what the preview pane shows for one request.
type QueryResult struct {
	Error      string // the request could not be read (bad term, unknown flavor)
	ErrorField string
	Trace      *QueryTrace // against the draft when one is chosen, else live
	Live       *QueryTrace // only when a draft is chosen: the live trace
	DraftName  string
	DraftID    string
	Diff       *QueryDiff
	// DraftOnly names the aggregates the request names that only the
	// draft has: on live data no host is in them.
	DraftOnly []string
	ShareURL  string
	// Warnings: Nova and Placement disagree about aggregate membership
	// (connected mode).
	Warnings []string
}

// QueryTrace is a trace as the page shows it.
type QueryTrace struct {
	// Nova is the release previewed, the exact allocation-candidates
	// query and what corral does not model; nil for an old trace.
	Nova              *QueryNova
	PlacementQuery    string
	RequestFilters    []QueryRequestFilter
	Funnel            []QueryFunnelStep
	Reasons           []QueryReason
	Trees             []QueryTree
	Hosts             []QueryHost
	Matrix            *QueryMatrix
	Modes             []QueryModeRow // providers whose verdict differs by member_of mode
	ModesShown        bool           // the request has member_of terms to compare
	Providers         int
	ProvidersExcluded int
	HostsTotal        int
	HostsPassed       int
	Truncated         bool
	Error             string // the request cannot be scheduled at all
}

// QueryNova is what the page says of the Nova previewed.
type QueryNova struct {
	Release, Query, Ranking string
	NotModelled, Skipped    []string
}

// QueryRequestFilter is one request filter's contribution.
type QueryRequestFilter struct {
	Name, Effect, Detail string
}

// QueryFunnelStep is one stage of the funnel: how many remain after it.
type QueryFunnelStep struct {
	Label   string
	Unit    string // providers or hosts
	Remain  int
	Removed int
	Break   bool // starts a new line (hosts after providers)
}

// QueryReason is one group of exclusions with the same reason.
type QueryReason struct {
	Stage, Reason string
	Count         int
	Examples      []string
}

// QueryTree is one provider tree (a host with its children) or a sharing
// provider on its own.
type QueryTree struct {
	Root     QueryProvider
	Children []QueryProvider
	Sharing  bool
}

// QueryProvider is one provider's verdict.
type QueryProvider struct {
	Name     string
	UUID     string
	Depth    int
	Excluded bool
	Stage    string
	Reason   string
}

// QueryHost is one host's verdict after every stage.
type QueryHost struct {
	Name   string
	Passed bool
	Weight string
	Stage  string
	Reason string
}

// QueryModeRow is one provider judged by the three member_of modes.
type QueryModeRow struct {
	Name                         string
	Direct, Unnumbered, Numbered string // "kept" or the exclusion reason
}

// QueryDiff is what a draft changes for this request.
type QueryDiff struct {
	NewlyExcluded []QueryDiffHost
	NewlyEligible []QueryDiffHost
	LiveEligible  int
	DraftEligible int
}

// QueryDiffHost is one host whose eligibility the draft changes.
type QueryDiffHost struct {
	Name   string
	Reason string // why the draft excludes it (or why live excluded it)
}

// FormError returns the form's error for field name, if any.
func (f QueryForm) FormError(name string) string { return f.Errors[name] }

// QueryURL is the shareable address of the query the form holds.
func (f QueryForm) QueryURL() string {
	q := f.Values()
	if len(q) == 0 {
		return "/query"
	}
	return "/query?" + q.Encode()
}

// Values encodes the form as URL query parameters, leaving out empty ones.
func (f QueryForm) Values() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("project", f.Project)
	set("user", f.User)
	set("flavor", f.Flavor)
	set("extra_specs", f.ExtraSpecs)
	set("az", f.AZ)
	set("group", f.Group)
	set("num", f.Num)
	set("image", f.Image)
	if f.BFV {
		q.Set("bfv", "1")
	}
	set("same_host", f.SameHost)
	set("different_host", f.DifferentHost)
	for _, t := range f.MemberOf {
		if t.Value != "" {
			q.Add("member_of", t.Value)
		}
	}
	for _, t := range f.Numbered {
		if t.Value != "" {
			q.Add("gn", t.Group)
			q.Add("gm", t.Value)
		}
	}
	set("draft", f.Draft)
	if f.HostsFailed {
		q.Set("hfail", "1")
	}
	set("hstage", f.HostsStage)
	set("hname", f.HostsName)
	if f.HostsPage > 1 {
		q.Set("hpage", strconv.Itoa(f.HostsPage))
	}
	return q
}

// PageURL is the query's address showing page n of the host matrix.
func (f QueryForm) PageURL(n int) string {
	f.HostsPage = n
	return f.QueryURL()
}

// QueryMatrix is the host × stage matrix: one row per host, one column per
// stage and weigher, a page at a time.
type QueryMatrix struct {
	Columns []QueryColumn
	Rows    []QueryMatrixRow
	// Matched counts the hosts the matrix filter keeps; Rows is page
	// Page of Pages.
	Matched, Page, Pages int
	First                int // position of the first row, from 1
	PrevURL, NextURL     string
	// Stages are the stages the filter offers.
	Stages []string
	// WeightNote explains weights that are all zero.
	WeightNote string
	// Rounds names the host of each instance of a multi-create request.
	Rounds []QueryRound
	// The filter as the form holds it.
	filterFailed bool
	filterStage  string
	filterName   string
}

// WithFilter records the matrix filter the form holds, for its controls.
func (m *QueryMatrix) WithFilter(f QueryForm) *QueryMatrix {
	m.filterFailed, m.filterStage, m.filterName = f.HostsFailed, f.HostsStage, f.HostsName
	return m
}

func matrixRowTestID(r QueryMatrixRow) string {
	if r.Passed {
		return "host-eligible"
	}
	return "host-excluded"
}

func instanceList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = "#" + strconv.Itoa(n)
	}
	return strings.Join(parts, " ")
}

// keptCount counts the providers the trees list as kept.
func keptCount(trees []QueryTree) int {
	n := 0
	for _, t := range trees {
		if !t.Root.Excluded {
			n++
		}
		for _, c := range t.Children {
			if !c.Excluded {
				n++
			}
		}
	}
	return n
}

// treeAllKept reports whether no provider of the tree is excluded.
func treeAllKept(t QueryTree) bool {
	if t.Root.Excluded {
		return false
	}
	for _, c := range t.Children {
		if c.Excluded {
			return false
		}
	}
	return true
}

// QueryColumn is one stage or weigher.
type QueryColumn struct {
	Name  string
	Short string // the head shown; Name is its title
	Kind  string // "request", "placement", "capacity", "filter" or "weigher"
}

// QueryMatrixRow is one host across every stage.
type QueryMatrixRow struct {
	Name      string
	Passed    bool
	Stage     string // first failing stage
	Reason    string
	Cells     []QueryCell
	Total     string // the weight, for passing hosts
	Instances []int  // the instances (from 1) placed here
	Round     int    // multi-create: the instance whose round excluded it
}

// QueryCell is one stage's verdict, or one weigher's score.
type QueryCell struct {
	Kind   string // "pass", "fail", "skip" (not reached), "weight"
	Reason string
	First  bool   // the host's first failing stage
	Raw    string // weigher: raw value
	Norm   string // weigher: normalised × multiplier
	Mult   string
}

// QueryRound is one instance of a multi-create request and where it went.
type QueryRound struct {
	Instance int
	Host     string
}

// termRows pads the member_of terms with blank rows to type into.
func (f QueryForm) termRows() []QueryTerm {
	rows := append([]QueryTerm(nil), f.MemberOf...)
	for len(rows) < 3 || rows[len(rows)-1].Value != "" {
		rows = append(rows, QueryTerm{})
	}
	if f.More {
		rows = append(rows, QueryTerm{}, QueryTerm{}, QueryTerm{})
	}
	return rows
}

// numberedRows pads the numbered terms with blank rows; a blank row offers
// the next group number.
func (f QueryForm) numberedRows() []QueryNumberedTerm {
	rows := append([]QueryNumberedTerm(nil), f.Numbered...)
	for len(rows) < 2 || rows[len(rows)-1].Value != "" {
		rows = append(rows, QueryNumberedTerm{Group: strconv.Itoa(len(rows) + 1)})
	}
	if f.More {
		rows = append(rows, QueryNumberedTerm{Group: strconv.Itoa(len(rows) + 1)})
	}
	return rows
}

// aggregateTerms lists every aggregate name both as a required and as a
// forbidden term, so that the browser suggests either while typing.
func (o QueryOptions) aggregateTerms() []string {
	out := make([]string, 0, 2*len(o.Aggregates))
	for _, a := range o.Aggregates {
		out = append(out, a, "!"+a)
	}
	return out
}

func providerClass(p QueryProvider) string {
	if p.Excluded {
		return "prov excluded"
	}
	return "prov kept"
}

func providerTestID(p QueryProvider) string {
	if p.Excluded {
		return "excluded-row"
	}
	return "kept-row"
}

func depthClass(d int) string {
	if d > 4 {
		d = 4
	}
	return "depth-" + strconv.Itoa(d)
}

// queryFieldNames are the form fields with an error slot of their own.
var queryFieldNames = []string{"draft", "project", "user", "flavor", "extra_specs", "az", "group", "num", "image", "same_host", "different_host"}

func errorRole(msg string) string {
	if msg == "" {
		return "none"
	}
	return "alert"
}

func errorTestID(msg string) string {
	if msg == "" {
		return "term-ok"
	}
	return "term-error"
}

// draftOnlyText names the aggregates only a draft has ("aggregate x",
// "aggregates x, y").
func draftOnlyText(names []string) string {
	if len(names) == 1 {
		return "aggregate " + names[0]
	}
	return "aggregates " + strings.Join(names, ", ")
}

// queryParts splits a placement query after each '&' and ',' so that it
// wraps between parameters and UUIDs, never inside one.
func queryParts(q string) []string {
	var out []string
	start := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '&' || q[i] == ',' {
			out = append(out, q[start:i+1])
			start = i + 1
		}
	}
	return append(out, q[start:])
}

// num writes a count with thousands separators ("100,500").
func num(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// groupChosen reports whether the form's group (a UUID, or a name as a
// shared URL may give it) is option g.
func groupChosen(g Option, group string) bool {
	return group != "" && (g.Value == group || strings.HasPrefix(g.Label, group+" ("))
}
