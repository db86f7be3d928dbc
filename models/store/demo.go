package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"corral/models"
)

// demoNamespace makes the demo's uuids the same on every install, so docs
// and bookmarks can point at them.
var demoNamespace = uuid.MustParse("6f1c1d2e-4a44-4b8e-9a0e-0c0ff5ee0000")

// DemoUUID is the uuid the demo gives the object of the given kind and name
// (kind: provider, aggregate, flavor, server, server_group).
func DemoUUID(kind, name string) string {
	return uuid.NewSHA1(demoNamespace, []byte(kind+":"+name)).String()
}

// DemoWorld is the demo topology. Its heart is seed 000's "nested resource
// providers" picture — cn1 and cn2 with NUMA children, sharing providers ss1
// and ss2, aggA {cn1}, aggB {cn2, ss1}, aggC {numa1_1, ss2} — grown into a
// small cloud: two zones, tenant-tagged aggregates, a reservation free pool
// and one reservation, aggregates for the extra-spec filters, and server
// groups with members spread over hosts.
func DemoWorld() *models.World {
	w := &models.World{Settings: models.DefaultSettings()}
	addDemoProviders(w)
	addDemoAggregates(w)
	addDemoFlavors(w)
	addDemoServers(w)
	addDemoServerGroups(w)
	return w
}

// addDemoProviders adds hosts cn1..cn8, each with two NUMA children, and
// the sharing providers ss1 and ss2.
func addDemoProviders(w *models.World) {
	prov := func(name string, parent string, traits []string, inv map[string]models.Inventory, use map[string]int64) {
		p := models.Provider{UUID: DemoUUID("provider", name), Name: name, Traits: traits, Inventories: inv, Usages: use}
		if traits == nil {
			p.Traits = []string{}
		}
		if parent != "" {
			pu := DemoUUID("provider", parent)
			p.ParentUUID = &pu
		}
		w.Providers = append(w.Providers, p)
	}
	inv := func(total int64, ratio float64) models.Inventory {
		return models.Inventory{Total: total, AllocationRatio: ratio, MinUnit: 1, MaxUnit: total, StepSize: 1}
	}
	hostTraits := map[int][]string{
		2: {"CUSTOM_LICENSED_WINDOWS"},
		4: {"HW_CPU_X86_AVX2"},
		5: {"HW_CPU_X86_AVX2"},
		6: {"HW_CPU_X86_AVX2", "CUSTOM_GPU"},
	}
	for h := 1; h <= 8; h++ {
		host := fmt.Sprintf("cn%d", h)
		prov(host, "", hostTraits[h],
			map[string]models.Inventory{"DISK_GB": inv(2000, 1.0)},
			map[string]int64{"DISK_GB": int64(40 * (h % 4))})
		for n := 1; n <= 2; n++ {
			use := map[string]int64{"VCPU": int64((h + n) % 5 * 2), "MEMORY_MB": int64((h + n) % 5 * 4096)}
			switch h {
			case 3: // full: the preview shows VCPU shortfalls
				use = map[string]int64{"VCPU": 64 - int64(n-1)*2, "MEMORY_MB": 61440}
			case 7: // empty
				use = nil
			}
			prov(fmt.Sprintf("numa%d_%d", h, n), host, nil,
				map[string]models.Inventory{"VCPU": inv(16, 4.0), "MEMORY_MB": inv(65536, 1.0)}, use)
		}
	}
	for _, ss := range []string{"ss1", "ss2"} {
		prov(ss, "", []string{models.TraitSharesViaAggregate},
			map[string]models.Inventory{"DISK_GB": inv(20000, 1.0)}, map[string]int64{"DISK_GB": 1200})
	}
}

// addDemoAggregates adds seed 000's aggregates, the zones, the tenant,
// reservation and host-filter aggregates.
func addDemoAggregates(w *models.World) {
	agg := func(name string, az string, meta map[string]string, members ...string) {
		a := models.Aggregate{UUID: DemoUUID("aggregate", name), Name: name, Metadata: meta}
		if meta == nil {
			a.Metadata = map[string]string{}
		}
		if az != "" {
			z := az
			a.AvailabilityZone = &z
		}
		for _, m := range members {
			a.Members = append(a.Members, DemoUUID("provider", m))
		}
		w.Aggregates = append(w.Aggregates, a)
	}
	// Seed 000's picture, exactly.
	agg("aggA", "", nil, "cn1")
	agg("aggB", "", nil, "cn2", "ss1")
	agg("aggC", "", nil, "numa1_1", "ss2")
	// Zones.
	agg("az-east", "east", nil, "cn1", "cn2", "cn3", "cn4")
	agg("az-west", "west", nil, "cn5", "cn6", "cn7", "cn8")
	// Tenant isolation: one project id per key for the placement
	// pre-filter; a second key lets acme's dev project in too.
	agg("tenant-acme", "", map[string]string{"filter_tenant_id": "acme", "filter_tenant_id2": "acme-dev"}, "cn3", "cn4")
	agg("tenant-globex", "", map[string]string{"filter_tenant_id": "globex"}, "cn5")
	// Seed 000's reservation flow: Blazar's free pool and one reservation
	// are aggregates carrying a reservation: key, so every flavor without
	// such a key is kept away from cn7 and cn8.
	agg("blazar-freepool", "", map[string]string{"reservation:freepool": "true"}, "cn7")
	agg("reservation-r42", "", map[string]string{"reservation:r42": "true", "blazar:owner": "acme"}, "cn8")
	// Host filters' food.
	agg("ssd", "", map[string]string{"ssd": "true"}, "cn4", "cn5")
	agg("hdd", "", map[string]string{"ssd": "false"}, "cn1", "cn3")
	agg("gpu", "", map[string]string{"gpu": "true", "force_metadata_check": "True"}, "cn6")
	agg("windows", "", map[string]string{"trait:CUSTOM_LICENSED_WINDOWS": "required", "os": "windows"}, "cn2")
}

// addDemoFlavors adds flavors for each filter the demo shows.
func addDemoFlavors(w *models.World) {
	flavor := func(name string, vcpus, ram, disk int, specs map[string]string) {
		if specs == nil {
			specs = map[string]string{}
		}
		w.Flavors = append(w.Flavors, models.Flavor{ID: DemoUUID("flavor", name), Name: name,
			VCPUs: vcpus, RAMMB: ram, DiskGB: disk, ExtraSpecs: specs})
	}
	flavor("m1.small", 1, 2048, 20, nil)
	flavor("m1.large", 4, 8192, 80, nil)
	flavor("m1.ssd", 2, 4096, 40, map[string]string{"aggregate_instance_extra_specs:ssd": "true"})
	flavor("m1.not-ssd", 2, 4096, 40, map[string]string{"aggregate_instance_extra_specs:ssd": "s!= true"})
	flavor("g1.gpu", 8, 32768, 100, map[string]string{"aggregate_instance_extra_specs:gpu": "true"})
	flavor("r1.reserved", 4, 8192, 80, map[string]string{"reservation:r42": "true"})
	flavor("w1.windows", 2, 4096, 60, map[string]string{"trait:CUSTOM_LICENSED_WINDOWS": "required", "aggregate_instance_extra_specs:os": "<in> windows"})
}

// addDemoServers adds servers on the hosts the server groups talk about.
func addDemoServers(w *models.World) {
	server := func(name, project, user, host string) {
		w.Servers = append(w.Servers, models.Server{UUID: DemoUUID("server", name), Name: name,
			ProjectID: project, UserID: user, Host: host})
	}
	server("web-1", "acme", "alice", "cn3")
	server("web-2", "acme", "alice", "cn3")
	server("web-3", "acme", "alice", "cn4")
	server("db-1", "acme", "alice", "cn4")
	server("db-2", "acme", "alice", "cn4")
	server("cache-1", "acme", "alice", "cn1")
	server("batch-1", "globex", "bob", "cn5")
	server("batch-2", "globex", "bob", "cn5")
	server("batch-3", "globex", "bob", "cn6")
	server("reserved-1", "acme", "alice", "cn8")
}

// addDemoServerGroups adds one group of each policy over the demo's servers.
func addDemoServerGroups(w *models.World) {
	group := func(name, project, user, policy string, rules map[string]int, members ...string) {
		if rules == nil {
			rules = map[string]int{}
		}
		g := models.ServerGroup{UUID: DemoUUID("server_group", name), Name: name, ProjectID: project,
			UserID: user, Policy: policy, Rules: rules, Members: []string{}}
		for _, m := range members {
			g.Members = append(g.Members, DemoUUID("server", m))
		}
		w.ServerGroups = append(w.ServerGroups, g)
	}
	// cn3 already holds two web servers: at max_server_per_host 2 the next
	// web server must avoid cn3 but may still land on cn4.
	group("web", "acme", "alice", models.PolicyAntiAffinity, map[string]int{models.RuleMaxServerPerHost: 2}, "web-1", "web-2", "web-3")
	group("db", "acme", "alice", models.PolicyAffinity, nil, "db-1", "db-2")
	group("batch", "globex", "bob", models.PolicySoftAntiAffinity, nil, "batch-1", "batch-2", "batch-3")
	group("spread", "acme", "alice", models.PolicyAntiAffinity, nil)
}

// demoActor signs the demo's audit event.
var demoActor = Actor{Name: "corral", Via: "demo"}

// LoadDemo fills an empty database with DemoWorld and reports whether it did;
// a database holding any provider, aggregate, flavor, server or group is
// left alone.
func (s *Store) LoadDemo(ctx context.Context) (bool, error) {
	in := DemoWorld()
	if err := checkIncoming(in); err != nil {
		return false, models.Wrap("store.LoadDemo", err)
	}
	loaded := false
	err := s.write(ctx, demoActor, "store.LoadDemo", func(t *txn) error {
		cur, err := loadWorld(t.tx)
		if err != nil {
			return err
		}
		if len(cur.Providers)+len(cur.Aggregates)+len(cur.Flavors)+len(cur.Servers)+len(cur.ServerGroups) > 0 {
			return errNotEmpty
		}
		loaded = true
		return t.importWorld(cur, in, false)
	})
	if errors.Is(err, errNotEmpty) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return loaded, nil
}

// errNotEmpty rolls the demo's transaction back without being a failure.
var errNotEmpty = errors.New("database is not empty")
