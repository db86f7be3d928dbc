package store_test

import (
	"slices"
	"testing"

	"corral/models/scheduling"
	"corral/models/store"
)

// The demo is meant to tell a story on the live query page; these are the
// lines of that story, run through the filtering core with the demo's
// default settings.
func TestDemoStory(t *testing.T) {
	snap, err := scheduling.NewSnapshot(store.DemoWorld())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		req    scheduling.RequestSpec
		passed []string
	}{
		{"plain flavor: reservation hosts cn7, cn8 forbidden; globex's cn5 refuses acme",
			scheduling.RequestSpec{ProjectID: "acme", Flavor: scheduling.FlavorRef{Name: "m1.small"}},
			[]string{"cn1", "cn2", "cn3", "cn4", "cn6"}},
		{"globex is refused by acme's hosts cn3, cn4",
			scheduling.RequestSpec{ProjectID: "globex", Flavor: scheduling.FlavorRef{Name: "m1.small"}},
			[]string{"cn1", "cn2", "cn5", "cn6"}},
		{"the reservation flavor lands on the reserved host only",
			scheduling.RequestSpec{ProjectID: "acme", Flavor: scheduling.FlavorRef{Name: "r1.reserved"}},
			[]string{"cn8"}},
		{"ssd flavor: ssd hosts cn4, cn5, minus globex's cn5",
			scheduling.RequestSpec{ProjectID: "acme", Flavor: scheduling.FlavorRef{Name: "m1.ssd"}},
			[]string{"cn4"}},
		{"zone east",
			scheduling.RequestSpec{ProjectID: "acme", Flavor: scheduling.FlavorRef{Name: "m1.small"}, AvailabilityZone: "east"},
			[]string{"cn1", "cn2", "cn3", "cn4"}},
		{"anti-affinity at 2 per host: cn3 is full, cn4 is not",
			scheduling.RequestSpec{ProjectID: "acme", Flavor: scheduling.FlavorRef{Name: "m1.small"}, ServerGroup: "web"},
			[]string{"cn1", "cn2", "cn4", "cn6"}},
		{"affinity follows the db servers to cn4",
			scheduling.RequestSpec{ProjectID: "acme", Flavor: scheduling.FlavorRef{Name: "m1.small"}, ServerGroup: "db"},
			[]string{"cn4"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := c.req
			tr, err := snap.Run(&req)
			if err != nil {
				t.Fatal(err)
			}
			var passed []string
			for _, h := range tr.Hosts {
				if h.Passed {
					passed = append(passed, h.Name)
				}
			}
			slices.Sort(passed)
			if !slices.Equal(passed, c.passed) {
				for _, h := range tr.Hosts {
					t.Logf("%s passed=%v %s: %s", h.Name, h.Passed, h.Stage, h.Reason)
				}
				t.Fatalf("passing hosts %v, want %v (query %s)", passed, c.passed, tr.PlacementQuery)
			}
		})
	}
}
