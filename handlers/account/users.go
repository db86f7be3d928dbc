package account

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/store"
	"corral/views"
	av "corral/views/account"
)

// Users lists console users (GET /users, admins only).
func (h *Handler) Users(c echo.Context) error {
	return h.renderUsers(c, http.StatusOK, av.UserForm{})
}

func (h *Handler) renderUsers(c echo.Context, status int, form av.UserForm) error {
	users, err := h.env.Store.ListUsers(c.Request().Context())
	if err != nil {
		return err
	}
	counts, err := h.env.Store.SessionCounts(c.Request().Context(), h.env.CurrentTime())
	if err != nil {
		return err
	}
	return handlers.Render(c, status, av.Users(layout.Page(c, "Users", "users"), av.UsersProps{Users: users, Sessions: counts, Form: form}))
}

// CreateUser adds a user (POST /users, admins only).
func (h *Handler) CreateUser(c echo.Context) error {
	form := av.UserForm{
		Name:    strings.TrimSpace(c.FormValue("name")),
		Role:    models.Role(c.FormValue("role")),
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
	if !form.Role.Valid() {
		form.Errors["role"] = "Choose admin, member or reader."
	}
	if len(form.Errors) > 0 {
		return h.renderUsers(c, http.StatusBadRequest, form)
	}
	_, err := h.env.Store.CreateUser(c.Request().Context(), handlers.Actor(c), form.Name, password, form.Role, form.Project)
	if err != nil {
		errs, ok := handlers.FormErrors(err)
		if !ok {
			return err
		}
		form.Errors = handlers.OnlyFields(errs, "name", "password", "role", "project")
		return h.renderUsers(c, handlers.StatusOf(err), form)
	}
	handlers.AddFlash(c, handlers.FlashSuccess, "User “"+form.Name+"” created as "+string(form.Role)+".")
	return handlers.SeeOther(c, "/users")
}

// userParam finds the user named by the :id parameter.
func (h *Handler) userParam(c echo.Context) (*models.User, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return nil, models.E(models.NotFound, "id", "no user %q", c.Param("id"))
	}
	return h.env.Store.UserByID(c.Request().Context(), id)
}

// ConfirmSignOutUser asks before signing a user out everywhere
// (GET /users/:id/sessions/revoke, admins only), for browsers without
// JavaScript.
func (h *Handler) ConfirmSignOutUser(c echo.Context) error {
	u, err := h.userParam(c)
	if err != nil {
		return err
	}
	msg := "Every browser signed in as " + u.Name + " must sign in again, and every API token of " + u.Name + " is revoked."
	if u.ID == handlers.CurrentUser(c).ID {
		msg = "This includes the session you are using: you will be signed out here too, and your API tokens are revoked."
	}
	return handlers.Render(c, http.StatusOK, views.ConfirmPage(layout.Page(c, "Sign out everywhere", "users"), views.Confirm{
		Title:   "Sign “" + u.Name + "” out everywhere?",
		Message: msg,
		Action:  av.UserSignOutURL(u.ID),
		Cancel:  "/users",
		Button:  "Sign out everywhere",
	}))
}

// SignOutUser ends every console session of a user
// (POST /users/:id/sessions/revoke, admins only); the audit log records who
// did it.
func (h *Handler) SignOutUser(c echo.Context) error {
	u, err := h.userParam(c)
	if err != nil {
		return err
	}
	me := handlers.CurrentUser(c)
	n, err := h.env.Store.EndUserSessions(c.Request().Context(), handlers.Actor(c), u.ID)
	if err != nil {
		return err
	}
	h.env.Logger().Info("user signed out everywhere", "user", u.Name, "by", me.Name, "sessions", n)
	if u.ID == me.ID && handlers.CurrentSession(c) != nil {
		// This browser's row is gone too: say so now rather than on the
		// next click.
		if err := h.env.SignOut(c); err != nil {
			return err
		}
		handlers.AddFlash(c, handlers.FlashSuccess, "You signed yourself out everywhere.")
		return handlers.SeeOther(c, "/login")
	}
	handlers.AddFlash(c, handlers.FlashSuccess, "Signed “"+u.Name+"” out of "+plural(n, "session")+" and revoked their API tokens.")
	return handlers.SeeOther(c, "/users")
}
