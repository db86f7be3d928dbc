package compute

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
)

// API serves the Nova-compatible endpoints from one Env.
type API struct {
	env *handlers.Env
}

const ctxVersion = "compute.version"

// maxBody bounds request bodies; Nova's own limit is 112 KiB.
const maxBody = 112 * 1024

// Register mounts the compute API on g (the "/compute" group): the version
// documents, then /v2.1/… and /v2.1/{project_id}/… for os-server-groups,
// os-aggregates, os-quota-sets and limits. Errors anywhere under /compute
// are rendered as Nova faults by one renderer (renderError): handlers and
// middleware return them (a *Fault, a models.Error, any error).
func Register(g *echo.Group, env *handlers.Env) {
	api := &API{env: env}
	env.RenderErrorsUnder("/compute", api.renderError)

	g.GET("", api.versions, api.faults)
	g.GET("/", api.versions, api.faults)

	v := g.Group("/v2.1", api.faults, api.negotiate)
	v.GET("", api.version)
	v.GET("/", api.version)

	authed := v.Group("", api.authenticate)
	for _, prefix := range []string{"", "/:project_id"} {
		authed.GET(prefix+"/os-server-groups", api.listServerGroups)
		handlers.Body(handlers.NovaJSON, authed.POST(prefix+"/os-server-groups", api.createServerGroup))
		authed.GET(prefix+"/os-server-groups/:id", api.showServerGroup)
		authed.DELETE(prefix+"/os-server-groups/:id", api.deleteServerGroup)

		authed.GET(prefix+"/os-aggregates", api.listAggregates)
		handlers.Body(handlers.NovaJSON, authed.POST(prefix+"/os-aggregates", api.createAggregate))
		authed.GET(prefix+"/os-aggregates/:id", api.showAggregate)
		handlers.Body(handlers.NovaJSON, authed.PUT(prefix+"/os-aggregates/:id", api.updateAggregate))
		authed.DELETE(prefix+"/os-aggregates/:id", api.deleteAggregate)
		handlers.Body(handlers.NovaJSON, authed.POST(prefix+"/os-aggregates/:id/action", api.aggregateAction))

		authed.GET(prefix+"/os-quota-sets/:id", api.showQuotaSet)
		handlers.Body(handlers.NovaJSON, authed.PUT(prefix+"/os-quota-sets/:id", api.updateQuotaSet))
		authed.DELETE(prefix+"/os-quota-sets/:id", api.deleteQuotaSet)
		authed.GET(prefix+"/os-quota-sets/:id/detail", api.detailQuotaSet)
		authed.GET(prefix+"/os-quota-sets/:id/defaults", api.defaultQuotaSet)
		authed.GET(prefix+"/limits", api.showLimits)
	}
	// Keystone- and Neutron-shaped answers OpenStackClient's quota
	// commands need (quotas_projects.go).
	authed.GET("/projects", api.listProjects)
	authed.GET("/projects/:id", api.showProject)
	authed.GET("/v2.0/quotas/:id", api.showNetworkQuota)
}

// negotiate decides the microversion and sets the version headers on every
// response, faults included. A malformed version is a 400 without version
// headers; an unsupported one a 406 that echoes it, as Nova does.
func (api *API) negotiate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, err := Negotiate(c.Request().Header)
		SetVersionHeaders(c.Response().Header(), v)
		if err != nil {
			return asFault(err)
		}
		c.Set(ctxVersion, v)
		return next(c)
	}
}

// projectInURL is nova's default [osapi_v21] project_id_regex.
var projectInURL = regexp.MustCompile(`^[0-9a-f\-]+$`)

// authenticate requires an API token (X-Auth-Token) and, when the URL
// carries a project id, that it is the token's project.
func (api *API) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	check := func(c echo.Context) error {
		u := handlers.CurrentUser(c)
		if u == nil {
			return faultf(http.StatusUnauthorized, "Authentication required: send an API token as X-Auth-Token.")
		}
		// As Nova (nova/api/openstack/wsgi.py), for every caller admins
		// included: the project in the URL is the token's, or a 400.
		// Nova routes only hex (Keystone-style) ids there, so another
		// segment is a 404; corral's projects may be named ("tA"), so the
		// caller's own project is routed whatever it looks like.
		if p := c.Param("project_id"); p != "" && p != u.ProjectID {
			if !projectInURL.MatchString(p) {
				return faultf(http.StatusNotFound, "The resource could not be found.")
			}
			return faultf(http.StatusBadRequest,
				"Malformed request URL: URL's project_id '"+p+"' doesn't match Context's project_id '"+u.ProjectID+"'")
		}
		return next(c)
	}
	return func(c echo.Context) error {
		// The app may already have authenticated the token; do it here
		// only when it has not, so the API also works mounted on its own.
		if handlers.CurrentUser(c) == nil && c.Request().Header.Get("X-Auth-Token") != "" && api.env.Store != nil {
			return api.env.TokenAuth(check)(c)
		}
		return check(c)
	}
}

func version(c echo.Context) Version {
	if v, ok := c.Get(ctxVersion).(Version); ok {
		return v
	}
	return MinVersion
}

func caller(c echo.Context) Caller {
	u := handlers.CurrentUser(c)
	if u == nil {
		return Caller{}
	}
	if p := handlers.CurrentPerson(c); p != nil {
		// Nova records the Keystone user's id, not its name.
		return Caller{UserID: p.UserID, ProjectID: u.ProjectID, Role: u.Role}
	}
	return Caller{UserID: u.Name, ProjectID: u.ProjectID, Role: u.Role}
}

// faults renders what the handlers below return, so that a client's
// mistake reaches the app's error handler (which would take a *Fault for a
// server error and log it) only when the response could not be written.
func (api *API) faults(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := next(c); err != nil {
			return api.renderError(c, 0, err)
		}
		return nil
	}
}

// renderError is the app-wide error hook for paths under /compute: routing
// errors (404, 405), authentication failures and anything a handler returns.
func (api *API) renderError(c echo.Context, status int, err error) error {
	if c.Response().Committed {
		return nil
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && m != "" {
			msg = m // the app's boundary words its refusals (401, 413) itself
		}
		switch he.Code {
		case http.StatusNotFound:
			msg = "The resource could not be found."
		case http.StatusMethodNotAllowed:
			msg = "The method specified is not allowed for this resource."
		}
		return writeFault(c, faultf(he.Code, msg))
	}
	f := asFault(err)
	if f.Status == http.StatusInternalServerError {
		api.env.Logger().Error("compute API", "path", c.Request().URL.Path, "err", err)
	}
	return writeFault(c, f)
}

// writeFault answers with Nova's fault body.
func writeFault(c echo.Context, f *Fault) error {
	h := c.Response().Header()
	if h.Get("Vary") == "" {
		SetVersionHeaders(h, Version{})
	}
	return c.Blob(f.Status, "application/json; charset=UTF-8", FaultBody(f.Status, f.Message))
}

// writeJSON answers 200 (or status) with v as JSON.
func writeJSON(c echo.Context, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Blob(status, "application/json", b)
}

func readBody(c echo.Context) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(c.Request().Body, maxBody+1))
	if err != nil {
		return nil, faultf(http.StatusBadRequest, "Malformed request body")
	}
	if len(b) > maxBody {
		return nil, faultf(http.StatusRequestEntityTooLarge, "Request is too large.")
	}
	return b, nil
}

// checkContentType refuses bodies declared as something other than JSON,
// as Nova does; like Nova it takes a missing type or text/plain (what many
// HTTP tools send by default) as JSON.
func checkContentType(c echo.Context) error {
	mt := strings.ToLower(strings.TrimSpace(strings.Split(c.Request().Header.Get("Content-Type"), ";")[0]))
	switch mt {
	case "", "text/plain", "application/json", "application/vnd.openstack.compute+json":
		return nil
	}
	return faultf(http.StatusUnsupportedMediaType, "Unsupported Content-Type")
}

// ---- version documents

const v21Updated = "2013-07-23T11:33:21Z"

func baseURL(c echo.Context) string {
	r := c.Request()
	scheme := c.Scheme()
	return scheme + "://" + r.Host + "/compute"
}

func (api *API) versions(c echo.Context) error {
	base := baseURL(c)
	body := doc{{"versions", []any{
		doc{
			{"id", "v2.0"}, {"status", "DEPRECATED"}, {"version", ""}, {"min_version", ""},
			{"updated", "2025-07-04T12:00:00Z"},
			{"links", []any{doc{{"rel", "self"}, {"href", base + "/v2/"}}}},
		},
		doc{
			{"id", "v2.1"}, {"status", "CURRENT"}, {"version", MaxVersion.String()}, {"min_version", MinVersion.String()},
			{"updated", v21Updated},
			{"links", []any{doc{{"rel", "self"}, {"href", base + "/v2.1/"}}}},
		},
	}}}
	return writeJSON(c, http.StatusOK, body)
}

func (api *API) version(c echo.Context) error {
	body := doc{{"version", doc{
		{"id", "v2.1"}, {"status", "CURRENT"}, {"version", MaxVersion.String()}, {"min_version", MinVersion.String()},
		{"updated", v21Updated},
		{"links", []any{
			doc{{"rel", "self"}, {"href", baseURL(c) + "/v2.1/"}},
			doc{{"rel", "describedby"}, {"type", "text/html"}, {"href", "http://docs.openstack.org/"}},
		}},
		{"media-types", []any{doc{{"base", "application/json"}, {"type", "application/vnd.openstack.compute+json;version=2.1"}}}},
	}}}
	return writeJSON(c, http.StatusOK, body)
}

// storeFault gives a store error Nova's wording for a missing object;
// other errors go to the renderer as they are.
func storeFault(err error, notFound func() error) error {
	if models.KindOf(err) == models.NotFound && notFound != nil {
		return notFound()
	}
	return err
}
