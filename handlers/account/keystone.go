package account

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"corral/handlers"
	"corral/models"
	av "corral/views/account"
)

// keystoneProps is what the sign-in page says of Keystone, or nil
// standalone.
func (h *Handler) keystoneProps(domain string) *av.KeystoneLogin {
	id := h.env.Identity
	if id == nil {
		return nil
	}
	return &av.KeystoneLogin{AuthURL: id.AuthURL(), Region: id.Region(), Domain: domain, LocalUsers: h.env.LocalUsers}
}

func (h *Handler) renderLogin(c echo.Context, status int, name, msg string) error {
	return handlers.Render(c, status, av.Login(av.LoginProps{
		CSRF:     handlers.CSRFToken(c),
		Next:     handlers.SafeNext(c.FormValue("next")),
		Name:     name,
		Error:    msg,
		Keystone: h.keystoneProps(c.FormValue("domain")),
	}))
}

// keystoneLogin signs a person in with Keystone. done is false when the
// caller should try corral's own users (the break-glass account of
// --local-users) instead.
func (h *Handler) keystoneLogin(c echo.Context, name, password, next, limitKey string) (done bool, err error) {
	ctx := c.Request().Context()
	p, projects, err := h.env.Identity.SignIn(ctx, strings.TrimSpace(c.FormValue("domain")), name, password)
	if err != nil {
		if h.env.LocalUsers {
			return false, nil
		}
		switch models.KindOf(err) {
		case models.Unauthorized:
			h.attempts.failed(limitKey)
			h.env.Logger().Info("sign-in refused by keystone", "user", name, "ip", c.RealIP())
			return true, h.renderLogin(c, http.StatusUnauthorized, name, "Wrong user name, password or domain.")
		case models.Unavailable:
			h.env.Logger().Warn("keystone unavailable at sign-in", "err", err.Error())
			return true, h.renderLogin(c, http.StatusServiceUnavailable, name,
				"The cloud's identity service (Keystone) did not answer, so nobody can sign in right now. Try again in a moment.")
		}
		return true, err
	}
	h.env.Sessions.RememberDevice(c, limitKey)
	switch {
	case len(projects) == 0:
		_ = h.env.Identity.Revoke(ctx, p.Token)
		return true, h.renderLogin(c, http.StatusForbidden, name,
			"Keystone knows you, but you have no role in any project. Ask an administrator for one.")
	case len(projects) > 1:
		if err := h.env.HoldPendingToken(c, p); err != nil {
			return true, err
		}
		return true, handlers.SeeOther(c, "/login/project?next="+url.QueryEscape(next))
	case p.ProjectID != projects[0].ID:
		scoped, err := h.env.Identity.Scope(ctx, p.Token, projects[0].ID)
		if err != nil {
			return true, err
		}
		_ = h.env.Identity.Revoke(ctx, p.Token)
		p = scoped
	}
	return true, h.startPerson(c, p, next)
}

func (h *Handler) startPerson(c echo.Context, p *models.Person, next string) error {
	if err := h.env.SignInPerson(c, p); err != nil {
		if models.KindOf(err) == models.Forbidden {
			_ = h.env.Identity.Revoke(c.Request().Context(), p.Token)
			return h.renderLogin(c, http.StatusForbidden, p.UserName, err.Error())
		}
		return err
	}
	h.env.Logger().Info("signed in through keystone", "user", p.UserName, "project", p.ProjectName, "ip", c.RealIP())
	return handlers.SeeOther(c, next)
}

// choiceToken is the token a project choice starts from: the one waiting
// after sign-in, or the signed-in person's own (switching projects).
func (h *Handler) choiceToken(c echo.Context) (token, current string) {
	if t := h.env.PendingToken(c); t != "" {
		return t, ""
	}
	if p := handlers.CurrentPerson(c); p != nil {
		return p.Token, p.ProjectID
	}
	return "", ""
}

// ChooseProjectForm lists the person's projects (GET /login/project).
func (h *Handler) ChooseProjectForm(c echo.Context) error {
	token, current := h.choiceToken(c)
	if token == "" {
		return handlers.SeeOther(c, "/login")
	}
	projects, err := h.env.Identity.Projects(c.Request().Context(), token)
	if err != nil {
		return err
	}
	return h.renderChoice(c, http.StatusOK, projects, current, "")
}

func (h *Handler) renderChoice(c echo.Context, status int, projects []models.ProjectRef, current, msg string) error {
	props := av.ChooseProjectProps{CSRF: handlers.CSRFToken(c), Next: handlers.SafeNext(c.QueryParam("next")), Current: current, Error: msg}
	if c.Request().Method == http.MethodPost {
		props.Next = handlers.SafeNext(c.FormValue("next"))
	}
	for _, pr := range projects {
		props.Projects = append(props.Projects, av.ProjectChoice{ID: pr.ID, Name: pr.Name})
	}
	return handlers.Render(c, status, av.ChooseProject(props))
}

// ChooseProject signs the person in to the chosen project (POST
// /login/project): a token scoped to it replaces the one they had, which
// Keystone revokes.
func (h *Handler) ChooseProject(c echo.Context) error {
	token, current := h.choiceToken(c)
	if token == "" {
		return handlers.SeeOther(c, "/login")
	}
	ctx := c.Request().Context()
	scoped, err := h.env.Identity.Scope(ctx, token, c.FormValue("project_id"))
	if err != nil {
		if models.KindOf(err) != models.Unauthorized {
			return err
		}
		projects, perr := h.env.Identity.Projects(ctx, token)
		if perr != nil {
			return perr
		}
		return h.renderChoice(c, http.StatusBadRequest, projects, current, "Choose one of your projects.")
	}
	return h.startPerson(c, scoped, handlers.SafeNext(c.FormValue("next")))
}

// userAttempts limits failed sign-ins per user name, whatever address
// they come from: ten at once, then one every thirty seconds. Browsers
// the user signed in with before are let through (KnownDevice), so that
// nobody can lock a user out by failing on purpose.
type userAttempts struct {
	mu sync.Mutex
	m  map[string]*rate.Limiter
}

const (
	maxTrackedNames  = 10000
	userAttemptBurst = 10
	userAttemptEvery = 30 * time.Second
)

func (a *userAttempts) limiter(key string) *rate.Limiter {
	if len(key) > 512 {
		key = key[:512]
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil || len(a.m) >= maxTrackedNames {
		a.m = map[string]*rate.Limiter{}
	}
	l, ok := a.m[key]
	if !ok {
		l = rate.NewLimiter(rate.Every(userAttemptEvery), userAttemptBurst)
		a.m[key] = l
	}
	return l
}

func (a *userAttempts) blocked(key string) bool { return a.limiter(key).Tokens() < 1 }

func (a *userAttempts) failed(key string) { a.limiter(key).Allow() }

// localUserOnly refuses a person signed in through Keystone the pages
// that act on one of corral's own users (API tokens, password, sessions):
// there is no such user behind them, and a local user of the same name is
// someone else.
func localUserOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if handlers.CurrentPerson(c) != nil {
			return models.E(models.Forbidden, "", "you signed in with Keystone: your tokens and password are Keystone's (openstack token issue, openstack user password set)")
		}
		return next(c)
	}
}
