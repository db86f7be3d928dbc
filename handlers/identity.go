package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"corral/models"
)

// Identity is the cloud's Keystone as the doors use it (models/cloud's
// Identity; an interface, so that the kernel links no cloud client). When
// Env.Identity is set, people sign in with their Keystone name and
// password, and the APIs accept Keystone tokens.
type Identity interface {
	// AuthURL is where clients get tokens (the 401's WWW-Authenticate).
	AuthURL() string
	// Region is the region corral governs.
	Region() string
	// SignIn checks a name and password (domain "" is Default): the
	// person's first token and the projects they may choose from.
	SignIn(ctx context.Context, domain, name, password string) (*models.Person, []models.ProjectRef, error)
	// Projects are the projects token's user may scope to.
	Projects(ctx context.Context, token string) ([]models.ProjectRef, error)
	// Scope is a token of the same person scoped to projectID.
	Scope(ctx context.Context, token, projectID string) (*models.Person, error)
	// Validate is who token stands for; Unauthorized when it is not valid.
	Validate(ctx context.Context, token string) (*models.Person, error)
	// Revoke ends token at Keystone.
	Revoke(ctx context.Context, token string) error
	// ProjectNames are the projects' names by id (nil when unknown).
	ProjectNames(ctx context.Context) map[string]string
}

// ProjectLabel is how pages name a project: "name (id)" when Keystone
// knows it, else the id as given.
func (env *Env) ProjectLabel(c echo.Context, id string) string {
	if env.Identity == nil || id == "" {
		return id
	}
	if name := env.Identity.ProjectNames(c.Request().Context())[id]; name != "" && name != id {
		return name + " (" + id + ")"
	}
	return id
}

// Session values of a Keystone sign-in: the person's token (the cookie is
// encrypted), its expiry, and a token that still waits for a project
// choice.
const (
	keyKeystone        = "kst"
	keyKeystoneExpires = "kexp"
	keyKeystonePending = "kpend"
)

const (
	ctxPerson      = "corral.person"
	ctxKeystoneAPI = "corral.keystone-api"
	ctxRegion      = "corral.region"
)

// Region is the region corral governs through Keystone, or "".
func Region(c echo.Context) string {
	r, _ := c.Get(ctxRegion).(string)
	return r
}

// CurrentPerson is the Keystone person the request acts for, or nil (no
// sign-in, or one of corral's own users).
func CurrentPerson(c echo.Context) *models.Person {
	p, _ := c.Get(ctxPerson).(*models.Person)
	return p
}

// LocalUsersAllowed reports whether corral's own users may sign in:
// always standalone, and connected through Keystone only with
// Env.LocalUsers (a break-glass account).
func (env *Env) LocalUsersAllowed() bool { return env.Identity == nil || env.LocalUsers }

// actAs makes p the request's user: its role and project, and its token on
// the request's context, where the cloud client finds it.
func actAs(c echo.Context, p *models.Person, via string) error {
	u := p.AsUser()
	if !u.Role.Valid() {
		return models.E(models.Forbidden, "", "your Keystone token carries none of the roles admin, member or reader in project %s", p.ProjectName)
	}
	c.Set(ctxUser, u)
	c.Set(ctxPerson, p)
	c.Set(ctxVia, via)
	r := c.Request()
	c.SetRequest(r.WithContext(models.WithPersonIn(r.Context(), p.Token, p.ProjectID)))
	return nil
}

// loadPersonSession validates the session's Keystone token; a token that
// expired or was revoked sends the browser back to sign in.
func (env *Env) loadPersonSession(c echo.Context, st *sessionState, token string) error {
	now := env.Sessions.now()
	exp, _ := st.sess.Values[keyKeystoneExpires].(int64)
	iat, _ := st.sess.Values[keyIssuedAt].(int64)
	if now.Unix() >= exp || now.Sub(time.Unix(iat, 0)) >= env.Sessions.ttl {
		st.clearIdentity()
		st.expired = true
		return nil
	}
	p, err := env.Identity.Validate(c.Request().Context(), token)
	if err != nil {
		if models.KindOf(err) != models.Unauthorized {
			return err
		}
		st.clearIdentity()
		st.ended = true
		return nil
	}
	if !now.Before(p.ExpiresAt) {
		st.clearIdentity()
		st.expired = true
		return nil
	}
	if err := actAs(c, p, viaConsole); err != nil {
		st.clearIdentity()
		st.ended = true
	}
	return nil
}

// SignInPerson starts a new console session holding p's token, ending the
// session the browser had (as SignIn does for corral's own users).
func (env *Env) SignInPerson(c echo.Context, p *models.Person) error {
	st := session(c)
	if st == nil {
		return errors.New("sign in: the session middleware is not installed")
	}
	env.endSession(c, st)
	if err := actAs(c, p, viaConsole); err != nil {
		return err
	}
	sess := sessions.NewSession(st.s.store, SessionCookie)
	sess.IsNew = true
	sess.Values[keyKeystone] = p.Token
	sess.Values[keyKeystoneExpires] = p.ExpiresAt.Unix()
	sess.Values[keyIssuedAt] = st.s.now().Unix()
	st.sess, st.row, st.dirty, st.expired, st.ended = sess, nil, true, false, false
	c.SetCookie(&http.Cookie{Name: "_csrf", Value: "", Path: "/", MaxAge: -1, HttpOnly: true})
	return nil
}

// HoldPendingToken keeps a token that still waits for its project choice
// in a new session that signs nobody in.
func (env *Env) HoldPendingToken(c echo.Context, p *models.Person) error {
	st := session(c)
	if st == nil {
		return errors.New("sign in: the session middleware is not installed")
	}
	env.endSession(c, st)
	sess := sessions.NewSession(st.s.store, SessionCookie)
	sess.IsNew = true
	sess.Values[keyKeystonePending] = p.Token
	sess.Values[keyKeystoneExpires] = p.ExpiresAt.Unix()
	sess.Values[keyIssuedAt] = st.s.now().Unix()
	st.sess, st.row, st.dirty = sess, nil, true
	return nil
}

// PendingToken is the token waiting for a project choice, while it lasts.
func (env *Env) PendingToken(c echo.Context) string {
	st := session(c)
	if st == nil || env.Identity == nil {
		return ""
	}
	tok, _ := st.sess.Values[keyKeystonePending].(string)
	exp, _ := st.sess.Values[keyKeystoneExpires].(int64)
	if tok == "" || env.Sessions.now().Unix() >= exp {
		return ""
	}
	return tok
}

// endSession ends whatever sign-in the browser's session held: the
// store's row of a local sign-in, the Keystone tokens of a person's.
func (env *Env) endSession(c echo.Context, st *sessionState) {
	ctx := c.Request().Context()
	if sid := st.sid(); sid != "" {
		if err := env.Store.EndSession(ctx, sid); err != nil {
			env.Logger().Warn("ending the previous session", "err", err)
		}
	}
	env.revokeKeystoneTokens(c, st)
}

// revokeKeystoneTokens revokes the Keystone tokens the session holds.
func (env *Env) revokeKeystoneTokens(c echo.Context, st *sessionState) {
	if env.Identity == nil {
		return
	}
	ctx := c.Request().Context()
	for _, k := range []string{keyKeystone, keyKeystonePending} {
		if tok, _ := st.sess.Values[k].(string); tok != "" {
			if err := env.Identity.Revoke(ctx, tok); err != nil {
				env.Logger().Warn("revoking a Keystone token at sign-out", "err", err)
			}
		}
	}
}

// keystoneTokenAuth authenticates an API call by a Keystone token.
func (env *Env) keystoneTokenAuth(c echo.Context, token string) error {
	p, err := env.Identity.Validate(c.Request().Context(), token)
	if err != nil {
		return err
	}
	if err := actAs(c, p, viaForPath(c.Request().URL.Path)); err != nil {
		return err
	}
	c.Set(ctxKeystoneAPI, true)
	return nil
}

// KeystoneChallenge adds, on a 401 of an API under Keystone, the header
// OpenStack services send so that clients know where to authenticate.
func (env *Env) KeystoneChallenge(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if env.Identity != nil {
			c.Set(ctxRegion, env.Identity.Region())
		}
		if env.Identity != nil && IsAPI(c) {
			res := c.Response()
			res.Before(func() {
				if res.Status == http.StatusUnauthorized {
					res.Header().Set("WWW-Authenticate", fmt.Sprintf("Keystone uri=%q", env.Identity.AuthURL()))
				}
			})
		}
		return next(c)
	}
}
