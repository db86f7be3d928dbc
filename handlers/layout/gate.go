package layout

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
	"corral/models/scheduling"
	"corral/views"
)

// ConfirmField is the form field that carries a write's confirmation of
// its consequences: the gate's token.
const ConfirmField = "confirm_impact"

// gateListed caps the servers and groups the gate's pages list by name.
const gateListed = 50

// GateProps is what the views show of a gate; confirm is the token the
// form carried (the box stays ticked while the consequences are the same).
func GateProps(g *scheduling.Gate, confirm string) views.GateProps {
	p := views.GateProps{PairsChecked: g.PairsChecked, PairsLosing: g.PairsLosing, PairsGaining: g.PairsGaining,
		Consequences: g.Consequences(), Token: g.Token, Confirmed: g.NeedsConfirmation() && confirm == g.Token}
	for _, s := range g.Servers[:min(len(g.Servers), gateListed)] {
		p.Servers = append(p.Servers, views.StrandedServer{Name: s.Name, Project: s.Project, Host: s.Host, Reason: s.Reason})
	}
	for _, gr := range g.Groups[:min(len(g.Groups), gateListed)] {
		p.Groups = append(p.Groups, views.BrokenGroup{Name: gr.Name, Project: gr.Project, Policy: gr.Policy, Reason: gr.Reason})
	}
	for _, e := range g.Pairs[:min(len(g.Pairs), gateListed)] {
		p.Emptied = append(p.Emptied, fmt.Sprintf("%s × %s (had %s)", e.Project, e.Flavor, views.Plural(e.Live, "host", "hosts")))
	}
	return p
}

// GateRefusal is a console write stopped at the gate: it has
// consequences to confirm and the form did not confirm them. Review
// answers it with the page that asks.
type GateRefusal struct {
	Gate    *scheduling.Gate
	Changes []scheduling.Change
}

func (r *GateRefusal) Error() string { return r.Gate.Refusal(ConfirmField).Error() }

// CheckGate judges changes against live before a console form commits
// them: nil when they have no consequence to confirm or the form
// confirmed exactly these; a *GateRefusal otherwise. Changes that do not
// apply pass: the write path refuses them with its own message.
func CheckGate(c echo.Context, live *scheduling.Snapshot, changes []scheduling.Change) error {
	if len(changes) == 0 || slices.ContainsFunc(changes, func(ch scheduling.Change) bool { return ch.Op == scheduling.OpSetQuotas }) {
		return nil
	}
	g, err := scheduling.GateOf(live, changes)
	if err != nil {
		if models.KindOf(err) == models.Internal {
			return err
		}
		return nil
	}
	if g.Confirmed(c.FormValue(ConfirmField)) {
		return nil
	}
	return &GateRefusal{Gate: g, Changes: changes}
}

// Review is a middleware for the console's write routes: a handler that
// ends with a *GateRefusal gets, instead of its own error handling, the
// page that lists the consequences and posts the same form again with
// the confirmation (409: nothing was written).
func Review(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		var r *GateRefusal
		if err == nil || !errors.As(err, &r) || c.Response().Committed {
			return err
		}
		params, _ := c.FormParams()
		props := views.ReviewProps{Title: "Confirm before saving", Gate: GateProps(r.Gate, ""),
			Action: c.Request().URL.Path, Cancel: backTo(c)}
		for _, ch := range r.Changes[:min(len(r.Changes), gateListed)] {
			props.Described = append(props.Described, scheduling.DescribeChange(ch))
		}
		if n := len(r.Changes) - gateListed; n > 0 {
			props.Described = append(props.Described, fmt.Sprintf("… and %d more", n))
		}
		for _, k := range slices.Sorted(maps.Keys(params)) {
			if k == views.CSRFFormField || k == ConfirmField {
				continue
			}
			for _, v := range params[k] {
				props.Fields = append(props.Fields, views.HiddenField{Name: k, Value: v})
			}
		}
		return handlers.Render(c, http.StatusConflict, views.ReviewPage(Page(c, "Confirm before saving", ""), props))
	}
}

// backTo is the page the form was posted from, when it is one of ours.
func backTo(c echo.Context) string {
	if u, err := url.Parse(c.Request().Referer()); err == nil && strings.HasPrefix(u.Path, "/") && !strings.HasPrefix(u.Path, "//") {
		if u.RawQuery != "" {
			return u.Path + "?" + u.RawQuery
		}
		return u.Path
	}
	return "/"
}
