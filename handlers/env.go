// Package handlers is the kernel of corral's HTTP side, shared by every
// handler package: the Env (store, logger, clock, sessions), authentication
// (console sessions and API tokens), role checks, the one table from error
// kinds to HTTP statuses behind StatusOf, rendering, flashes and form
// helpers. It knows no views: the JSON APIs (compute, placementapi) build on
// it without depending on templates. The page packages (account, console,
// query, world) add views, through layout for the page frame.
package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
)

// Env is what every handler needs: the store, a logger, a clock and the
// console's session manager. web.New fills in what is left empty.
type Env struct {
	Store *store.Store
	Log   *slog.Logger
	// Now is the clock; tests move it to expire sessions.
	Now func() time.Time
	// Sessions signs console users in and out; web.New sets it up from the
	// store's session keys when it is nil.
	Sessions *Sessions
	// Cloud is the link to a real cloud (connected mode); nil when corral
	// runs standalone.
	Cloud Cloud
	// Writer is the one write path every door hands its changes to: the
	// store when corral runs standalone, the cloud when connected. web.New
	// sets it to the store when it is nil. A door never knows which it has.
	Writer Applier
	// Identity is the cloud's Keystone when corral is connected through
	// one: people sign in there and API calls carry its tokens. nil
	// standalone.
	Identity Identity
	// LocalUsers lets corral's own users sign in (and their API tokens
	// work) beside Keystone's: a break-glass account. Without Identity
	// they always do.
	LocalUsers bool

	mu        sync.RWMutex
	renderers []prefixRenderer
}

// Applier writes a list of changes, all or none, as the actor: the store's
// Apply standalone, a rollout to the cloud when connected.
type Applier interface {
	Apply(ctx context.Context, a store.Actor, changes []scheduling.Change) (*scheduling.Applied, error)
	// ApplyDraft applies the stored draft id at version (what the person
	// reviewed) and consumes it: every change or none, refused while an
	// object it touches moved since the draft first touched it.
	ApplyDraft(ctx context.Context, a store.Actor, id string, version int64) (*scheduling.Applied, error)
	// ImportWorldAt is the bulk form: a whole world document merged into
	// live data (or replacing it), refused as a Conflict when any write
	// landed since revision expect (negative: no check).
	ImportWorldAt(ctx context.Context, a store.Actor, w *models.World, replace bool, expect int64) error
}

// Cloud is the link to a real cloud, as the kernel sees it: whether there
// is one, and how to name it. The kernel links no cloud client, so that
// the JSON APIs do not; the Cloud page asks the link for more (syncs and
// rollouts) through its own, larger interface.
type Cloud interface {
	// Connection describes the connection without secrets.
	Connection() string
}

// ErrorRenderer writes the response for a failed request under a URL prefix
// whose clients expect their own error format (Nova's and Placement's fault
// bodies). status comes from StatusOf(err), or from an echo.HTTPError.
type ErrorRenderer func(c echo.Context, status int, err error) error

type prefixRenderer struct {
	prefix string
	render ErrorRenderer
}

// RenderErrorsUnder makes r render every error of a request whose path is
// prefix or starts with prefix + "/". The longest matching prefix wins.
func (env *Env) RenderErrorsUnder(prefix string, r ErrorRenderer) {
	env.mu.Lock()
	defer env.mu.Unlock()
	prefix = strings.TrimSuffix(prefix, "/")
	for i := range env.renderers {
		if env.renderers[i].prefix == prefix {
			env.renderers[i].render = r
			return
		}
	}
	env.renderers = append(env.renderers, prefixRenderer{prefix, r})
}

// ErrorRendererFor returns the renderer registered for path, or nil.
func (env *Env) ErrorRendererFor(path string) ErrorRenderer {
	env.mu.RLock()
	defer env.mu.RUnlock()
	var best prefixRenderer
	for _, pr := range env.renderers {
		if underPrefix(path, pr.prefix) && len(pr.prefix) >= len(best.prefix) {
			best = pr
		}
	}
	return best.render
}

func underPrefix(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// CurrentTime is Env.Now(), or the wall clock when Now is unset.
func (env *Env) CurrentTime() time.Time {
	if env.Now != nil {
		return env.Now()
	}
	return time.Now()
}

// Logger is Env.Log, or the default logger when unset.
func (env *Env) Logger() *slog.Logger {
	if env.Log != nil {
		return env.Log
	}
	return slog.Default()
}

// kindStatus is the one table from error kinds to HTTP statuses; StatusOf
// is its only reader.
var kindStatus = map[models.Kind]int{
	models.Internal:      http.StatusInternalServerError,
	models.Invalid:       http.StatusBadRequest,
	models.NotFound:      http.StatusNotFound,
	models.Conflict:      http.StatusConflict,
	models.Forbidden:     http.StatusForbidden,
	models.Unauthorized:  http.StatusUnauthorized,
	models.NotAcceptable: http.StatusNotAcceptable,
	models.OverQuota:     http.StatusForbidden,
	models.Unavailable:   http.StatusServiceUnavailable,
}

// StatusOf maps err to its HTTP status: a corral error of a known kind goes
// through the kind table, an echo.HTTPError (even wrapped, as models.Wrap
// does) keeps its code, anything else is a 500.
func StatusOf(err error) int {
	if k := models.KindOf(err); k != models.Internal {
		if s, ok := kindStatus[k]; ok {
			return s
		}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he.Code
	}
	return http.StatusInternalServerError
}

// KindForStatus names the kind of failure a status stands for, for errors
// that carry only a status (echo's own 404 and 405, for instance). ok is
// false for a status no kind maps to. A 403 is Forbidden, not OverQuota.
func KindForStatus(status int) (k models.Kind, ok bool) {
	for _, k := range []models.Kind{models.Invalid, models.Unauthorized, models.Forbidden, models.NotFound,
		models.NotAcceptable, models.Conflict, models.Unavailable, models.Internal} {
		if kindStatus[k] == status {
			return k, true
		}
	}
	return models.Internal, false
}

// Context keys under which the middleware leaves what it learned.
const (
	ctxUser      = "corral.user"
	ctxToken     = "corral.token"
	ctxVia       = "corral.via"
	ctxSession   = "corral.session"
	ctxCSRF      = "csrf" // echo's CSRF middleware default ContextKey
	headerToken  = "X-Auth-Token"
	viaConsole   = "console"
	viaAPI       = "api"
	viaCompute   = "compute-api"
	viaPlacement = "placement-api"
)

// CSRFContextKey is where web's CSRF middleware leaves the token for forms.
const CSRFContextKey = ctxCSRF

// CurrentUser is the signed-in user (by session or API token), or nil.
func CurrentUser(c echo.Context) *models.User {
	u, _ := c.Get(ctxUser).(*models.User)
	return u
}

// CurrentToken is the API token the request authenticated with, or nil.
func CurrentToken(c echo.Context) *models.APIToken {
	t, _ := c.Get(ctxToken).(*models.APIToken)
	return t
}

// TokenAuthenticated reports whether the request carried a valid API token.
// Such requests carry no ambient credentials, so CSRF checks skip them.
func TokenAuthenticated(c echo.Context) bool {
	ks, _ := c.Get(ctxKeystoneAPI).(bool)
	return ks || CurrentToken(c) != nil
}

// Actor is who the store records in the audit log for this request.
func Actor(c echo.Context) store.Actor {
	u := CurrentUser(c)
	if u == nil {
		return store.Actor{Name: "anonymous", Via: Via(c)}
	}
	return store.Actor{Name: u.Name, Via: Via(c), ProjectID: u.ProjectID, Role: u.Role}
}

// Via names the interface the request came through, for the audit log:
// console, api, compute-api or placement-api.
func Via(c echo.Context) string {
	if v, ok := c.Get(ctxVia).(string); ok && v != "" {
		return v
	}
	return viaConsole
}

// viaForPath names the interface an API token was used on.
func viaForPath(path string) string {
	switch {
	case underPrefix(path, "/compute"):
		return viaCompute
	case underPrefix(path, "/placement"):
		return viaPlacement
	}
	return viaAPI
}

// HasRole reports whether the current user holds at least role
// (admin > member > reader).
func HasRole(c echo.Context, role models.Role) bool {
	u := CurrentUser(c)
	return u != nil && u.Role.AtLeast(role)
}

// IsAPI reports whether a request is for a machine client (the JSON API,
// the Nova- and Placement-compatible APIs, or anything sent with a token)
// rather than for a person in a browser.
func IsAPI(c echo.Context) bool {
	p := c.Request().URL.Path
	return TokenAuthenticated(c) || underPrefix(p, "/api") || underPrefix(p, "/compute") || underPrefix(p, "/placement")
}

// IsHTMX reports whether htmx sent the request (and expects a fragment).
func IsHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// RequireLogin lets signed-in users through. A browser without a session is
// sent to the sign-in page and back; an API client gets a 401.
func RequireLogin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if CurrentUser(c) != nil {
			return next(c)
		}
		if IsAPI(c) {
			return models.E(models.Unauthorized, "", "authentication required: send an API token as %s", headerToken)
		}
		return redirectToLogin(c)
	}
}

// RequireRole lets through users holding at least role; others get a 403
// (and anonymous requests are treated as by RequireLogin).
func RequireRole(role models.Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return RequireLogin(func(c echo.Context) error {
			if !HasRole(c, role) {
				return models.E(models.Forbidden, "", "this needs the %s role; you are %s", role, CurrentUser(c).Role)
			}
			return next(c)
		})
	}
}

// TokenAuth authenticates requests that carry X-Auth-Token. A valid token
// sets the same user as a console session would; an unknown or revoked
// token is refused with a 401, even where anonymous access is allowed, so
// that a client never silently acts as nobody.
func (env *Env) TokenAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		plain := c.Request().Header.Get(headerToken)
		if plain == "" {
			return next(c)
		}
		if !env.LocalUsersAllowed() {
			if err := env.keystoneTokenAuth(c, plain); err != nil {
				return err
			}
			return next(c)
		}
		u, tok, err := env.Store.UserByToken(c.Request().Context(), plain)
		if err != nil {
			k := models.KindOf(err)
			if env.Identity != nil && (k == models.NotFound || k == models.Unauthorized || k == models.Invalid) {
				// Not one of corral's own tokens: a Keystone token, maybe.
				if err = env.keystoneTokenAuth(c, plain); err != nil {
					return err
				}
				return next(c)
			}
			if k == models.NotFound || k == models.Unauthorized || k == models.Invalid {
				return models.E(models.Unauthorized, "", "the API token is unknown, revoked or malformed")
			}
			return err
		}
		c.Set(ctxUser, u)
		c.Set(ctxToken, tok)
		c.Set(ctxVia, viaForPath(c.Request().URL.Path))
		return next(c)
	}
}
