package views

import (
	"context"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/models"
)

func TestPager(t *testing.T) {
	q := url.Values{"actor": {"alice"}, "offset": {"50"}}
	cases := []struct {
		p                Pager
		from, to         int
		prev, next       bool
		prevURL, nextURL string
	}{
		{Pager{Offset: 0, Limit: 50, Total: 0, Path: "/audit"}, 0, 0, false, false, "/audit?limit=50", "/audit?limit=50&offset=50"},
		{Pager{Offset: 0, Limit: 50, Total: 120, Path: "/audit", Query: q}, 1, 50, false, true, "/audit?actor=alice&limit=50", "/audit?actor=alice&limit=50&offset=50"},
		{Pager{Offset: 100, Limit: 50, Total: 120, Path: "/audit", Query: q}, 101, 120, true, false, "/audit?actor=alice&limit=50&offset=50", "/audit?actor=alice&limit=50&offset=150"},
		{Pager{Offset: 20, Limit: 50, Total: 120, Path: "/x"}, 21, 70, true, true, "/x?limit=50", "/x?limit=50&offset=70"},
	}
	for _, tc := range cases {
		p := tc.p
		if p.From() != tc.from || p.To() != tc.to || p.HasPrev() != tc.prev || p.HasNext() != tc.next {
			t.Errorf("%+v: from %d to %d prev %v next %v; want %d %d %v %v", p, p.From(), p.To(), p.HasPrev(), p.HasNext(), tc.from, tc.to, tc.prev, tc.next)
		}
		if p.PrevURL() != tc.prevURL || p.NextURL() != tc.nextURL {
			t.Errorf("%+v: prev %q next %q; want %q %q", p, p.PrevURL(), p.NextURL(), tc.prevURL, tc.nextURL)
		}
	}
}

func render(t *testing.T, c interface {
	Render(context.Context, io.Writer) error
}) *goquery.Document {
	t.Helper()
	var b strings.Builder
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	d, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestFieldShowsItsError(t *testing.T) {
	d := render(t, Field(FieldProps{Label: "Name", Name: "name", Value: "x<y", Error: "taken"}))
	in := d.Find(`input[name="name"]`)
	if v, _ := in.Attr("value"); v != "x<y" {
		t.Errorf("value = %q", v)
	}
	if inv, _ := in.Attr("aria-invalid"); inv != "true" {
		t.Error("the input is not marked invalid")
	}
	if got := d.Find(`[data-testid="error-name"]`).Text(); got != "taken" {
		t.Errorf("error = %q", got)
	}
	if d.Find(".has-error").Length() != 1 {
		t.Error("the field is not marked has-error")
	}
	d = render(t, Field(FieldProps{Label: "Role", Name: "role", Type: "select", Value: "member", Options: []Option{{Value: "admin", Label: "admin"}, {Value: "member", Label: "member"}, {Value: "reader", Label: "reader"}}}))
	if v, _ := d.Find(`option[selected]`).Attr("value"); v != "member" {
		t.Errorf("selected option = %q", v)
	}
}

func TestNavHidesAdminPages(t *testing.T) {
	for _, tc := range []struct {
		role  models.Role
		users bool
	}{{models.RoleAdmin, true}, {models.RoleMember, false}, {models.RoleReader, false}} {
		d := render(t, Layout(Page{Title: "t", Active: "dashboard", User: &models.User{Name: "u", Role: tc.role}, CSRF: "tok"}))
		if got := d.Find(`[data-testid="nav-users"]`).Length() > 0; got != tc.users {
			t.Errorf("%s sees Users: %v, want %v", tc.role, got, tc.users)
		}
		if cur, _ := d.Find(`[aria-current="page"]`).Attr("data-testid"); cur != "nav-dashboard" {
			t.Errorf("current page marked %q", cur)
		}
		if h, _ := d.Find("body").Attr("hx-headers"); h != `{"X-CSRF-Token":"tok"}` {
			t.Errorf("hx-headers = %q", h)
		}
	}
}
