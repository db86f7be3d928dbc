package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/views"
)

// APIError is the body of every failed /api request:
// {"error": {"status": 404, "kind": "not_found", "field": "", "message": "…"}}.
type APIError struct {
	Status    int    `json:"status"`
	Kind      string `json:"kind"`
	Field     string `json:"field,omitempty"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
}

// errorHandler is the application's one error handler. The status comes
// from handlers.StatusOf (one table from models.Kind to HTTP status). The
// body depends on who asked: a prefix's own renderer (Nova and Placement
// fault bodies), JSON for API clients, a fragment for htmx, or a friendly
// page for a person. Only server errors are logged in detail; their
// message is never shown.
func errorHandler(env *handlers.Env) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		status := handlers.StatusOf(err)
		reqID := requestID(c)
		// Log what was sent: an API's renderer knows its own errors'
		// statuses (a Placement 404 is not a server error).
		defer func() {
			if c.Response().Status >= 500 {
				env.Logger().Error("request failed", "err", models.Detail(err), "method", c.Request().Method,
					"path", c.Request().URL.Path, "request_id", reqID)
			}
		}()
		if r := env.ErrorRendererFor(c.Request().URL.Path); r != nil {
			if rerr := r(c, status, err); rerr == nil {
				return
			} else {
				env.Logger().Error("error renderer failed", "err", rerr, "path", c.Request().URL.Path)
			}
			if c.Response().Committed {
				return
			}
		}
		body := describe(err, status)
		body.RequestID = reqID
		var werr error
		switch {
		case c.Request().Method == http.MethodHead:
			werr = c.NoContent(status)
		case handlers.IsAPI(c) || wantsJSON(c):
			werr = c.JSON(status, map[string]APIError{"error": body})
		case handlers.IsHTMX(c):
			werr = handlers.Render(c, status, views.ErrorFragment(errorProps(body)))
		default:
			page := layout.Page(c, errorTitle(status), "")
			werr = handlers.Render(c, status, views.ErrorPage(page, errorProps(body)))
		}
		if werr != nil {
			env.Logger().Error("writing the error response", "err", werr, "path", c.Request().URL.Path)
		}
	}
}

// describe turns an error into what its client may see.
func describe(err error, status int) APIError {
	out := APIError{Status: status, Kind: kindName(status, err)}
	var he *echo.HTTPError
	switch {
	case models.Is(models.Unavailable, err):
		out.Message = "The database is unavailable or busy for a moment. Try again shortly."
	case status >= 500:
		out.Message = "Internal error: something went wrong on our side."
	case errors.As(err, &he):
		out.Message = httpErrorMessage(he)
	default:
		out.Field = models.FieldOf(err)
		var ce *models.Error
		if errors.As(err, &ce) && ce.Msg != "" {
			out.Message = ce.Msg
		} else {
			out.Message = err.Error()
		}
	}
	return out
}

func httpErrorMessage(he *echo.HTTPError) string {
	switch he.Code {
	case http.StatusNotFound:
		return "There is nothing at this address."
	case http.StatusMethodNotAllowed:
		return "This address does not accept that method."
	}
	if s, ok := he.Message.(string); ok && s != "" {
		return s
	}
	if he.Message != nil {
		return fmt.Sprint(he.Message)
	}
	return http.StatusText(he.Code)
}

// kindName is the error's kind as an identifier ("not_found"); for errors
// that carry no kind it is derived from the status.
func kindName(status int, err error) string {
	var ce *models.Error
	if errors.As(err, &ce) {
		return strings.ReplaceAll(ce.Kind.String(), " ", "_")
	}
	if k, ok := handlers.KindForStatus(status); ok {
		return strings.ReplaceAll(k.String(), " ", "_")
	}
	return strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_")
}

func wantsJSON(c echo.Context) bool {
	accept := c.Request().Header.Get(echo.HeaderAccept)
	return strings.Contains(accept, echo.MIMEApplicationJSON) && !strings.Contains(accept, echo.MIMETextHTML)
}

func errorTitle(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "That request was not understood"
	case http.StatusUnauthorized:
		return "Please sign in"
	case http.StatusForbidden:
		return "Not allowed"
	case http.StatusNotFound:
		return "Not found"
	case http.StatusConflict:
		return "Someone else changed this first"
	case http.StatusNotAcceptable:
		return "Not acceptable"
	case http.StatusServiceUnavailable:
		return "Unavailable for a moment"
	}
	if status >= 500 {
		return "Internal error"
	}
	return http.StatusText(status)
}

func errorProps(b APIError) views.ErrorProps {
	msg := b.Message
	if b.Field != "" {
		msg = b.Field + ": " + msg
	}
	return views.ErrorProps{Status: b.Status, Title: errorTitle(b.Status), Message: msg, RequestID: b.RequestID}
}
