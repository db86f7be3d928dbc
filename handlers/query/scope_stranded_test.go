package query_test

import (
	"net/http"
	"strings"
	"testing"

	"corral/models"
	"corral/web/webtest"
)

// A reader of one project sees only their own project's stranded servers
// and broken groups, on the drafts API and the page, as the compute API
// shows them only their own project's groups; an admin sees all.
func TestStrandedIsScopedToTheCallersProject(t *testing.T) {
	app := webtest.Start(t, webtest.User{Name: "acme-reader", Role: models.RoleReader, Project: "acme"})
	admin := app.TokenClient(t, app.AdminName)
	r := admin.JSON("POST", "/api/drafts", `{"name": "take cn1 and cn6", "changes": [
		{"op": "add_member", "aggregate": "reservation-r42", "provider": "cn1"},
		{"op": "add_member", "aggregate": "reservation-r42", "provider": "cn6"}]}`)
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("create draft: %d %s", r.StatusCode, r.Body)
	}
	id := r.Object(t)["id"].(string)
	all := admin.Get("/api/drafts/" + id + "/stranded")
	if !strings.Contains(all.Body, "cache-1") || !strings.Contains(all.Body, "batch-3") {
		t.Fatalf("the admin's strandings lack cache-1 (acme) or batch-3 (globex): %s", all.Body)
	}
	reader := app.TokenClient(t, "acme-reader")
	mine := reader.Get("/api/drafts/" + id + "/stranded")
	if mine.StatusCode != http.StatusOK || !strings.Contains(mine.Body, "cache-1") {
		t.Errorf("acme's reader does not see acme's stranded server: %d %s", mine.StatusCode, mine.Body)
	}
	if strings.Contains(mine.Body, "batch-3") || strings.Contains(mine.Body, "globex") {
		t.Errorf("acme's reader sees globex's stranded server: %s", mine.Body)
	}
	page := app.SignIn(t, "acme-reader").Get("/drafts/" + id + "/stranded")
	if page.StatusCode != http.StatusOK || strings.Contains(page.Body, "batch-3") || !strings.Contains(page.Body, "cache-1") {
		t.Errorf("the stranded page for acme's reader: %d, shows batch-3 %v, cache-1 %v",
			page.StatusCode, strings.Contains(page.Body, "batch-3"), strings.Contains(page.Body, "cache-1"))
	}
}
