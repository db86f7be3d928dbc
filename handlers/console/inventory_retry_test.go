package console_test

import (
	"context"
	"net/url"
	"testing"
)

// A refused inventory comes back with the values typed in its form, and
// every field of the form is a styled text or number input.
func TestInventoryFormKeepsTypedValuesAfterARefusal(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)
	p, err := a.Store.GetProvider(context.Background(), "cn1")
	if err != nil {
		t.Fatal(err)
	}
	page := "/providers/" + p.UUID
	r := c.Follow(page, page+"/inventory", url.Values{"generation": {gen(p.Generation)}, "class": {"CUSTOM_X"}, "total": {"12"},
		"reserved": {"3"}, "allocation_ratio": {"lots"}})
	if r.Text(t, "flash-error") == "" {
		t.Fatalf("an allocation ratio of %q was not refused", "lots")
	}
	form := r.Doc(t).Find(sel("inventory-form"))
	for name, want := range map[string]string{"class": "CUSTOM_X", "total": "12", "reserved": "3", "allocation_ratio": "lots"} {
		in := form.Find(`input[name="` + name + `"]`)
		if got := in.AttrOr("value", ""); got != want {
			t.Errorf("%s after the refusal: %q, want %q", name, got, want)
		}
		if typ := in.AttrOr("type", ""); typ != "text" && typ != "number" {
			t.Errorf("%s is an input of type %q, which the stylesheet does not style", name, typ)
		}
	}
	// A plain visit shows the defaults.
	fresh := c.Get(page).Doc(t).Find(sel("inventory-form"))
	if got := fresh.Find(`input[name="class"]`).AttrOr("value", ""); got != "" {
		t.Errorf("class on a fresh page: %q", got)
	}
	if got := fresh.Find(`input[name="allocation_ratio"]`).AttrOr("value", ""); got != "1.0" {
		t.Errorf("allocation ratio on a fresh page: %q", got)
	}
}
