package account

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models"
	"corral/views"
	av "corral/views/account"
)

// Tokens lists the signed-in user's API tokens (GET /tokens).
func (h *Handler) Tokens(c echo.Context) error {
	return h.renderTokens(c, http.StatusOK, av.TokensProps{})
}

func (h *Handler) renderTokens(c echo.Context, status int, props av.TokensProps) error {
	toks, err := h.env.Store.ListTokens(c.Request().Context(), handlers.CurrentUser(c).ID)
	if err != nil {
		return err
	}
	props.Tokens = toks
	if props.Sessions, err = h.sessionRows(c); err != nil {
		return err
	}
	return handlers.Render(c, status, av.Tokens(layout.Page(c, "API tokens", "tokens"), props))
}

// CreateToken makes a token for the signed-in user (POST /tokens) and shows
// it, this once, in the page that answers the form.
func (h *Handler) CreateToken(c echo.Context) error {
	u := handlers.CurrentUser(c)
	name := strings.TrimSpace(c.FormValue("name"))
	if name == "" {
		return h.renderTokens(c, http.StatusBadRequest, av.TokensProps{NameError: "Give the token a name, e.g. what will use it."})
	}
	plain, tok, err := h.env.Store.CreateToken(c.Request().Context(), handlers.Actor(c), u.Name, name)
	if err != nil {
		errs, ok := handlers.FormErrors(err)
		if !ok {
			return err
		}
		errs = handlers.OnlyFields(errs, "name")
		props := av.TokensProps{Name: name, Error: errs[""], NameError: errs["name"]}
		return h.renderTokens(c, handlers.StatusOf(err), props)
	}
	return h.renderTokens(c, http.StatusCreated, av.TokensProps{NewToken: plain, NewName: tok.Name})
}

// ownToken finds one of the signed-in user's tokens by the :id parameter;
// another user's token is "not found", not "forbidden", so ids don't leak.
func (h *Handler) ownToken(c echo.Context) (*models.APIToken, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return nil, models.E(models.NotFound, "id", "no token %q", c.Param("id"))
	}
	toks, err := h.env.Store.ListTokens(c.Request().Context(), handlers.CurrentUser(c).ID)
	if err != nil {
		return nil, err
	}
	for i := range toks {
		if toks[i].ID == id {
			return &toks[i], nil
		}
	}
	return nil, models.E(models.NotFound, "id", "you have no token %d", id)
}

// ConfirmRevokeToken asks before revoking (GET /tokens/:id/revoke), for
// browsers without JavaScript.
func (h *Handler) ConfirmRevokeToken(c echo.Context) error {
	tok, err := h.ownToken(c)
	if err != nil {
		return err
	}
	url := av.TokenRevokeURL(tok.ID)
	return handlers.Render(c, http.StatusOK, views.ConfirmPage(layout.Page(c, "Revoke token", "tokens"), views.Confirm{
		Title:   "Revoke token “" + tok.Name + "”?",
		Message: "Clients using this token (it starts with " + tok.Prefix + ") stop working at once. This cannot be undone.",
		Action:  url,
		Cancel:  "/tokens",
		Button:  "Revoke token",
	}))
}

// RevokeToken revokes one of the signed-in user's tokens
// (POST /tokens/:id/revoke).
func (h *Handler) RevokeToken(c echo.Context) error {
	tok, err := h.ownToken(c)
	if err != nil {
		return err
	}
	if tok.RevokedAt == nil {
		if err := h.env.Store.RevokeToken(c.Request().Context(), handlers.Actor(c), tok.ID); err != nil {
			return err
		}
	}
	handlers.AddFlash(c, handlers.FlashSuccess, "Token “"+tok.Name+"” revoked.")
	return handlers.SeeOther(c, "/tokens")
}
