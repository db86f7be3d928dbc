package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
	"corral/models/store/storetest"
	"corral/web"
)

// TestProjectScoping: a non-admin's audit log, query form and preview see
// only their project's server groups; another project's group is not
// found. Admins see everything.
func TestProjectScoping(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		a := newAppOn(t, st, web.Config{})
		ctx := context.Background()
		mine := &models.ServerGroup{Name: "mike-group", ProjectID: "tA", UserID: "u", Policy: models.PolicyAntiAffinity}
		theirs := &models.ServerGroup{Name: "rita-secret-group", ProjectID: "tB", UserID: "u", Policy: models.PolicyAffinity}
		for _, g := range []*models.ServerGroup{mine, theirs} {
			if err := a.Store.CreateServerGroup(ctx, store.Actor{Name: "alice", Via: "cli"}, g); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Store.SetQuota(ctx, store.Actor{Name: "alice", Via: "cli"}, "tB", "server_groups", 77); err != nil {
			t.Fatal(err)
		}

		mike := a.Client(t)
		login(mike, "mike")
		audit := mike.Get("/audit")
		if audit.StatusCode != http.StatusOK || !strings.Contains(audit.Body, "mike-group") {
			t.Errorf("mike's audit log lacks his project's group (status %d)", audit.StatusCode)
		}
		for _, leak := range []string{"rita-secret-group", "tB/server_groups", "rita"} {
			if strings.Contains(audit.Body, leak) {
				t.Errorf("mike's audit log shows %q", leak)
			}
		}
		admin := a.Client(t)
		login(admin, "alice")
		if body := admin.Get("/audit").Body; !strings.Contains(body, "rita-secret-group") || !strings.Contains(body, "mike-group") {
			t.Errorf("the admin's audit log lacks a group")
		}

		form := mike.Get("/query")
		if form.StatusCode != http.StatusOK || !strings.Contains(form.Body, "mike-group") || strings.Contains(form.Body, "rita-secret-group") {
			t.Errorf("query form for mike: status %d, own group listed %v, other project's listed %v",
				form.StatusCode, strings.Contains(form.Body, "mike-group"), strings.Contains(form.Body, "rita-secret-group"))
		}
		if r := mike.Get("/query?project=tA&group=" + theirs.UUID); r.StatusCode != http.StatusNotFound {
			t.Errorf("query naming another project's group: status %d, want 404", r.StatusCode)
		}
		if r := admin.Get("/query?project=tB&group=" + theirs.UUID); r.StatusCode != http.StatusOK {
			t.Errorf("admin query naming a group: status %d", r.StatusCode)
		}

		plain, _, err := a.Store.CreateToken(ctx, store.Actor{Name: "test", Via: "cli"}, "mike", "ci")
		if err != nil {
			t.Fatal(err)
		}
		preview := func(group string) int {
			req, _ := http.NewRequest(http.MethodPost, a.URL+"/api/preview", strings.NewReader(fmt.Sprintf(`{"project_id": "tA", "server_group": %q}`, group)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Auth-Token", plain)
			return mike.Do(req).StatusCode
		}
		if s := preview(theirs.UUID); s != http.StatusNotFound {
			t.Errorf("preview with another project's group: status %d, want 404", s)
		}
		if s := preview(theirs.Name); s != http.StatusNotFound {
			t.Errorf("preview with another project's group by name: status %d, want 404", s)
		}
		if s := preview(mine.UUID); s != http.StatusOK {
			t.Errorf("preview with own group: status %d, want 200", s)
		}
	})
}

// TestPreviewOnDraftAnswersErrors: POST /api/preview?draft= with a bad
// request is the error, not a 200 with an empty body.
func TestPreviewOnDraftAnswersErrors(t *testing.T) {
	a := newApp(t)
	ctx := context.Background()
	d, err := a.Store.CreateDraft(ctx, store.Actor{Name: "alice", Via: "cli"}, "d")
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := a.Store.CreateToken(ctx, store.Actor{Name: "test", Via: "cli"}, "alice", "ci")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, a.URL+"/api/preview?draft="+d.ID, strings.NewReader(`{"flavor": "no-such-flavor"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Auth-Token", plain)
	r := a.Client(t).Do(req)
	if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, "no-such-flavor") {
		t.Errorf("status %d, body %q; want 400 naming the flavor", r.StatusCode, r.Body)
	}
}
