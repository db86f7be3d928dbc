package scheduling

// Applied is what an applier reports of a list of changes it wrote: the
// revision it made live and the changes that undo it (the before-values of
// every object it wrote, as ChangesBetween computes them). NoUndo names,
// one line each, what was written and cannot be undone by a change (empty
// when everything can).
type Applied struct {
	Revision int64    `json:"revision"`
	Revert   []Change `json:"revert_changes"`
	NoUndo   []string `json:"no_undo,omitempty"`
}
