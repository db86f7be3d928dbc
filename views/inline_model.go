package views

// InlineImpactProps is what a console form's change would do, shown under
// the form before it is saved.
type InlineImpactProps struct {
	Error     string
	Changes   int
	Described []string
	// Pairs project × flavor judged; Dropped lose hosts, Stranded lose
	// every host, Gained gain some.
	Pairs, Dropped, Stranded, Gained int
	Rows                             []InlineImpactRow
	More                             int // changed pairs not listed
	Servers                          []StrandedServer
	ServersStranded                  int
	Groups                           []BrokenGroup
	// Gate is the safety gate the save passes (nil: none shown).
	Gate *GateProps
	// Unknown are the projects the changes name that nothing in corral
	// names (a typing mistake, most often).
	Unknown []string
}

// InlineImpactRow is one project × flavor pair the change affects.
type InlineImpactRow struct {
	Project, Flavor        string
	Live, Draft            int
	Lost, Gained           []string
	LostCount, GainedCount int
}

func (r InlineImpactRow) moreLost() int   { return r.LostCount - len(r.Lost) }
func (r InlineImpactRow) moreGained() int { return r.GainedCount - len(r.Gained) }
