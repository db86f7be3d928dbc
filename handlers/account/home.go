package account

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/handlers/layout"
	"corral/models/store"
	av "corral/views/account"
)

// Home is the dashboard (GET /): how many of each object there are.
func (h *Handler) Home(c echo.Context) error {
	counts, err := h.dashboardCounts(c.Request().Context())
	if err != nil {
		return err
	}
	counts.Recent, _, err = h.env.Store.ListAudit(c.Request().Context(), store.AuditQuery{Limit: 5})
	if err != nil {
		return err
	}
	snap, _, err := h.env.Store.Live().Get(c.Request().Context())
	if err != nil {
		return err
	}
	offset, _ := strconv.Atoi(c.QueryParam("hosts"))
	counts.Map = hostMap(snap, offset)
	return handlers.Render(c, http.StatusOK, av.Dashboard(layout.Page(c, "Dashboard", "dashboard"), counts))
}

// countCache keeps the dashboard's counts until the store's revision moves:
// a busy dashboard need not repeat six counting queries on every load.
type countCache struct {
	mu     sync.Mutex
	rev    int64
	valid  bool
	counts av.DashboardProps
}

func (h *Handler) dashboardCounts(ctx context.Context) (av.DashboardProps, error) {
	cc := &h.counts
	rev, err := h.env.Store.Revision(ctx)
	if err != nil {
		return av.DashboardProps{}, err
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.valid && cc.rev == rev {
		return cc.counts, nil
	}
	counts, err := countAll(ctx, h.env.Store)
	if err != nil {
		return av.DashboardProps{}, err
	}
	cc.rev, cc.valid, cc.counts = rev, true, counts
	return counts, nil
}

func countAll(ctx context.Context, s *store.Store) (av.DashboardProps, error) {
	var d av.DashboardProps
	var err error
	// Limit 1: the store reports the total matching besides the page.
	if _, d.Aggregates, err = s.ListAggregates(ctx, store.AggregateQuery{Limit: 1}); err != nil {
		return d, err
	}
	if _, d.Providers, err = s.ListProviders(ctx, store.ProviderQuery{Limit: 1}); err != nil {
		return d, err
	}
	if _, d.Hosts, err = s.ListProviders(ctx, store.ProviderQuery{Kind: store.ProviderKindHost, Limit: 1}); err != nil {
		return d, err
	}
	if _, d.Flavors, err = s.ListFlavors(ctx, store.FlavorQuery{Limit: 1}); err != nil {
		return d, err
	}
	if d.ServerGroups, err = s.CountServerGroups(ctx, ""); err != nil {
		return d, err
	}
	if _, d.Servers, err = s.ListServers(ctx, store.ServerQuery{Limit: 1}); err != nil {
		return d, err
	}
	return d, nil
}
