package cloud

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Snapshot is what one sync read from the cloud, in the services' own terms.
type Snapshot struct {
	Aggregates   []NovaAggregate           `json:"aggregates"`
	Flavors      []NovaFlavor              `json:"flavors"`
	ServerGroups []NovaServerGroup         `json:"server_groups"`
	Servers      []NovaServer              `json:"servers"`
	ComputeHosts []string                  `json:"compute_hosts"` // nova-compute services' hosts
	Services     []NovaService             `json:"services"`      // the nova-compute services
	Hypervisors  []NovaHypervisor          `json:"hypervisors"`
	Quotas       map[string]map[string]int `json:"quotas"` // project → server_groups, server_group_members
	Placement    PlacementState            `json:"placement"`
	ReadStats    ReadStats                 `json:"-"`
	// Warnings name the objects whose read failed on their own (a
	// deleted project's quotas, a provider deleted while it was read):
	// they are left out and the rest is kept.
	Warnings []string `json:"-"`
	// placementWarnings are Placement's, kept apart while Nova is read
	// side by side.
	placementWarnings []string
}

// NovaService is one os-services entry of a nova-compute service (2.53).
type NovaService struct {
	Host           string  `json:"host"`
	Status         string  `json:"status"`
	State          string  `json:"state"`
	DisabledReason *string `json:"disabled_reason"`
	ForcedDown     bool    `json:"forced_down"`
	UpdatedAt      *string `json:"updated_at"`
}

// NovaAggregate is one os-aggregates entry.
type NovaAggregate struct {
	ID               int64             `json:"id"`
	UUID             string            `json:"uuid"`
	Name             string            `json:"name"`
	AvailabilityZone *string           `json:"availability_zone"`
	Metadata         map[string]string `json:"metadata"`
	Hosts            []string          `json:"hosts"`
}

// NovaFlavor is one flavors/detail entry with its access list.
type NovaFlavor struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	VCPUs      int               `json:"vcpus"`
	RAM        int               `json:"ram"`
	Disk       int               `json:"disk"`
	Ephemeral  int               `json:"OS-FLV-EXT-DATA:ephemeral"`
	Swap       int               `json:"swap"` // MiB (an integer from microversion 2.75 on)
	IsPublic   bool              `json:"os-flavor-access:is_public"`
	ExtraSpecs map[string]string `json:"extra_specs"`
	Projects   []string          `json:"projects,omitempty"` // private flavors only
}

// NovaServerGroup is one os-server-groups entry (2.64 shape).
type NovaServerGroup struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	ProjectID string         `json:"project_id"`
	UserID    string         `json:"user_id"`
	Policy    string         `json:"policy"`
	Rules     map[string]int `json:"rules"`
	Members   []string       `json:"members"`
}

// NovaServer is the part of servers/detail corral keeps.
type NovaServer struct {
	ID                 string `json:"id"`
	Name               string `json:"name"`
	ProjectID          string `json:"tenant_id"`
	UserID             string `json:"user_id"`
	Host               string `json:"OS-EXT-SRV-ATTR:host"`
	HypervisorHostname string `json:"OS-EXT-SRV-ATTR:hypervisor_hostname"`
	Flavor             string `json:"flavor_name"`
}

// NovaHypervisor ties a compute node (whose uuid is its root provider's)
// to the service host Nova's aggregates name.
type NovaHypervisor struct {
	ID          string `json:"id"`
	Name        string `json:"hypervisor_hostname"`
	ServiceHost string `json:"service_host"`
	// What ComputeCapabilitiesFilter may read of the node.
	Type    string `json:"hypervisor_type,omitempty"`
	Version int64  `json:"hypervisor_version,omitempty"`
	HostIP  string `json:"host_ip,omitempty"`
}

// PlacementState is Placement's side, kept between syncs so the next one
// re-reads only providers whose generation moved.
type PlacementState struct {
	Providers       map[string]*PlacementProvider `json:"providers"`
	ResourceClasses []string                      `json:"resource_classes"`
	// Consumers are read at 1.28 or later (their generations come with a
	// provider's allocations); one is re-read when its generation moves.
	Consumers map[string]*PlacementConsumer `json:"consumers,omitempty"`
}

// PlacementConsumer is what GET /allocations/{consumer} says of its
// consumer: the owner (1.12), the generation (1.28) and the type (1.38;
// "unknown" for consumers written before it, as Placement says).
type PlacementConsumer struct {
	ProjectID  string `json:"project_id"`
	UserID     string `json:"user_id"`
	Generation int64  `json:"consumer_generation"`
	Type       string `json:"consumer_type,omitempty"`
}

// PlacementProvider is one provider with everything Placement says of it.
type PlacementProvider struct {
	UUID        string                      `json:"uuid"`
	Name        string                      `json:"name"`
	Generation  int64                       `json:"generation"`
	ParentUUID  *string                     `json:"parent_provider_uuid"`
	RootUUID    string                      `json:"root_provider_uuid"`
	Inventories map[string]Inventory        `json:"inventories"`
	Usages      map[string]int64            `json:"usages"`
	Traits      []string                    `json:"traits"`
	Aggregates  []string                    `json:"aggregates"`
	Allocations map[string]map[string]int64 `json:"allocations"` // consumer → class → used
	// ConsumerGenerations are the generations the provider's allocations
	// carry (1.28 and later).
	ConsumerGenerations map[string]int64 `json:"consumer_generations,omitempty"`
}

// Inventory is Placement's inventory record.
type Inventory struct {
	Total           int64   `json:"total"`
	Reserved        int64   `json:"reserved"`
	MinUnit         int64   `json:"min_unit"`
	MaxUnit         int64   `json:"max_unit"`
	StepSize        int64   `json:"step_size"`
	AllocationRatio float64 `json:"allocation_ratio"`
}

// ReadStats says how much a read cost.
type ReadStats struct {
	Requests         int64
	ProvidersRead    int // providers whose details were (re-)read
	ProvidersReused  int // unchanged generation: kept from the last sync
	ConsumersRead    int // consumers whose owner and type were (re-)read
	ConsumersReused  int // unchanged generation: kept from the last sync
	Duration         time.Duration
	ComputeVersion   string
	PlacementVersion string
}

// ReadOptions tune a read.
type ReadOptions struct {
	Parallel int                   // concurrent requests; default 8
	Previous *PlacementState       // the last sync's Placement state, for an incremental read
	Progress func(done, total int) // called as provider details arrive
	// PerProvider reads everything provider by provider, as a check on the
	// bulk reads (which must give the same snapshot).
	PerProvider bool
}

// Read reads the whole cloud. Any error leaves nothing half-read: the
// caller gets the error and no snapshot.
func (c *Client) Read(ctx context.Context, o ReadOptions) (*Snapshot, error) {
	start := time.Now()
	before := c.Requests()
	if o.Parallel <= 0 {
		o.Parallel = 8
	}
	s := &Snapshot{Quotas: map[string]map[string]int{}}
	// Nova and Placement are read side by side; each part is a few
	// requests except the per-provider details, which are bounded below.
	// The first failure cancels the other's requests.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.readNova(gctx, s, o.Parallel) })
	g.Go(func() error { return c.readPlacement(gctx, s, o) })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	s.Warnings = append(s.Warnings, s.placementWarnings...)
	s.ReadStats.Requests = c.Requests() - before
	s.ReadStats.Duration = time.Since(start)
	s.ReadStats.ComputeVersion = c.Compute.Microversion
	s.ReadStats.PlacementVersion = c.Placement.Microversion
	return s, nil
}

func (c *Client) readNova(ctx context.Context, s *Snapshot, parallel int) error {
	for _, step := range []func() error{
		func() error { return c.novaAggregates(ctx, s) },
		func() error { return c.novaFlavors(ctx, s, parallel) },
		func() error { return c.novaServerGroups(ctx, s) },
		func() error { return c.novaServers(ctx, s) },
		func() error { return c.novaComputeHosts(ctx, s) },
		func() error { return c.novaHypervisors(ctx, s) },
		func() error { return c.novaQuotas(ctx, s, parallel) },
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// novaAggregates reads the aggregates.
func (c *Client) novaAggregates(ctx context.Context, s *Snapshot) error {
	var aggs struct {
		Aggregates []NovaAggregate `json:"aggregates"`
	}
	if err := c.get(ctx, c.Compute, "os-aggregates", &aggs); err != nil {
		return err
	}
	s.Aggregates = aggs.Aggregates
	return nil
}

// novaFlavors reads the flavors, private ones with their access lists:
// is_public=None lists private flavors too (admin).
func (c *Client) novaFlavors(ctx context.Context, s *Snapshot, parallel int) error {
	if err := pages(ctx, func(marker string) (string, int, error) {
		q := url.Values{"is_public": {"None"}, "limit": {"1000"}}
		if marker != "" {
			q.Set("marker", marker)
		}
		var page struct {
			Flavors []NovaFlavor `json:"flavors"`
		}
		if err := c.get(ctx, c.Compute, "flavors/detail?"+q.Encode(), &page); err != nil {
			return "", 0, err
		}
		s.Flavors = append(s.Flavors, page.Flavors...)
		if len(page.Flavors) == 0 {
			return "", 0, nil
		}
		return page.Flavors[len(page.Flavors)-1].ID, len(page.Flavors), nil
	}); err != nil {
		return err
	}
	var private []int
	for i := range s.Flavors {
		if !s.Flavors[i].IsPublic {
			private = append(private, i)
		}
	}
	if err := forEach(ctx, parallel, len(private), func(k int) error {
		f := &s.Flavors[private[k]]
		var acc struct {
			FlavorAccess []struct {
				TenantID string `json:"tenant_id"`
			} `json:"flavor_access"`
		}
		if err := c.get(ctx, c.Compute, "flavors/"+url.PathEscape(f.ID)+"/os-flavor-access", &acc); err != nil {
			return err
		}
		for _, a := range acc.FlavorAccess {
			f.Projects = append(f.Projects, a.TenantID)
		}
		slices.Sort(f.Projects)
		return nil
	}); err != nil {
		return err
	}
	return nil
}

// novaServerGroups reads the server groups, which page by offset.
func (c *Client) novaServerGroups(ctx context.Context, s *Snapshot) error {
	for offset := 0; ; {
		var page struct {
			ServerGroups []NovaServerGroup `json:"server_groups"`
		}
		q := url.Values{"all_projects": {"True"}, "limit": {"1000"}, "offset": {strconv.Itoa(offset)}}
		if err := c.get(ctx, c.Compute, "os-server-groups?"+q.Encode(), &page); err != nil {
			return err
		}
		s.ServerGroups = append(s.ServerGroups, page.ServerGroups...)
		offset += len(page.ServerGroups)
		if len(page.ServerGroups) < 1000 {
			break
		}
	}
	return nil
}

// novaServers reads the servers with their flavors' names.
func (c *Client) novaServers(ctx context.Context, s *Snapshot) error {
	if err := pages(ctx, func(marker string) (string, int, error) {
		q := url.Values{"all_tenants": {"1"}, "limit": {"1000"}}
		if marker != "" {
			q.Set("marker", marker)
		}
		var page struct {
			Servers []struct {
				NovaServer
				Flavor struct {
					OriginalName string `json:"original_name"`
				} `json:"flavor"`
			} `json:"servers"`
		}
		if err := c.get(ctx, c.Compute, "servers/detail?"+q.Encode(), &page); err != nil {
			return "", 0, err
		}
		for _, sv := range page.Servers {
			ns := sv.NovaServer
			ns.Flavor = sv.Flavor.OriginalName
			s.Servers = append(s.Servers, ns)
		}
		if len(page.Servers) == 0 {
			return "", 0, nil
		}
		return page.Servers[len(page.Servers)-1].ID, len(page.Servers), nil
	}); err != nil {
		return err
	}
	return nil
}

// novaComputeHosts reads the nova-compute services: their hosts, and the
// status, state and forced_down that ComputeFilter reads (2.11 on; 2.53
// as the hypervisors are read).
func (c *Client) novaComputeHosts(ctx context.Context, s *Snapshot) error {
	var svcs struct {
		Services []NovaService `json:"services"`
	}
	if err := c.getAt(ctx, c.Compute, "2.53", "os-services?binary=nova-compute", &svcs); err != nil {
		return err
	}
	s.Services = svcs.Services
	slices.SortFunc(s.Services, func(a, b NovaService) int { return strings.Compare(a.Host, b.Host) })
	for _, sv := range svcs.Services {
		s.ComputeHosts = append(s.ComputeHosts, sv.Host)
	}
	slices.Sort(s.ComputeHosts)
	s.ComputeHosts = slices.Compact(s.ComputeHosts)
	return nil
}

// novaHypervisors reads the hypervisors with their service hosts.
func (c *Client) novaHypervisors(ctx context.Context, s *Snapshot) error {
	if err := pages(ctx, func(marker string) (string, int, error) {
		q := url.Values{"limit": {"1000"}}
		if marker != "" {
			q.Set("marker", marker)
		}
		var page struct {
			Hypervisors []struct {
				ID      string `json:"id"`
				Name    string `json:"hypervisor_hostname"`
				Type    string `json:"hypervisor_type"`
				Version int64  `json:"hypervisor_version"`
				HostIP  string `json:"host_ip"`
				Service struct {
					Host string `json:"host"`
				} `json:"service"`
			} `json:"hypervisors"`
		}
		// 2.53 gives uuids and service hosts; from 2.88 on the details
		// ask each compute host for its uptime over RPC, which corral
		// does not need and which waits on hosts that are down.
		if err := c.getAt(ctx, c.Compute, "2.53", "os-hypervisors/detail?"+q.Encode(), &page); err != nil {
			return "", 0, err
		}
		for _, h := range page.Hypervisors {
			s.Hypervisors = append(s.Hypervisors, NovaHypervisor{ID: h.ID, Name: h.Name, ServiceHost: h.Service.Host,
				Type: h.Type, Version: h.Version, HostIP: h.HostIP})
		}
		if len(page.Hypervisors) == 0 {
			return "", 0, nil
		}
		return page.Hypervisors[len(page.Hypervisors)-1].ID, len(page.Hypervisors), nil
	}); err != nil {
		return err
	}
	return nil
}

// novaQuotas reads the server-group quotas of every project that has
// servers or groups.
func (c *Client) novaQuotas(ctx context.Context, s *Snapshot, parallel int) error {
	projects := map[string]bool{}
	for _, g := range s.ServerGroups {
		projects[g.ProjectID] = true
	}
	for _, sv := range s.Servers {
		projects[sv.ProjectID] = true
	}
	delete(projects, "")
	plist := slices.Sorted(maps.Keys(projects))
	quotas := make([]map[string]int, len(plist))
	warnings := make([]string, len(plist))
	if err := forEach(ctx, parallel, len(plist), func(i int) error {
		var q struct {
			QuotaSet struct {
				ServerGroups       int `json:"server_groups"`
				ServerGroupMembers int `json:"server_group_members"`
			} `json:"quota_set"`
		}
		if err := c.get(ctx, c.Compute, "os-quota-sets/"+url.PathEscape(plist[i]), &q); err != nil {
			// Nova answers 400 for a project Keystone no longer has, which
			// still owns servers or groups: a common leftover.
			if answered(err, 400, 404) {
				warnings[i] = fmt.Sprintf("project %s: its server-group quotas were not read (%v): left out of this sync", plist[i], err)
				return nil
			}
			return err
		}
		quotas[i] = map[string]int{"server_groups": q.QuotaSet.ServerGroups, "server_group_members": q.QuotaSet.ServerGroupMembers}
		return nil
	}); err != nil {
		return err
	}
	for i, p := range plist {
		if warnings[i] != "" {
			s.Warnings = append(s.Warnings, warnings[i])
			continue
		}
		s.Quotas[p] = quotas[i]
	}
	return nil
}

// answered reports whether err is a service's answer with one of the
// statuses: a failure of the one object read, not of the service.
func answered(err error, statuses ...int) bool {
	var se *ServiceError
	return errors.As(err, &se) && slices.Contains(statuses, se.Status())
}

// pages calls next with the last marker until a page comes back short.
func pages(ctx context.Context, next func(marker string) (string, int, error)) error {
	marker := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, n, err := next(marker)
		if err != nil {
			return err
		}
		if n < 1000 || m == "" {
			return nil
		}
		marker = m
	}
}

// forEach runs f(0..n-1) with at most parallel at once; the first error
// stops the rest from starting.
func forEach(ctx context.Context, parallel, n int, f func(i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallel, 1))
	for i := 0; i < n && gctx.Err() == nil; i++ {
		g.Go(func() error { return f(i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

func (c *Client) readPlacement(ctx context.Context, s *Snapshot, o ReadOptions) error {
	var list struct {
		ResourceProviders []PlacementProvider `json:"resource_providers"`
	}
	if err := c.get(ctx, c.Placement, "resource_providers", &list); err != nil {
		return err
	}
	var rcs struct {
		ResourceClasses []struct {
			Name string `json:"name"`
		} `json:"resource_classes"`
	}
	if err := c.get(ctx, c.Placement, "resource_classes", &rcs); err != nil {
		return err
	}
	for _, rc := range rcs.ResourceClasses {
		s.Placement.ResourceClasses = append(s.Placement.ResourceClasses, rc.Name)
	}
	slices.Sort(s.Placement.ResourceClasses)
	s.Placement.Providers = make(map[string]*PlacementProvider, len(list.ResourceProviders))
	// A provider kept by a sync that did not see consumer generations is
	// read again once, or its consumers would be re-read by every sync.
	wantConsumerGenerations := !lessVersion(c.Placement.Microversion, "1.28")
	var todo []*PlacementProvider
	for i := range list.ResourceProviders {
		p := &list.ResourceProviders[i]
		if o.Previous != nil {
			if old, ok := o.Previous.Providers[p.UUID]; ok && old.Generation == p.Generation &&
				(!wantConsumerGenerations || len(old.Allocations) == 0 || old.ConsumerGenerations != nil) {
				kept := *old
				kept.Name, kept.ParentUUID, kept.RootUUID = p.Name, p.ParentUUID, p.RootUUID
				s.Placement.Providers[p.UUID] = &kept
				s.ReadStats.ProvidersReused++
				continue
			}
		}
		s.Placement.Providers[p.UUID] = p
		todo = append(todo, p)
	}
	s.ReadStats.ProvidersRead = len(todo)
	// Many providers to read: their traits come trait by trait (a cloud has
	// tens of traits in use, and thousands of providers), one request per
	// provider fewer.
	bulkTraits := !o.PerProvider && len(todo) >= bulkTraitsFrom
	if bulkTraits {
		if err := c.readTraitsInBulk(ctx, todo, o.Parallel); err != nil {
			return err
		}
	}
	var done int
	var mu sync.Mutex
	var gone []*PlacementProvider
	if err := forEach(ctx, o.Parallel, len(todo), func(i int) error {
		p := todo[i]
		err := c.readProvider(ctx, p, !bulkTraits, o.PerProvider)
		if err != nil && !answered(err, 404) {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			// Deleted since it was listed: the next sync will not list it.
			gone = append(gone, p)
			s.placementWarnings = append(s.placementWarnings,
				fmt.Sprintf("resource provider %s (%s): %v, deleted while corral read it: left out of this sync", p.Name, p.UUID, err))
		}
		if o.Progress != nil {
			done++
			o.Progress(done, len(todo))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, p := range gone {
		delete(s.Placement.Providers, p.UUID)
	}
	s.ReadStats.ProvidersRead -= len(gone)
	return c.readConsumers(ctx, s, o)
}

// readProvider reads a provider's inventories, traits, aggregates and
// allocations (its usages are the sum of the allocations). Placement moves
// a provider's generation on each of these, so the next sync can tell.
// Unless every read is asked for, a provider without inventories is not
// asked for allocations: Placement refuses an allocation that no inventory
// backs and an inventory change that would leave allocations unbacked
// (InventoryInUse), so it has none.
func (c *Client) readProvider(ctx context.Context, p *PlacementProvider, traits, every bool) error {
	base := "resource_providers/" + p.UUID + "/"
	var inv struct {
		Generation  int64                `json:"resource_provider_generation"`
		Inventories map[string]Inventory `json:"inventories"`
	}
	if err := c.get(ctx, c.Placement, base+"inventories", &inv); err != nil {
		return err
	}
	if traits {
		var tr struct {
			Traits []string `json:"traits"`
		}
		if err := c.get(ctx, c.Placement, base+"traits", &tr); err != nil {
			return err
		}
		p.Traits = tr.Traits
		slices.Sort(p.Traits)
	}
	var ag struct {
		Aggregates []string `json:"aggregates"`
	}
	if err := c.get(ctx, c.Placement, base+"aggregates", &ag); err != nil {
		return err
	}
	var al struct {
		Allocations map[string]struct {
			Resources  map[string]int64 `json:"resources"`
			Generation *int64           `json:"consumer_generation"`
		} `json:"allocations"`
	}
	if every || len(inv.Inventories) > 0 {
		if err := c.get(ctx, c.Placement, base+"allocations", &al); err != nil {
			return err
		}
	}
	p.Inventories = inv.Inventories
	p.Aggregates = ag.Aggregates
	slices.Sort(p.Aggregates)
	p.Allocations = map[string]map[string]int64{}
	p.Usages = map[string]int64{}
	p.ConsumerGenerations = nil
	for consumer, a := range al.Allocations {
		p.Allocations[consumer] = a.Resources
		for rc, n := range a.Resources {
			p.Usages[rc] += n
		}
		if a.Generation != nil {
			if p.ConsumerGenerations == nil {
				p.ConsumerGenerations = map[string]int64{}
			}
			p.ConsumerGenerations[consumer] = *a.Generation
		}
	}
	// The generation stays the one listed: if the provider moved while it
	// was read, the next sync sees a different one and reads it again.
	return nil
}

// readConsumers reads, from 1.28 on, the owner, generation and (1.38) type
// of every consumer the providers' allocations name, once per consumer
// generation: a consumer whose generation is the one the last sync read is
// kept from it (any allocation write, and so any change of type, moves it).
func (c *Client) readConsumers(ctx context.Context, s *Snapshot, o ReadOptions) error {
	if lessVersion(c.Placement.Microversion, "1.28") {
		return nil
	}
	gens := map[string]int64{}
	for _, p := range s.Placement.Providers {
		for cu := range p.Allocations {
			g, ok := p.ConsumerGenerations[cu]
			if !ok {
				g = -1 // kept from a sync below 1.28: read it
			}
			gens[cu] = g
		}
	}
	s.Placement.Consumers = make(map[string]*PlacementConsumer, len(gens))
	var todo []string
	for _, cu := range slices.Sorted(maps.Keys(gens)) {
		if o.Previous != nil {
			if old := o.Previous.Consumers[cu]; old != nil && old.Generation == gens[cu] {
				s.Placement.Consumers[cu] = old
				s.ReadStats.ConsumersReused++
				continue
			}
		}
		todo = append(todo, cu)
	}
	s.ReadStats.ConsumersRead = len(todo)
	read := make([]*PlacementConsumer, len(todo))
	if err := forEach(ctx, o.Parallel, len(todo), func(i int) error {
		var pc PlacementConsumer
		if err := c.get(ctx, c.Placement, "allocations/"+url.PathEscape(todo[i]), &pc); err != nil {
			return err
		}
		read[i] = &pc
		return nil
	}); err != nil {
		return err
	}
	for i, cu := range todo {
		s.Placement.Consumers[cu] = read[i]
	}
	return nil
}

// bulkTraitsFrom is how many providers to read make reading traits trait
// by trait worth it.
var bulkTraitsFrom = 100

// readTraitsInBulk fills the providers' traits from the traits in use and,
// for each, the providers that have it (GET /resource_providers?required=T).
// A provider whose generation moves meanwhile is read again by the next
// sync, like any other.
func (c *Client) readTraitsInBulk(ctx context.Context, todo []*PlacementProvider, parallel int) error {
	var tl struct {
		Traits []string `json:"traits"`
	}
	if err := c.get(ctx, c.Placement, "traits?associated=true", &tl); err != nil {
		return err
	}
	byUUID := make(map[string]*PlacementProvider, len(todo))
	for _, p := range todo {
		p.Traits = []string{}
		byUUID[p.UUID] = p
	}
	var mu sync.Mutex
	err := forEach(ctx, parallel, len(tl.Traits), func(i int) error {
		var list struct {
			ResourceProviders []struct {
				UUID string `json:"uuid"`
			} `json:"resource_providers"`
		}
		q := url.Values{"required": {tl.Traits[i]}}
		if err := c.get(ctx, c.Placement, "resource_providers?"+q.Encode(), &list); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rp := range list.ResourceProviders {
			if p := byUUID[rp.UUID]; p != nil {
				p.Traits = append(p.Traits, tl.Traits[i])
			}
		}
		return nil
	})
	for _, p := range todo {
		slices.Sort(p.Traits)
	}
	return err
}
