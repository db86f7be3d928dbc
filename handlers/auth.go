package handlers

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/store"
	"corral/views"
)

// LoginForm shows the sign-in page (GET /login).
func (env *Env) LoginForm(c echo.Context) error {
	next := SafeNext(c.QueryParam("next"))
	if CurrentUser(c) != nil {
		return SeeOther(c, next)
	}
	return Render(c, http.StatusOK, views.Login(views.LoginProps{
		CSRF:    CSRFToken(c),
		Next:    next,
		Flashes: Flashes(c),
	}))
}

// Login checks a user name and password (POST /login) and starts a new
// session. A refusal does not say which of the two was wrong.
func (env *Env) Login(c echo.Context) error {
	name := c.FormValue("name")
	password := c.FormValue("password")
	next := SafeNext(c.FormValue("next"))
	u, err := env.Store.Authenticate(c.Request().Context(), name, password)
	if err != nil {
		switch models.KindOf(err) {
		case models.Unauthorized, models.NotFound, models.Invalid:
			env.Logger().Info("sign-in refused", "user", name, "ip", c.RealIP())
			return Render(c, http.StatusUnauthorized, views.Login(views.LoginProps{
				CSRF:  CSRFToken(c),
				Next:  next,
				Name:  name,
				Error: "Wrong user name or password.",
			}))
		}
		return err
	}
	if err := env.SignIn(c, u); err != nil {
		if models.KindOf(err) == models.Unauthorized {
			// The password or role changed while signing in.
			return Render(c, http.StatusUnauthorized, views.Login(views.LoginProps{
				CSRF: CSRFToken(c), Next: next, Name: name, Error: "Your account changed while signing in. Please try again.",
			}))
		}
		return err
	}
	env.Logger().Info("signed in", "user", u.Name, "ip", c.RealIP())
	return SeeOther(c, next)
}

// Logout ends the session (POST /logout; a GET could be forged by a link).
func (env *Env) Logout(c echo.Context) error {
	if u := CurrentUser(c); u != nil {
		env.Logger().Info("signed out", "user", u.Name)
	}
	if err := env.SignOut(c); err != nil {
		return err
	}
	AddFlash(c, FlashSuccess, "You have signed out.")
	return SeeOther(c, "/login")
}

// WhoAmIResponse is GET /api/whoami's body.
type WhoAmIResponse struct {
	Name      string `json:"name"`
	Role      string `json:"role"`
	ProjectID string `json:"project_id"`
	Via       string `json:"via"`
}

// WhoAmI tells an API client whom its credentials stand for
// (GET /api/whoami).
func (env *Env) WhoAmI(c echo.Context) error {
	u := CurrentUser(c)
	return c.JSON(http.StatusOK, WhoAmIResponse{Name: u.Name, Role: u.Role, ProjectID: u.ProjectID, Via: via(c)})
}

// ChangePassword changes the signed-in user's own password (POST /password)
// once the current one checks out. The store ends every session of the user
// with the change; this browser is signed in again at once, under a new
// session id.
func (env *Env) ChangePassword(c echo.Context) error {
	u := CurrentUser(c)
	if CurrentSession(c) == nil {
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
		return env.renderTokens(c, status, views.TokensProps{Password: views.PasswordForm{Errors: errs}})
	}
	if len(errs) > 0 {
		return refuse(http.StatusBadRequest, errs)
	}
	if _, err := env.Store.Authenticate(ctx, u.Name, current); err != nil {
		if models.KindOf(err) != models.Unauthorized {
			return err
		}
		env.Logger().Info("password change refused: wrong current password", "user", u.Name, "ip", c.RealIP())
		return refuse(http.StatusBadRequest, map[string]string{"current": "That is not your current password."})
	}
	if err := env.Store.SetPassword(ctx, Actor(c), u.Name, password); err != nil {
		fe, ok := FormErrors(err)
		if !ok {
			return err
		}
		return refuse(StatusOf(err), OnlyFields(fe, "password"))
	}
	fresh, err := env.Store.UserByID(ctx, u.ID)
	if err != nil {
		return err
	}
	if err := env.SignIn(c, fresh); err != nil {
		return err
	}
	env.Logger().Info("password changed", "user", u.Name)
	AddFlash(c, FlashSuccess, "Password changed. Your other sessions are signed out and your API tokens are revoked.")
	return SeeOther(c, "/tokens")
}
