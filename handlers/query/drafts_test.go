package query_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
)

// form POSTs a console form and returns the response (redirects are not
// followed).
func (c *client) form(path string, v url.Values) *http.Response {
	c.t.Helper()
	resp := c.do("POST", path, strings.NewReader(v.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	resp.Body.Close()
	return resp
}

func (c *client) formPage(path string, v url.Values) (int, *goquery.Document) {
	c.t.Helper()
	resp := c.do("POST", path, strings.NewReader(v.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, doc
}

// createDraft creates a draft through the console and returns its id.
func (c *client) createDraft(name string) string {
	c.t.Helper()
	resp := c.form("/drafts", url.Values{"name": {name}})
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/drafts/") {
		c.t.Fatalf("create draft: %d → %q", resp.StatusCode, loc)
	}
	return strings.TrimPrefix(loc, "/drafts/")
}

func (c *client) addChange(id string, version int, v url.Values) {
	c.t.Helper()
	v.Set("version", strings.TrimSpace(itoa(version)))
	resp := c.form("/drafts/"+id+"/changes", v)
	if resp.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("add change %v: status %d", v, resp.StatusCode)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// untagFreePool gives live data the demo's free pool without its
// reservation key: the state before the operator forbids it.
func untagFreePool(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	a, err := s.GetAggregate(ctx, "blazar-freepool")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateAggregate(ctx, store.Actor{Name: "test", Via: "cli"}, a.UUID, a.Generation, func(x *models.Aggregate) error {
		delete(x.Metadata, "reservation:freepool")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// The story of the issue: a draft that forbids the reservation free pool
// for flavors without a reservation shows, before anything is live, which
// hosts each tenant loses — then applies in one step.
func TestDraftForbiddingTheFreePool(t *testing.T) {
	c := newClient(t)
	untagFreePool(t, c.app.Store)
	id := c.createDraft("forbid the free pool")
	c.addChange(id, 0, url.Values{"kind": {"add_reservation"}, "aggregate": {"blazar-freepool"}, "value": {"freepool"}})

	page := c.page("/drafts/" + id)
	if got := strings.TrimSpace(page.Find(`[data-testid="draft-change"]`).Text()); !strings.Contains(got, "add reservation tag freepool to aggregate blazar-freepool") {
		t.Errorf("draft change listed as %q", got)
	}

	// The impact matrix: every tenant, and any project corral has not seen,
	// loses cn7, the pool's only host, for the flavors that could land
	// there, and nothing else changes.
	m := c.page("/drafts/" + id + "/impact")
	lost := map[string][]string{}
	m.Find(`[data-testid="impact-matrix"] td`).Each(func(_ int, s *goquery.Selection) {
		p, _ := s.Attr("data-project")
		f, _ := s.Attr("data-flavor")
		var hosts []string
		s.Find(`[data-testid="impact-lost"]`).Each(func(_ int, li *goquery.Selection) {
			hosts = append(hosts, strings.TrimPrefix(strings.TrimSpace(li.Text()), "−"))
		})
		if len(hosts) > 0 {
			lost[p+"/"+f] = hosts
		}
	})
	want := map[string][]string{}
	for _, p := range []string{"acme", "acme-dev", "globex", scheduling.AnyOtherProject} {
		for _, f := range []string{"m1.large", "m1.small"} {
			want[p+"/"+f] = []string{"cn7"}
		}
	}
	if len(lost) != len(want) {
		t.Errorf("pairs losing hosts: %v, want %v", lost, want)
	}
	for k, w := range want {
		if !slices.Equal(lost[k], w) {
			t.Errorf("%s loses %v, want %v", k, lost[k], w)
		}
	}
	if got := m.Find(`[data-testid="impact-dropped"]`).Text(); got != "8" {
		t.Errorf("dropped pairs = %q, want 8", got)
	}
	if got := m.Find(`[data-testid="impact-stranded"]`).Text(); got != "0" {
		t.Errorf("stranded pairs = %q, want 0", got)
	}

	// The same matrix as JSON, for pipelines, on a chosen subset.
	ir := c.do("GET", "/api/drafts/"+id+"/impact?project=globex&flavor=m1.small&flavor=m1.ssd", nil, nil)
	var jm struct {
		Projects, Flavors []string
		Cells             [][]struct {
			Live, Draft int
			Lost        []string
		}
		Dropped int
	}
	if err := json.NewDecoder(ir.Body).Decode(&jm); err != nil || ir.StatusCode != http.StatusOK {
		t.Fatalf("impact API: %d %v", ir.StatusCode, err)
	}
	ir.Body.Close()
	if len(jm.Cells) != 2 || len(jm.Cells[0]) != 2 || !slices.Equal(jm.Cells[0][0].Lost, []string{"cn7"}) ||
		len(jm.Cells[0][1].Lost) != 0 || jm.Projects[1] != scheduling.AnyOtherProject || jm.Dropped != 2 {
		t.Errorf("impact API for globex × {m1.small, m1.ssd} = %+v", jm)
	}

	// The live query page against the draft shows the same for one pair.
	doc, _ := c.fragment(url.Values{"draft": {id}, "project": {"acme"}, "flavor": {"m1.small"}})
	var gone []string
	doc.Find(`[data-testid="newly-excluded-host"]`).Each(func(_ int, s *goquery.Selection) {
		h, _ := s.Attr("data-host")
		gone = append(gone, h)
		if !strings.Contains(s.Text(), "blazar-freepool") {
			t.Errorf("reason for losing %s = %q, want it to name the pool", h, s.Text())
		}
	})
	if !slices.Equal(gone, []string{"cn7"}) {
		t.Errorf("newly excluded with the draft = %v, want [cn7]", gone)
	}

	// And so does the API.
	resp := c.do("POST", "/api/preview?draft="+id, strings.NewReader(`{"project_id": "globex", "flavor": "m1.large"}`), nil)
	var out struct {
		Draft struct{ Name string }
		Diff  struct {
			NewlyExcluded []struct{ Name string } `json:"newly_excluded"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("API preview against the draft: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	if out.Draft.Name != "forbid the free pool" || len(out.Diff.NewlyExcluded) != 1 || out.Diff.NewlyExcluded[0].Name != "cn7" {
		t.Errorf("API diff = %+v", out)
	}

	// Apply: live data now carries the key, and the draft is gone.
	r := c.form("/drafts/"+id+"/apply", url.Values{"version": {"1"}})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/drafts" {
		t.Fatalf("apply: %d → %q", r.StatusCode, r.Header.Get("Location"))
	}
	a, err := c.app.Store.GetAggregate(context.Background(), "blazar-freepool")
	if err != nil {
		t.Fatal(err)
	}
	if a.Metadata["reservation:freepool"] != scheduling.ReservationTagValue {
		t.Errorf("free pool metadata after apply = %v", a.Metadata)
	}
	if r := c.do("GET", "/drafts/"+id, nil, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("draft page after apply: %d, want 404", r.StatusCode)
	}
}

func TestDraftApplyConflictAndDiscard(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	id := c.createDraft("tag aggA")
	c.addChange(id, 0, url.Values{"kind": {"add_tenant"}, "aggregate": {"aggA"}, "project": {"globex"}})

	// Someone edits aggA directly while the draft waits.
	a, err := c.app.Store.GetAggregate(ctx, "aggA")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.app.Store.UpdateAggregate(ctx, store.Actor{Name: "bob", Via: "console"}, a.UUID, a.Generation, func(x *models.Aggregate) error {
		x.Metadata["ssd"] = "true"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	page := c.page("/drafts/" + id)
	if got := page.Find(`[data-testid="draft-conflict"]`).Text(); !strings.Contains(got, "aggregate aggA was changed") {
		t.Errorf("draft page conflicts = %q, want aggA named", got)
	}
	if n := c.page("/drafts").Find(`[data-testid="draft-stale"]`).Length(); n != 1 {
		t.Errorf("drafts list marks %d drafts stale, want 1", n)
	}
	r := c.form("/drafts/"+id+"/apply", url.Values{"version": {"1"}})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/drafts/"+id {
		t.Fatalf("conflicting apply: %d → %q, want back to the draft", r.StatusCode, r.Header.Get("Location"))
	}
	a2, _ := c.app.Store.GetAggregate(ctx, "aggA")
	if _, ok := a2.Metadata["filter_tenant_id"]; ok {
		t.Errorf("a conflicting apply changed aggA: %v", a2.Metadata)
	}

	// A change that does not apply is refused next to its field, on the
	// draft's own address (post/redirect/get) with what was typed kept.
	r = c.form("/drafts/"+id+"/changes", url.Values{"kind": {"remove_member"}, "aggregate": {"aggA"}, "provider": {"cn9"}, "version": {"1"}})
	loc := r.Header.Get("Location")
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/drafts/"+id+"?") {
		t.Fatalf("bad change: %d → %q, want back to the draft's page", r.StatusCode, loc)
	}
	doc := c.page(strings.Split(loc, "#")[0])
	if !strings.Contains(doc.Find(`[data-testid="error-provider"]`).Text(), "cn9") {
		t.Errorf("bad change: provider error %q", doc.Find(`[data-testid="error-provider"]`).Text())
	}
	if v, _ := doc.Find(`#f-provider`).Attr("value"); v != "cn9" {
		t.Errorf("the typed provider is not kept: %q", v)
	}

	rev0, _ := c.app.Store.Revision(ctx)
	r = c.form("/drafts/"+id+"/discard", nil)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("discard: %d", r.StatusCode)
	}
	if rev1, _ := c.app.Store.Revision(ctx); rev1 != rev0 {
		t.Errorf("discard moved the revision %d → %d", rev0, rev1)
	}
	if _, err := c.app.Store.GetDraft(ctx, id); models.KindOf(err) != models.NotFound {
		t.Errorf("draft after discard: %v", err)
	}
}

func TestDraftsNeedAnAdmin(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	if _, err := c.app.Store.CreateUser(ctx, store.Actor{Name: "test"}, "rita", "reader-password-1", models.RoleReader, ""); err != nil {
		t.Fatal(err)
	}
	tok, _, err := c.app.Store.CreateToken(ctx, store.Actor{Name: "test"}, "rita", "t")
	if err != nil {
		t.Fatal(err)
	}
	reader := &client{t: t, app: c.app, token: tok}
	if r := reader.form("/drafts", url.Values{"name": {"x"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("reader creating a draft: %d, want 403", r.StatusCode)
	}
	// Reading is fine.
	if r := reader.do("GET", "/drafts", nil, nil); r.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(r.Body)
		t.Errorf("reader listing drafts: %d %s", r.StatusCode, b)
	}
}

// TestRebasePage: a stale draft's page links to the rebase page, which
// marks the change that no longer applies; rebasing without it makes the
// draft apply.
func TestRebasePage(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	st := c.app.Store
	who := store.Actor{Name: "alice", Via: "cli"}
	agg, err := st.GetAggregate(ctx, "blazar-freepool")
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.CreateDraft(ctx, who, "stale")
	if err != nil {
		t.Fatal(err)
	}
	d, err = st.SetDraftChanges(ctx, who, d.ID, d.Version, []scheduling.Change{
		{Op: scheduling.OpSetMetadata, Aggregate: agg.Name, Key: "ssd", Value: "true"},
		{Op: scheduling.OpSetMetadata, Aggregate: agg.Name, Key: "doomed", Value: "1"},
		{Op: scheduling.OpUnsetMetadata, Aggregate: agg.Name, Key: "doomed"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Live, someone sets ssd=false: the draft is stale.
	if _, err := st.UpdateAggregate(ctx, who, agg.UUID, store.AnyGeneration, func(a *models.Aggregate) error {
		a.Metadata["ssd"] = "false"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if doc := c.page("/drafts/" + d.ID); doc.Find(`[data-testid="draft-rebase-link"]`).Length() != 1 {
		t.Fatal("the stale draft's page offers no rebase")
	}
	doc := c.page("/drafts/" + d.ID + "/rebase")
	if n := doc.Find(`[data-testid="rebase-change"]`).Length(); n != 3 {
		t.Fatalf("%d changes on the rebase page, want 3", n)
	}
	if n := doc.Find(`[data-testid="rebase-stale"]`).Length(); n == 0 {
		t.Error("no change is marked stale")
	}
	r := c.form("/drafts/"+d.ID+"/rebase", url.Values{"version": {strconv.FormatInt(d.Version, 10)}, "keep": {"0"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("rebase: status %d", r.StatusCode)
	}
	d, err = st.GetDraft(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ApplyDraft(ctx, who, d.ID, d.Version); err != nil {
		t.Fatalf("apply after rebase: %v", err)
	}
	if got, _ := st.GetAggregate(ctx, agg.UUID); got.Metadata["ssd"] != "true" {
		t.Errorf("after apply: %v", got.Metadata)
	}
}

// A draft can put an aggregate in a zone: the impact shows cn1 leaving
// the zone-less hosts a request for zone west may not use.
func TestDraftSetsAZone(t *testing.T) {
	c := newClient(t)
	id := c.createDraft("aggA to west")
	c.addChange(id, 0, url.Values{"kind": {"set_zone"}, "aggregate": {"aggA"}, "az": {"west"}})
	page := c.page("/drafts/" + id)
	if got := strings.TrimSpace(page.Find(`[data-testid="draft-change"]`).Text()); !strings.Contains(got, "put aggregate aggA in zone west") {
		t.Errorf("change listed as %q", got)
	}
	doc, _ := c.fragment(url.Values{"draft": {id}, "project": {"globex"}, "flavor": {"m1.small"}, "az": {"west"}})
	var gained []string
	doc.Find(`[data-testid="newly-eligible-host"]`).Each(func(_ int, s *goquery.Selection) { gained = append(gained, s.AttrOr("data-host", "")) })
	if strings.Join(gained, ",") != "cn1" {
		t.Errorf("newly eligible in zone west with the draft: %v, want [cn1]", gained)
	}
}
