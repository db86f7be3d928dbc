package handlers

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"corral/models"
)

// CSRFToken is the token console forms must send back (in the _csrf field,
// or the X-CSRF-Token header for htmx).
func CSRFToken(c echo.Context) string {
	t, _ := c.Get(ctxCSRF).(string)
	return t
}

// Render writes a templ component as the response with the given status.
func Render(c echo.Context, status int, comp templ.Component) error {
	buf := templ.GetBuffer()
	defer templ.ReleaseBuffer(buf)
	if err := comp.Render(c.Request().Context(), buf); err != nil {
		return err
	}
	// Pages differ by session and by whether htmx asked for a fragment.
	h := c.Response().Header()
	h.Add(echo.HeaderVary, "HX-Request")
	h.Set(echo.HeaderCacheControl, "no-store")
	return c.HTMLBlob(status, buf.Bytes())
}

// SeeOther ends a form submission with a redirect to url (Post/Redirect/Get).
// htmx requests get an HX-Redirect instead, which htmx follows with a full
// page load, so flashes show the same way with and without JavaScript.
func SeeOther(c echo.Context, url string) error {
	if IsHTMX(c) {
		c.Response().Header().Set("HX-Redirect", url)
		return c.NoContent(http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, url)
}

// FormErrors turns a refused submission into messages for the form: a
// corral error naming a field goes next to that field, any other refusal
// goes under "". ok is false for internal errors, which the handler should
// return instead of showing.
func FormErrors(err error) (errs map[string]string, ok bool) {
	if err == nil {
		return nil, true
	}
	if models.KindOf(err) == models.Internal {
		return nil, false
	}
	var msg string
	var ce *models.Error
	if errors.As(err, &ce) && ce.Msg != "" {
		msg = ce.Msg
	} else {
		msg = err.Error()
	}
	return map[string]string{models.FieldOf(err): msg}, true
}

// Page bounds for lists.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// Paging reads offset and limit from the query string, clamped to sane
// values: a bad number falls back to the default rather than failing.
func Paging(c echo.Context, defLimit int) (offset, limit int) {
	if defLimit <= 0 {
		defLimit = DefaultPageSize
	}
	offset, _ = strconv.Atoi(c.QueryParam("offset"))
	if offset < 0 {
		offset = 0
	}
	limit, err := strconv.Atoi(c.QueryParam("limit"))
	if err != nil || limit <= 0 {
		limit = defLimit
	}
	if limit > MaxPageSize {
		limit = MaxPageSize
	}
	return offset, limit
}

// OnlyFields keeps the messages for fields the form shows and moves any
// other under "", so that no message is lost for want of a place.
func OnlyFields(errs map[string]string, fields ...string) map[string]string {
	out := make(map[string]string, len(errs))
	for k, v := range errs {
		known := k == ""
		for _, f := range fields {
			known = known || k == f
		}
		if !known {
			k = ""
		}
		if prev := out[k]; prev != "" {
			v = prev + " " + v
		}
		out[k] = v
	}
	return out
}
