package scheduling

import (
	"fmt"
	"testing"

	"corral/models"
)

// hfBenchHosts builds n hosts, each in three of 50 aggregates whose metadata
// looks like a real cloud's: tenant keys, a few capability keys, an AZ-like
// key and a reservation key.
func hfBenchHosts(n int) []*HostState {
	aggs := make([]*models.Aggregate, 50)
	for i := range aggs {
		aggs[i] = &models.Aggregate{ID: int64(i), Name: fmt.Sprintf("agg%d", i), Metadata: map[string]string{
			"filter_tenant_id":             fmt.Sprintf("t%d", i%7),
			"filter_tenant_id2":            fmt.Sprintf("t%d", (i+3)%7),
			"ssd":                          []string{"true", "false"}[i%2],
			"ram":                          fmt.Sprint(16 << (i % 4)),
			"cpu":                          "aes,avx,avx2",
			"hw:cpu_policy":                "shared",
			fmt.Sprint("reservation:r", i): "true",
		}}
	}
	hosts := make([]*HostState, n)
	for i := range hosts {
		hosts[i] = &HostState{
			Provider:   &models.Provider{Name: fmt.Sprintf("cn%d", i)},
			Aggregates: []*models.Aggregate{aggs[i%50], aggs[(i*7+1)%50], aggs[(i*13+2)%50]},
		}
	}
	return hosts
}

// BenchmarkHostFilters runs every host filter over 10,000 hosts for one
// request (one op = the whole pass).
func BenchmarkHostFilters(b *testing.B) {
	hosts := hfBenchHosts(10000)
	r := hfRequest(map[string]string{
		"aggregate_instance_extra_specs:ssd": "true",
		"ram":                                ">= 32",
		"cpu":                                "<or> avx2 <or> sse",
		"hw:cpu_policy":                      "shared",
	})
	r.ProjectID = "t3"
	r.Group = &models.ServerGroup{Name: "g", Policy: models.PolicyAntiAffinity, Rules: map[string]int{models.RuleMaxServerPerHost: 2}}
	r.GroupHosts = map[string]int{"cn1": 2, "cn2": 1}
	for _, name := range HostFilterNames() {
		f, _ := LookupHostFilter(name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for _, h := range hosts {
					f.Filter(h, r)
				}
			}
		})
	}
}
