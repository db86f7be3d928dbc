// Package cloudgen generates a deterministic, realistic cloud for tests and
// benchmarks: host trees with child providers, sharing storage providers,
// aggregates with availability zones, tenant tags, reservation tags and
// extra-spec style metadata, flavors, servers and server groups.
//
// The same Config always yields the same world (UUIDs included), so
// benchmarks in different packages measure the same thing. The package is
// pure: it imports the standard library and corral/models only.
package cloudgen

import (
	"fmt"
	"math/rand/v2"

	"corral/models"
)

// Config sizes the generated cloud. Aggregates is the total; it is split
// into AZs, tenant, reservation and storage aggregates, and the rest carry
// extra-spec style metadata.
type Config struct {
	Seed                  uint64
	Hosts                 int // root providers that are hosts
	ChildrenPerHost       int // child providers (NUMA nodes, devices) per host
	SharingProviders      int // shared storage providers, one storage aggregate each
	Aggregates            int
	AZs                   int
	TenantAggregates      int
	ReservationAggregates int // including the free pool
	Projects              int
	Flavors               int
	Servers               int
	ServerGroups          int
}

// Default is the benchmark cloud: 25,000 hosts with 3 children each
// (100,000 providers in trees) plus 500 sharing providers, and 5,000
// aggregates.
func Default() Config {
	return Config{
		Seed: 1, Hosts: 25000, ChildrenPerHost: 3, SharingProviders: 500,
		Aggregates: 5000, AZs: 8, TenantAggregates: 1500, ReservationAggregates: 300,
		Projects: 2000, Flavors: 40, Servers: 50000, ServerGroups: 2000,
	}
}

// Small is the same shape at test size: 40 hosts, 2 children each.
func Small() Config {
	return Config{
		Seed: 1, Hosts: 40, ChildrenPerHost: 2, SharingProviders: 4,
		Aggregates: 40, AZs: 2, TenantAggregates: 8, ReservationAggregates: 4,
		Projects: 10, Flavors: 8, Servers: 80, ServerGroups: 8,
	}
}

// Well-known names in every generated cloud, for tests and benchmarks.
const (
	FreePool            = models.FreePoolName // the reservation free pool aggregate
	WindowsAggregate    = "windows-licensed"  // isolated with trait:CUSTOM_WINDOWS=required
	WindowsTrait        = "CUSTOM_WINDOWS"    // the isolated aggregate's trait
	ReservationPrefix   = "reservation:"      // key prefix of reservation tags
	FlavorSmall         = "m1.small"          // no extra specs
	FlavorSSD           = "ssd.medium"        // aggregate_instance_extra_specs:ssd=true
	FlavorReserved      = "reserved.large"    // carries the first reservation's key
	FlavorWindows       = "windows.medium"    // trait:CUSTOM_WINDOWS=required
	FlavorGPU           = "gpu.large"         // aggregate_instance_extra_specs:gpu=<in> a100
	ProjectPrefix       = "project-"          // project ids are project-0, project-1, …
	HostPrefix          = "cn"                // host names are cn00000, …
	ReservationPrefixID = "resv-"             // reservation ids are resv-0, …
)

// gen builds one world: the random stream every draw comes from, and what
// the later steps look up of the earlier ones.
type gen struct {
	r          *rand.Rand
	cfg        Config
	w          *models.World
	hostIdx    []int // host h's provider index
	sharingIdx []int // sharing provider s's index
	budget     int   // aggregates left to make
}

func (g *gen) uuid() string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := g.r.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (g *gen) project(cfg Config) string {
	return fmt.Sprintf("%s%d", ProjectPrefix, g.r.IntN(max(cfg.Projects, 1)))
}

// Generate builds the world for cfg.
func Generate(cfg Config) *models.World {
	g := &gen{r: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), cfg: cfg,
		w: &models.World{Settings: models.DefaultSettings()}, budget: cfg.Aggregates}
	// The steps draw from one stream in this order: every uuid depends on it.
	g.providers()
	g.aggregates()
	g.flavors()
	g.servers()
	g.serverGroups()
	return g.w
}

// providers makes the hosts, each with its NUMA children, then the sharing
// providers.
func (g *gen) providers() {
	cfg, w := g.cfg, g.w
	nProv := cfg.Hosts*(1+cfg.ChildrenPerHost) + cfg.SharingProviders
	w.Providers = make([]models.Provider, 0, nProv)
	g.hostIdx = make([]int, cfg.Hosts)
	width := len(fmt.Sprint(cfg.Hosts))
	for h := 0; h < cfg.Hosts; h++ {
		name := fmt.Sprintf("%s%0*d", HostPrefix, width, h)
		root := models.Provider{UUID: g.uuid(), Name: name, Traits: []string{"HW_CPU_X86_AVX2"},
			Inventories: map[string]models.Inventory{
				"VCPU":      {Total: 64, AllocationRatio: 4.0},
				"MEMORY_MB": {Total: 262144, Reserved: 4096, AllocationRatio: 1.0},
				"DISK_GB":   {Total: 2000, AllocationRatio: 1.0},
			},
			Usages: hostUsage(h)}
		root.RootUUID = root.UUID
		g.hostIdx[h] = len(w.Providers)
		w.Providers = append(w.Providers, root)
		ru := root.UUID
		for c := 0; c < cfg.ChildrenPerHost; c++ {
			child := models.Provider{UUID: g.uuid(), Name: fmt.Sprintf("%s_numa%d", name, c), ParentUUID: &ru, RootUUID: ru}
			w.Providers = append(w.Providers, child)
		}
	}
	g.sharingIdx = make([]int, cfg.SharingProviders)
	for s := 0; s < cfg.SharingProviders; s++ {
		p := models.Provider{UUID: g.uuid(), Name: fmt.Sprintf("ss%d", s), Traits: []string{models.TraitSharesViaAggregate}}
		p.RootUUID = p.UUID
		g.sharingIdx[s] = len(w.Providers)
		w.Providers = append(w.Providers, p)
	}
}

func (g *gen) hostUUID(h int) string     { return g.w.Providers[g.hostIdx[h]].UUID }
func (g *gen) childUUID(h, c int) string { return g.w.Providers[g.hostIdx[h]+1+c].UUID }

// block returns n consecutive hosts starting at a random host.
func (g *gen) block(n int) []string {
	n = min(n, g.cfg.Hosts)
	if n <= 0 {
		return nil
	}
	start := g.r.IntN(g.cfg.Hosts)
	out := make([]string, n)
	for i := range out {
		out[i] = g.hostUUID((start + i) % g.cfg.Hosts)
	}
	return out
}

func (g *gen) addAgg(name string, az *string, md map[string]string, members []string) {
	g.w.Aggregates = append(g.w.Aggregates, models.Aggregate{ID: int64(len(g.w.Aggregates) + 1), UUID: g.uuid(),
		Name: name, AvailabilityZone: az, Metadata: md, Members: members})
}

// take spends up to n of the aggregate budget and returns how many.
func (g *gen) take(n int) int {
	n = max(min(n, g.budget), 0)
	g.budget -= n
	return n
}

// aggregates spends cfg.Aggregates: zones, tenant aggregates,
// reservations, storage, the isolated aggregate, then extra-spec ones.
func (g *gen) aggregates() {
	cfg, w := g.cfg, g.w
	// Availability zones partition the hosts.
	nAZ := g.take(cfg.AZs)
	for z := 0; z < nAZ; z++ {
		az := fmt.Sprintf("az%d", z)
		var members []string
		for h := z; h < cfg.Hosts; h += nAZ {
			members = append(members, g.hostUUID(h))
		}
		g.addAgg("zone-"+az, &az, map[string]string{"availability_zone": az}, members)
	}
	// Tenant aggregates: one project per key (what the placement pre-filter
	// sees); every tenth also names a second project under a suffixed key,
	// and every twenty-fifth uses a comma list (seen by the post-filter only).
	nTen := g.take(cfg.TenantAggregates)
	for i := 0; i < nTen; i++ {
		md := map[string]string{"filter_tenant_id": g.project(cfg)}
		if i%10 == 0 {
			md["filter_tenant_id2"] = g.project(cfg)
		}
		if i%25 == 0 {
			md["filter_tenant_id_list"] = g.project(cfg) + "," + g.project(cfg)
		}
		g.addAgg(fmt.Sprintf("tenant-%d", i), nil, md, g.block(5+g.r.IntN(25)))
	}
	// Reservations: the free pool plus one aggregate per reservation.
	nRes := g.take(cfg.ReservationAggregates)
	for i := 0; i < nRes; i++ {
		if i == 0 {
			g.addAgg(FreePool, nil, map[string]string{ReservationPrefix + FreePool: FreePool}, g.block(max(cfg.Hosts/50, 1)))
			continue
		}
		id := fmt.Sprintf("%s%d", ReservationPrefixID, i-1)
		owner := g.project(cfg)
		g.addAgg("reservation-"+id, nil, map[string]string{ReservationPrefix + id: id, "blazar:owner": owner,
			"filter_tenant_id": owner}, g.block(1+g.r.IntN(8)))
	}
	// Storage: each sharing provider with a block of hosts.
	nSto := g.take(cfg.SharingProviders)
	for s := 0; s < nSto; s++ {
		members := append(g.block(max(cfg.Hosts/max(cfg.SharingProviders, 1), 2)), w.Providers[g.sharingIdx[s]].UUID)
		g.addAgg(fmt.Sprintf("storage-%d", s), nil, map[string]string{"storage_backend": "ceph"}, members)
	}
	// The isolated aggregate.
	if g.take(1) == 1 {
		g.addAgg(WindowsAggregate, nil, map[string]string{"trait:" + WindowsTrait: "required", "os": "windows"}, g.block(max(cfg.Hosts/100, 1)))
	}
	g.specAggregates()
}

// specAggregates spends the rest of the budget on extra-spec style
// aggregates; one in ten groups child providers (GPUs on NUMA nodes)
// rather than hosts.
func (g *gen) specAggregates() {
	cfg := g.cfg
	gpus := []string{"a100", "h100", "l40s"}
	families := []string{"skylake", "icelake", "sapphirerapids"}
	for i := 0; g.budget > 0; i++ {
		g.take(1)
		var md map[string]string
		switch i % 5 {
		case 0:
			md = map[string]string{"ssd": "true"}
		case 1:
			md = map[string]string{"ssd": "false"}
		case 2:
			md = map[string]string{"gpu": gpus[g.r.IntN(len(gpus))], "gpu_count": fmt.Sprint(1 + g.r.IntN(8))}
		case 3:
			md = map[string]string{"cpu_family": families[g.r.IntN(len(families))], "hw:cpu_policy": "dedicated"}
		case 4:
			md = map[string]string{"network": fmt.Sprintf("fabric-%d", g.r.IntN(4)), "force_metadata_check": "False"}
		}
		var members []string
		if i%10 == 9 && cfg.ChildrenPerHost > 0 {
			n := 10 + g.r.IntN(40)
			for j := 0; j < n; j++ {
				members = append(members, g.childUUID(g.r.IntN(cfg.Hosts), g.r.IntN(cfg.ChildrenPerHost)))
			}
			members = uniq(members)
		} else {
			members = g.block(10 + g.r.IntN(60))
		}
		g.addAgg(fmt.Sprintf("spec-%d", i), nil, md, members)
	}
}

// flavors makes the well-known flavors, then plain sizes.
func (g *gen) flavors() {
	fixed := []models.Flavor{
		{Name: FlavorSmall, VCPUs: 1, RAMMB: 2048, DiskGB: 20},
		{Name: FlavorSSD, VCPUs: 2, RAMMB: 4096, DiskGB: 40, ExtraSpecs: map[string]string{"aggregate_instance_extra_specs:ssd": "true"}},
		{Name: FlavorReserved, VCPUs: 8, RAMMB: 16384, DiskGB: 80, ExtraSpecs: map[string]string{ReservationPrefix + ReservationPrefixID + "0": "true"}},
		{Name: FlavorWindows, VCPUs: 2, RAMMB: 8192, DiskGB: 80, ExtraSpecs: map[string]string{"trait:" + WindowsTrait: "required"}},
		{Name: FlavorGPU, VCPUs: 16, RAMMB: 65536, DiskGB: 200, ExtraSpecs: map[string]string{"aggregate_instance_extra_specs:gpu": "<in> a100"}},
	}
	for i := 0; i < g.cfg.Flavors; i++ {
		var f models.Flavor
		if i < len(fixed) {
			f = fixed[i]
		} else {
			n := 1 << (i % 6)
			f = models.Flavor{Name: fmt.Sprintf("gen.%d.%d", i, n), VCPUs: n, RAMMB: 2048 * n, DiskGB: 20 * n}
		}
		f.ID = g.uuid()
		if f.ExtraSpecs == nil {
			f.ExtraSpecs = map[string]string{}
		}
		g.w.Flavors = append(g.w.Flavors, f)
	}
}

// servers spreads the servers over the hosts.
func (g *gen) servers() {
	cfg, w := g.cfg, g.w
	w.Servers = make([]models.Server, 0, cfg.Servers)
	for i := 0; i < cfg.Servers && cfg.Hosts > 0; i++ {
		h := g.r.IntN(cfg.Hosts)
		w.Servers = append(w.Servers, models.Server{UUID: g.uuid(), Name: fmt.Sprintf("vm-%d", i),
			ProjectID: g.project(cfg), UserID: "user-1", Host: w.Providers[g.hostIdx[h]].Name})
	}
}

// serverGroups makes the server groups, drawing members from the servers.
func (g *gen) serverGroups() {
	cfg, w := g.cfg, g.w
	policies := []string{models.PolicyAntiAffinity, models.PolicyAffinity, models.PolicySoftAntiAffinity, models.PolicySoftAffinity}
	// A server is in at most one group, as in Nova. A draw that hits a
	// server an earlier group holds is skipped rather than redrawn, so the
	// random stream — and every uuid after it — is the same as it always was.
	grouped := make(map[string]bool, cfg.ServerGroups*4)
	for i := 0; i < cfg.ServerGroups; i++ {
		grp := models.ServerGroup{UUID: g.uuid(), Name: fmt.Sprintf("group-%d", i), ProjectID: g.project(cfg),
			UserID: "user-1", Policy: policies[i%len(policies)], Rules: map[string]int{}}
		if grp.Policy == models.PolicyAntiAffinity && i%8 == 0 {
			grp.Rules[models.RuleMaxServerPerHost] = 2
		}
		var members []string
		if len(w.Servers) > 0 {
			for j, n := 0, 2+g.r.IntN(7); j < n; j++ {
				if u := w.Servers[g.r.IntN(len(w.Servers))].UUID; !grouped[u] {
					grouped[u] = true
					members = append(members, u)
				}
			}
		}
		if members == nil {
			members = []string{}
		}
		grp.Members = members
		w.ServerGroups = append(w.ServerGroups, grp)
	}
}

func uniq(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// hostUsage is host h's usage: one host in ten is full on VCPU, one in
// ten nearly full on memory, the others part used. It is derived from the
// host number, not the random source, so that adding it left every other
// generated object as it was.
func hostUsage(h int) map[string]int64 {
	switch h % 10 {
	case 3:
		return map[string]int64{"VCPU": 256, "MEMORY_MB": 131072, "DISK_GB": 800}
	case 7:
		return map[string]int64{"VCPU": 120, "MEMORY_MB": 256000, "DISK_GB": 1500}
	}
	return map[string]int64{"VCPU": int64(h*37) % 200, "MEMORY_MB": int64(h*7919) % 131072, "DISK_GB": int64(h*13) % 1000}
}
