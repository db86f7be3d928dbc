package account

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/store"
	"corral/views"
	av "corral/views/account"
)

// sessionRows turns the signed-in user's sessions into the Tokens page's
// rows, marking the one this request came with.
func (h *Handler) sessionRows(c echo.Context) ([]av.SessionRow, error) {
	list, err := h.env.Store.ListSessions(c.Request().Context(), handlers.CurrentUser(c).ID, h.env.CurrentTime())
	if err != nil {
		return nil, err
	}
	var cur int64
	if s := handlers.CurrentSession(c); s != nil {
		cur = s.ID
	}
	out := make([]av.SessionRow, len(list))
	for i, s := range list {
		out[i] = av.SessionRow{
			ID: s.ID, Started: s.CreatedAt, LastSeen: s.LastSeenAt, Expires: s.ExpiresAt,
			UserAgent: s.UserAgent, IP: s.IP, Current: s.ID == cur,
		}
	}
	return out, nil
}

// ownSession finds one of the signed-in user's live sessions by the :id
// parameter; another user's session is "not found", so ids don't leak.
func (h *Handler) ownSession(c echo.Context) (*store.Session, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return nil, models.E(models.NotFound, "id", "no session %q", c.Param("id"))
	}
	list, err := h.env.Store.ListSessions(c.Request().Context(), handlers.CurrentUser(c).ID, h.env.CurrentTime())
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
func (h *Handler) ConfirmRevokeSession(c echo.Context) error {
	s, err := h.ownSession(c)
	if err != nil {
		return err
	}
	msg := "The browser at " + s.IP + " (" + av.ShortAgent(s.UserAgent) + ") must sign in again."
	if cur := handlers.CurrentSession(c); cur != nil && cur.ID == s.ID {
		msg = "This is the session you are using: you will be signed out here."
	}
	return handlers.Render(c, http.StatusOK, views.ConfirmPage(layout.Page(c, "Sign out session", "tokens"), views.Confirm{
		Title:   "Sign out this session?",
		Message: msg,
		Action:  av.SessionRevokeURL(s.ID),
		Cancel:  "/tokens",
		Button:  "Sign out session",
	}))
}

// RevokeSession signs out one of the user's sessions
// (POST /sessions/:id/revoke). Ending the session in use is signing out.
func (h *Handler) RevokeSession(c echo.Context) error {
	s, err := h.ownSession(c)
	if err != nil {
		return err
	}
	if cur := handlers.CurrentSession(c); cur != nil && cur.ID == s.ID {
		return h.Logout(c)
	}
	if err := h.env.Store.EndSessionByID(c.Request().Context(), handlers.CurrentUser(c).ID, s.ID); err != nil {
		return err
	}
	h.env.Logger().Info("session signed out", "user", handlers.CurrentUser(c).Name, "session", s.ID)
	handlers.AddFlash(c, handlers.FlashSuccess, "The session at "+s.IP+" is signed out.")
	return handlers.SeeOther(c, "/tokens")
}

// RevokeOtherSessions signs out every session of the user but this one
// (POST /sessions/revoke-others).
func (h *Handler) RevokeOtherSessions(c echo.Context) error {
	sid := handlers.CurrentSID(c)
	if sid == "" {
		// Only a console session has an "other": an API token's caller
		// would end every sign-in, which is not what it asked for.
		return models.E(models.Invalid, "", "signing out other sessions needs a console session")
	}
	u := handlers.CurrentUser(c)
	n, err := h.env.Store.EndOtherSessions(c.Request().Context(), u.ID, sid)
	if err != nil {
		return err
	}
	h.env.Logger().Info("other sessions signed out", "user", u.Name, "count", n)
	handlers.AddFlash(c, handlers.FlashSuccess, "Signed out "+plural(n, "other session")+".")
	return handlers.SeeOther(c, "/tokens")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
