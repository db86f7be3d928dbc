package compute_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"
)

// Throughput of the API through the whole application (token lookup,
// microversion, store read, JSON), with parallel clients.
func BenchmarkServerGroupsHTTP(b *testing.B) {
	s := newServer(b, nil)
	var id string
	for i := 0; i < 5; i++ {
		r := s.req("POST", "/compute/v2.1/os-server-groups", "alice", "2.64", fmt.Sprintf(`{"server_group":{"name":"b%d","policy":"affinity"}}`, i))
		if r.Status != 200 {
			b.Fatalf("create: %d %s", r.Status, r.Body)
		}
		id = r.JSON(b)["server_group"].(map[string]any)["id"].(string)
	}
	for _, bc := range []struct{ name, path string }{
		{"list", "/compute/v2.1/os-server-groups"},
		{"show", "/compute/v2.1/os-server-groups/" + id},
	} {
		b.Run(bc.name, func(b *testing.B) {
			benchGET(b, s.URL+bc.path, s.tokens["alice"], "compute 2.64")
		})
	}
}

// benchGET sends GET url from parallel clients with a token and a
// microversion, failing on any status but 200.
func benchGET(b *testing.B, url, token, version string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("X-Auth-Token", token)
			req.Header.Set("OpenStack-API-Version", version)
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
}
