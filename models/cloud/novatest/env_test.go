package novatest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"corral/models/cloud/novatest"
)

// env is one scenario's view of the cloud: what its setup made, and the
// steps that undo it.
type env struct {
	t        *testing.T
	c        *novatest.Cloud
	run      string // the configuration's name, in the names of what setup makes
	groups   map[string]string
	aggs     map[string]int
	cleanups []func()
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// undo runs the cleanups, the last registered first.
func (e *env) undo() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
	e.cleanups = nil
}

// aggregate makes a Nova aggregate (Nova copies its hosts into Placement).
func (e *env) aggregate(name, zone string, hosts []string, metadata map[string]string) {
	e.t.Helper()
	agg := map[string]any{"name": e.run + "-" + name}
	if zone != "" {
		agg["availability_zone"] = zone
	}
	var out struct {
		Aggregate struct {
			ID int `json:"id"`
		} `json:"aggregate"`
	}
	_, err := e.c.Compute("POST", "os-aggregates", "", map[string]any{"aggregate": agg}, &out, http.StatusOK)
	e.must(err)
	id := out.Aggregate.ID
	e.aggs[name] = id
	path := "os-aggregates/" + strconv.Itoa(id)
	for _, h := range hosts {
		_, err := e.c.Compute("POST", path+"/action", "", map[string]any{"add_host": map[string]any{"host": h}}, nil, http.StatusOK)
		e.must(err)
	}
	if len(metadata) > 0 {
		_, err := e.c.Compute("POST", path+"/action", "", map[string]any{"set_metadata": map[string]any{"metadata": metadata}}, nil, http.StatusOK)
		e.must(err)
	}
	e.cleanups = append(e.cleanups, func() {
		for _, h := range hosts {
			if _, err := e.c.Compute("POST", path+"/action", "", map[string]any{"remove_host": map[string]any{"host": h}}, nil, http.StatusOK); err != nil {
				e.t.Errorf("cleanup: %v", err)
			}
		}
		if _, err := e.c.Compute("DELETE", path, "", nil, nil, http.StatusOK); err != nil {
			e.t.Errorf("cleanup: %v", err)
		}
	})
}

// instancesOn counts the servers Nova has on host.
func (e *env) instancesOn(host string) int {
	e.t.Helper()
	var out struct {
		Servers []struct {
			ID string `json:"id"`
		} `json:"servers"`
	}
	_, err := e.c.Compute("GET", "servers?all_tenants=1&host="+url.QueryEscape(host), "", nil, &out, http.StatusOK)
	e.must(err)
	return len(out.Servers)
}

// group makes a server group of the admin project.
func (e *env) group(name, policy string, rules map[string]int) {
	e.t.Helper()
	g := map[string]any{"name": e.run + "-" + name, "policy": policy}
	if rules != nil {
		g["rules"] = rules
	}
	var out struct {
		Group struct {
			ID string `json:"id"`
		} `json:"server_group"`
	}
	_, err := e.c.Compute("POST", "os-server-groups", "", map[string]any{"server_group": g}, &out, http.StatusOK)
	e.must(err)
	e.groups[name] = out.Group.ID
}

// provider is a host's root provider: its uuid and generation.
func (e *env) provider(host string) (string, int64) {
	e.t.Helper()
	var out struct {
		Providers []struct {
			UUID       string `json:"uuid"`
			Generation int64  `json:"generation"`
		} `json:"resource_providers"`
	}
	e.must(e.c.Placement("GET", "resource_providers?name="+url.QueryEscape(host), nil, &out, http.StatusOK))
	if len(out.Providers) != 1 {
		e.t.Fatalf("providers named %s: %+v", host, out.Providers)
	}
	return out.Providers[0].UUID, out.Providers[0].Generation
}

// trait gives the hosts' providers a custom trait (kept: the computes
// leave custom traits alone).
func (e *env) trait(trait string, hosts ...string) {
	e.t.Helper()
	e.must(e.c.Placement("PUT", "traits/"+trait, nil, nil, http.StatusCreated, http.StatusNoContent))
	for _, h := range hosts {
		uuid, _ := e.provider(h)
		var cur struct {
			Traits     []string `json:"traits"`
			Generation int64    `json:"resource_provider_generation"`
		}
		e.must(e.c.Placement("GET", "resource_providers/"+uuid+"/traits", nil, &cur, http.StatusOK))
		if slices.Contains(cur.Traits, trait) {
			continue
		}
		e.must(e.c.Placement("PUT", "resource_providers/"+uuid+"/traits", map[string]any{
			"traits": append(cur.Traits, trait), "resource_provider_generation": cur.Generation}, nil, http.StatusOK))
	}
}

// leavePlacementAggregate takes host out of the aggregate in Placement
// only, as a cloud whose two memberships drifted apart.
func (e *env) leavePlacementAggregate(agg, host string) {
	e.t.Helper()
	var a struct {
		Aggregate struct {
			UUID string `json:"uuid"`
		} `json:"aggregate"`
	}
	_, err := e.c.Compute("GET", "os-aggregates/"+strconv.Itoa(e.aggs[agg]), "", nil, &a, http.StatusOK)
	e.must(err)
	uuid, _ := e.provider(host)
	var cur struct {
		Aggregates []string `json:"aggregates"`
		Generation int64    `json:"resource_provider_generation"`
	}
	e.must(e.c.Placement("GET", "resource_providers/"+uuid+"/aggregates", nil, &cur, http.StatusOK))
	keep := slices.DeleteFunc(cur.Aggregates, func(u string) bool { return u == a.Aggregate.UUID })
	e.must(e.c.Placement("PUT", "resource_providers/"+uuid+"/aggregates", map[string]any{
		"aggregates": keep, "resource_provider_generation": cur.Generation}, nil, http.StatusOK))
}

// service updates host's nova-compute service (2.53: by id) and restores
// it with undo at cleanup. Disabling waits until the compute has put
// COMPUTE_STATUS_DISABLED on its provider.
func (e *env) service(host string, update, undo map[string]any) {
	e.t.Helper()
	var out struct {
		Services []struct {
			ID string `json:"id"`
		} `json:"services"`
	}
	_, err := e.c.Compute("GET", "os-services?binary=nova-compute&host="+host, "", nil, &out, http.StatusOK)
	e.must(err)
	if len(out.Services) != 1 {
		e.t.Fatalf("services of %s: %+v", host, out.Services)
	}
	path := "os-services/" + out.Services[0].ID
	set := func(body map[string]any) error {
		if _, err := e.c.Compute("PUT", path, "", body, nil, http.StatusOK); err != nil {
			return err
		}
		if _, ok := body["status"]; !ok {
			return nil
		}
		return e.waitTrait(host, "COMPUTE_STATUS_DISABLED", body["status"] == "disabled")
	}
	e.must(set(update))
	e.cleanups = append(e.cleanups, func() {
		if err := set(undo); err != nil {
			e.t.Errorf("cleanup: %v", err)
		}
	})
}

func (e *env) waitTrait(host, trait string, want bool) error {
	uuid, _ := e.provider(host)
	for i := 0; i < 100; i++ {
		var cur struct {
			Traits []string `json:"traits"`
		}
		if err := e.c.Placement("GET", "resource_providers/"+uuid+"/traits", nil, &cur, http.StatusOK); err != nil {
			return err
		}
		if slices.Contains(cur.Traits, trait) == want {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s: trait %s still %v after 10 s", host, trait, !want)
}

// createFlavors makes the test's flavors, each public, its id its name.
func createFlavors(t *testing.T, c *novatest.Cloud) {
	t.Helper()
	for _, f := range flavors {
		body := map[string]any{"flavor": map[string]any{"name": f.name, "id": f.name, "vcpus": f.vcpus, "ram": f.ram,
			"disk": f.disk, "OS-FLV-EXT-DATA:ephemeral": f.ephemeral, "swap": f.swapMiB}}
		if _, err := c.Compute("POST", "flavors", "", body, nil, http.StatusOK); err != nil {
			t.Fatal(err)
		}
		if len(f.specs) > 0 {
			if _, err := c.Compute("POST", "flavors/"+f.name+"/os-extra_specs", "", map[string]any{"extra_specs": f.specs}, nil, http.StatusOK); err != nil {
				t.Fatal(err)
			}
		}
	}
}
