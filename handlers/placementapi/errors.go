package placementapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
)

// Placement's error codes (placement/errors.py), sent from microversion 1.23.
const (
	CodeUndefined          = "placement.undefined_code"
	CodeDuplicateName      = "placement.duplicate_name"
	CodeConcurrentUpdate   = "placement.concurrent_update"
	CodeCannotDeleteParent = "placement.resource_provider.cannot_delete_parent"
	CodeProviderInUse      = "placement.resource_provider.inuse"
)

// Error is one Placement error response. Msg is the message Placement puts
// after webob's explanation in "detail".
type Error struct {
	Status int
	Msg    string
	Code   string // "" is placement.undefined_code
	// Allow lists the methods a 405 allows.
	Allow string
	// noVersion marks a failed microversion negotiation: the body has no
	// code, and a 406 carries min_version/max_version.
	noVersion bool
	rangeInfo bool
}

func (e *Error) Error() string { return e.Msg }

// explanations are webob's per-status texts, which Placement puts first in
// every error's detail.
var explanations = map[int]string{
	http.StatusBadRequest:            "The server could not comply with the request since it is either malformed or otherwise incorrect.",
	http.StatusUnauthorized:          "This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.",
	http.StatusForbidden:             "Access was denied to this resource.",
	http.StatusNotFound:              "The resource could not be found.",
	http.StatusConflict:              "There was a conflict when trying to complete your request.",
	http.StatusRequestEntityTooLarge: "The body of your request was too large for this server.",
	http.StatusInternalServerError:   "The server has either erred or is incapable of performing the requested operation.",
	http.StatusServiceUnavailable:    "The server is currently unavailable. Please try again at a later time.",
}

// detail renders webob's detail text for e at request method m.
func (e *Error) detail(method, requestType string) string {
	switch e.Status {
	case http.StatusMethodNotAllowed:
		return "The method " + method + " is not allowed for this resource. \n\n " + e.Msg
	case http.StatusUnsupportedMediaType:
		return "The request media type " + requestType + " is not supported by this server. \n\n " + e.Msg
	case http.StatusNotAcceptable:
		return "The resource could not be generated that was acceptable to your browser (content of type application/json. \n\n " + e.Msg
	}
	exp, ok := explanations[e.Status]
	if !ok {
		exp = http.StatusText(e.Status) + "."
	}
	return exp + "\n\n " + e.Msg + "  "
}

type errorItem struct {
	Status     int    `json:"status"`
	Title      string `json:"title"`
	Detail     string `json:"detail"`
	Code       string `json:"code,omitempty"`
	RequestID  string `json:"request_id,omitempty"`
	MaxVersion string `json:"max_version,omitempty"`
	MinVersion string `json:"min_version,omitempty"`
}

// write answers with Placement's error body.
func (api *API) write(c echo.Context, e *Error) error {
	req := c.Request()
	ct := mediaType(req.Header.Get(echo.HeaderContentType))
	if ct == "" {
		ct = "None" // webob's words for a missing Content-Type
	}
	item := errorItem{
		Status: e.Status,
		Title:  http.StatusText(e.Status),
		Detail: e.detail(req.Method, ct),
	}
	if id, ok := c.Get(ctxRequestID).(string); ok {
		item.RequestID = id
	}
	if e.noVersion {
		if e.rangeInfo {
			item.MaxVersion, item.MinVersion = MaxVersion.String(), MinVersion.String()
		}
	} else if version(c).AtLeast(23) {
		item.Code = e.Code
		if item.Code == "" {
			item.Code = CodeUndefined
		}
	}
	if e.Allow != "" {
		c.Response().Header().Set(echo.HeaderAllow, e.Allow)
	}
	b, err := json.Marshal(map[string][]errorItem{"errors": {item}})
	if err != nil {
		return err
	}
	return c.Blob(e.Status, echo.MIMEApplicationJSON, b)
}

// renderError is the app-wide error hook for paths under /placement:
// routing errors, authentication failures and anything a handler returns.
func (api *API) renderError(c echo.Context, status int, err error) error {
	if c.Response().Committed {
		return nil
	}
	return api.write(c, api.asError(c, status, err))
}

// asError turns any error into a Placement error.
func (api *API) asError(c echo.Context, status int, err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return &Error{Status: http.StatusNotFound}
		case http.StatusMethodNotAllowed:
			return &Error{Status: http.StatusMethodNotAllowed, Allow: c.Response().Header().Get(echo.HeaderAllow),
				Msg: "The method specified is not allowed for this resource."}
		}
		msg := http.StatusText(he.Code)
		if s, ok := he.Message.(string); ok && s != "" {
			msg = s
		}
		return &Error{Status: he.Code, Msg: msg}
	}
	if status == 0 {
		status = handlers.StatusOf(err)
	}
	if status >= 500 && !models.Is(models.Unavailable, err) {
		api.env.Logger().Error("placement API", "path", c.Request().URL.Path, "err", err)
		return &Error{Status: http.StatusInternalServerError, Msg: "Internal error: something went wrong on our side."}
	}
	msg := err.Error()
	var ce *models.Error
	if errors.As(err, &ce) && ce.Msg != "" {
		msg = ce.Msg
		if ce.Kind == models.Unauthorized {
			msg = strings.TrimSuffix(msg, ".") + "."
		}
	}
	return &Error{Status: status, Msg: msg}
}

func badRequest(msg string) *Error { return &Error{Status: http.StatusBadRequest, Msg: msg} }

func notFound(msg string) *Error { return &Error{Status: http.StatusNotFound, Msg: msg} }

// mediaType is a Content-Type without its parameters, lower-cased.
func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}
