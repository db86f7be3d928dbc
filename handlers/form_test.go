package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/labstack/echo/v4"

	"corral/models"
)

func TestFormErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want map[string]string
		ok   bool
	}{
		{"field error", models.E(models.Invalid, "name", "a user needs a name"), map[string]string{"name": "a user needs a name"}, true},
		{"wrapped conflict", models.Wrap("store.CreateUser", models.E(models.Conflict, "name", "taken")), map[string]string{"name": "taken"}, true},
		{"no field", models.E(models.Forbidden, "", "not yours"), map[string]string{"": "not yours"}, true},
		{"internal", errors.New("disk on fire"), nil, false},
		{"nil", nil, nil, true},
	}
	for _, tc := range cases {
		got, ok := FormErrors(tc.err)
		if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: FormErrors = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestOnlyFields(t *testing.T) {
	got := OnlyFields(map[string]string{"name": "a", "project_id": "b", "": "c"}, "name")
	// Map order decides which message comes first under "".
	if len(got) != 2 || got["name"] != "a" || (got[""] != "b c" && got[""] != "c b") {
		t.Errorf(`OnlyFields = %v, want name: a and "": b and c`, got)
	}
}

func TestPaging(t *testing.T) {
	cases := []struct {
		query         string
		offset, limit int
	}{
		{"", 0, 50},
		{"offset=100&limit=10", 100, 10},
		{"offset=-5&limit=0", 0, 50},
		{"offset=x&limit=y", 0, 50},
		{"limit=100000", 0, MaxPageSize},
	}
	e := echo.New()
	for _, tc := range cases {
		c := e.NewContext(httptest.NewRequest(http.MethodGet, "/?"+tc.query, nil), httptest.NewRecorder())
		if o, l := Paging(c, 0); o != tc.offset || l != tc.limit {
			t.Errorf("Paging(%q) = %d, %d; want %d, %d", tc.query, o, l, tc.offset, tc.limit)
		}
	}
}

func TestErrorRendererFor(t *testing.T) {
	env := &Env{}
	var hit string
	env.RenderErrorsUnder("/compute", func(echo.Context, int, error) error { hit = "compute"; return nil })
	env.RenderErrorsUnder("/compute/v2.1/special/", func(echo.Context, int, error) error { hit = "special"; return nil })
	cases := map[string]string{
		"/compute":                      "compute",
		"/compute/v2.1/os-aggregates":   "compute",
		"/compute/v2.1/special/x":       "special",
		"/computers":                    "",
		"/placement/resource_providers": "",
	}
	for path, want := range cases {
		hit = ""
		if r := env.ErrorRendererFor(path); r != nil {
			r(nil, 0, nil)
		}
		if hit != want {
			t.Errorf("%s: renderer %q, want %q", path, hit, want)
		}
	}
}

func TestStatusOf(t *testing.T) {
	if got := StatusOf(echo.NewHTTPError(http.StatusTeapot, "x")); got != http.StatusTeapot {
		t.Errorf("HTTPError status = %d", got)
	}
	if got := StatusOf(errors.New("plain")); got != http.StatusInternalServerError {
		t.Errorf("plain error status = %d", got)
	}
	wrapped := models.Wrap("test", fmt.Errorf("wrapped: %w", echo.NewHTTPError(http.StatusTooManyRequests, "x")))
	if got := StatusOf(wrapped); got != http.StatusTooManyRequests {
		t.Errorf("wrapped HTTPError status = %d", got)
	}
	for k := models.Internal; k <= models.OverQuota; k++ {
		s, ok := kindStatus[k]
		if !ok {
			t.Errorf("kind %s has no status", k)
		}
		if got := StatusOf(models.Wrap("test", &models.Error{Kind: k, Msg: "m"})); got != s {
			t.Errorf("StatusOf(%s) = %d, want %d", k, got, s)
		}
		if k == models.OverQuota {
			continue
		}
		if back, ok := KindForStatus(s); !ok || back != k {
			t.Errorf("KindForStatus(%d) = %s, %v; want %s", s, back, ok, k)
		}
	}
}
