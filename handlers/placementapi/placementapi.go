// Package placementapi serves corral's Placement-compatible API under
// /placement: the version document, resource providers (list, show, create,
// update, delete), their aggregates and traits, with Placement's
// microversions (1.0 … 1.39), query validation, error bodies and codes, so
// that osc-placement, gophercloud and nova's report client work unchanged.
//
// Reads are answered from the filtering core's snapshot (member_of through
// models/placement's parser and its Direct mode, as upstream's
// GET /resource_providers does); writes go through the store, which keeps
// generations, the audit log and the revision that invalidates the snapshot.
package placementapi

import (
	"encoding/hex"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
	"corral/models/placement"
	"corral/models/scheduling"
)

// MinVersion and MaxVersion bound the microversions served (Placement 8.0.0
// and upstream HEAD both stop at 1.39).
var (
	MinVersion = placement.V(0)
	MaxVersion = placement.Latest
)

// API serves the Placement-compatible endpoints from one Env.
type API struct {
	env *handlers.Env
	// enc holds the current snapshot's providers encoded as JSON.
	enc atomic.Pointer[encodedProviders]
	// large bounds the large lists written at once.
	large *largeLimit
	// answers are recent small lists, ready to send again.
	answers answerCache
	// cloudSnap is the live snapshot with the cloud's generations, when
	// corral is connected to a cloud (cloudgens.go).
	cloudSnap atomic.Pointer[cloudSnapshot]
}

// Large lists: as many written at once as there are processors; the others
// wait in line for up to LargeListWait, then get a 503 with Retry-After.
var (
	LargeListsAtOnce = runtime.GOMAXPROCS(0)
	LargeListWait    = 10 * time.Second
)

// Context keys.
const (
	ctxVersion   = "placementapi.version"
	ctxRequestID = "placementapi.request_id"
)

// Header names, as Placement sends them.
const (
	headerVersion   = "OpenStack-API-Version"
	headerRequestID = "X-Openstack-Request-Id"
	serviceType     = "placement"
)

// maxBody bounds request bodies; provider and aggregate bodies are tiny.
const maxBody = 1 << 20

// Request ids and new providers' uuids come from a pool of random bytes
// refilled in bulk, not from one read of the system's randomness each.
func init() { uuid.EnableRandPool() }

// New returns the API on env's store.
func New(env *handlers.Env) *API {
	return &API{env: env, large: newLargeLimit(max(LargeListsAtOnce, 1), LargeListWait)}
}

// Register mounts the API on g (the "/placement" group). Errors anywhere
// under /placement are rendered as Placement error bodies.
func Register(g *echo.Group, env *handlers.Env) *API {
	api := New(env)
	env.RenderErrorsUnder("/placement", api.renderError)
	g.Use(api.negotiate)

	g.GET("", api.home)
	g.GET("/", api.home)

	read := api.requireRole(models.RoleReader, "")
	admin := func(policy string) echo.MiddlewareFunc { return api.requireRole(models.RoleAdmin, policy) }
	route(g, "/resource_providers", []method{
		{http.MethodGet, api.listProviders, read},
		{http.MethodPost, api.createProvider, admin("resource_providers:create")},
	})
	route(g, "/resource_providers/:uuid", []method{
		{http.MethodGet, api.showProvider, read},
		{http.MethodDelete, api.deleteProvider, admin("resource_providers:delete")},
		{http.MethodPut, api.updateProvider, admin("resource_providers:update")},
	})
	route(g, "/resource_providers/:uuid/aggregates", []method{
		{http.MethodGet, api.getAggregates, read},
		{http.MethodPut, api.setAggregates, admin("resource_providers:aggregates:update")},
	})
	route(g, "/resource_providers/:uuid/traits", []method{
		{http.MethodGet, api.getTraits, read},
		{http.MethodPut, api.setProviderTraits, admin("resource_providers:traits:update")},
		{http.MethodDelete, api.deleteProviderTraits, admin("resource_providers:traits:delete")},
	})
	api.registerResources(g, read, admin)
	return api
}

type method struct {
	name    string
	handler echo.HandlerFunc
	mw      echo.MiddlewareFunc
}

// route registers a path's methods and, as Placement's router does, a 405
// naming the allowed methods for every other one; it declares the path's
// body limit (handlers.PlacementJSON).
func route(g *echo.Group, path string, methods []method) {
	names := make([]string, len(methods))
	for i, m := range methods {
		names[i] = m.name
	}
	allow := strings.Join(names, ", ")
	every := g.Any(path, func(c echo.Context) error {
		return &Error{Status: http.StatusMethodNotAllowed, Allow: allow,
			Msg: "The method specified is not allowed for this resource."}
	})
	// The path answers every method, so its body limit is declared for
	// every method: Placement's one limit.
	handlers.BodyAnyMethod(handlers.PlacementJSON, every[0].Path)
	for _, m := range methods {
		g.Add(m.name, path, m.handler, m.mw)
	}
}

// negotiate reads the microversion, sets the response's version headers and
// a request id. A malformed version is a 400 and an unsupported one a 406,
// both without version headers, as Placement answers.
func (api *API) negotiate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		reqID := newRequestID()
		c.Set(ctxRequestID, reqID)
		h := c.Response().Header()
		h[canonicalRequestID] = []string{reqID}
		v, perr := ParseVersionHeader(c.Request().Header.Values(headerVersion))
		if perr != nil {
			return api.write(c, perr)
		}
		c.Set(ctxVersion, v)
		h[canonicalVersion] = versionHeader(v)
		h[echo.HeaderVary] = append(h[echo.HeaderVary], varyVersion...)
		return next(c)
	}
}

// The response headers every answer carries, canonical and shared: each a
// slice with no room to grow, so that Add copies it (see web's
// securityHeaderValues).
var (
	canonicalRequestID = http.CanonicalHeaderKey(headerRequestID)
	canonicalVersion   = http.CanonicalHeaderKey(headerVersion)
	varyVersion        = []string{strings.ToLower(headerVersion)}[:1:1]
	versionHeaders     = func() [][]string {
		out := make([][]string, MaxVersion.Minor+1)
		for m := range out {
			out[m] = []string{serviceType + " " + placement.V(m).String()}[:1:1]
		}
		return out
	}()
)

func versionHeader(v placement.Version) []string {
	if v.Minor >= 0 && v.Minor < len(versionHeaders) {
		return versionHeaders[v.Minor]
	}
	return []string{serviceType + " " + v.String()}
}

// newRequestID is "req-" and a random uuid, as Placement's request ids.
func newRequestID() string {
	u := uuid.New()
	var b [4 + 36]byte
	copy(b[:], "req-")
	hex.Encode(b[4:12], u[0:4])
	b[12] = '-'
	hex.Encode(b[13:17], u[4:6])
	b[17] = '-'
	hex.Encode(b[18:22], u[6:8])
	b[22] = '-'
	hex.Encode(b[23:27], u[8:10])
	b[27] = '-'
	hex.Encode(b[28:], u[10:])
	return string(b[:])
}

// ParseVersionHeader picks the placement entry out of OpenStack-API-Version
// header values ("placement 1.14", "compute 2.1, placement latest"). No
// entry means 1.0. Errors are Placement's: 400 for a malformed version, 406
// for one outside MinVersion…MaxVersion.
func ParseVersionHeader(values []string) (placement.Version, *Error) {
	raw := ""
	found := false
	for _, hv := range values {
		for rest := hv; rest != ""; {
			var part string
			part, rest, _ = strings.Cut(rest, ",")
			if f, n := twoFields(part); n == 2 && strings.EqualFold(f[0], serviceType) {
				raw, found = f[1], true
			}
		}
	}
	if !found {
		return MinVersion, nil
	}
	if raw == "latest" {
		return MaxVersion, nil
	}
	v, err := placement.ParseVersion(raw)
	if err != nil {
		return placement.Version{}, &Error{Status: http.StatusBadRequest, noVersion: true,
			Msg: "Invalid microversion: invalid version string: " + raw}
	}
	if v.Major != MaxVersion.Major || v.Minor > MaxVersion.Minor || v.Minor < MinVersion.Minor {
		return placement.Version{}, &Error{Status: http.StatusNotAcceptable, noVersion: true, rangeInfo: true,
			Msg: "Invalid microversion: Unacceptable version header: " + raw}
	}
	return v, nil
}

// twoFields is the first two of strings.Fields(s) and how many there are,
// without allocating: this runs on every request.
func twoFields(s string) (f [2]string, n int) {
	start := -1
	for i, r := range s {
		switch {
		case !unicode.IsSpace(r):
			if start < 0 {
				start = i
			}
		case start >= 0:
			if n < len(f) {
				f[n] = s[start:i]
			}
			n, start = n+1, -1
		}
	}
	if start >= 0 {
		if n < len(f) {
			f[n] = s[start:]
		}
		n++
	}
	return f, n
}

func version(c echo.Context) placement.Version {
	if v, ok := c.Get(ctxVersion).(placement.Version); ok {
		return v
	}
	return MinVersion
}

// requireRole lets through callers holding at least role. Placement's
// default policy is admin-only for everything; corral lets readers read.
// policy names the rule in the 403 message ("" derives it from the route).
func (api *API) requireRole(role models.Role, policy string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			u := handlers.CurrentUser(c)
			if u == nil {
				return &Error{Status: http.StatusUnauthorized,
					Msg: "Authentication required: send an API token as X-Auth-Token."}
			}
			if !handlers.HasRole(c, role) {
				p := policy
				if p == "" {
					p = readPolicy(c.Path())
				}
				return &Error{Status: http.StatusForbidden,
					Msg: "Policy does not allow placement:" + p + " to be performed."}
			}
			return next(c)
		}
	}
}

// readPolicy names the upstream policy rule of a read route.
func readPolicy(route string) string {
	switch {
	case strings.HasSuffix(route, "/aggregates"):
		return "resource_providers:aggregates:list"
	case strings.HasSuffix(route, "/traits"):
		return "resource_providers:traits:list"
	case strings.HasSuffix(route, "/:uuid"):
		return "resource_providers:show"
	}
	return "resource_providers:list"
}

// home is the version document; like Placement's it needs no token.
func (api *API) home(c echo.Context) error {
	body := map[string]any{"versions": []any{map[string]any{
		"id":          "v" + MinVersion.String(),
		"max_version": MaxVersion.String(),
		"min_version": MinVersion.String(),
		"status":      "CURRENT",
		"links":       []any{map[string]string{"rel": "self", "href": ""}},
	}}}
	if version(c).AtLeast(15) {
		setLastModified(c, api.env.Now())
	}
	return c.JSON(http.StatusOK, body)
}

// snapshot returns the current snapshot of the world, the one every part
// of the server shares.
func (api *API) snapshot(c echo.Context) (*scheduling.Snapshot, error) {
	s, _, err := api.snapshotAt(c)
	return s, err
}

// snapshotAt is snapshot with its revision.
func (api *API) snapshotAt(c echo.Context) (*scheduling.Snapshot, int64, error) {
	snap, rev, err := api.env.Store.Live().Get(c.Request().Context())
	if err != nil {
		return nil, 0, err
	}
	snap, err = api.withCloudGenerations(c, snap)
	return snap, rev, err
}
