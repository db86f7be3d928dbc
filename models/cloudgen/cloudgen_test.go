package cloudgen

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"corral/models"
)

func TestSmallIsDeterministicAndConsistent(t *testing.T) {
	a, b := Generate(Small()), Generate(Small())
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs of the same config differ")
	}
	c := Small()
	c.Seed = 2
	if reflect.DeepEqual(a.Providers[0].UUID, Generate(c).Providers[0].UUID) {
		t.Error("a different seed gave the same UUIDs")
	}
	cfg := Small()
	wantProviders := cfg.Hosts*(1+cfg.ChildrenPerHost) + cfg.SharingProviders
	if len(a.Providers) != wantProviders || len(a.Aggregates) != cfg.Aggregates ||
		len(a.Flavors) != cfg.Flavors || len(a.Servers) != cfg.Servers || len(a.ServerGroups) != cfg.ServerGroups {
		t.Errorf("sizes: %d providers (want %d), %d aggregates, %d flavors, %d servers, %d groups",
			len(a.Providers), wantProviders, len(a.Aggregates), len(a.Flavors), len(a.Servers), len(a.ServerGroups))
	}
	// The world must survive the interchange format unchanged, which also
	// checks every reference (parents, members, hosts) resolves.
	var buf bytes.Buffer
	if err := models.EncodeWorld(&buf, a); err != nil {
		t.Fatal(err)
	}
	back, err := models.DecodeWorld(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Providers) != len(a.Providers) || len(back.Aggregates) != len(a.Aggregates) {
		t.Errorf("round trip lost objects")
	}
	// The metadata kinds the benchmarks rely on are all present.
	kinds := map[string]bool{}
	for _, ag := range a.Aggregates {
		for k := range ag.Metadata {
			switch {
			case strings.HasPrefix(k, "filter_tenant_id"):
				kinds["tenant"] = true
			case strings.HasPrefix(k, ReservationPrefix):
				kinds["reservation"] = true
			case strings.HasPrefix(k, "trait:"):
				kinds["isolated"] = true
			case k == "availability_zone":
				kinds["az"] = true
			case k == "ssd":
				kinds["spec"] = true
			}
		}
	}
	for _, k := range []string{"tenant", "reservation", "isolated", "az", "spec"} {
		if !kinds[k] {
			t.Errorf("no %s aggregate generated", k)
		}
	}
}

// A server is in one server group at most (Nova refuses a second one, and
// so does the store); every member is a generated server.
func TestServerGroupsDoNotShareServers(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"small", Small()},
		{"default", Default()},
		{"crowded", Config{Seed: 3, Hosts: 4, Servers: 10, ServerGroups: 30, Projects: 2}},
	} {
		w := Generate(tc.cfg)
		servers := map[string]bool{}
		for _, s := range w.Servers {
			servers[s.UUID] = true
		}
		owner := map[string]string{}
		members := 0
		for _, g := range w.ServerGroups {
			if g.Members == nil {
				t.Errorf("%s: group %s has nil members", tc.name, g.Name)
			}
			for _, m := range g.Members {
				if !servers[m] {
					t.Errorf("%s: group %s has unknown member %s", tc.name, g.Name, m)
				}
				if other, ok := owner[m]; ok {
					t.Errorf("%s: server %s is in %s and %s", tc.name, m, other, g.Name)
				}
				owner[m] = g.Name
				members++
			}
		}
		// Groups still have members: at least two draws per group, so the
		// skipped repeats must not empty them.
		if min(tc.cfg.ServerGroups*2, tc.cfg.Servers) > 0 && members < min(tc.cfg.ServerGroups, tc.cfg.Servers) {
			t.Errorf("%s: only %d grouped servers over %d groups", tc.name, members, len(w.ServerGroups))
		}
	}
}
