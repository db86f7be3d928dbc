// Package account serves the console's pages about people and access:
// signing in and out, the dashboard, a user's own API tokens, sessions and
// password, the admin's user pages and the audit log, and GET /api/whoami.
package account

import (
	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
)

// Handler serves the account pages. It keeps the dashboard's counts
// between requests.
type Handler struct {
	env      *handlers.Env
	counts   countCache
	attempts userAttempts
}

// Register mounts the sign-in pages on public (which needs no sign-in;
// loginLimit slows down password guessing there and on the password form),
// the pages on console and GET /whoami on api.
func Register(public, console, api *echo.Group, env *handlers.Env, loginLimit echo.MiddlewareFunc) *Handler {
	h := &Handler{env: env}
	public.GET("/login", h.LoginForm)
	handlers.Body(handlers.SignInForm, public.POST("/login", h.Login, loginLimit))
	handlers.Body(handlers.SignInForm, public.POST("/logout", h.Logout))
	public.GET("/login/project", h.ChooseProjectForm)
	handlers.Body(handlers.SignInForm, public.POST("/login/project", h.ChooseProject))

	c := console
	c.GET("/", h.Home)
	c.GET("/tokens", h.Tokens)
	handlers.Body(handlers.SmallForm, c.POST("/tokens", h.CreateToken, localUserOnly))
	c.GET("/tokens/:id/revoke", h.ConfirmRevokeToken, localUserOnly)
	handlers.Body(handlers.SmallForm, c.POST("/tokens/:id/revoke", h.RevokeToken, localUserOnly))
	c.GET("/audit", h.Audit)
	// A user's own sessions and password live on the Tokens page; each
	// destructive action has a GET confirmation page for browsers without
	// JavaScript. The password form checks the current password, so it is
	// rate-limited like signing in.
	handlers.Body(handlers.SignInForm, c.POST("/password", h.ChangePassword, loginLimit, localUserOnly))
	handlers.Body(handlers.SmallForm, c.POST("/sessions/revoke-others", h.RevokeOtherSessions, localUserOnly))
	c.GET("/sessions/:id/revoke", h.ConfirmRevokeSession, localUserOnly)
	handlers.Body(handlers.SmallForm, c.POST("/sessions/:id/revoke", h.RevokeSession, localUserOnly))
	admin := handlers.RequireRole(models.RoleAdmin)
	c.GET("/users", h.Users, admin)
	handlers.Body(handlers.SmallForm, c.POST("/users", h.CreateUser, admin))
	c.GET("/users/:id/sessions/revoke", h.ConfirmSignOutUser, admin)
	handlers.Body(handlers.SmallForm, c.POST("/users/:id/sessions/revoke", h.SignOutUser, admin))
	c.GET("/users/:id", h.ShowUser, admin)
	handlers.Body(handlers.SmallForm, c.POST("/users/:id", h.EditUser, admin))
	handlers.Body(handlers.SmallForm, c.POST("/users/:id/password", h.SetUserPassword, admin))
	c.GET("/users/:id/delete", h.ConfirmDeleteUser, admin)
	handlers.Body(handlers.SmallForm, c.POST("/users/:id/delete", h.DeleteUser, admin))
	c.GET("/users/:id/tokens/:token/revoke", h.ConfirmRevokeUserToken, admin)
	handlers.Body(handlers.SmallForm, c.POST("/users/:id/tokens/:token/revoke", h.RevokeUserToken, admin))

	api.GET("/whoami", h.WhoAmI)
	return h
}
