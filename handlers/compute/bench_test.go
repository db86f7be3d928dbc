package compute

import "testing"

func BenchmarkParseServerGroupCreate(b *testing.B) {
	body := []byte(`{"server_group":{"name":"web-tier","policy":"anti-affinity","rules":{"max_server_per_host":"3"}}}`)
	v := Version{2, 64}
	for b.Loop() {
		if _, err := ParseServerGroupCreate(v, body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNegotiate(b *testing.B) {
	h := map[string][]string{"Openstack-Api-Version": {"compute 2.64"}}
	for b.Loop() {
		if _, err := Negotiate(h); err != nil {
			b.Fatal(err)
		}
	}
}
