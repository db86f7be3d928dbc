// Package console serves the pages where admins manage what decides where
// servers may land: aggregates (name, zone, metadata, tenant and reservation
// tags, members), resource providers, flavors and their extra specs, server
// groups, and the scheduler settings.
//
// Every page works as plain HTML forms (Post/Redirect/Get with one flash
// per outcome); htmx only adds live search and live validation. Writes go
// through the store in one transaction each and carry the generation the
// page was rendered from, so a concurrent edit is reported as "changed by
// someone else — reload" instead of being overwritten.
package console

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/forms"
	"corral/handlers/layout"
	"corral/models"
	"corral/models/scheduling"
	"corral/models/store"
	"corral/views"
)

// Register mounts the pages on g, the console's route group (signed-in
// users only, CSRF-checked).
func Register(g *echo.Group, env *handlers.Env) {
	h := &Handler{env: env}
	admin := handlers.RequireRole(models.RoleAdmin)
	member := handlers.RequireRole(models.RoleMember)

	g.GET("/aggregates", h.AggregateList)
	g.GET("/aggregates/new", h.AggregateNew, admin)
	handlers.Body(handlers.SmallForm, g.POST("/aggregates", h.AggregateCreate, admin, layout.Review))
	g.GET("/aggregates/:id", h.AggregateDetail)
	g.GET("/aggregates/:id/picker", h.AggregatePicker)
	handlers.Body(handlers.SmallForm, g.POST("/aggregates/:id", h.AggregateUpdate, admin, layout.Review))
	handlers.Body(handlers.SmallForm, g.POST("/aggregates/:id/metadata", h.AggregateMetadata, admin, layout.Review))
	handlers.Body(handlers.SmallForm, g.POST("/aggregates/:id/metadata/validate", h.AggregateMetadataValidate))
	handlers.Body(handlers.SmallForm, g.POST("/aggregates/:id/tenants", h.TenantAdd, admin, layout.Review))
	handlers.Body(handlers.SmallForm, g.POST("/aggregates/:id/tenants/remove", h.TenantRemove, admin, layout.Review))
	handlers.Body(handlers.SmallForm, g.POST("/aggregates/:id/reservations", h.ReservationAdd, admin, layout.Review))
	handlers.Body(handlers.SmallForm, g.POST("/aggregates/:id/reservations/remove", h.ReservationRemove, admin, layout.Review))
	handlers.Body(handlers.ListForm, g.POST("/aggregates/:id/members", h.MembersAdd, admin, layout.Review))
	handlers.Body(handlers.ListForm, g.POST("/aggregates/:id/members/remove", h.MembersRemove, admin, layout.Review))
	g.GET("/aggregates/:id/delete", h.AggregateConfirmDelete, admin)
	handlers.Body(handlers.SmallForm, g.POST("/aggregates/:id/delete", h.AggregateDelete, admin, layout.Review))

	g.GET("/providers", h.ProviderList)
	g.GET("/providers/:id", h.ProviderDetail)
	handlers.Body(handlers.SmallForm, g.POST("/providers/:id/inventory", h.ProviderInventory, admin, layout.Review))
	handlers.Body(handlers.SmallForm, g.POST("/providers/:id/traits", h.ProviderTraits, admin, layout.Review))

	g.GET("/flavors", h.FlavorList)
	g.GET("/flavors/new", h.FlavorNew, admin)
	handlers.Body(handlers.SmallForm, g.POST("/flavors", h.FlavorCreate, admin, layout.Review))
	handlers.Body(handlers.SmallForm, g.POST("/flavors/validate", h.FlavorSpecsValidate))
	g.GET("/flavors/:id", h.FlavorDetail)
	handlers.Body(handlers.SmallForm, g.POST("/flavors/:id", h.FlavorUpdate, admin, layout.Review))
	g.GET("/flavors/:id/delete", h.FlavorConfirmDelete, admin)
	handlers.Body(handlers.SmallForm, g.POST("/flavors/:id/delete", h.FlavorDelete, admin, layout.Review))

	g.GET("/server-groups", h.GroupList)
	g.GET("/server-groups/new", h.GroupNew, member)
	handlers.Body(handlers.SmallForm, g.POST("/server-groups", h.GroupCreate, member, layout.Review))
	g.GET("/server-groups/:id", h.GroupDetail)
	handlers.Body(handlers.ListForm, g.POST("/server-groups/:id/members", h.GroupMembersAdd, member, layout.Review))
	handlers.Body(handlers.ListForm, g.POST("/server-groups/:id/members/remove", h.GroupMembersRemove, member, layout.Review))
	g.GET("/server-groups/:id/delete", h.GroupConfirmDelete, member)
	handlers.Body(handlers.SmallForm, g.POST("/server-groups/:id/delete", h.GroupDelete, member, layout.Review))

	g.GET("/servers", h.ServerList)

	g.GET("/settings", h.Settings)
	handlers.Body(handlers.SmallForm, g.POST("/settings", h.SettingsSave, admin, layout.Review))
	h.registerQuotas(g)
}

// Handler serves the console pages.
type Handler struct {
	env     *handlers.Env
	busiest busiestCache // the Servers page's host summary
}

// snapshot is the store's live snapshot of the world (the flavor page
// counts the hosts a flavor fits on).
func (h *Handler) snapshot(c echo.Context) (*scheduling.Snapshot, error) {
	s, _, err := h.env.Store.Live().Get(c.Request().Context())
	return s, err
}

func (h *Handler) store() *store.Store { return h.env.Store }

func isAdmin(c echo.Context) bool { return handlers.HasRole(c, models.RoleAdmin) }

// formGeneration reads the generation a form was rendered from. A missing or
// malformed one is refused: saving without it could overwrite someone
// else's change unseen.
func formGeneration(c echo.Context) (int64, error) {
	g, err := strconv.ParseInt(strings.TrimSpace(c.FormValue("generation")), 10, 64)
	if err != nil || g < 0 {
		return 0, models.E(models.Invalid, "generation", "the form is missing its generation; reload the page and try again")
	}
	return g, nil
}

// conflictMessage is what a person reads when a save lost a race.
func conflictMessage(err error) string {
	if forms.Field(err) == "generation" {
		return "Not saved: " + errMsg(err) + "."
	}
	return errMsg(err)
}

// errMsg is the message of a corral error without its field prefix.
func errMsg(err error) string {
	var ce *models.Error
	if errors.As(err, &ce) && ce.Msg != "" {
		return ce.Msg
	}
	return err.Error()
}

// isStale reports whether err is a lost race (stale generation), found
// by the handler or by the write path ("changes[0].generation").
func isStale(err error) bool {
	return models.KindOf(err) == models.Conflict && forms.Field(err) == "generation"
}

// userError reports whether err is the user's to fix (shown on the page)
// rather than a fault to return to the error handler.
func userError(err error) bool {
	var gate *layout.GateRefusal
	return err != nil && models.KindOf(err) != models.Internal && !errors.As(err, &gate)
}

// queryList reads q, sort and desc for a list page.
func queryList(c echo.Context) (search, sort string, desc bool) {
	search = strings.TrimSpace(c.QueryParam("q"))
	sort = strings.TrimSpace(c.QueryParam("sort"))
	d := c.QueryParam("desc")
	desc = d == "1" || d == "true"
	return
}

// redirectFlash queues one message and redirects (Post/Redirect/Get).
func redirectFlash(c echo.Context, kind, msg, to string) error {
	handlers.AddFlash(c, kind, msg)
	return handlers.SeeOther(c, to)
}

// retryForm ends a refused form post with post/redirect/get: the browser
// goes back to page (a GET) with the typed values in the URL under
// retry=form, where the page reads them as the post did and checks them
// again, so that a reload or Enter shows the same form instead of a
// POST-only address. errs are the messages that second look cannot find
// again (a concurrent edit, a taken name); they wait in the session for
// that page. The CSRF token stays out of the URL.
//
// The address stays short (maxRetryQuery): values too long for it (a
// pasted list of hundreds of hosts) are left out and the message says so,
// and the kept messages are cut to fit the session cookie.
func retryForm(c echo.Context, page, form string, errs map[string]string, anchor string) error {
	params, _ := c.FormParams()
	q := url.Values{}
	for k, v := range params {
		if k == views.CSRFFormField || strings.HasPrefix(k, "impact_") || k == "retry" {
			continue
		}
		q[k] = v
	}
	q.Set("retry", form)
	kept := map[string]string{}
	for k, v := range errs {
		kept[k] = shorten(v, maxKeptMessage)
	}
	if dropped := fitQuery(q, maxRetryQuery); dropped > 0 {
		note := fmt.Sprintf("What you pasted (%s) was too long to bring back here: paste it again.", sizeOf(dropped))
		if kept[""] != "" {
			note = kept[""] + " " + note
		}
		kept[""] = note
	}
	handlers.KeepFormErrors(c, form, kept)
	return handlers.SeeOther(c, page+"?"+q.Encode()+anchor)
}

// maxRetryQuery bounds the query of a retry address, well under what
// browsers, proxies and servers accept; maxKeptMessage bounds each kept
// message, so that all of them fit the session cookie.
const (
	maxRetryQuery  = 1500
	maxKeptMessage = 300
)

// fitQuery leaves out of q its longest fields until it encodes to at most
// limit bytes, and says how many bytes of values it left out.
func fitQuery(q url.Values, limit int) int {
	dropped := 0
	for len(q.Encode()) > limit {
		longest, size := "", -1
		for k, v := range q {
			if n := len(url.Values{k: v}.Encode()); k != "retry" && n > size {
				longest, size = k, n
			}
		}
		if longest == "" {
			break
		}
		for _, v := range q[longest] {
			dropped += len(v)
		}
		q.Del(longest)
	}
	return dropped
}

// sizeOf words a size in bytes for people.
func sizeOf(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d KB", (n+1023)/1024)
}

// shorten cuts s to at most n bytes, at a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// retrying reports whether this GET re-shows the refused form named form
// (see retryForm), with the messages kept for it.
func retrying(c echo.Context, form string) (bool, map[string]string) {
	if c.QueryParam("retry") != form {
		return false, nil
	}
	return true, handlers.TakeFormErrors(c, form)
}

// mergeErrors adds the kept messages to the form's own.
func mergeErrors(dst, kept map[string]string) {
	for k, v := range kept {
		if dst[k] == "" {
			dst[k] = v
		}
	}
}

// apply hands a form's changes to the one write path (Env.Writer), as the
// signed-in user, once they pass the safety gate: changes that strand
// running servers, break server groups or leave a project × flavor pair
// with no host need the form's confirmation of exactly those (a
// *layout.GateRefusal otherwise, which layout.Review turns into the page
// that asks for it).
func (h *Handler) apply(c echo.Context, changes []scheduling.Change) (*scheduling.Applied, error) {
	snap, err := h.snapshot(c)
	if err != nil {
		return nil, err
	}
	if err = layout.CheckGate(c, snap, changes); err != nil {
		return nil, err
	}
	unknown := scheduling.UnknownProjects(snap.World(), changes)
	applied, err := h.env.Writer.Apply(c.Request().Context(), handlers.Actor(c), changes)
	if err == nil {
		handlers.FlashWhereItWent(c, applied)
		for _, p := range unknown {
			if p != currentProject(c) {
				handlers.AddFlash(c, handlers.FlashWarning, unknownProjectMessage(p))
			}
		}
	}
	return applied, err
}

// unknownProjectMessage warns of a project nothing in corral names: most
// often a typing mistake.
func unknownProjectMessage(p string) string {
	return fmt.Sprintf("Project “%s” is not known to corral: no tenant tag, server, server group or flavor access list names it. Check the spelling.", p)
}
