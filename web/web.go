// Package web assembles corral's HTTP application: one Echo instance with
// request ids, request logging, panic recovery, security headers, console
// sessions, API-token authentication, CSRF protection, the routes of every
// handler package and the one error handler that maps error kinds to
// statuses and bodies.
package web

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"

	"corral/handlers"
	"corral/models"
	"corral/models/cloud"
	"corral/models/store"
	"corral/views"
)

// Config tunes the application; the zero value is a sensible default.
type Config struct {
	// SessionTTL is how long a console sign-in lasts; 8 hours when zero.
	SessionTTL time.Duration
	// SecureCookies marks cookies Secure even on plain-HTTP requests, for
	// deployments behind a TLS-terminating proxy. Requests that arrive over
	// TLS always get Secure cookies.
	SecureCookies bool
	// TrustProxy takes the client's address from X-Forwarded-For, for a
	// deployment behind a reverse proxy. Otherwise the header is ignored, so
	// that clients cannot choose the address that logs and the sign-in rate
	// limit see.
	TrustProxy bool
	// TrustedProxies are the addresses of the reverse proxies in front of
	// corral: a request from one of them has its client address taken
	// from X-Forwarded-For (skipping further trusted proxies), so that the
	// sign-in limit applies per client, not to everyone behind the proxy.
	// Requests from elsewhere keep their own address. It takes precedence
	// over TrustProxy.
	TrustedProxies []*net.IPNet
	// LoginRate and LoginBurst limit sign-in attempts per client address
	// (attempts per second, and how many may come at once); 1 and 20 when
	// zero.
	LoginRate  float64
	LoginBurst int
	// Cloud connects the console to a real cloud (connected mode); nil
	// keeps it standalone.
	Cloud *cloud.Syncer
	// Identity is the cloud's Keystone when the connection goes through
	// one: people sign in there and the APIs accept its tokens; nil keeps
	// corral's own users.
	Identity *cloud.Identity
	// LocalUsers lets corral's own users sign in beside Keystone's (a
	// break-glass account, --local-users).
	LocalUsers bool
}

// NewApp builds the application on st, logging to log (the default logger
// when nil). Commands use it; New is for callers that need the Env itself,
// such as tests that move its clock.
func NewApp(st *store.Store, log *slog.Logger, cfg Config) (*echo.Echo, error) {
	return New(&handlers.Env{Store: st, Log: log}, cfg)
}

// New builds the application around env. It fills in env's logger, clock
// and session manager when they are unset.
func New(env *handlers.Env, cfg Config) (*echo.Echo, error) {
	if env == nil || env.Store == nil {
		return nil, errString("web.New: env and env.Store are required")
	}
	if env.Log == nil {
		env.Log = slog.Default()
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	if cfg.Cloud != nil {
		env.Cloud = cfg.Cloud
		if env.Writer == nil {
			// Connected, every write goes to the cloud: nothing is
			// stored in corral alone, to be reverted by the next sync.
			env.Writer = &cloud.Applier{Syncer: cfg.Cloud, Store: env.Store}
		}
	}
	if env.Writer == nil {
		env.Writer = env.Store
	}
	if cfg.Identity != nil {
		env.Identity = cfg.Identity
		env.LocalUsers = cfg.LocalUsers
	}
	if env.Sessions == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		keys, err := env.Store.SessionKeys(ctx)
		cancel()
		if err != nil {
			return nil, err
		}
		// The clock is read through env so that tests moving env.Now move
		// session expiry too.
		s, err := handlers.NewSessions(keys, cfg.SessionTTL, func() time.Time { return env.Now() })
		if err != nil {
			return nil, err
		}
		env.Sessions = s
	}
	env.Sessions.Secure = env.Sessions.Secure || cfg.SecureCookies

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = errorHandler(env)
	switch {
	case len(cfg.TrustedProxies) > 0:
		// Only the listed ranges: not Echo's default of every loopback,
		// link-local and private address.
		opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
		for _, n := range cfg.TrustedProxies {
			opts = append(opts, echo.TrustIPRange(n))
		}
		e.IPExtractor = echo.ExtractIPFromXFFHeader(opts...)
	case cfg.TrustProxy:
		e.IPExtractor = echo.ExtractIPFromXFFHeader()
	default:
		e.IPExtractor = echo.ExtractIPDirect()
	}

	e.Use(middleware.RequestIDWithConfig(middleware.RequestIDConfig{Generator: requestIDs(), Skipper: isPlacementAPI}))
	if env.Store.RevisionCostsAQuery() {
		e.Use(readsRevisionOnce)
	}
	e.Use(requestLog(env.Log))
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableStackAll: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			env.Log.Error("panic", "err", err, "path", c.Request().URL.Path,
				"request_id", requestID(c), "stack", string(stack))
			return err
		},
	}))
	e.Use(securityHeaders)
	e.Use(env.KeystoneChallenge)
	e.Use(skipFor(env.LoadSession, noSession))
	e.Use(skipFor(env.TokenAuth, isStatic))
	e.Use(tokenAPIsAuthenticateFirst)
	e.Use(limitBody) // before anything parses a body: the CSRF check does
	e.Use(csrf(cfg))
	e.Use(checkInput)

	registerRoutes(e, env, loginLimit(cfg))
	return e, nil
}

// ParseTrustedProxies reads a comma-separated list of CIDR ranges or
// single addresses ("10.0.0.0/8,192.0.2.7").
func ParseTrustedProxies(s string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			ip := net.ParseIP(part)
			if ip == nil {
				return nil, errString(fmt.Sprintf("%q is neither an address nor a CIDR range", part))
			}
			bits := 128
			if ip.To4() != nil {
				ip, bits = ip.To4(), 32
			}
			out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(part)
		if err != nil {
			return nil, errString(fmt.Sprintf("%q is not a CIDR range", part))
		}
		out = append(out, n)
	}
	return out, nil
}

// readsRevisionOnce lets a reading request read the store's revision once:
// its token check and its snapshot then cost one query, not two.
func readsRevisionOnce(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if r := c.Request(); r.Method == http.MethodGet || r.Method == http.MethodHead {
			c.SetRequest(r.WithContext(store.WithRevisionMemo(r.Context())))
		}
		return next(c)
	}
}

// loginLimit slows down password guessing: each client address gets a
// bucket of attempts that refills at LoginRate per second.
func loginLimit(cfg Config) echo.MiddlewareFunc {
	r, burst := cfg.LoginRate, cfg.LoginBurst
	if r <= 0 {
		r = 1
	}
	if burst <= 0 {
		burst = 20
	}
	return middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store: middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
			Rate: rate.Limit(r), Burst: burst, ExpiresIn: 10 * time.Minute,
		}),
		IdentifierExtractor: func(c echo.Context) (string, error) { return c.RealIP(), nil },
		DenyHandler: func(c echo.Context, _ string, _ error) error {
			return echo.NewHTTPError(http.StatusTooManyRequests, "Too many sign-in attempts. Wait a minute and try again.")
		},
	})
}

type errString string

func (e errString) Error() string { return string(e) }

// isStatic reports whether a request is for an embedded asset.
func isStatic(c echo.Context) bool {
	return strings.HasPrefix(c.Request().URL.Path, "/static/")
}

// isPlacementAPI reports whether a request is for the Placement API,
// which gives each request an id of its own, as Placement does
// (X-Openstack-Request-Id), instead of X-Request-Id.
func isPlacementAPI(c echo.Context) bool {
	p := c.Request().URL.Path
	return p == "/placement" || strings.HasPrefix(p, "/placement/")
}

// requestID is the id a response carries, for the logs.
func requestID(c echo.Context) string {
	h := c.Response().Header()
	if id := h.Get(echo.HeaderXRequestID); id != "" {
		return id
	}
	return h.Get("X-Openstack-Request-Id")
}

// isOpenStackAPI reports whether a request is for the Nova- or
// Placement-compatible API: those authenticate by token only.
func isOpenStackAPI(c echo.Context) bool {
	p := c.Request().URL.Path
	for _, prefix := range []string{"/compute", "/placement"} {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return true
		}
	}
	return false
}

// noSession marks requests that never use the console session: assets, and
// the OpenStack-compatible APIs, which accept tokens only (so a browser's
// cookie can never be ridden there by a forged request).
func noSession(c echo.Context) bool { return isStatic(c) || isOpenStackAPI(c) }

func skipFor(mw echo.MiddlewareFunc, skip func(echo.Context) bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		withMW := mw(next)
		return func(c echo.Context) error {
			if skip(c) {
				return next(c)
			}
			return withMW(c)
		}
	}
}

// csrf checks every unsafe console request: browsers by Sec-Fetch-Site,
// everything else by the token in the _csrf form field or the X-CSRF-Token
// header against the _csrf cookie. Requests authenticated by API token carry
// no ambient credentials and are exempt. A missing token is a 403 like a
// wrong one.
func csrf(cfg Config) echo.MiddlewareFunc {
	mk := func(secure bool) echo.MiddlewareFunc {
		return middleware.CSRFWithConfig(middleware.CSRFConfig{
			Skipper: func(c echo.Context) bool {
				return noSession(c) || handlers.TokenAuthenticated(c)
			},
			TokenLookup:    "header:" + views.CSRFHeader + ",form:" + views.CSRFFormField,
			ContextKey:     handlers.CSRFContextKey,
			CookieName:     "_csrf",
			CookiePath:     "/",
			CookieHTTPOnly: true,
			CookieSecure:   secure,
			CookieSameSite: http.SameSiteStrictMode,
			CookieMaxAge:   int(handlers.DefaultSessionTTL / time.Second),
			ErrorHandler: func(err error, c echo.Context) error {
				return echo.NewHTTPError(http.StatusForbidden,
					"The form's security token is missing or stale. Reload the page and try again.").SetInternal(err)
			},
		})
	}
	plain, secure := mk(cfg.SecureCookies), mk(true)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		p, s := plain(next), secure(next)
		return func(c echo.Context) error {
			if c.IsTLS() || c.Scheme() == "https" {
				return s(c)
			}
			return p(c)
		}
	}
}

// contentSecurityPolicy allows nothing but this origin: no inline script or
// style, no framing, forms post only here.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// headerValue is a response header set on many responses. The key is
// canonical and the value a one-element slice with no room to grow, so
// that every response shares it: Set replaces a slice and Add copies it.
type headerValue struct {
	key   string
	value []string
}

func shared(key, value string) headerValue { return headerValue{key, []string{value}[:1:1]} }

// pageSecurityHeaders are set on every response but the OpenStack APIs'.
var pageSecurityHeaders = [...]headerValue{
	shared("Content-Security-Policy", contentSecurityPolicy),
	shared("X-Frame-Options", "DENY"),
	shared("X-Content-Type-Options", "nosniff"),
	shared("Referrer-Policy", "same-origin"),
	shared("Cross-Origin-Opener-Policy", "same-origin"),
}

// apiSecurityHeaders are the Nova and Placement APIs': their JSON is
// never a document a browser renders, so of the page headers only two
// apply (OWASP's REST guidance): no sniffing a type, no framing. Every
// header costs each call of these APIs twice, to write and to parse.
var apiSecurityHeaders = [...]headerValue{
	shared("X-Content-Type-Options", "nosniff"),
	shared("Content-Security-Policy", "frame-ancestors 'none'"),
}

func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		set := pageSecurityHeaders[:]
		if isOpenStackAPI(c) {
			set = apiSecurityHeaders[:]
		}
		for _, kv := range set {
			h[kv.key] = kv.value
		}
		if c.IsTLS() {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		return next(c)
	}
}

// requestLog logs one line per request through slog, at requestLevel;
// the client address and request id are looked up only for a line that
// is logged.
func requestLog(log *slog.Logger) echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		Skipper:     isStatic,
		HandleError: true, // run the error handler first so the status logged is the one sent
		LogStatus:   true,
		LogMethod:   true,
		LogURIPath:  true,
		LogLatency:  true,
		LogError:    true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			disconnected := v.Status >= 500 && errors.Is(c.Request().Context().Err(), context.Canceled)
			if disconnected {
				// The client went away and nobody read the answer: not a
				// server fault, so logged as nginx's 499 at Info.
				v.Status = statusClientClosedRequest
			}
			level := requestLevel(v.Method, v.URIPath, v.Status)
			if !log.Enabled(c.Request().Context(), level) {
				return nil
			}
			attrs := []slog.Attr{
				slog.String("method", v.Method),
				slog.String("path", v.URIPath),
				slog.Int("status", v.Status),
				slog.Duration("latency", v.Latency),
				slog.String("ip", c.RealIP()),
				slog.String("request_id", requestID(c)),
			}
			if u := handlers.CurrentUser(c); u != nil {
				attrs = append(attrs, slog.String("user", u.Name))
			}
			if v.Status >= 500 && v.Error != nil {
				attrs = append(attrs, slog.String("err", models.Detail(v.Error)))
			}
			if disconnected {
				attrs = append(attrs, slog.String("err", "the client disconnected before the answer"))
			}
			log.LogAttrs(c.Request().Context(), level, "request", attrs...)
			return nil
		},
	})
}

// requestIDs generates request ids: a random prefix for this process and
// a counter, unique across replicas without asking the system for
// randomness on every request.
func requestIDs() func() string {
	var prefix [8]byte
	if _, err := rand.Read(prefix[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	var n atomic.Uint64
	return func() string {
		var b [32]byte
		hex.Encode(b[:16], prefix[:])
		var c [8]byte
		binary.BigEndian.PutUint64(c[:], n.Add(1))
		hex.Encode(b[16:], c[:])
		return string(b[:])
	}
}

// statusClientClosedRequest is the status logged for a request whose
// client disconnected (nginx's 499); it is never sent.
const statusClientClosedRequest = 499

// requestLevel is the level a request is logged at: server errors at
// Error; every change and every refusal at Info; successful reads, which
// are most requests and would cost more to log than to answer, at Debug.
func requestLevel(method, path string, status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelInfo
	case method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions,
		path == "/api/preview": // a question about the world, not a change to it
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
