package query_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
)

// api sends a JSON request with the client's token and decodes the answer
// into out (when not nil); it returns the status.
func (c *client) api(method, path, body string, out any) int {
	c.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	resp := c.do(method, path, r, map[string]string{"Content-Type": "application/json"})
	defer resp.Body.Close()
	if out != nil {
		data, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(data, out); err != nil && resp.StatusCode < 300 {
			c.t.Fatalf("%s %s: %d, body %q: %v", method, path, resp.StatusCode, data, err)
		}
	}
	return resp.StatusCode
}

type apiDraft struct {
	ID        string              `json:"id"`
	Name      string              `json:"name"`
	Version   int64               `json:"version"`
	Changes   []scheduling.Change `json:"changes"`
	Described []string            `json:"described"`
	Conflicts []string            `json:"conflicts"`
}

type apiError struct {
	Error struct {
		Status  int    `json:"status"`
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"error"`
}

// The drafts API carries a whole change through its life: create with a
// flavor change, add an aggregate tag, preview, impact (JSON and CSV),
// strandings, apply with the reviewed version, and revert from the
// apply's audit event. Seed 000's flow: the gpu aggregate and the GPU
// flavor get a reservation together.
func TestDraftsAPIWholeLifecycle(t *testing.T) {
	c := newClient(t)
	var d apiDraft
	if st := c.api("POST", "/api/drafts", `{"name": "reserve the gpu host", "changes": [
		{"op": "set_extra_spec", "flavor": "g1.gpu", "key": "reservation:gpu", "value": "true"}]}`, &d); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	if d.Version != 1 || len(d.Changes) != 1 || d.Described[0] != "set extra spec reservation:gpu=true on flavor g1.gpu" {
		t.Fatalf("created draft = %+v", d)
	}
	if st := c.api("POST", "/api/drafts/"+d.ID+"/changes", `{"version": 1, "changes": [
		{"op": "set_metadata", "aggregate": "gpu", "key": "reservation:gpu", "value": "true"}]}`, &d); st != http.StatusOK || d.Version != 2 {
		t.Fatalf("add change: %d, %+v", st, d)
	}
	// A stale version is a conflict; a change that does not apply names it.
	var e apiError
	if st := c.api("POST", "/api/drafts/"+d.ID+"/changes", `{"version": 1, "changes": [{"op": "unset_extra_spec", "flavor": "m1.small", "key": "x"}]}`, &e); st != http.StatusBadRequest || e.Error.Field != "changes[2].key" {
		t.Errorf("bad change: %d %+v, want 400 on changes[2].key", st, e)
	}
	if st := c.api("POST", "/api/drafts/"+d.ID+"/changes", `{"version": 1, "changes": [{"op": "set_metadata", "aggregate": "gpu", "key": "a", "value": "b"}]}`, &e); st != http.StatusConflict {
		t.Errorf("stale version: %d, want 409", st)
	}

	// Preview: the GPU flavor still lands on cn6, as the reservation
	// admits it; m1.small loses cn6 (now a reservation's host).
	var p struct {
		Diff struct {
			NewlyExcluded []struct{ Name string } `json:"newly_excluded"`
		} `json:"diff"`
	}
	if st := c.api("POST", "/api/drafts/"+d.ID+"/preview", `{"project_id": "globex", "flavor": "m1.small"}`, &p); st != http.StatusOK ||
		len(p.Diff.NewlyExcluded) != 1 || p.Diff.NewlyExcluded[0].Name != "cn6" {
		t.Errorf("preview: %d %+v, want cn6 newly excluded", st, p)
	}

	// Impact, with a project corral has never seen.
	var m scheduling.Impact
	if st := c.api("GET", "/api/drafts/"+d.ID+"/impact?project=globex&projects=brand-new&flavor=m1.small&flavor=g1.gpu", "", &m); st != http.StatusOK {
		t.Fatalf("impact: %d", st)
	}
	if strings.Join(m.Projects, ",") != "globex,brand-new,"+scheduling.AnyOtherProject || m.Cells[1][0].LostCount != 1 {
		t.Errorf("impact = %+v", m)
	}
	resp := c.do("GET", "/api/drafts/"+d.ID+"/impact?project=globex&flavor=m1.small&format=csv", nil, nil)
	rows, err := csv.NewReader(resp.Body).ReadAll()
	resp.Body.Close()
	if err != nil || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" || len(rows) != 3 ||
		rows[0][0] != "project" || rows[1][0] != "globex" || rows[1][7] != "cn6" {
		t.Errorf("CSV: %v %q %v", err, resp.Header.Get("Content-Type"), rows)
	}
	var z scheduling.Impact
	if st := c.api("GET", "/api/drafts/"+d.ID+"/impact?project=globex&flavor=m1.small&by=zone", "", &z); st != http.StatusOK ||
		strings.Join(z.Flavors, ",") != "m1.small @ east,m1.small @ west" || z.Cells[0][1].LostCount != 1 || z.Cells[0][0].LostCount != 0 {
		t.Errorf("zone view: %d %+v", st, z)
	}

	// Strandings: batch-3 (globex, on cn6) runs a flavor-less server that
	// no longer fits: only the reserved GPU flavor may land on cn6 now,
	// and it still may, so nothing is stranded.
	var st scheduling.Stranding
	if code := c.api("GET", "/api/drafts/"+d.ID+"/stranded", "", &st); code != http.StatusOK || st.Checked != 10 {
		t.Errorf("stranded: %d %+v", code, st)
	}

	// Apply needs the reviewed version.
	if code := c.api("POST", "/api/drafts/"+d.ID+"/apply", `{}`, &e); code != http.StatusBadRequest || e.Error.Field != "version" {
		t.Errorf("apply without version: %d %+v", code, e)
	}
	var ap struct {
		AuditEvent int64 `json:"audit_event"`
	}
	// Reserving the GPU host strands what runs there: the safety gate
	// wants "confirm".
	if code := c.api("POST", "/api/drafts/"+d.ID+"/apply", `{"version": 2}`, &e); code != http.StatusConflict || e.Error.Field != "confirm" {
		t.Errorf("apply without confirm: %d %+v", code, e)
	}
	if code := c.api("POST", "/api/drafts/"+d.ID+"/apply", `{"version": 2, "confirm": true}`, &ap); code != http.StatusOK || ap.AuditEvent == 0 {
		t.Fatalf("apply: %d %+v", code, ap)
	}
	f, err := c.app.Store.GetFlavor(context.Background(), "g1.gpu")
	if err != nil || f.ExtraSpecs["reservation:gpu"] != "true" {
		t.Fatalf("g1.gpu after apply: %+v %v", f, err)
	}

	// Revert: a new draft from the audit's before-values; applied, the
	// flavor and the aggregate are as before.
	var rd apiDraft
	if code := c.api("POST", "/api/drafts", fmt.Sprintf(`{"revert": %d}`, ap.AuditEvent), &rd); code != http.StatusCreated ||
		rd.Name != "Revert of reserve the gpu host" || len(rd.Changes) != 2 {
		t.Fatalf("revert: %d %+v", code, rd)
	}
	if code := c.api("POST", "/api/drafts/"+rd.ID+"/apply", fmt.Sprintf(`{"version": %d}`, rd.Version), nil); code != http.StatusOK {
		t.Fatalf("apply the revert: %d", code)
	}
	f, _ = c.app.Store.GetFlavor(context.Background(), "g1.gpu")
	a, _ := c.app.Store.GetAggregate(context.Background(), "gpu")
	if _, ok := f.ExtraSpecs["reservation:gpu"]; ok {
		t.Errorf("g1.gpu still reserved after the revert: %v", f.ExtraSpecs)
	}
	if _, ok := a.Metadata["reservation:gpu"]; ok {
		t.Errorf("gpu aggregate still reserved after the revert: %v", a.Metadata)
	}
}

func TestDraftsAPIRefusesAndGuards(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	var d apiDraft
	if st := c.api("POST", "/api/drafts", `{"name": "x"}`, &d); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	cases := []struct {
		method, path, body string
		status             int
		field              string
	}{
		{"POST", "/api/drafts", `{"name": ""}`, 400, "name"},
		{"POST", "/api/drafts", `{"name": "y", "colour": "red"}`, 400, "colour"},
		{"POST", "/api/drafts", `{"name": "y", "changes": [{"op": "set_extra_spec", "flavor": "nope", "key": "k"}]}`, 400, "changes[0].flavor"},
		{"POST", "/api/drafts", `{"revert": 424242}`, 404, "event"},
		{"POST", "/api/drafts", `not json`, 400, ""},
		{"POST", "/api/drafts/" + d.ID + "/changes", `{"changes": []}`, 400, "version"},
		{"DELETE", "/api/drafts/" + d.ID + "/changes/0?version=0", "", 404, "change"},
		{"DELETE", "/api/drafts/" + d.ID, "", 400, "version"},
		{"DELETE", "/api/drafts/" + d.ID + "?version=7", "", 409, "version"},
		{"GET", "/api/drafts/" + d.ID + "/impact?by=moon", "", 400, "by"},
		{"GET", "/api/drafts/" + d.ID + "/impact?flavor=nope", "", 400, "flavor"},
		{"GET", "/api/drafts/no-such", "", 404, "draft"},
	}
	for _, tc := range cases {
		var e apiError
		if st := c.api(tc.method, tc.path, tc.body, &e); st != tc.status || tc.field != "" && e.Error.Field != tc.field {
			t.Errorf("%s %s %s: %d %+v, want %d on %q", tc.method, tc.path, tc.body, st, e, tc.status, tc.field)
		}
	}
	// Readers read but do not write.
	if _, err := c.app.Store.CreateUser(ctx, store.Actor{Name: "test", Via: "cli"}, "rita", "a long enough password", models.RoleReader, ""); err != nil {
		t.Fatal(err)
	}
	tok, _, err := c.app.Store.CreateToken(ctx, store.Actor{Name: "test", Via: "cli"}, "rita", "reader")
	if err != nil {
		t.Fatal(err)
	}
	reader := &client{t: t, app: c.app, token: tok}
	if st := reader.api("GET", "/api/drafts/"+d.ID, "", nil); st != http.StatusOK {
		t.Errorf("reader GET: %d", st)
	}
	for _, w := range [][3]string{{"POST", "/api/drafts", `{"name": "z"}`}, {"DELETE", "/api/drafts/" + d.ID + "?version=0", ""},
		{"POST", "/api/drafts/" + d.ID + "/apply", `{"version": 0}`}} {
		if st := reader.api(w[0], w[1], w[2], nil); st != http.StatusForbidden {
			t.Errorf("reader %s %s: %d, want 403", w[0], w[1], st)
		}
	}
	anon := &client{t: t, app: c.app}
	if st := anon.api("GET", "/api/drafts", "", nil); st != http.StatusUnauthorized {
		t.Errorf("anonymous GET /api/drafts: %d, want 401", st)
	}
	// Discard with the reviewed version.
	if st := c.api("DELETE", "/api/drafts/"+d.ID+"?version=0", "", nil); st != http.StatusNoContent {
		t.Errorf("discard: %d", st)
	}
}
