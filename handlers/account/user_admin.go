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

// maxProjectLength is the users.project_id column's size.
const maxProjectLength = 255

// ShowUser is one user's admin page (GET /users/:id, admins only).
func (h *Handler) ShowUser(c echo.Context) error {
	u, err := h.userParam(c)
	if err != nil {
		return err
	}
	return h.renderUser(c, http.StatusOK, u, av.UserAdminProps{
		Form: av.UserEditForm{Role: u.Role, Project: u.ProjectID},
	})
}

// renderUser fills in what the page shows besides the forms' state.
func (h *Handler) renderUser(c echo.Context, status int, u *models.User, props av.UserAdminProps) error {
	ctx := c.Request().Context()
	toks, err := h.env.Store.ListTokens(ctx, u.ID)
	if err != nil {
		return err
	}
	n, err := h.liveSessions(c, u.ID)
	if err != nil {
		return err
	}
	props.User, props.Tokens, props.Sessions = *u, toks, n
	props.Self = u.ID == handlers.CurrentUser(c).ID
	props.MinPassword = store.MinPasswordLength
	return handlers.Render(c, status, av.UserAdmin(layout.Page(c, u.Name, "users"), props))
}

// liveSessions counts a user's console sessions that have not expired.
func (h *Handler) liveSessions(c echo.Context, id int64) (int, error) {
	counts, err := h.env.Store.SessionCounts(c.Request().Context(), h.env.CurrentTime())
	if err != nil {
		return 0, err
	}
	return counts[id], nil
}

// EditUser changes a user's role and project (POST /users/:id, admins
// only). Nothing is saved when any field is refused.
func (h *Handler) EditUser(c echo.Context) error {
	u, err := h.userParam(c)
	if err != nil {
		return err
	}
	me := handlers.CurrentUser(c)
	form := av.UserEditForm{
		Role:    models.Role(c.FormValue("role")),
		Project: strings.TrimSpace(c.FormValue("project")),
		Errors:  map[string]string{},
	}
	status := http.StatusBadRequest
	switch {
	case !form.Role.Valid():
		form.Errors["role"] = "Choose admin, member or reader."
	case u.ID == me.ID && form.Role != u.Role:
		// An admin who demotes themselves by mistake cannot undo it.
		form.Errors["role"] = "You cannot change your own role; another admin can."
		status = http.StatusForbidden
	}
	if len(form.Project) > maxProjectLength {
		form.Errors["project"] = fmt.Sprintf("A project id has at most %d characters.", maxProjectLength)
	}
	if len(form.Errors) > 0 {
		return h.renderUser(c, status, u, av.UserAdminProps{Form: form})
	}
	if form.Role == u.Role && form.Project == u.ProjectID {
		handlers.AddFlash(c, handlers.FlashSuccess, "Nothing changed for "+u.Name+".")
		return handlers.SeeOther(c, av.UserURL(u.ID))
	}
	sessions, err := h.liveSessions(c, u.ID)
	if err != nil {
		return err
	}
	next, err := h.env.Store.UpdateUser(c.Request().Context(), handlers.Actor(c), u.ID, func(x *models.User) error {
		x.Role, x.ProjectID = form.Role, form.Project
		return nil
	})
	if err != nil {
		errs, ok := handlers.FormErrors(err)
		if !ok {
			return err
		}
		form.Errors = handlers.OnlyFields(errs, "role", "project")
		return h.renderUser(c, handlers.StatusOf(err), u, av.UserAdminProps{Form: form})
	}
	h.env.Logger().Info("user changed", "user", u.Name, "by", me.Name, "role", next.Role, "project", next.ProjectID)
	msg := changeMessage(u, next)
	if u.ID == me.ID {
		// The change ended this browser's session too; sign in again under
		// the new rights rather than bounce to the sign-in page.
		if handlers.CurrentSession(c) != nil {
			if err := h.env.SignIn(c, next); err != nil {
				return err
			}
		}
		handlers.AddFlash(c, handlers.FlashSuccess, msg+"; your other sessions were ended.")
		return handlers.SeeOther(c, av.UserURL(u.ID))
	}
	handlers.AddFlash(c, handlers.FlashSuccess, msg+sessionsEnded(u.Name, sessions))
	return handlers.SeeOther(c, av.UserURL(u.ID))
}

// changeMessage says what an edit changed, e.g. "Role of rita changed from
// reader to member".
func changeMessage(before, after *models.User) string {
	role := before.Role != after.Role
	project := before.ProjectID != after.ProjectID
	switch {
	case role && project:
		return fmt.Sprintf("Role of %s changed from %s to %s and project from %s to %s",
			before.Name, before.Role, after.Role, projectName(before.ProjectID), projectName(after.ProjectID))
	case role:
		return fmt.Sprintf("Role of %s changed from %s to %s", before.Name, before.Role, after.Role)
	default:
		return fmt.Sprintf("Project of %s changed from %s to %s", before.Name, projectName(before.ProjectID), projectName(after.ProjectID))
	}
}

func projectName(p string) string {
	if p == "" {
		return "none"
	}
	return p
}

// sessionsEnded ends a flash message with the sign-outs a change caused.
func sessionsEnded(name string, n int) string {
	switch n {
	case 0:
		return "."
	case 1:
		return "; " + name + "'s 1 session was ended."
	}
	return "; " + name + "'s " + strconv.Itoa(n) + " sessions were ended."
}

// SetUserPassword gives a user a new password chosen by an admin
// (POST /users/:id/password, admins only); it signs the user out
// everywhere.
func (h *Handler) SetUserPassword(c echo.Context) error {
	u, err := h.userParam(c)
	if err != nil {
		return err
	}
	if u.ID == handlers.CurrentUser(c).ID {
		// This form asks for no current password: a stolen session must
		// not be enough to lock the owner out.
		return h.renderUser(c, http.StatusForbidden, u, av.UserAdminProps{
			Form:     av.UserEditForm{Role: u.Role, Project: u.ProjectID},
			Password: av.PasswordForm{Errors: map[string]string{"": "Change your own password on the API tokens page, which asks for the current one."}},
		})
	}
	password := c.FormValue("password")
	errs := map[string]string{}
	if len(password) < store.MinPasswordLength {
		errs["password"] = fmt.Sprintf("Use at least %d characters.", store.MinPasswordLength)
	}
	if c.FormValue("confirm") != password {
		errs["confirm"] = "The two passwords differ."
	}
	refuse := func(status int, errs map[string]string) error {
		return h.renderUser(c, status, u, av.UserAdminProps{
			Form:     av.UserEditForm{Role: u.Role, Project: u.ProjectID},
			Password: av.PasswordForm{Errors: errs},
		})
	}
	if len(errs) > 0 {
		return refuse(http.StatusBadRequest, errs)
	}
	sessions, err := h.liveSessions(c, u.ID)
	if err != nil {
		return err
	}
	if err := h.env.Store.SetPassword(c.Request().Context(), handlers.Actor(c), u.Name, password); err != nil {
		fe, ok := handlers.FormErrors(err)
		if !ok {
			return err
		}
		return refuse(handlers.StatusOf(err), handlers.OnlyFields(fe, "password"))
	}
	h.env.Logger().Info("password set by an admin", "user", u.Name, "by", handlers.CurrentUser(c).Name)
	handlers.AddFlash(c, handlers.FlashSuccess, "New password set for "+u.Name+sessionsEnded(u.Name, sessions)+" Their API tokens are revoked.")
	return handlers.SeeOther(c, av.UserURL(u.ID))
}

// deletable refuses deleting one's own account; the store refuses the last
// admin.
func deletable(c echo.Context, u *models.User) error {
	if u.ID == handlers.CurrentUser(c).ID {
		return models.E(models.Forbidden, "", "You cannot delete your own account; another admin can.")
	}
	return nil
}

// ConfirmDeleteUser asks before deleting a user (GET /users/:id/delete,
// admins only), for browsers without JavaScript.
func (h *Handler) ConfirmDeleteUser(c echo.Context) error {
	u, err := h.userParam(c)
	if err != nil {
		return err
	}
	if err = deletable(c, u); err != nil {
		return h.refuseDelete(c, u, err)
	}
	toks, err := h.env.Store.ListTokens(c.Request().Context(), u.ID)
	if err != nil {
		return err
	}
	active := 0
	for _, t := range toks {
		if t.RevokedAt == nil {
			active++
		}
	}
	n, err := h.liveSessions(c, u.ID)
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.ConfirmPage(layout.Page(c, "Delete user", "users"), views.Confirm{
		Title: "Delete user “" + u.Name + "”?",
		Message: fmt.Sprintf("%s signs in nowhere any more: %s and %s end at once. The audit log keeps their past changes. This cannot be undone.",
			u.Name, plural(active, "active API token"), plural(n, "session")),
		Action: av.UserDeleteURL(u.ID),
		Cancel: av.UserURL(u.ID),
		Button: "Delete user",
	}))
}

// refuseDelete shows the user's page with why they cannot be deleted.
func (h *Handler) refuseDelete(c echo.Context, u *models.User, err error) error {
	fe, ok := handlers.FormErrors(err)
	if !ok {
		return err
	}
	return h.renderUser(c, handlers.StatusOf(err), u, av.UserAdminProps{
		Form:        av.UserEditForm{Role: u.Role, Project: u.ProjectID},
		DeleteError: handlers.OnlyFields(fe)[""],
	})
}

// DeleteUser deletes a user with their tokens and sessions
// (POST /users/:id/delete, admins only).
func (h *Handler) DeleteUser(c echo.Context) error {
	u, err := h.userParam(c)
	if err != nil {
		return err
	}
	if err = deletable(c, u); err != nil {
		return h.refuseDelete(c, u, err)
	}
	toks, err := h.env.Store.ListTokens(c.Request().Context(), u.ID)
	if err != nil {
		return err
	}
	sessions, err := h.liveSessions(c, u.ID)
	if err != nil {
		return err
	}
	if err := h.env.Store.DeleteUser(c.Request().Context(), handlers.Actor(c), u.ID); err != nil {
		return h.refuseDelete(c, u, err)
	}
	h.env.Logger().Info("user deleted", "user", u.Name, "by", handlers.CurrentUser(c).Name, "tokens", len(toks), "sessions", sessions)
	handlers.AddFlash(c, handlers.FlashSuccess, fmt.Sprintf("User %s deleted with %s%s", u.Name, plural(len(toks), "API token"), sessionsEnded(u.Name, sessions)))
	return handlers.SeeOther(c, "/users")
}

// userToken finds one of the :id user's tokens by the :token parameter; a
// token of another user is "not found".
func (h *Handler) userToken(c echo.Context) (*models.User, *models.APIToken, error) {
	u, err := h.userParam(c)
	if err != nil {
		return nil, nil, err
	}
	id, err := strconv.ParseInt(c.Param("token"), 10, 64)
	if err != nil {
		return nil, nil, models.E(models.NotFound, "token", "no token %q", c.Param("token"))
	}
	toks, err := h.env.Store.ListTokens(c.Request().Context(), u.ID)
	if err != nil {
		return nil, nil, err
	}
	for i := range toks {
		if toks[i].ID == id {
			return u, &toks[i], nil
		}
	}
	return nil, nil, models.E(models.NotFound, "token", "%s has no token %d", u.Name, id)
}

// ConfirmRevokeUserToken asks before revoking a user's token
// (GET /users/:id/tokens/:token/revoke, admins only), for browsers without
// JavaScript.
func (h *Handler) ConfirmRevokeUserToken(c echo.Context) error {
	u, tok, err := h.userToken(c)
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.ConfirmPage(layout.Page(c, "Revoke token", "users"), views.Confirm{
		Title:   "Revoke " + u.Name + "'s token “" + tok.Name + "”?",
		Message: "Clients using this token (it starts with " + tok.Prefix + ") stop working at once. This cannot be undone.",
		Action:  av.UserTokenRevokeURL(u.ID, tok.ID),
		Cancel:  av.UserURL(u.ID),
		Button:  "Revoke token",
	}))
}

// RevokeUserToken revokes one of a user's tokens
// (POST /users/:id/tokens/:token/revoke, admins only).
func (h *Handler) RevokeUserToken(c echo.Context) error {
	u, tok, err := h.userToken(c)
	if err != nil {
		return err
	}
	if tok.RevokedAt == nil {
		if err := h.env.Store.RevokeToken(c.Request().Context(), handlers.Actor(c), tok.ID); err != nil {
			return err
		}
	}
	handlers.AddFlash(c, handlers.FlashSuccess, "Token “"+tok.Name+"” of "+u.Name+" revoked.")
	return handlers.SeeOther(c, av.UserURL(u.ID))
}
