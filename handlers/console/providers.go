package console

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/forms"
	"corral/handlers/layout"
	"corral/models"
	corePlacement "corral/models/placement"
	"corral/models/store"
	"corral/views"
	cv "corral/views/console"
)

// servesShown caps the trees listed for one sharing provider.
const servesShown = 8

// providerKindLabels are the provider page's kind filter: the store's kinds
// with the words the page uses for them.
var providerKindLabels = []views.Option{
	{Value: "", Label: "All roots"},
	{Value: store.ProviderKindHost, Label: "Hosts"},
	{Value: store.ProviderKindSharing, Label: "Sharing providers"},
	{Value: store.ProviderKindChild, Label: "Children"},
}

// treeBuilder assembles provider nodes for one page. Every provider the
// page shows is loaded first, so that their aggregates, the names of those
// and the hosts the sharing ones serve take one query each, whatever the
// number of providers.
type treeBuilder struct {
	aggsOf map[string][]string          // provider uuid → aggregate uuids
	names  map[string]string            // aggregate uuid → name
	serves map[string]store.SharedHosts // sharing provider uuid → hosts served
}

func newTreeBuilder(h *Handler, c echo.Context, shown []models.Provider) (*treeBuilder, error) {
	ctx := c.Request().Context()
	ids := make([]string, len(shown))
	for i := range shown {
		ids[i] = shown[i].UUID
	}
	aggsOf, err := h.store().AggregatesOfProviders(ctx, ids)
	if err != nil {
		return nil, err
	}
	var aggIDs []string
	for _, list := range aggsOf {
		aggIDs = append(aggIDs, list...)
	}
	names, err := h.store().AggregateNames(ctx, aggIDs)
	if err != nil {
		return nil, err
	}
	var sharing []string
	for i := range shown {
		if shown[i].IsSharing() {
			sharing = append(sharing, shown[i].UUID)
		}
	}
	serves, err := h.store().HostsSharingWith(ctx, sharing, servesShown)
	if err != nil {
		return nil, err
	}
	return &treeBuilder{aggsOf: aggsOf, names: names, serves: serves}, nil
}

// node describes p: kind, aggregates and, for a sharing provider, the
// trees it serves (hosts sharing one of its aggregates).
func (b *treeBuilder) node(p models.Provider) cv.ProviderNode {
	n := cv.ProviderNode{P: p, Kind: providerKind(&p)}
	for _, u := range b.aggsOf[p.UUID] {
		if name, ok := b.names[u]; ok {
			n.Aggregates = append(n.Aggregates, cv.NamedRef{UUID: u, Name: name})
		}
	}
	sort.Slice(n.Aggregates, func(i, j int) bool { return n.Aggregates[i].Name < n.Aggregates[j].Name })
	if n.Kind == "sharing" {
		sh := b.serves[p.UUID]
		for _, q := range sh.Hosts {
			n.Serves = append(n.Serves, cv.NamedRef{UUID: q.UUID, Name: q.Name})
		}
		n.MoreServes = sh.Total - len(sh.Hosts)
	}
	return n
}

// subtree builds p's node with its descendants, children listing
// providers by parent.
func (b *treeBuilder) subtree(p models.Provider, children map[string][]models.Provider) cv.ProviderNode {
	n := b.node(p)
	for _, q := range children[p.UUID] {
		if q.UUID != p.UUID {
			n.Children = append(n.Children, b.subtree(q, children))
		}
	}
	return n
}

// childrenOf indexes providers by parent (each list in name order, as the
// store returns them).
func childrenOf(all []models.Provider) map[string][]models.Provider {
	children := map[string][]models.Provider{}
	for _, q := range all {
		if q.ParentUUID != nil {
			children[*q.ParentUUID] = append(children[*q.ParentUUID], q)
		}
	}
	return children
}

// treesOf loads the whole trees the providers ps sit in, in one query.
func (h *Handler) treesOf(c echo.Context, ps []models.Provider) ([]models.Provider, error) {
	roots := make([]string, 0, len(ps))
	for _, p := range ps {
		roots = append(roots, p.RootUUID)
	}
	all, _, err := h.store().ListProviders(c.Request().Context(), store.ProviderQuery{InTrees: roots})
	return all, err
}

// ProviderList shows one page of provider trees, or the providers a search
// or kind filter selects (GET /providers?q=&kind=). Providers are paged on
// the server, so a cloud of 100,000 providers renders one page, never all
// of them.
func (h *Handler) ProviderList(c echo.Context) error {
	ctx := c.Request().Context()
	search, _, _ := queryList(c)
	kind := c.QueryParam("kind")
	if !slices.Contains(store.ProviderKinds, kind) || kind == store.ProviderKindRoot {
		kind = ""
	}
	offset, limit := handlers.Paging(c, handlers.DefaultPageSize)
	// Without a search, hosts and sharing providers are shown as trees
	// from the top; children, and anything searched for, as a flat list
	// with each provider's place in its tree.
	asTrees := search == "" && kind != store.ProviderKindChild
	q := store.ProviderQuery{Search: search, Kind: kind, Offset: offset, Limit: limit, RootsOnly: asTrees && kind == ""}
	provs, total, err := h.store().ListProviders(ctx, q)
	if err != nil {
		return err
	}
	all, err := h.treesOf(c, provs)
	if err != nil {
		return err
	}
	d := cv.ProviderListProps{
		List: cv.ListState{Path: "/providers", Search: search,
			Pager: views.Pager{Offset: offset, Limit: limit, Total: total, Path: "/providers", Query: c.QueryParams()}},
		Kind: kind, Kinds: providerKindLabels, AsTrees: asTrees,
	}
	if asTrees {
		// The page shows each tree whole, so load names for all of it.
		b, err := newTreeBuilder(h, c, all)
		if err != nil {
			return err
		}
		children := childrenOf(all)
		for _, p := range provs {
			d.Roots = append(d.Roots, b.subtree(p, children))
		}
	} else {
		b, err := newTreeBuilder(h, c, provs)
		if err != nil {
			return err
		}
		res := newResolver(h, c)
		for i := range all {
			res.cache[all[i].UUID] = &all[i]
		}
		for i := range provs {
			n := b.node(provs[i])
			row, err := res.row(&provs[i])
			if err != nil {
				return err
			}
			n.Path = row.Path
			d.Matches = append(d.Matches, n)
		}
	}
	if handlers.IsHTMX(c) {
		return handlers.Render(c, http.StatusOK, cv.ProviderListBody(d))
	}
	return handlers.Render(c, http.StatusOK, cv.ProviderList(layout.Page(c, "Resource providers", "providers"), d))
}

// ProviderDetail shows one provider with its subtree (GET /providers/:id,
// by uuid or name).
func (h *Handler) ProviderDetail(c echo.Context) error {
	ctx := c.Request().Context()
	p, err := h.store().GetProvider(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	all, _, err := h.store().ListProviders(ctx, store.ProviderQuery{InTree: p.RootUUID})
	if err != nil {
		return err
	}
	b, err := newTreeBuilder(h, c, all)
	if err != nil {
		return err
	}
	n := b.subtree(*p, childrenOf(all))
	d := cv.ProviderDetailProps{Node: n}
	for _, q := range all {
		if p.ParentUUID != nil && q.UUID == *p.ParentUUID {
			d.Parent = &cv.NamedRef{UUID: q.UUID, Name: q.Name}
		}
		if q.UUID == p.RootUUID && q.UUID != p.UUID {
			d.Root = &cv.NamedRef{UUID: q.UUID, Name: q.Name}
		}
	}
	classes := make([]string, 0, len(p.Inventories))
	for rc := range p.Inventories {
		classes = append(classes, rc)
	}
	slices.Sort(classes)
	for _, rc := range classes {
		inv := corePlacement.Normalized(p.Inventories[rc])
		row := cv.InventoryRow{Class: rc, Total: inv.Total, Reserved: inv.Reserved, Ratio: inv.AllocationRatio, Used: p.Usages[rc],
			Capacity: corePlacement.Capacity(inv)}
		row.Free = max(row.Capacity-row.Used, 0)
		if row.Capacity > 0 {
			row.Percent = int(min(100, row.Used*100/row.Capacity))
			row.Fill = min(100, float64(row.Used)*100/float64(row.Capacity))
		} else if row.Used > 0 {
			row.Percent, row.Fill = 100, 100
		}
		d.Inventory = append(d.Inventory, row)
	}
	d.CanEdit = isAdmin(c)
	if d.CanEdit {
		d.Typed = typedInventory(c)
	}
	return handlers.Render(c, http.StatusOK, cv.ProviderDetail(layout.Page(c, p.Name, "providers"), d))
}

// ProviderInventory sets or removes one class of a provider's inventory
// (POST /providers/:id/inventory), read by forms.Inventory.
func (h *Handler) ProviderInventory(c echo.Context) error {
	return h.providerForm(c, forms.KindInventory, func(read forms.Read, params url.Values) string {
		rc := strings.TrimSpace(params.Get("class"))
		if params.Get("delete") != "" {
			return "Removed the " + rc + " inventory."
		}
		if len(read.Changes) == 0 {
			return rc + " inventory unchanged."
		}
		inv := read.Changes[0].Inventory
		return fmt.Sprintf("%s inventory set: %d total, %d reserved, ratio %g.", rc, inv.Total, inv.Reserved, inv.AllocationRatio)
	})
}

// ProviderTraits replaces a provider's traits (POST /providers/:id/traits),
// read by forms.Traits.
func (h *Handler) ProviderTraits(c echo.Context) error {
	return h.providerForm(c, forms.KindProviderTraits, func(read forms.Read, _ url.Values) string {
		n := 0
		if snap, err := h.snapshot(c); err == nil {
			if p, ok := snap.Provider(c.Param("id")); ok {
				n = len(p.Traits)
			}
		}
		return fmt.Sprintf("Traits saved (%d).", n)
	})
}

// providerForm saves one of the provider page's forms: refusals and lost
// races come back as a flash on the provider's page.
func (h *Handler) providerForm(c echo.Context, kind string, saved func(forms.Read, url.Values) string) error {
	ctx := c.Request().Context()
	p, err := h.store().GetProvider(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	back := "/providers/" + p.UUID
	gen, err := formGeneration(c)
	if err != nil {
		return redirectFlash(c, handlers.FlashError, errMsg(err), back)
	}
	snap, err := h.snapshot(c)
	if err != nil {
		return err
	}
	params, _ := c.FormParams()
	read, err := forms.ForImpact(kind, p.UUID, params, snap, forms.Who{})
	if err != nil {
		return err
	}
	if kind == forms.KindInventory && params.Get("delete") == "" {
		// A refused inventory comes back with what was typed.
		q := url.Values{}
		for _, k := range []string{"class", "total", "reserved", "allocation_ratio"} {
			if v := params.Get(k); v != "" && len(v) <= maxTypedInventory {
				q.Set("typed_"+k, v)
			}
		}
		if len(q) > 0 {
			back += "?" + q.Encode()
		}
	}
	if read.Refused() {
		return redirectFlash(c, handlers.FlashError, read.FirstError(), back)
	}
	err = forms.CheckGeneration("resource provider", p.Name, gen, p.Generation)
	if err == nil {
		_, err = h.apply(c, read.Changes)
	}
	if err != nil {
		if !userError(err) {
			return err
		}
		return redirectFlash(c, handlers.FlashError, errMsg(err), back)
	}
	return redirectFlash(c, handlers.FlashSuccess, saved(read, params), "/providers/"+p.UUID)
}

// maxTypedInventory bounds each typed value a refused inventory form
// brings back in its address.
const maxTypedInventory = 100

// typedInventory reads back what a refused inventory form held.
func typedInventory(c echo.Context) cv.InventoryTyped {
	v := func(k string) string {
		s := c.QueryParam("typed_" + k)
		if len(s) > maxTypedInventory {
			return ""
		}
		return s
	}
	return cv.InventoryTyped{Class: v("class"), Total: v("total"), Reserved: v("reserved"), Ratio: v("allocation_ratio")}
}
