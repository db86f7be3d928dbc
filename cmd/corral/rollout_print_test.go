package main

import (
	"bytes"
	"strings"
	"testing"

	"corral/models/cloud"
)

// corral rollout prints, after a failure, what the undo draft cannot
// restore.
func TestPrintRolloutNamesWhatNoDraftUndoes(t *testing.T) {
	var buf bytes.Buffer
	printRollout(&buf, &cloud.RolloutReport{Failed: &cloud.Step{Method: "POST", Path: "/os-aggregates/7/action"}, Error: "nova answered 400",
		UndoID: "u1", NoUndo: []string{"server group web (g) is deleted: nova gives it a new id"}})
	out := buf.String()
	for _, want := range []string{"undo draft: u1", "no undo: server group web (g) is deleted: nova gives it a new id"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
