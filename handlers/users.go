package handlers

import (
	"fmt"
	"net/http"
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
	return Render(c, status, views.Users(NewPage(c, "Users", "users"), views.UsersProps{Users: users, Form: form}))
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
