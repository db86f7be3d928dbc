package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
)

// The boundary every request crosses before a handler sees it: a body
// limit set before anything reads the body, and a check that every path,
// query, form and JSON string value is text a database can store.

// Value limits, in bytes: a path segment or query value, a form value, a
// JSON string. Fields with a tighter limit of their own (names: 255) are
// checked where they are stored.
const (
	maxPathValue  = 1024
	maxQueryValue = 8192
	maxFormValue  = 1 << 20
	maxJSONString = 64 << 10
)

// searchParams are the query parameters that become a substring search.
var searchParams = map[string]bool{"q": true, "search": true}

// limitBody refuses a declared length over the route's limit (see
// bodyLimitFor) before any byte is read, and caps what an undeclared
// (chunked) body can deliver.
func limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Body == nil || r.Body == http.NoBody {
			return next(c)
		}
		limit := bodyLimitFor(c)
		if r.ContentLength > limit {
			// The rest of the body is never read: close the connection
			// rather than drain it.
			c.Response().Header().Set(echo.HeaderConnection, "close")
			if limit == 0 {
				return echo.NewHTTPError(http.StatusRequestEntityTooLarge,
					fmt.Sprintf("The request has a body of %d bytes; %s %s takes none.", r.ContentLength, r.Method, c.Path()))
			}
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge,
				fmt.Sprintf("The request body is %d bytes; this address takes at most %d.", r.ContentLength, limit))
		}
		r.Body = http.MaxBytesReader(c.Response(), r.Body, limit)
		return next(c)
	}
}

// tokenAPIsAuthenticateFirst answers an anonymous call to the Nova or
// Placement API with their 401 before the body is limited or checked, as
// upstream's auth middleware does: a caller without a token learns that,
// not what is wrong with a body nobody will read. The version documents
// stay open.
func tokenAPIsAuthenticateFirst(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if handlers.CurrentUser(c) == nil && needsToken(c.Request().URL.Path) {
			if r := c.Request(); r.Body != nil && r.Body != http.NoBody {
				c.Response().Header().Set(echo.HeaderConnection, "close")
			}
			return echo.NewHTTPError(http.StatusUnauthorized, "Authentication required: send an API token as X-Auth-Token.")
		}
		return next(c)
	}
}

// needsToken tells the Nova and Placement paths that need a token: all but
// their version documents.
func needsToken(path string) bool {
	switch path {
	case "/placement", "/placement/", "/compute", "/compute/", "/compute/v2.1", "/compute/v2.1/":
		return false
	}
	return strings.HasPrefix(path, "/placement/") || strings.HasPrefix(path, "/compute/")
}

// checkInput refuses NUL bytes, invalid UTF-8 and over-long values in
// path parameters, query values, form values and JSON strings with a 400
// naming the field. PostgreSQL cannot store a NUL and refuses invalid
// UTF-8, so without this such input was a 500 there and stored as is on
// SQLite.
func checkInput(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := checkRequestInput(c); err != nil {
			return err
		}
		return next(c)
	}
}

func checkRequestInput(c echo.Context) error {
	for i, name := range c.ParamNames() {
		if i >= len(c.ParamValues()) {
			break
		}
		v := c.ParamValues()[i]
		if name == "*" {
			name = "path"
		}
		if err := checkValue("path parameter", name, v, maxPathValue); err != nil {
			return err
		}
	}
	if err := checkValue("path", "", c.Request().URL.Path, 8*maxPathValue); err != nil {
		return err
	}
	for name, vs := range c.Request().URL.Query() {
		if err := checkValue("query parameter name", "", name, maxPathValue); err != nil {
			return err
		}
		limit := maxQueryValue
		if searchParams[name] {
			limit = 255
		}
		for _, v := range vs {
			if err := checkValue("query parameter", name, v, limit); err != nil {
				return err
			}
		}
	}
	r := c.Request()
	if r.Body == nil || r.Body == http.NoBody || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	switch {
	case ct == echo.MIMEApplicationForm || ct == echo.MIMEMultipartForm:
		form, err := c.FormParams()
		if err != nil {
			var mb *http.MaxBytesError
			if errors.As(err, &mb) {
				return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("The request body is over %d bytes.", mb.Limit))
			}
			return models.E(models.Invalid, "body", "the form cannot be read: %v", err)
		}
		for name, vs := range form {
			if err := checkValue("form field name", "", name, maxPathValue); err != nil {
				return err
			}
			for _, v := range vs {
				if err := checkValue("form field", name, v, maxFormValue); err != nil {
					return err
				}
			}
		}
	case ct == echo.MIMEApplicationJSON || strings.HasSuffix(ct, "+json"):
		b, err := io.ReadAll(r.Body)
		if err != nil {
			var mb *http.MaxBytesError
			if errors.As(err, &mb) {
				return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("The request body is over %d bytes.", mb.Limit))
			}
			return models.E(models.Invalid, "body", "the body cannot be read")
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		if err := checkJSON(b); err != nil {
			return err
		}
	}
	return nil
}

// checkValue is the rule for one value.
// checkValue checks the value of the field named kind and name ("query
// parameter", "name"); the name is put together only for a refusal.
func checkValue(kind, name, v string, limit int) error {
	ok := len(v) <= limit && utf8.ValidString(v) && strings.IndexByte(v, 0) < 0
	if ok {
		return nil
	}
	field := kind
	if name != "" {
		field += " " + name
	}
	// The message names the field itself: the Nova and Placement fault
	// bodies carry only the message.
	switch {
	case !utf8.ValidString(v):
		return models.E(models.Invalid, field, "%s is not valid UTF-8", field)
	case strings.IndexByte(v, 0) >= 0:
		return models.E(models.Invalid, field, "%s contains a NUL character", field)
	case len(v) > limit:
		return models.E(models.Invalid, field, "%s is longer than %d bytes", field, limit)
	}
	return nil
}

// checkJSON walks a JSON body and checks every string (keys too), naming
// the field by its path ("server_group.name", "aggregates[2]"). A body
// that is not JSON is left to the handler, which words that in its API's
// dialect; invalid UTF-8 is refused here, as the decoder would silently
// replace it.
func checkJSON(b []byte) error {
	if !utf8.Valid(b) {
		return models.E(models.Invalid, "body", "the body is not valid UTF-8")
	}
	if !bytes.Contains(b, []byte(`\u`)) && !bytes.Contains(b, []byte(`\U`)) && len(b) <= maxJSONString {
		return nil // no escape can hide a NUL, and no string can be too long
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		object bool
		key    string
		index  int
		expect bool // in an object: the next string is a key
	}
	var stack []frame
	path := func() string {
		var sb strings.Builder
		for _, f := range stack {
			if f.object {
				if sb.Len() > 0 {
					sb.WriteByte('.')
				}
				sb.WriteString(f.key)
			} else {
				sb.WriteString("[" + strconv.Itoa(f.index) + "]")
			}
		}
		if sb.Len() == 0 {
			return "body"
		}
		return sb.String()
	}
	afterValue := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].expect = true
			} else {
				stack[n-1].index++
			}
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{object: true, expect: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				afterValue()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expect {
				stack[n-1].key, stack[n-1].expect = t, false
				if err := checkValue(path(), "", t, maxPathValue); err != nil {
					return err
				}
				continue
			}
			if err := checkValue(path(), "", t, maxJSONString); err != nil {
				return err
			}
			afterValue()
		default:
			afterValue()
		}
	}
}
