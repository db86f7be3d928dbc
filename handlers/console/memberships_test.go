package console_test

import (
	"context"
	"testing"

	"corral/models/store"
)

// A synced aggregate whose two memberships differ says, member by member,
// which side has it only.
func TestAggregatePageShowsMembershipDrift(t *testing.T) {
	a := newApp(t)
	ctx := context.Background()
	w, err := a.Store.ExportWorld(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var name string
	for i := range w.Aggregates {
		if ag := &w.Aggregates[i]; len(ag.Members) >= 2 {
			ag.NotInPlacement, ag.NotInNova = []string{ag.Members[0]}, []string{ag.Members[1]}
			name = ag.Name
			break
		}
	}
	if err := a.Store.ImportWorld(ctx, store.Actor{Name: "sync", Via: "cli"}, w, true); err != nil {
		t.Fatal(err)
	}
	agg := a.aggregate(name)
	page := a.as("admin").Get("/aggregates/" + agg.UUID)
	sides := page.Texts(t, "member-side")
	if len(sides) != 2 || !(sides[0] == "Nova only" && sides[1] == "Placement only" || sides[1] == "Nova only" && sides[0] == "Placement only") {
		t.Errorf("aggregate %s shows sides %v, want one Nova only and one Placement only", name, sides)
	}
	other := a.as("admin").Get("/aggregates")
	if other.StatusCode != 200 {
		t.Errorf("aggregate list: %d", other.StatusCode)
	}
}
