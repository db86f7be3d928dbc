package console

import (
	"net/http"
	"slices"
	"sort"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
	"corral/models/store"
	"corral/views"
	cv "corral/views/console"
)

// servesShown caps the trees listed for one sharing provider.
const servesShown = 8

// treeBuilder assembles provider trees for one request, looking each
// aggregate up once.
type treeBuilder struct {
	h    *Handler
	c    echo.Context
	rev  int64 // the store revision the page is built at (for names)
	aggs map[string]*models.Aggregate
}

func newTreeBuilder(h *Handler, c echo.Context) (*treeBuilder, error) {
	// Read the revision first: names cached under it are at least as new.
	rev, err := h.store().Revision(c.Request().Context())
	if err != nil {
		return nil, err
	}
	return &treeBuilder{h: h, c: c, rev: rev, aggs: map[string]*models.Aggregate{}}, nil
}

func (b *treeBuilder) aggregate(uuid string) (*models.Aggregate, error) {
	if a, ok := b.aggs[uuid]; ok {
		return a, nil
	}
	a, err := b.h.store().GetAggregate(b.c.Request().Context(), uuid)
	if err != nil && models.KindOf(err) != models.NotFound {
		return nil, err
	}
	b.aggs[uuid] = a
	return a, nil
}

// node describes p: kind, aggregates and, for a sharing provider, the
// trees it serves (roots sharing one of its aggregates).
func (b *treeBuilder) node(p models.Provider) (cv.ProviderNode, error) {
	n := cv.ProviderNode{P: p, Kind: providerKind(&p)}
	uuids, _, err := b.h.store().ProviderAggregates(b.c.Request().Context(), p.UUID)
	if err != nil {
		return n, err
	}
	serves := map[string]bool{}
	for _, u := range uuids {
		name, ok, err := b.h.aggregateName(b.c, b.rev, u)
		if err != nil {
			return n, err
		}
		if !ok {
			continue
		}
		n.Aggregates = append(n.Aggregates, cv.NamedRef{UUID: u, Name: name})
		if n.Kind != "sharing" {
			continue
		}
		// Only sharing providers need the members: the trees they serve.
		a, err := b.aggregate(u)
		if err != nil {
			return n, err
		}
		if a == nil {
			continue
		}
		for _, m := range a.Members {
			if m != p.UUID {
				serves[m] = true
			}
		}
	}
	sort.Slice(n.Aggregates, func(i, j int) bool { return n.Aggregates[i].Name < n.Aggregates[j].Name })
	if len(serves) > 0 {
		if err := b.fillServes(&n, serves); err != nil {
			return n, err
		}
	}
	return n, nil
}

// fillServes keeps the members that are hosts: a sharing provider serves
// the trees whose root shares an aggregate with it.
func (b *treeBuilder) fillServes(n *cv.ProviderNode, members map[string]bool) error {
	ids := make([]string, 0, len(members))
	for m := range members {
		ids = append(ids, m)
	}
	sort.Strings(ids)
	var hosts []cv.NamedRef
	for _, id := range ids {
		q, err := b.h.store().GetProvider(b.c.Request().Context(), id)
		if err != nil {
			if models.KindOf(err) == models.NotFound {
				continue
			}
			return err
		}
		if q.IsHost() {
			hosts = append(hosts, cv.NamedRef{UUID: q.UUID, Name: q.Name})
		}
	}
	sort.Slice(hosts, func(i, j int) bool { return hosts[i].Name < hosts[j].Name })
	if len(hosts) > servesShown {
		n.MoreServes = len(hosts) - servesShown
		hosts = hosts[:servesShown]
	}
	n.Serves = hosts
	return nil
}

// tree builds root's whole tree.
func (b *treeBuilder) tree(root models.Provider) (cv.ProviderNode, error) {
	all, _, err := b.h.store().ListProviders(b.c.Request().Context(), store.ProviderQuery{InTree: root.UUID})
	if err != nil {
		return cv.ProviderNode{}, err
	}
	return b.subtree(root, all)
}

func (b *treeBuilder) subtree(p models.Provider, all []models.Provider) (cv.ProviderNode, error) {
	n, err := b.node(p)
	if err != nil {
		return n, err
	}
	for _, q := range all {
		if q.ParentUUID != nil && *q.ParentUUID == p.UUID && q.UUID != p.UUID {
			child, err := b.subtree(q, all)
			if err != nil {
				return n, err
			}
			n.Children = append(n.Children, child)
		}
	}
	return n, nil
}

// ProviderList shows one page of provider trees, or the providers a search
// matches (GET /providers). Roots are paged on the server, so a cloud of
// 100,000 providers renders one page, never all of them.
func (h *Handler) ProviderList(c echo.Context) error {
	ctx := c.Request().Context()
	search, _, _ := queryList(c)
	offset, limit := handlers.Paging(c, handlers.DefaultPageSize)
	q := store.ProviderQuery{Search: search, Offset: offset, Limit: limit, RootsOnly: search == ""}
	provs, total, err := h.store().ListProviders(ctx, q)
	if err != nil {
		return err
	}
	b, err := newTreeBuilder(h, c)
	if err != nil {
		return err
	}
	d := cv.ProviderListProps{List: cv.ListState{Path: "/providers", Search: search,
		Pager: views.Pager{Offset: offset, Limit: limit, Total: total, Path: "/providers", Query: c.QueryParams()}}}
	if search == "" {
		for _, p := range provs {
			n, err := b.tree(p)
			if err != nil {
				return err
			}
			d.Roots = append(d.Roots, n)
		}
	} else {
		res := newResolver(h, c)
		for i := range provs {
			n, err := b.node(provs[i])
			if err != nil {
				return err
			}
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
	return handlers.Render(c, http.StatusOK, cv.ProviderList(handlers.NewPage(c, "Resource providers", "providers"), d))
}

// ProviderDetail shows one provider with its subtree (GET /providers/:id,
// by uuid or name).
func (h *Handler) ProviderDetail(c echo.Context) error {
	ctx := c.Request().Context()
	p, err := h.store().GetProvider(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	b, err := newTreeBuilder(h, c)
	if err != nil {
		return err
	}
	all, _, err := h.store().ListProviders(ctx, store.ProviderQuery{InTree: p.RootUUID})
	if err != nil {
		return err
	}
	n, err := b.subtree(*p, all)
	if err != nil {
		return err
	}
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
		inv := p.Inventories[rc]
		d.Inventory = append(d.Inventory, cv.InventoryRow{Class: rc, Total: inv.Total, Reserved: inv.Reserved, Ratio: inv.AllocationRatio, Used: p.Usages[rc]})
	}
	return handlers.Render(c, http.StatusOK, cv.ProviderDetail(handlers.NewPage(c, p.Name, "providers"), d))
}
