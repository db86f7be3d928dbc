package compute_test

import (
	"fmt"
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
			benchGET(b, s.URL+bc.path, s.tokens["alice"], "compute 2.57")
		})
	}
}
