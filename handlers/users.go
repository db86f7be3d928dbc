package handlers

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/store"
	"corral/views"
)

// Users lists console users (GET /users, admins only).
func (env *Env) Users(c echo.Context) error {
	return env.renderUsers(c, http.StatusOK, views.UserForm{})
}

func (env *Env) renderUsers(c echo.Context, status int, form views.UserForm) error {
	users, err := env.Store.ListUsers(c.Request().Context())
	if err != nil {
		return err
	}
	counts, err := env.Store.SessionCounts(c.Request().Context(), env.now())
	if err != nil {
		return err
	}
	return Render(c, status, views.Users(NewPage(c, "Users", "users"), views.UsersProps{Users: users, Sessions: counts, Form: form}))
}

// CreateUser adds a user (POST /users, admins only).
func (env *Env) CreateUser(c echo.Context) error {
	form := views.UserForm{
		Name:    strings.TrimSpace(c.FormValue("name")),
		Role:    c.FormValue("role"),
		Project: strings.TrimSpace(c.FormValue("project")),
		Errors:  map[string]string{},
	}
	password := c.FormValue("password")
	if form.Name == "" {
		form.Errors["name"] = "A user needs a name."
	}
	if len(password) < store.MinPasswordLength {
		form.Errors["password"] = fmt.Sprintf("Use at least %d characters.", store.MinPasswordLength)
	}
	if !models.ValidRole(form.Role) {
		form.Errors["role"] = "Choose admin, member or reader."
	}
	if len(form.Errors) > 0 {
		return env.renderUsers(c, http.StatusBadRequest, form)
	}
	_, err := env.Store.CreateUser(c.Request().Context(), Actor(c), form.Name, password, form.Role, form.Project)
	if err != nil {
		errs, ok := FormErrors(err)
		if !ok {
			return err
		}
		form.Errors = OnlyFields(errs, "name", "password", "role", "project")
		return env.renderUsers(c, StatusOf(err), form)
	}
	AddFlash(c, FlashSuccess, "User “"+form.Name+"” created as "+form.Role+".")
	return SeeOther(c, "/users")
}

// userParam finds the user named by the :id parameter.
func (env *Env) userParam(c echo.Context) (*models.User, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return nil, models.E(models.NotFound, "id", "no user %q", c.Param("id"))
	}
	return env.Store.UserByID(c.Request().Context(), id)
}

// ConfirmSignOutUser asks before signing a user out everywhere
// (GET /users/:id/sessions/revoke, admins only), for browsers without
// JavaScript.
func (env *Env) ConfirmSignOutUser(c echo.Context) error {
	u, err := env.userParam(c)
	if err != nil {
		return err
	}
	msg := "Every browser signed in as " + u.Name + " must sign in again, and every API token of " + u.Name + " is revoked."
	if u.ID == CurrentUser(c).ID {
		msg = "This includes the session you are using: you will be signed out here too, and your API tokens are revoked."
	}
	return Render(c, http.StatusOK, views.ConfirmPage(NewPage(c, "Sign out everywhere", "users"), views.Confirm{
		Title:   "Sign “" + u.Name + "” out everywhere?",
		Message: msg,
		Action:  views.UserSignOutURL(u.ID),
		Cancel:  "/users",
		Button:  "Sign out everywhere",
	}))
}

// SignOutUser ends every console session of a user
// (POST /users/:id/sessions/revoke, admins only); the audit log records who
// did it.
func (env *Env) SignOutUser(c echo.Context) error {
	u, err := env.userParam(c)
	if err != nil {
		return err
	}
	me := CurrentUser(c)
	n, err := env.Store.EndUserSessions(c.Request().Context(), Actor(c), u.ID)
	if err != nil {
		return err
	}
	env.Logger().Info("user signed out everywhere", "user", u.Name, "by", me.Name, "sessions", n)
	if u.ID == me.ID && CurrentSession(c) != nil {
		// This browser's row is gone too: say so now rather than on the
		// next click.
		if err := env.SignOut(c); err != nil {
			return err
		}
		AddFlash(c, FlashSuccess, "You signed yourself out everywhere.")
		return SeeOther(c, "/login")
	}
	AddFlash(c, FlashSuccess, "Signed “"+u.Name+"” out of "+plural(n, "session")+" and revoked their API tokens.")
	return SeeOther(c, "/users")
}
