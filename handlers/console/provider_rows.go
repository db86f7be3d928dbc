package console

import (
	"slices"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/models"
	cv "corral/views/console"
)

// Providers as the member tables show them: each looked up once per
// request, with its tree path and kind.

// resolver looks providers up by uuid once per request.
type resolver struct {
	h     *Handler
	c     echo.Context
	cache map[string]*models.Provider
}

func newResolver(h *Handler, c echo.Context) *resolver {
	return &resolver{h: h, c: c, cache: map[string]*models.Provider{}}
}

// prefetch loads the providers in uuids that are not cached yet, and their
// ancestors (for the paths rows show), one query per tree level instead of
// one per provider.
func (r *resolver) prefetch(uuids []string) error {
	for len(uuids) > 0 {
		var missing []string
		for _, u := range uuids {
			if _, ok := r.cache[u]; !ok {
				missing = append(missing, u)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		found, err := r.h.store().ProvidersByUUID(r.c.Request().Context(), missing)
		if err != nil {
			return err
		}
		uuids = nil
		for _, u := range missing {
			p, ok := found[u]
			if !ok {
				r.cache[u] = nil
				continue
			}
			r.cache[u] = &p
			if p.ParentUUID != nil {
				uuids = append(uuids, *p.ParentUUID)
			}
		}
	}
	return nil
}

func (r *resolver) get(uuid string) (*models.Provider, error) {
	if p, ok := r.cache[uuid]; ok {
		return p, nil
	}
	p, err := r.h.store().GetProvider(r.c.Request().Context(), uuid)
	if err != nil {
		if models.KindOf(err) == models.NotFound {
			r.cache[uuid] = nil
			return nil, nil
		}
		return nil, err
	}
	r.cache[uuid] = p
	return p, nil
}

// row describes p with its kind and its place in its tree.
func (r *resolver) row(p *models.Provider) (cv.MemberRow, error) {
	m := cv.MemberRow{UUID: p.UUID, Name: p.Name, Kind: providerKind(p)}
	if p.ParentUUID != nil {
		var path []string
		seen := map[string]bool{p.UUID: true}
		for cur := p.ParentUUID; cur != nil && !seen[*cur]; {
			seen[*cur] = true
			q, err := r.get(*cur)
			if err != nil {
				return m, err
			}
			if q == nil {
				break
			}
			path = append(path, q.Name)
			cur = q.ParentUUID
		}
		slices.Reverse(path)
		m.Path = strings.Join(path, " › ")
	}
	return m, nil
}

func (r *resolver) rows(uuids []string) ([]cv.MemberRow, error) {
	if err := r.prefetch(uuids); err != nil {
		return nil, err
	}
	out := make([]cv.MemberRow, 0, len(uuids))
	for _, u := range uuids {
		p, err := r.get(u)
		if err != nil {
			return nil, err
		}
		if p == nil {
			out = append(out, cv.MemberRow{UUID: u, Name: u, Kind: "missing"})
			continue
		}
		m, err := r.row(p)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// hostScanLimit bounds how many members a page inspects to find the hosts
// that block deletion: a zone aggregate may hold thousands, and one host is
// enough to refuse.
const hostScanLimit = 500

// hostNames returns the names of the members that are hosts (sorted), and
// whether the list is complete (every member was inspected).
func (r *resolver) hostNames(uuids []string) ([]string, bool, error) {
	var out []string
	complete := true
	for i, u := range uuids {
		if i >= hostScanLimit && len(out) > 0 {
			complete = false
			break
		}
		if i%hostScanLimit == 0 {
			// Look the members up a scan's worth at a time.
			if err := r.prefetch(uuids[i:min(len(uuids), i+hostScanLimit)]); err != nil {
				return nil, false, err
			}
		}
		p, err := r.get(u)
		if err != nil {
			return nil, false, err
		}
		if p != nil && p.IsHost() {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out, complete, nil
}

func providerKind(p *models.Provider) string {
	switch {
	case p.IsSharing():
		return "sharing"
	case p.ParentUUID != nil:
		return "child"
	}
	return "host"
}
