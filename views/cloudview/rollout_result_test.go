package cloudview

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/views"
)

// A rollout that stopped names, beside its undo draft, what the undo draft
// cannot restore.
func TestFailedRolloutListsWhatNoDraftUndoes(t *testing.T) {
	pl := PlanProps{DraftID: "d1", DraftName: "widen", Failed: "POST /os-aggregates/7/action", Error: "nova answered 400", UndoID: "u1",
		Done:   []string{"DELETE /os-server-groups/g"},
		NoUndo: []string{"server group web (g) is deleted: the undo draft creates it again, but nova gives it a new id"}}
	var buf bytes.Buffer
	if err := Plan(views.Page{Title: "Rollout"}, pl).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(doc.Find(`[data-testid="rollout-no-undo"] li`).Text())
	if got != pl.NoUndo[0] {
		t.Errorf("no-undo list %q, want %q", got, pl.NoUndo[0])
	}
	if doc.Find(`[data-testid="rollout-undo"]`).Length() != 1 {
		t.Error("the undo draft's link is missing")
	}
}
