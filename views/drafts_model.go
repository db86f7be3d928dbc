package views

// DraftRow is one draft in the list.
type DraftRow struct {
	ID, Name, Author string
	Created          string
	Changes          int
	BaseRevision     int64
	Stale            bool // live data moved on since the draft was made
}

// DraftsProps is the drafts list with its create form.
type DraftsProps struct {
	Drafts  []DraftRow
	Applied []AppliedDraft
	NewName string
	Errors  map[string]string
	CanEdit bool
}

// DraftChangeRow is one pending change, described for a person.
type DraftChangeRow struct {
	Index int
	Kind  string
	Text  string
}

// DraftChangeForm is the "add a change" form as submitted.
type DraftChangeForm struct {
	Kind      string
	Aggregate string
	Key       string
	Value     string
	Provider  string
	Project   string
	AZ        string
	Setting   string
	Flavor    string
	Group     string
	Server    string
	Policy    string
	Trait     string
	Class     string // resource class
	Total     string
	Errors    map[string]string
}

// DraftProps is one draft's page.
type DraftProps struct {
	ID, Name, Author string
	Created          string
	BaseRevision     int64
	Version          int64
	Changes          []DraftChangeRow
	Conflicts        []string // objects changed since the draft was made
	Form             DraftChangeForm
	Kinds            []Option
	Settings         []Option
	Aggregates       []string
	Providers        []string
	Flavors          []string
	Groups           []string
	Policies         []Option
	CanEdit          bool
	Error            string
	// Gate is the draft's impact on live data: pairs that lose and gain
	// hosts, what applying it strands (nil when it has no changes, or
	// when it cannot be judged).
	Gate *GateProps
}

// DraftConfirmProps is the page that asks before applying or discarding.
type DraftConfirmProps struct {
	ID, Name string
	Version  int64
	Action   string // "apply" or "discard"
	Changes  []DraftChangeRow
	// Conflicts make applying fail; Stranded and Broken are what applying
	// does to what already runs.
	Conflicts []string
	Stranded  int
	Broken    int
	// Gate is what applying does; its confirmation goes with the apply.
	Gate *GateProps
}

// AppliedDraft is a recently applied draft that can be reverted.
type AppliedDraft struct {
	EventID int64
	Name    string
	When    string
	Actor   string
	Changes int
}

// StrandedProps is a draft's strandings page.
type StrandedProps struct {
	ID, Name string
	Checked  int
	Servers  []StrandedServer
	Groups   []BrokenGroup
}

// StrandedServer is one server the draft strands.
type StrandedServer struct{ Name, Project, Host, Reason string }

// BrokenGroup is one server group whose rules the draft breaks.
type BrokenGroup struct{ Name, Project, Policy, Reason string }

// ImpactCell is one project × flavor pair: eligible hosts live and with the
// draft, and which hosts the draft takes away or adds.
type ImpactCell struct {
	Live, Draft            int
	Lost                   []string // the first few, by name
	Gained                 []string
	LostCount, GainedCount int
	Error                  string
}

// moreLost and moreGained count the hosts a cell does not name.
func (c ImpactCell) moreLost() int   { return c.LostCount - len(c.Lost) }
func (c ImpactCell) moreGained() int { return c.GainedCount - len(c.Gained) }

func (c ImpactCell) changeSummary() string {
	switch {
	case c.LostCount > 0 && c.GainedCount > 0:
		return "−" + itoa(c.LostCount) + " / +" + itoa(c.GainedCount) + " hosts"
	case c.LostCount > 0:
		return "−" + Plural(c.LostCount, "host", "hosts")
	}
	return "+" + Plural(c.GainedCount, "host", "hosts")
}

// ImpactRow is one project's row of the matrix.
type ImpactRow struct {
	Project  string
	Label    string // the project's name and id, when Keystone names it
	Unknown  bool   // typed in; corral has not seen the project
	AnyOther bool   // the row of every project the world does not name
	Cells    []ImpactCell
}

// ImpactProps is the impact matrix of a draft.
type ImpactProps struct {
	DraftID, DraftName string
	Flavors            []string
	Rows               []ImpactRow
	AllProjects        []string
	AllFlavors         []string
	ChosenProjects     map[string]bool
	ChosenFlavors      map[string]bool
	TypedProjects      string // typed project ids, as the form shows them
	ByZone             bool   // one column per flavor × zone
	CSVURL             string
	Pairs              int
	Dropped            int
	Stranded           int
	Elapsed            string
	Note               string // e.g. that the default matrix is capped
}

func impactClass(c ImpactCell) string {
	switch {
	case c.Error != "":
		return "stranded"
	case c.Draft < c.Live && c.Draft == 0:
		return "stranded"
	case c.Draft < c.Live:
		return "drop"
	case c.Draft > c.Live:
		return "gain"
	}
	return "same"
}

func impactTestID(c ImpactCell) string { return "impact-" + impactClass(c) }

func (f DraftChangeForm) err(name string) string { return f.Errors[name] }

func draftURL(id string) string { return "/drafts/" + id }
