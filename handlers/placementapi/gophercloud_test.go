package placementapi_test

import (
	"context"
	"net/http"
	"reflect"
	"sort"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/placement/v1/resourceproviders"
)

// TestGophercloud drives the API with gophercloud's placement client, as
// Go tooling written against Placement would.
func TestGophercloud(t *testing.T) {
	a := startApp(t, openSQLite(t))
	a.loadProbeFixture()
	ctx := context.Background()
	pc := &gophercloud.ProviderClient{HTTPClient: *http.DefaultClient}
	pc.SetToken(a.Admin)
	client := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: a.URL + "/", Type: "placement", Microversion: "1.32"}

	list := func(opts resourceproviders.ListOpts) []string {
		t.Helper()
		page, err := resourceproviders.List(client, opts).AllPages(ctx)
		if err != nil {
			t.Fatalf("list %+v: %v", opts, err)
		}
		rps, err := resourceproviders.ExtractResourceProviders(page)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, rp := range rps {
			out = append(out, rp.Name)
		}
		sort.Strings(out)
		return out
	}
	cases := []struct {
		opts resourceproviders.ListOpts
		want []string
	}{
		{resourceproviders.ListOpts{MemberOf: "!" + aggA}, []string{"child1", "child2", "gchild1", "root2"}},
		{resourceproviders.ListOpts{MemberOf: "!in:" + aggA + "," + aggC}, []string{"child1", "gchild1", "root2"}},
		{resourceproviders.ListOpts{MemberOf: "in:" + aggA + "," + aggC}, []string{"child2", "root1"}},
		{resourceproviders.ListOpts{InTree: root1, MemberOf: "!" + aggA}, []string{"child1", "gchild1"}},
		{resourceproviders.ListOpts{Name: "root2"}, []string{"root2"}},
	}
	for _, tc := range cases {
		if got := list(tc.opts); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v: got %v, want %v", tc.opts, got, tc.want)
		}
	}

	rp, err := resourceproviders.Get(ctx, client, child2).Extract()
	if err != nil || rp.Name != "child2" || rp.ParentProviderUUID != root2 || rp.RootProviderUUID != root2 {
		t.Fatalf("get: %+v %v", rp, err)
	}
	aggs, err := resourceproviders.GetAggregates(ctx, client, child2).Extract()
	if err != nil || !reflect.DeepEqual(aggs.Aggregates, []string{aggC}) || aggs.ResourceProviderGeneration == nil || *aggs.ResourceProviderGeneration != 1 {
		t.Fatalf("get aggregates: %+v %v", aggs, err)
	}
	gen := 1
	aggs, err = resourceproviders.UpdateAggregates(ctx, client, child2, resourceproviders.UpdateAggregatesOpts{
		ResourceProviderGeneration: &gen, Aggregates: []string{aggA, aggC},
	}).Extract()
	if err != nil || *aggs.ResourceProviderGeneration != 2 {
		t.Fatalf("update aggregates: %+v %v", aggs, err)
	}
	if got := list(resourceproviders.ListOpts{MemberOf: aggA}); !reflect.DeepEqual(got, []string{"child2", "root1"}) {
		t.Errorf("after update: %v", got)
	}
	// The same stale generation again is a 409.
	_, err = resourceproviders.UpdateAggregates(ctx, client, child2, resourceproviders.UpdateAggregatesOpts{
		ResourceProviderGeneration: &gen, Aggregates: []string{aggA},
	}).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusConflict) {
		t.Errorf("stale update: %v", err)
	}

	created, err := resourceproviders.Create(ctx, client, resourceproviders.CreateOpts{Name: "gc-leaf", ParentProviderUUID: child2}).Extract()
	if err != nil || created.RootProviderUUID != root2 {
		t.Fatalf("create: %+v %v", created, err)
	}
	if err := resourceproviders.Delete(ctx, client, created.UUID).ExtractErr(); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := resourceproviders.Get(ctx, client, created.UUID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("get after delete: %v", err)
	}
}
