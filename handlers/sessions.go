package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/store"
	"corral/views"
)

// sessionRows turns the signed-in user's sessions into the Tokens page's
// rows, marking the one this request came with.
func (env *Env) sessionRows(c echo.Context) ([]views.SessionRow, error) {
	list, err := env.Store.ListSessions(c.Request().Context(), CurrentUser(c).ID, env.now())
	if err != nil {
		return nil, err
	}
	var cur int64
	if s := CurrentSession(c); s != nil {
		cur = s.ID
	}
	out := make([]views.SessionRow, len(list))
	for i, s := range list {
		out[i] = views.SessionRow{
			ID: s.ID, Started: s.CreatedAt, LastSeen: s.LastSeenAt, Expires: s.ExpiresAt,
			UserAgent: s.UserAgent, IP: s.IP, Current: s.ID == cur,
		}
	}
	return out, nil
}

// ownSession finds one of the signed-in user's live sessions by the :id
// parameter; another user's session is "not found", so ids don't leak.
func (env *Env) ownSession(c echo.Context) (*store.Session, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return nil, models.E(models.NotFound, "id", "no session %q", c.Param("id"))
	}
	list, err := env.Store.ListSessions(c.Request().Context(), CurrentUser(c).ID, env.now())
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].ID == id {
			return &list[i], nil
		}
	}
	return nil, models.E(models.NotFound, "id", "you have no session %d", id)
}

// ConfirmRevokeSession asks before signing out one of the user's sessions
// (GET /sessions/:id/revoke), for browsers without JavaScript.
func (env *Env) ConfirmRevokeSession(c echo.Context) error {
	s, err := env.ownSession(c)
	if err != nil {
		return err
	}
	msg := "The browser at " + s.IP + " (" + views.ShortAgent(s.UserAgent) + ") must sign in again."
	if cur := CurrentSession(c); cur != nil && cur.ID == s.ID {
		msg = "This is the session you are using: you will be signed out here."
	}
	return Render(c, http.StatusOK, views.ConfirmPage(newPage(c, "Sign out session", "tokens"), views.Confirm{
		Title:   "Sign out this session?",
		Message: msg,
		Action:  views.SessionRevokeURL(s.ID),
		Cancel:  "/tokens",
		Button:  "Sign out session",
	}))
}

// RevokeSession signs out one of the user's sessions
// (POST /sessions/:id/revoke). Ending the session in use is signing out.
func (env *Env) RevokeSession(c echo.Context) error {
	s, err := env.ownSession(c)
	if err != nil {
		return err
	}
	if cur := CurrentSession(c); cur != nil && cur.ID == s.ID {
		return env.Logout(c)
	}
	if err := env.Store.EndSessionByID(c.Request().Context(), CurrentUser(c).ID, s.ID); err != nil {
		return err
	}
	env.Logger().Info("session signed out", "user", CurrentUser(c).Name, "session", s.ID)
	AddFlash(c, FlashSuccess, "The session at "+s.IP+" is signed out.")
	return SeeOther(c, "/tokens")
}

// RevokeOtherSessions signs out every session of the user but this one
// (POST /sessions/revoke-others).
func (env *Env) RevokeOtherSessions(c echo.Context) error {
	sid := currentSID(c)
	if sid == "" {
		// Only a console session has an "other": an API token's caller
		// would end every sign-in, which is not what it asked for.
		return models.E(models.Invalid, "", "signing out other sessions needs a console session")
	}
	u := CurrentUser(c)
	n, err := env.Store.EndOtherSessions(c.Request().Context(), u.ID, sid)
	if err != nil {
		return err
	}
	env.Logger().Info("other sessions signed out", "user", u.Name, "count", n)
	AddFlash(c, FlashSuccess, "Signed out "+plural(n, "other session")+".")
	return SeeOther(c, "/tokens")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
