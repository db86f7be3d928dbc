package handlers

import (
	"strings"

	"github.com/labstack/echo/v4"

	"corral/models/scheduling"
)

// FlashWhereItWent tells the person where a write went when corral is
// connected to a cloud ("Rolled out to the cloud: 2 calls"), and what was
// kept in corral only; standalone (a nil a.Cloud) it says nothing, the
// form's own message being the whole story.
func FlashWhereItWent(c echo.Context, a *scheduling.Applied) {
	if a == nil || a.Cloud == nil {
		return
	}
	msg := a.Cloud.Summary()
	if len(a.Cloud.Calls) > 0 {
		msg += " (" + strings.Join(a.Cloud.Calls, "; ") + ")"
	}
	kind := FlashSuccess
	if len(a.Cloud.Local) > 0 {
		kind = FlashWarning
	}
	AddFlash(c, kind, strings.ToUpper(msg[:1])+msg[1:]+".")
}
