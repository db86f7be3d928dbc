package scheduling

import (
	"fmt"

	"corral/models"
)

func ExampleParseRequirement() {
	for _, spec := range []string{">= 8", "<or> a b c", "> 4", "== fast"} {
		r, err := ParseRequirement(spec)
		fast, _ := r.Match("fast")
		fmt.Printf("%q: op %q alternatives %v ignored %v matches \"fast\": %v error: %v\n",
			spec, r.Op, r.Alternatives(), r.Ignored(), fast, err)
	}
	// Output:
	// ">= 8": op ">=" alternatives [] ignored [] matches "fast": false error: <nil>
	// "<or> a b c": op "<or>" alternatives [a c] ignored [b] matches "fast": false error: <nil>
	// "> 4": op "" alternatives [] ignored [] matches "fast": false error: <nil>
	// "== fast": op "==" alternatives [] ignored [] matches "fast": false error: operator '==' compares numbers but "fast" is not a number (nova raises ValueError)
}

func ExampleAggregateInstanceExtraSpecsFilter() {
	host := &HostState{
		Provider:   &models.Provider{Name: "cn1"},
		Aggregates: []*models.Aggregate{{Name: "hdd", Metadata: map[string]string{"ssd": "false"}}},
	}
	req := &Request{Flavor: &models.Flavor{Name: "m1.fast", ExtraSpecs: map[string]string{
		"aggregate_instance_extra_specs:ssd": "true",
		"hw:cpu_policy":                      "dedicated", // another filter's key
	}}}
	v := AggregateInstanceExtraSpecsFilter{}.Filter(host, req)
	fmt.Println(v.Passed, v.Reason)
	// Output: false ssd: aggregate values {false} do not satisfy 'true'
}

func ExampleSetTenantTags() {
	md := map[string]string{"filter_tenant_id": "tA,tB", "ssd": "true"}
	fmt.Println(ValidateAggregateMetadata(md, models.DefaultSettings())[0].Severity)
	md = SetTenantTags(md, TenantTags(md))
	fmt.Println(md, len(ValidateAggregateMetadata(md, models.DefaultSettings())))
	// Output:
	// warning
	// map[filter_tenant_id:tA filter_tenant_id2:tB ssd:true] 0
}
