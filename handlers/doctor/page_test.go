package doctor_test

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/web/webtest"
)

// trapChange puts cn1 into the demo's isolated aggregate "windows"
// (trait:CUSTOM_LICENSED_WINDOWS=required) without the trait.
var trapChange = scheduling.Change{Op: scheduling.OpAddMember, Aggregate: "windows", Provider: "cn1"}

// wantFix is the finding's fix: the trait on cn1.
var wantFix = []scheduling.Change{{Op: scheduling.OpAddTrait, Provider: "cn1", Trait: "CUSTOM_LICENSED_WINDOWS"}}

func withTrap(t *testing.T, app *webtest.App) {
	t.Helper()
	if _, err := app.Store.Apply(context.Background(), store.Actor{Name: "webtest", Via: "cli", Role: models.RoleAdmin},
		[]scheduling.Change{trapChange}); err != nil {
		t.Fatal(err)
	}
}

func TestDoctorPageListsFindingsAndLinksObjects(t *testing.T) {
	app := webtest.Start(t, webtest.User{Name: "rita", Role: models.RoleReader})
	admin := app.SignIn(t, app.AdminName)
	r := admin.Get("/doctor")
	if r.StatusCode != http.StatusOK || !r.Has(t, "doctor-healthy") || r.Has(t, "doctor-finding") {
		t.Fatalf("the demo world: status %d, healthy %v", r.StatusCode, r.Has(t, "doctor-healthy"))
	}
	withTrap(t, app)
	r = admin.Get("/doctor")
	if r.Has(t, "doctor-healthy") || r.Count(t, "doctor-finding") != 1 || r.Text(t, "doctor-code") != "isolation_trait_missing" {
		t.Fatalf("with the trap: %q", r.Texts(t, "doctor-code"))
	}
	doc := r.Doc(t)
	var hrefs []string
	for _, n := range doc.Find(`a[data-testid="doctor-object"]`).Nodes {
		for _, a := range n.Attr {
			if a.Key == "href" {
				hrefs = append(hrefs, a.Val)
			}
		}
	}
	want := []string{"/aggregates/" + store.DemoUUID("aggregate", "windows"), "/providers/" + store.DemoUUID("provider", "cn1")}
	if !reflect.DeepEqual(hrefs, want) {
		t.Errorf("object links %v, want %v", hrefs, want)
	}
	obj := admin.JSON(http.MethodGet, "/api/doctor", nil).Object(t)
	if fs, _ := obj["findings"].([]any); len(fs) != 1 || fs[0].(map[string]any)["code"] != "isolation_trait_missing" {
		t.Errorf("/api/doctor: %v", obj)
	}
	if !r.Has(t, "doctor-fix-draft") || !r.Has(t, "doctor-ack-form") {
		t.Error("an admin gets Fix as draft and Acknowledge")
	}
	reader := app.SignIn(t, "rita")
	r = reader.Get("/doctor")
	if r.Count(t, "doctor-finding") != 1 || r.Has(t, "doctor-fix-draft") || r.Has(t, "doctor-ack-form") {
		t.Error("a reader sees the finding without the admin's buttons")
	}
	if r := reader.Submit("/doctor", "/doctor/fix", url.Values{"key": {"x"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("a reader's fix: %d", r.StatusCode)
	}
}

// Acknowledging moves the finding under "Acknowledged" with who and why;
// when the finding's content changes it shouts again.
func TestDoctorAcknowledgement(t *testing.T) {
	app := webtest.Start(t)
	withTrap(t, app)
	admin := app.SignIn(t, app.AdminName)
	doc := admin.Get("/doctor").Doc(t)
	key, _ := doc.Find(`[data-testid="doctor-ack-form"] input[name="key"]`).Attr("value")
	fp, _ := doc.Find(`[data-testid="doctor-ack-form"] input[name="fingerprint"]`).Attr("value")
	if r := admin.Follow("/doctor", "/doctor/ack", url.Values{"key": {key}, "fingerprint": {fp}, "reason": {""}}); !strings.Contains(r.Text(t, "flash-error"), "say why") {
		t.Errorf("an ack without a reason: %q", r.ErrorsText())
	}
	r := admin.Follow("/doctor", "/doctor/ack", url.Values{"key": {key}, "fingerprint": {fp}, "reason": {"licence ordered"}})
	if !r.Has(t, "doctor-healthy") || !r.Has(t, "doctor-acknowledged") || !strings.Contains(r.Text(t, "doctor-ack"), "admin") ||
		!strings.Contains(r.Text(t, "doctor-ack"), "licence ordered") {
		t.Fatalf("after the ack: healthy %v, ack %q", r.Has(t, "doctor-healthy"), r.Text(t, "doctor-ack"))
	}
	// cn5 joins too: the same aggregate, another content.
	if _, err := app.Store.Apply(context.Background(), store.Actor{Name: "webtest", Via: "cli", Role: models.RoleAdmin},
		[]scheduling.Change{{Op: scheduling.OpAddMember, Aggregate: "windows", Provider: "cn5"}}); err != nil {
		t.Fatal(err)
	}
	r = admin.Get("/doctor")
	if r.Has(t, "doctor-healthy") || r.Has(t, "doctor-acknowledged") || !strings.Contains(r.Text(t, "doctor-detail"), "cn5") {
		t.Errorf("a changed finding stays acknowledged: %q", r.Texts(t, "doctor-detail"))
	}
	// A form of the old content is refused with a flash.
	r = admin.Follow("/doctor", "/doctor/fix", url.Values{"key": {key}, "fingerprint": {fp}})
	if !strings.Contains(r.Text(t, "flash-warning"), "changed") {
		t.Errorf("a stale fix: %q", r.ErrorsText())
	}
	if r := admin.Submit("/doctor", "/doctor/unack", url.Values{"key": {key}}); r.StatusCode != http.StatusSeeOther {
		t.Errorf("unack: %d", r.StatusCode)
	}
	if r := admin.Submit("/doctor", "/doctor/unack", url.Values{"key": {key}}); r.StatusCode != http.StatusNotFound {
		t.Errorf("unack twice: %d", r.StatusCode)
	}
}
