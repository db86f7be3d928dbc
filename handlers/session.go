package handlers

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"corral/models"
)

// SessionCookie is the name of the console's session cookie.
const SessionCookie = "corral_session"

// DefaultSessionTTL is how long a console sign-in lasts, counted from the
// moment of signing in (not from the last request).
const DefaultSessionTTL = 8 * time.Hour

// Session values. iat is the sign-in time: the server enforces the TTL from
// it with its own clock, whatever the browser does with the cookie's expiry.
const (
	keyUserID   = "uid"
	keyIssuedAt = "iat"
	keySID      = "sid"
)

// Sessions keeps console sign-ins in signed and encrypted cookies.
type Sessions struct {
	store *sessions.CookieStore
	ttl   time.Duration
	now   func() time.Time
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
	return &Sessions{store: cs, ttl: ttl, now: now}, nil
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
}

// LoadSession reads the console session cookie and, while the sign-in is
// within its TTL and the user still exists, makes its user the current
// user. It arranges for a changed session to be saved before the response
// is written.
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

		uid, okU := sess.Values[keyUserID].(int64)
		iat, okI := sess.Values[keyIssuedAt].(int64)
		switch {
		case !okU && !okI:
		case !okU || !okI:
			st.clearIdentity()
		default:
			issued := time.Unix(iat, 0)
			now := s.now()
			// A sign-in from the future means a clock jumped; distrust it too.
			if now.Sub(issued) >= s.ttl || issued.After(now.Add(time.Minute)) {
				st.clearIdentity()
				st.expired = true
				break
			}
			u, err := env.Store.UserByID(c.Request().Context(), uid)
			if err != nil {
				if models.KindOf(err) != models.NotFound {
					return err
				}
				st.clearIdentity()
				break
			}
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
	st.dirty = true
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

// SignIn starts a brand-new session for u: nothing from the session the
// browser had before survives (no session fixation), and the CSRF cookie is
// dropped so that the next page gets a fresh token.
func (env *Env) SignIn(c echo.Context, u *models.User) error {
	st := session(c)
	if st == nil {
		return errors.New("sign in: the session middleware is not installed")
	}
	sess := sessions.NewSession(st.s.store, SessionCookie)
	sess.IsNew = true
	sess.Values[keyUserID] = u.ID
	sess.Values[keyIssuedAt] = st.s.now().Unix()
	sess.Values[keySID] = randomID()
	st.sess = sess
	st.dirty = true
	st.expired = false
	c.Set(ctxUser, u)
	c.Set(ctxVia, viaConsole)
	c.SetCookie(&http.Cookie{Name: "_csrf", Value: "", Path: "/", MaxAge: -1, HttpOnly: true})
	return nil
}

// SignOut forgets the signed-in user; the session keeps only flashes.
func (env *Env) SignOut(c echo.Context) {
	if st := session(c); st != nil {
		st.clearIdentity()
	}
	c.Set(ctxUser, nil)
}

// SessionExpired reports whether the request's sign-in had run out.
func SessionExpired(c echo.Context) bool {
	st := session(c)
	return st != nil && st.expired
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// redirectToLogin sends a browser to the sign-in page, remembering where it
// was going.
func redirectToLogin(c echo.Context) error {
	if SessionExpired(c) {
		AddFlash(c, "warning", "Your session has expired. Please sign in again.")
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
