package doctor_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/web/webtest"
)

// With many findings the page counts them by code first, then lists one
// page of 50 (loudest first, acknowledged last); a code's link lists that
// code alone.
func TestDoctorPageCountsByCodeAndPages(t *testing.T) {
	app := webtest.Start(t)
	withTrap(t, app)
	var changes []scheduling.Change
	for i := range 120 {
		changes = append(changes, scheduling.Change{Op: scheduling.OpCreateAggregate, Aggregate: fmt.Sprintf("comma-%03d", i),
			Metadata: map[string]string{"filter_tenant_id": "pa,pb"}})
	}
	ctx := context.Background()
	actor := store.Actor{Name: "webtest", Via: "cli", Role: models.RoleAdmin}
	if _, err := app.Store.Apply(ctx, actor, changes); err != nil {
		t.Fatal(err)
	}
	admin := app.SignIn(t, app.AdminName)

	r := admin.Get("/doctor")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("status %d", r.StatusCode)
	}
	rows := map[string]string{}
	doc := r.Doc(t)
	doc.Find(`[data-testid="doctor-code-row"]`).Each(func(_ int, s *goquery.Selection) {
		code, _ := s.Attr("data-code")
		rows[code] = s.Find(`[data-testid="doctor-code-open"]`).Text() + "/" + s.Find(`[data-testid="doctor-code-acked"]`).Text()
	})
	if len(rows) != 2 || rows["tenant_comma_list"] != "120/0" || rows["isolation_trait_missing"] != "1/0" {
		t.Errorf("counts by code %v", rows)
	}
	if n := r.Count(t, "doctor-finding"); n != 50 || r.Text(t, "doctor-page") != "Page 1 of 3 (121 findings)" ||
		!strings.Contains(r.Text(t, "doctor-warning"), "Warnings (121)") || r.Has(t, "doctor-prev") || !r.Has(t, "doctor-next") {
		t.Errorf("page 1: %d findings, %q", n, r.Text(t, "doctor-page"))
	}
	for _, path := range []string{"/doctor?page=3", "/doctor?page=99"} {
		r = admin.Get(path)
		if n := r.Count(t, "doctor-finding"); n != 21 || r.Text(t, "doctor-page") != "Page 3 of 3 (121 findings)" || r.Has(t, "doctor-next") || !r.Has(t, "doctor-prev") {
			t.Errorf("%s: %d findings, %q", path, n, r.Text(t, "doctor-page"))
		}
	}

	// One code, with its acknowledged finding last.
	key := ""
	for _, f := range admin.JSON(http.MethodGet, "/api/doctor", nil).Object(t)["findings"].([]any) {
		if m := f.(map[string]any); m["code"] == "isolation_trait_missing" {
			key = m["key"].(string)
			if _, err := app.Store.AckFinding(ctx, actor, store.FindingAck{Key: key, Code: "isolation_trait_missing", Fingerprint: m["fingerprint"].(string), Reason: "known"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	r = admin.Get("/doctor?page=3")
	if r.Count(t, "doctor-finding") != 21 || !strings.Contains(r.Text(t, "doctor-acknowledged"), "Acknowledged (1)") ||
		!strings.Contains(r.Text(t, "doctor-warning"), "Warnings (120)") {
		t.Errorf("page 3 after the ack: %d findings", r.Count(t, "doctor-finding"))
	}
	if r := admin.Get("/doctor?page=1"); r.Has(t, "doctor-acknowledged") {
		t.Error("an acknowledged finding is listed before open ones")
	}
	r = admin.Get("/doctor?code=isolation_trait_missing")
	if r.Count(t, "doctor-finding") != 1 || !r.Has(t, "doctor-acknowledged") || r.Has(t, "doctor-pager") || !r.Has(t, "doctor-all-codes") {
		t.Errorf("one code: %d findings, acknowledged %v", r.Count(t, "doctor-finding"), r.Has(t, "doctor-acknowledged"))
	}
	r = admin.Get("/doctor?code=tenant_comma_list&page=2")
	if r.Count(t, "doctor-finding") != 50 || r.Text(t, "doctor-page") != "Page 2 of 3 (120 findings)" || strings.Join(r.Texts(t, "doctor-code"), "") != strings.Repeat("tenant_comma_list", 50) {
		t.Errorf("tenant_comma_list, page 2: %q", r.Text(t, "doctor-page"))
	}
	if r := admin.Get("/doctor?code=no_such_code"); r.Count(t, "doctor-finding") != 0 || !r.Has(t, "doctor-none-of-code") {
		t.Error("an unknown code lists nothing and says so")
	}
}
