package views

import (
	"net/url"
	"strconv"
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
	MemberOf   []QueryTerm
	Numbered   []QueryNumberedTerm
	Draft      string
	More       bool              // the admin asked for more blank term rows
	Errors     map[string]string // by form field name
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
	ShareURL   string
	// Warnings: Nova and Placement disagree about aggregate membership
	// (connected mode).
	Warnings []string
}

// QueryTrace is a trace as the page shows it.
type QueryTrace struct {
	PlacementQuery    string
	RequestFilters    []QueryRequestFilter
	Funnel            []QueryFunnelStep
	Reasons           []QueryReason
	Trees             []QueryTree
	Hosts             []QueryHost
	Modes             []QueryModeRow // providers whose verdict differs by member_of mode
	ModesShown        bool           // the request has member_of terms to compare
	Providers         int
	ProvidersExcluded int
	HostsTotal        int
	HostsPassed       int
	Truncated         bool
	Error             string // the request cannot be scheduled at all
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
	return q
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
var queryFieldNames = []string{"draft", "project", "user", "flavor", "extra_specs", "az", "group", "num"}

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

func hostTestID(h QueryHost) string {
	if h.Passed {
		return "host-eligible"
	}
	return "host-excluded"
}
