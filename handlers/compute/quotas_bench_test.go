package compute_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"
)

// Throughput of the quota reads through the whole application, with
// parallel clients, on a project with a few groups.
func BenchmarkQuotaHTTP(b *testing.B) {
	s := newServer(b, nil)
	for i := 0; i < 5; i++ {
		r := s.req("POST", "/compute/v2.1/os-server-groups", "alice", "2.64", fmt.Sprintf(`{"server_group":{"name":"b%d","policy":"affinity"}}`, i))
		if r.Status != 200 {
			b.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	for _, bc := range []struct{ name, path string }{
		{"show", "/compute/v2.1/os-quota-sets/p1"},
		{"detail", "/compute/v2.1/os-quota-sets/p1/detail"},
		{"limits", "/compute/v2.1/limits"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("GET", s.URL+bc.path, nil)
					req.Header.Set("X-Auth-Token", s.tokens["alice"])
					req.Header.Set("OpenStack-API-Version", "compute 2.57")
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
				}
			})
		})
	}
}
