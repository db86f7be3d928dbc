package handlers

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/store"
)

// SessionCookie is the name of the console's session cookie.
const SessionCookie = "corral_session"

// DefaultSessionTTL is how long a console sign-in lasts, counted from the
// moment of signing in (not from the last request).
const DefaultSessionTTL = 8 * time.Hour

// Session values. iat is the sign-in time: the server enforces the TTL from
// it with its own clock, whatever the browser does with the cookie's expiry.
// sid is the store's session id: the sign-in lasts only while its row
// exists, so signing out, or a change that ends the user's sessions, holds
// for copies of the cookie too, on every replica.
const (
	keyUserID   = "uid"
	keyIssuedAt = "iat"
	keySID      = "sid"
)

// Sessions keeps console sign-ins in signed and encrypted cookies that name
// a row of the store's sessions table.
type Sessions struct {
	store *sessions.CookieStore
	// device reads and writes the known-device cookie (device.go), which
	// outlives a session.
	device []securecookie.Codec
	ttl    time.Duration
	now    func() time.Time
	// Secure forces the Secure cookie attribute even on plain-HTTP requests
	// (for a TLS-terminating proxy that does not say so). Without it the
	// attribute follows the request's scheme.
	Secure bool
}

// NewSessions builds the session manager from the store's key pairs
// (authentication key, encryption key), newest first: cookies signed with
// any pair are accepted and new ones use the first, so rotating keys does
// not sign everyone out.
func NewSessions(keyPairs [][]byte, ttl time.Duration, now func() time.Time) (*Sessions, error) {
	if len(keyPairs) == 0 || len(keyPairs)%2 != 0 {
		return nil, models.E(models.Invalid, "session_keys", "session keys come in pairs (authentication, encryption); got %d keys", len(keyPairs))
	}
	for i, k := range keyPairs {
		if i%2 == 0 && len(k) < 32 {
			return nil, models.E(models.Invalid, "session_keys", "an authentication key needs at least 32 bytes, not %d", len(k))
		}
		if i%2 == 1 && len(k) != 16 && len(k) != 24 && len(k) != 32 {
			return nil, models.E(models.Invalid, "session_keys", "an encryption key has 16, 24 or 32 bytes, not %d", len(k))
		}
	}
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	if now == nil {
		now = time.Now
	}
	cs := sessions.NewCookieStore(keyPairs...)
	cs.MaxAge(int(ttl / time.Second))
	device := securecookie.CodecsFromPairs(keyPairs...)
	for _, d := range device {
		d.(*securecookie.SecureCookie).MaxAge(int(deviceTTL / time.Second))
	}
	return &Sessions{store: cs, device: device, ttl: ttl, now: now}, nil
}

// TTL is how long a sign-in lasts.
func (s *Sessions) TTL() time.Duration { return s.ttl }

// sessionState is the request's session, saved once before the response
// header goes out if anything changed.
type sessionState struct {
	s       *Sessions
	log     *slog.Logger
	sess    *sessions.Session
	dirty   bool
	expired bool // the request came with a session past its TTL
	ended   bool // the request came with a session signed out or revoked
	row     *store.Session
}

// LoadSession reads the console session cookie and, while the sign-in is
// within its TTL and its row in the store still exists for the same user,
// makes that user the current user. It arranges for a changed session to be
// saved before the response is written.
func (env *Env) LoadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s := env.Sessions
		// A cookie that fails to decode (old key, tampering, expiry) is just
		// no session: store.New still returns a usable empty one.
		sess, err := s.store.New(c.Request(), SessionCookie)
		if err != nil {
			sess.Values = map[any]any{}
		}
		st := &sessionState{s: s, sess: sess, log: env.Logger()}
		c.Set(ctxSession, st)
		c.Response().Before(func() { st.save(c) })

		if tok, ok := sess.Values[keyKeystone].(string); ok && env.Identity != nil {
			if err := env.loadPersonSession(c, st, tok); err != nil {
				return err
			}
			return next(c)
		}
		if _, ok := sess.Values[keyKeystonePending].(string); ok && env.Identity != nil {
			return next(c) // signed in to Keystone, the project not chosen yet
		}
		uid, okU := sess.Values[keyUserID].(int64)
		iat, okI := sess.Values[keyIssuedAt].(int64)
		sid, okS := sess.Values[keySID].(string)
		switch {
		case !okU && !okI && !okS:
		case !okU || !okI || !okS || sid == "":
			st.clearIdentity()
		case !env.LocalUsersAllowed():
			// Connected through Keystone without --local-users: a sign-in
			// of corral's own users from before no longer counts.
			st.clearIdentity()
			st.ended = true
		default:
			issued := time.Unix(iat, 0)
			now := s.now()
			// A sign-in from the future means a clock jumped; distrust it too.
			if now.Sub(issued) >= s.ttl || issued.After(now.Add(time.Minute)) {
				st.clearIdentity()
				st.expired = true
				break
			}
			row, u, err := env.Store.LookupSession(c.Request().Context(), sid, now)
			if err != nil {
				if models.KindOf(err) != models.Unauthorized {
					return err
				}
				st.clearIdentity()
				st.ended = true
				break
			}
			if row.UserID != uid {
				// Cannot happen with cookies this server wrote; refuse
				// rather than guess which half to believe.
				st.clearIdentity()
				st.ended = true
				break
			}
			st.row = row
			c.Set(ctxUser, u)
			c.Set(ctxVia, viaConsole)
		}
		return next(c)
	}
}

func (st *sessionState) clearIdentity() {
	delete(st.sess.Values, keyUserID)
	delete(st.sess.Values, keyIssuedAt)
	delete(st.sess.Values, keySID)
	delete(st.sess.Values, keyKeystone)
	delete(st.sess.Values, keyKeystoneExpires)
	delete(st.sess.Values, keyKeystonePending)
	st.row = nil
	st.dirty = true
}

// sid is the session id the browser sent (whether or not it is still valid).
func (st *sessionState) sid() string {
	s, _ := st.sess.Values[keySID].(string)
	return s
}

func (st *sessionState) save(c echo.Context) {
	if !st.dirty {
		return
	}
	st.dirty = false
	opts := *st.s.store.Options
	opts.Path = "/"
	opts.HttpOnly = true
	opts.SameSite = http.SameSiteLaxMode
	opts.Secure = st.s.Secure || c.IsTLS() || c.Scheme() == "https"
	opts.MaxAge = int(st.s.ttl / time.Second)
	if len(st.sess.Values) == 0 {
		opts.MaxAge = -1 // nothing left to remember: drop the cookie
	}
	st.sess.Options = &opts
	if err := st.s.store.Save(c.Request(), c.Response(), st.sess); err != nil {
		st.log.Error("saving the session", "err", err)
	}
}

func session(c echo.Context) *sessionState {
	st, _ := c.Get(ctxSession).(*sessionState)
	return st
}

// SignIn starts a brand-new session for u, the user as Authenticate
// returned it: a new row in the store with a new random id, so nothing from
// the session the browser had before survives (no session fixation); that
// one's row, if any, ends. The CSRF cookie is dropped so that the next page
// gets a fresh token.
func (env *Env) SignIn(c echo.Context, u *models.User) error {
	st := session(c)
	if st == nil {
		return errors.New("sign in: the session middleware is not installed")
	}
	ctx := c.Request().Context()
	if old := st.sid(); old != "" {
		if err := env.Store.EndSession(ctx, old); err != nil {
			return err
		}
	}
	now := st.s.now()
	sid, row, err := env.Store.CreateSession(ctx, u, c.Request().UserAgent(), c.RealIP(), now, st.s.ttl)
	if err != nil {
		return err
	}
	sess := sessions.NewSession(st.s.store, SessionCookie)
	sess.IsNew = true
	sess.Values[keyUserID] = u.ID
	sess.Values[keyIssuedAt] = now.Unix()
	sess.Values[keySID] = sid
	st.sess = sess
	st.row = row
	st.dirty = true
	st.expired = false
	st.ended = false
	c.Set(ctxUser, u)
	c.Set(ctxVia, viaConsole)
	c.SetCookie(&http.Cookie{Name: "_csrf", Value: "", Path: "/", MaxAge: -1, HttpOnly: true})
	return nil
}

// SignOut ends the browser's session in the store, so that no copy of the
// cookie works any more, and forgets the signed-in user; the cookie keeps
// only flashes.
func (env *Env) SignOut(c echo.Context) error {
	if st := session(c); st != nil {
		if sid := st.sid(); sid != "" {
			if err := env.Store.EndSession(c.Request().Context(), sid); err != nil {
				return err
			}
		}
		env.revokeKeystoneTokens(c, st)
		st.clearIdentity()
	}
	c.Set(ctxUser, nil)
	return nil
}

// CurrentSession is the store's row for the console session the request
// is authenticated by, or nil: no session, or an API token, which wins over
// a cookie the same browser may also send.
func CurrentSession(c echo.Context) *store.Session {
	st := session(c)
	u := CurrentUser(c)
	if st == nil || st.row == nil || u == nil || st.row.UserID != u.ID || TokenAuthenticated(c) {
		return nil
	}
	return st.row
}

// CurrentSID is the plain id of CurrentSession, or "".
func CurrentSID(c echo.Context) string {
	if CurrentSession(c) == nil {
		return ""
	}
	return session(c).sid()
}

// SessionExpired reports whether the request's sign-in had run out.
func SessionExpired(c echo.Context) bool {
	st := session(c)
	return st != nil && st.expired
}

// redirectToLogin sends a browser to the sign-in page, remembering where it
// was going.
func redirectToLogin(c echo.Context) error {
	if SessionExpired(c) {
		AddFlash(c, FlashWarning, "Your session has expired. Please sign in again.")
	} else if st := session(c); st != nil && st.ended {
		AddFlash(c, FlashWarning, "You were signed out. Please sign in again.")
	}
	target := "/login"
	r := c.Request()
	if r.Method == http.MethodGet && r.URL.Path != "/" {
		target += "?next=" + url.QueryEscape(r.URL.RequestURI())
	}
	return SeeOther(c, target)
}

// SafeNext returns next when it is a path on this site, else "/": the
// sign-in form must not become an open redirect.
func SafeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}
