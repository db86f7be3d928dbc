package query_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/models/scheduling"
	"corral/models/store"
)

// draftWithNewAggregate stages an aggregate only the draft has, holding
// cn6, and returns the draft's id.
func draftWithNewAggregate(t *testing.T, c *client) string {
	t.Helper()
	ctx := context.Background()
	actor := store.Actor{Name: "test", Via: "cli"}
	d, err := c.app.Store.CreateDraft(ctx, actor, "new aggregate")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.app.Store.SetDraftChanges(ctx, actor, d.ID, d.Version, []scheduling.Change{
		{Op: scheduling.OpCreateAggregate, Aggregate: "newagg"},
		{Op: scheduling.OpAddMember, Aggregate: "newagg", Provider: "cn6"},
	}); err != nil {
		t.Fatal(err)
	}
	return d.ID
}

// The API and the page answer a request naming an aggregate only the draft
// has as the CLI does (scheduling.RunPreview): the draft's trace, live
// data's, and the diff, with the name reported as the draft's alone.
func TestDraftOnlyAggregateThroughAPIAndPage(t *testing.T) {
	c := newClient(t)
	id := draftWithNewAggregate(t, c)

	resp := c.do("POST", "/api/preview?draft="+id,
		strings.NewReader(`{"project_id": "acme", "flavor": "m1.small", "placement": {"member_of": ["newagg"]}}`), nil)
	defer resp.Body.Close()
	var got struct {
		Diff      *scheduling.TraceDiff `json:"diff"`
		DraftOnly []string              `json:"draft_only"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("API: %d %v", resp.StatusCode, err)
	}
	if got.Diff == nil || len(got.Diff.NewlyEligible) != 1 || got.Diff.NewlyEligible[0].Name != "cn6" ||
		len(got.Diff.NewlyExcluded) != 0 || strings.Join(got.DraftOnly, ",") != "newagg" {
		t.Errorf("API: diff %+v, draft only %v; want cn6 newly eligible, [newagg]", got.Diff, got.DraftOnly)
	}

	doc, _ := c.fragment(url.Values{"draft": {id}, "project": {"acme"}, "flavor": {"m1.small"}, "member_of": {"newagg"}})
	if msg := doc.Find(`[data-testid="preview-error"]`).Text(); msg != "" {
		t.Fatalf("page: error %q", msg)
	}
	var eligible []string
	doc.Find(`[data-testid="newly-eligible-host"]`).Each(func(_ int, s *goquery.Selection) {
		eligible = append(eligible, s.AttrOr("data-host", ""))
	})
	if strings.Join(eligible, ",") != "cn6" {
		t.Errorf("page: newly eligible %v, want [cn6]", eligible)
	}
	if note := doc.Find(`[data-testid="draft-only"]`).Text(); !strings.Contains(note, "newagg") {
		t.Errorf("page: draft-only note %q, want it to name newagg", note)
	}

	// Without the draft the name is unknown, and the page says so by name.
	doc, _ = c.fragment(url.Values{"member_of": {"newagg"}})
	if msg := doc.Find(`#mo-err-0`).Text(); !strings.Contains(msg, `no aggregate named "newagg"`) {
		t.Errorf("live page: term error %q, want it to name the unknown aggregate", msg)
	}
}
