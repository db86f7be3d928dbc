package account

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/store"
	av "corral/views/account"
)

// LoginForm shows the sign-in page (GET /login).
func (h *Handler) LoginForm(c echo.Context) error {
	next := handlers.SafeNext(c.QueryParam("next"))
	if handlers.CurrentUser(c) != nil {
		return handlers.SeeOther(c, next)
	}
	return handlers.Render(c, http.StatusOK, av.Login(av.LoginProps{
		CSRF:     handlers.CSRFToken(c),
		Next:     next,
		Flashes:  layout.Flashes(c),
		Keystone: h.keystoneProps(""),
	}))
}

// Login checks a user name and password (POST /login) and starts a new
// session. A refusal does not say which of the two was wrong.
func (h *Handler) Login(c echo.Context) error {
	name := c.FormValue("name")
	password := c.FormValue("password")
	next := handlers.SafeNext(c.FormValue("next"))
	limitKey := strings.ToLower(c.FormValue("domain") + "\x00" + name)
	if h.attempts.blocked(limitKey) && !h.env.Sessions.KnownDevice(c, limitKey) {
		h.env.Logger().Info("sign-in refused: too many failures for this user name", "user", name, "ip", c.RealIP())
		return h.renderLogin(c, http.StatusTooManyRequests, name,
			"Too many failed sign-ins for this user name. Wait a few minutes, or sign in from a browser you signed in with before.")
	}
	if h.env.Identity != nil {
		done, err := h.keystoneLogin(c, name, password, next, limitKey)
		if done || err != nil {
			return err
		}
	}
	u, err := h.env.Store.Authenticate(c.Request().Context(), name, password)
	if err != nil {
		switch models.KindOf(err) {
		case models.Unauthorized, models.NotFound, models.Invalid:
			h.attempts.failed(limitKey)
			h.env.Logger().Info("sign-in refused", "user", name, "ip", c.RealIP())
			return h.renderLogin(c, http.StatusUnauthorized, name, "Wrong user name or password.")
		}
		return err
	}
	h.env.Sessions.RememberDevice(c, limitKey)
	if err := h.env.SignIn(c, u); err != nil {
		if models.KindOf(err) == models.Unauthorized {
			// The password or role changed while signing in.
			return handlers.Render(c, http.StatusUnauthorized, av.Login(av.LoginProps{
				CSRF: handlers.CSRFToken(c), Next: next, Name: name, Error: "Your account changed while signing in. Please try again.",
			}))
		}
		return err
	}
	h.env.Logger().Info("signed in", "user", u.Name, "ip", c.RealIP())
	return handlers.SeeOther(c, next)
}

// Logout ends the session (POST /logout; a GET could be forged by a link).
func (h *Handler) Logout(c echo.Context) error {
	if u := handlers.CurrentUser(c); u != nil {
		h.env.Logger().Info("signed out", "user", u.Name)
	}
	if err := h.env.SignOut(c); err != nil {
		return err
	}
	handlers.AddFlash(c, handlers.FlashSuccess, "You have signed out.")
	return handlers.SeeOther(c, "/login")
}

// WhoAmIResponse is GET /api/whoami's body.
type WhoAmIResponse struct {
	Name      string      `json:"name"`
	Role      models.Role `json:"role"`
	ProjectID string      `json:"project_id"`
	Via       string      `json:"via"`
}

// WhoAmI tells an API client whom its credentials stand for
// (GET /api/whoami).
func (h *Handler) WhoAmI(c echo.Context) error {
	u := handlers.CurrentUser(c)
	return c.JSON(http.StatusOK, WhoAmIResponse{Name: u.Name, Role: u.Role, ProjectID: u.ProjectID, Via: handlers.Via(c)})
}

// ChangePassword changes the signed-in user's own password (POST /password)
// once the current one checks out. The store ends every session of the user
// with the change; this browser is signed in again at once, under a new
// session id.
func (h *Handler) ChangePassword(c echo.Context) error {
	u := handlers.CurrentUser(c)
	if handlers.CurrentSession(c) == nil {
		// An API token is not enough to take over the account's password.
		return models.E(models.Forbidden, "", "changing a password needs a console sign-in")
	}
	ctx := c.Request().Context()
	current, password := c.FormValue("current"), c.FormValue("password")
	errs := map[string]string{}
	if current == "" {
		errs["current"] = "Enter your current password."
	}
	if len(password) < store.MinPasswordLength {
		errs["password"] = fmt.Sprintf("Use at least %d characters.", store.MinPasswordLength)
	}
	if c.FormValue("confirm") != password {
		errs["confirm"] = "The two new passwords differ."
	}
	refuse := func(status int, errs map[string]string) error {
		return h.renderTokens(c, status, av.TokensProps{Password: av.PasswordForm{Errors: errs}})
	}
	if len(errs) > 0 {
		return refuse(http.StatusBadRequest, errs)
	}
	if _, err := h.env.Store.Authenticate(ctx, u.Name, current); err != nil {
		if models.KindOf(err) != models.Unauthorized {
			return err
		}
		h.env.Logger().Info("password change refused: wrong current password", "user", u.Name, "ip", c.RealIP())
		return refuse(http.StatusBadRequest, map[string]string{"current": "That is not your current password."})
	}
	if err := h.env.Store.SetPassword(ctx, handlers.Actor(c), u.Name, password); err != nil {
		fe, ok := handlers.FormErrors(err)
		if !ok {
			return err
		}
		return refuse(handlers.StatusOf(err), handlers.OnlyFields(fe, "password"))
	}
	fresh, err := h.env.Store.UserByID(ctx, u.ID)
	if err != nil {
		return err
	}
	if err := h.env.SignIn(c, fresh); err != nil {
		return err
	}
	h.env.Logger().Info("password changed", "user", u.Name)
	handlers.AddFlash(c, handlers.FlashSuccess, "Password changed. Your other sessions are signed out and your API tokens are revoked.")
	return handlers.SeeOther(c, "/tokens")
}
