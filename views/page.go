// Package views holds the console's shared templ components: the layout,
// the form, flash, pagination, confirmation and error building blocks, and
// the query and draft pages. The pages of other areas live in subpackages
// (account, console, world) beside the handler packages that fill them.
// Views only render what they are given; handlers decide what that is.
//
// Elements that tests look for carry a data-testid attribute, so that tests
// survive changes of wording and markup.
package views

import (
	"encoding/json"
	"strconv"
	"time"

	"corral/models"
)

// CSRFFormField is the form field the CSRF middleware reads; CSRFHeader is
// the header htmx requests carry instead.
const (
	CSRFFormField = "_csrf"
	CSRFHeader    = "X-CSRF-Token"
)

// Flash kinds: one per outcome.
const (
	FlashSuccess = "success"
	FlashWarning = "warning"
	FlashError   = "error"
)

// Flash is a one-time message shown at the top of the next page.
type Flash struct {
	Kind string // FlashSuccess, FlashWarning or FlashError
	Msg  string
}

// Page is what the layout needs from every console request.
type Page struct {
	Title   string
	Active  string // the navigation key of the current page, e.g. "audit"
	User    *models.User
	CSRF    string
	Flashes []Flash
	// ProjectName is the signed-in Keystone person's project, by name;
	// Region the region corral governs (both empty without Keystone).
	ProjectName string
	Region      string
}

// NavItem is one entry of the side navigation.
type NavItem struct {
	Key, Label, Href string
	Group            string      // a heading shown above this item, if any
	Role             models.Role // the least role that sees the item; "" for all
}

// Nav lists the console's pages in navigation order. Pages are added by
// registering routes; an item whose page does not exist yet simply 404s.
var Nav = []NavItem{
	{Key: "dashboard", Label: "Dashboard", Href: "/"},
	{Key: "query", Label: "Query", Href: "/query"},
	{Key: "aggregates", Label: "Aggregates", Href: "/aggregates", Group: "Inventory"},
	{Key: "providers", Label: "Providers", Href: "/providers"},
	{Key: "flavors", Label: "Flavors", Href: "/flavors"},
	{Key: "server-groups", Label: "Server groups", Href: "/server-groups"},
	{Key: "servers", Label: "Servers", Href: "/servers"},
	{Key: "quotas", Label: "Quotas", Href: "/quotas"},
	{Key: "drafts", Label: "Drafts", Href: "/drafts", Group: "Changes"},
	{Key: "settings", Label: "Settings", Href: "/settings"},
	{Key: "world", Label: "World", Href: "/world", Role: models.RoleAdmin},
	{Key: "cloud", Label: "Cloud", Href: "/cloud"},
	{Key: "doctor", Label: "Doctor", Href: "/doctor"},
	{Key: "audit", Label: "Audit", Href: "/audit"},
	{Key: "tokens", Label: "Tokens", Href: "/tokens", Group: "Access"},
	{Key: "users", Label: "Users", Href: "/users", Role: models.RoleAdmin},
}

func navItems(u *models.User) []NavItem {
	if u == nil {
		return nil
	}
	out := make([]NavItem, 0, len(Nav))
	for _, it := range Nav {
		if it.Role == "" || u.Role.AtLeast(it.Role) {
			out = append(out, it)
		}
	}
	return out
}

// htmxConfig keeps htmx inside the Content-Security-Policy: no inline
// indicator styles (static/css has them) and no eval, so event filters such
// as keyup[key=='Enter'] are unavailable: trigger on "input changed" instead.
// Error responses are swapped in like any other, so the error fragment the
// server sends for a failed htmx request is seen rather than dropped.
const htmxConfig = `{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"historyCacheSize":0,` +
	`"responseHandling":[{"code":"204","swap":false},{"code":"[23]..","swap":true},{"code":"[45]..","swap":true,"error":true},{"code":"...","swap":false}]}`

func csrfHeaders(token string) string {
	b, _ := json.Marshal(map[string]string{CSRFHeader: token})
	return string(b)
}

func flashRole(kind string) string {
	if kind == FlashError {
		return "alert"
	}
	return "status"
}

// When formats a timestamp the same way on every page (UTC, to the second).
func When(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// WhenPtr is When for optional timestamps.
func WhenPtr(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return When(*t)
}

// Plural returns "1 host", "2 hosts".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func itoa(n int) string { return strconv.Itoa(n) }
