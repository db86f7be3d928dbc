package views

import "strings"

// GateProps is what the safety gate shows above the button that commits
// a write: what the write does (pairs that lose and gain hosts, the
// servers it strands, the groups it breaks, the pairs it leaves with no
// host) and, when it does any of the last three, the confirmation that
// names them.
type GateProps struct {
	PairsChecked, PairsLosing, PairsGaining int
	Consequences                            []string // one line each; none: nothing to confirm
	Token                                   string   // the confirmation's value
	Confirmed                               bool     // ticked already (the same consequences)
	Servers                                 []StrandedServer
	Groups                                  []BrokenGroup
	Emptied                                 []string // "acme × m1.ssd (had 3 hosts)"
}

// HiddenField is one posted value a review page posts again.
type HiddenField struct{ Name, Value string }

// ReviewProps is the second step of a write that needs confirmation: the
// gate, and a form posting the same values again to Action with it.
type ReviewProps struct {
	Title     string
	Described []string // the changes, for a person
	Gate      GateProps
	Action    string
	Fields    []HiddenField
	Cancel    string
}

// joinAnd joins clauses as a sentence: "a", "a and b", "a; b; and c".
func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	case 2:
		return parts[0] + "; and " + parts[1]
	}
	return strings.Join(parts[:len(parts)-1], "; ") + "; and " + parts[len(parts)-1]
}
