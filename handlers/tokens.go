package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/views"
)

// Tokens lists the signed-in user's API tokens (GET /tokens).
func (env *Env) Tokens(c echo.Context) error {
	return env.renderTokens(c, http.StatusOK, views.TokensProps{})
}

func (env *Env) renderTokens(c echo.Context, status int, props views.TokensProps) error {
	toks, err := env.Store.ListTokens(c.Request().Context(), CurrentUser(c).ID)
	if err != nil {
		return err
	}
	props.Tokens = toks
	if props.Sessions, err = env.sessionRows(c); err != nil {
		return err
	}
	return Render(c, status, views.Tokens(newPage(c, "API tokens", "tokens"), props))
}

// CreateToken makes a token for the signed-in user (POST /tokens) and shows
// it, this once, in the page that answers the form.
func (env *Env) CreateToken(c echo.Context) error {
	u := CurrentUser(c)
	name := strings.TrimSpace(c.FormValue("name"))
	if name == "" {
		return env.renderTokens(c, http.StatusBadRequest, views.TokensProps{NameError: "Give the token a name, e.g. what will use it."})
	}
	plain, tok, err := env.Store.CreateToken(c.Request().Context(), Actor(c), u.Name, name)
	if err != nil {
		errs, ok := FormErrors(err)
		if !ok {
			return err
		}
		errs = OnlyFields(errs, "name")
		props := views.TokensProps{Name: name, Error: errs[""], NameError: errs["name"]}
		return env.renderTokens(c, StatusOf(err), props)
	}
	return env.renderTokens(c, http.StatusCreated, views.TokensProps{NewToken: plain, NewName: tok.Name})
}

// ownToken finds one of the signed-in user's tokens by the :id parameter;
// another user's token is "not found", not "forbidden", so ids don't leak.
func (env *Env) ownToken(c echo.Context) (*models.APIToken, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return nil, models.E(models.NotFound, "id", "no token %q", c.Param("id"))
	}
	toks, err := env.Store.ListTokens(c.Request().Context(), CurrentUser(c).ID)
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
func (env *Env) ConfirmRevokeToken(c echo.Context) error {
	tok, err := env.ownToken(c)
	if err != nil {
		return err
	}
	url := views.TokenRevokeURL(tok.ID)
	return Render(c, http.StatusOK, views.ConfirmPage(newPage(c, "Revoke token", "tokens"), views.Confirm{
		Title:   "Revoke token “" + tok.Name + "”?",
		Message: "Clients using this token (it starts with " + tok.Prefix + ") stop working at once. This cannot be undone.",
		Action:  url,
		Cancel:  "/tokens",
		Button:  "Revoke token",
	}))
}

// RevokeToken revokes one of the signed-in user's tokens
// (POST /tokens/:id/revoke).
func (env *Env) RevokeToken(c echo.Context) error {
	tok, err := env.ownToken(c)
	if err != nil {
		return err
	}
	if tok.RevokedAt == nil {
		if err := env.Store.RevokeToken(c.Request().Context(), Actor(c), tok.ID); err != nil {
			return err
		}
	}
	AddFlash(c, FlashSuccess, "Token “"+tok.Name+"” revoked.")
	return SeeOther(c, "/tokens")
}
