package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"corral/models"
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
	env.SignOut(c)
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
