// Package layout fills in what every console page's layout shows (title,
// navigation, user, CSRF token, flashes) from a request. It is the bridge
// from the handlers kernel, which knows no views, to the views' Page; only
// packages that render pages import it.
package layout

import (
	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/views"
)

// Page is the layout state of a console page: its title, its key in the
// navigation, the user, the CSRF token and the flashes waiting to be shown
// (taken: each is shown once).
func Page(c echo.Context, title, active string) views.Page {
	p := views.Page{
		Title:   title,
		Active:  active,
		User:    handlers.CurrentUser(c),
		CSRF:    handlers.CSRFToken(c),
		Flashes: Flashes(c),
		Region:  handlers.Region(c),
	}
	if person := handlers.CurrentPerson(c); person != nil {
		p.ProjectName = person.ProjectName
	}
	return p
}

// Flashes takes the request's queued flashes in the views' form.
func Flashes(c echo.Context) []views.Flash {
	fs := handlers.Flashes(c)
	if len(fs) == 0 {
		return nil
	}
	out := make([]views.Flash, len(fs))
	for i, f := range fs {
		out[i] = views.Flash{Kind: f.Kind, Msg: f.Msg}
	}
	return out
}
