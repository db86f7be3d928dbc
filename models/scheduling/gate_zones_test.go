package scheduling

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"corral/models"
)

// zoneWorld has zone az-east (aggregate east: h1, which runs two servers,
// and h2, which runs none), zone az-west (aggregate west: h3, idle) and
// h4 in east2, a second aggregate of az-east, with h1.
func zoneWorld(t *testing.T) *models.World {
	t.Helper()
	w, err := models.DecodeWorldJSON([]byte(`{
	  "providers": [{"name": "h1"}, {"name": "h2"}, {"name": "h3"}, {"name": "h4"}],
	  "aggregates": [
	    {"name": "east", "availability_zone": "az-east", "members": ["h1", "h2"]},
	    {"name": "east2", "availability_zone": "az-east", "members": ["h1", "h4"]},
	    {"name": "west", "availability_zone": "az-west", "members": ["h3"]}
	  ],
	  "flavors": [{"id": "f1", "name": "m1.small", "vcpus": 1, "extra_specs": {}}],
	  "servers": [
	    {"name": "web-1", "project_id": "p1", "host": "h1"},
	    {"name": "web-2", "project_id": "p1", "host": "h1"},
	    {"name": "db-1", "project_id": "p1", "host": "h4"}
	  ]
	}`), "")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Renaming a zone, deleting the aggregate that carries it or taking hosts
// out of it while they run servers is a consequence the gate asks to be
// confirmed, with its code; the same changes on hosts that run nothing,
// or that stay in the zone through another aggregate, are not.
func TestGateZoneMovesUnderServers(t *testing.T) {
	live := mustSnapshot(t, zoneWorld(t))
	north := "az-north"
	cases := []struct {
		name    string
		changes []Change
		want    []string // code aggregate from→to hosts servers
		line    string   // a fragment of the consequence line
	}{
		{"zone renamed", []Change{{Op: OpSetZone, Aggregate: "east", AvailabilityZone: &north}, {Op: OpSetZone, Aggregate: "east2", AvailabilityZone: &north}},
			[]string{"zone_renamed_under_servers east az-east→az-north h1 2", "zone_renamed_under_servers east2 az-east→az-north h4 1"},
			"moves aggregate east from zone az-east to zone az-north under 2 running servers on h1 (Nova refuses to change the zone"},
		{"aggregate deleted", []Change{
			{Op: OpRemoveMember, Aggregate: "east2", Provider: "h1"}, {Op: OpRemoveMember, Aggregate: "east2", Provider: "h4"},
			{Op: OpRemoveMember, Aggregate: "east", Provider: "h1"}, {Op: OpRemoveMember, Aggregate: "east", Provider: "h2"},
			{Op: OpDeleteAggregate, Aggregate: "east"}, {Op: OpDeleteAggregate, Aggregate: "east2"}},
			[]string{"zone_deleted_under_servers east az-east→nova h1 2", "zone_deleted_under_servers east2 az-east→nova h4 1"},
			"deletes aggregate east, which puts its hosts in zone az-east, under 2 running servers on h1: they move to the default zone nova"},
		{"host taken out", []Change{{Op: OpRemoveMember, Aggregate: "east2", Provider: "h4"}},
			[]string{"zone_left_under_servers east2 az-east→nova h4 1"}, "takes hosts out of aggregate east2, zone az-east, under 1 running server on h4"},
		{"idle hosts", []Change{{Op: OpSetZone, Aggregate: "west", AvailabilityZone: &north}, {Op: OpRemoveMember, Aggregate: "east", Provider: "h2"}}, nil, ""},
		{"still in the zone through east2", []Change{{Op: OpRemoveMember, Aggregate: "east", Provider: "h1"}}, nil, ""},
		{"aggregate renamed, zone kept", []Change{{Op: OpRenameAggregate, Aggregate: "east", Value: "east-1"}}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := GateOf(live, c.changes)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, z := range g.Zones {
				got = append(got, z.Code+" "+z.Aggregate+" "+z.From+"→"+z.To+" "+strings.Join(z.Hosts, ",")+" "+strconv.Itoa(z.Servers))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("zone moves %q, want %q", got, c.want)
			}
			lines := strings.Join(g.Consequences(), " | ")
			if c.want == nil {
				if g.Zones == nil || len(g.Zones) != 0 || strings.Contains(lines, "zone") {
					t.Errorf("zones %v, consequences %q; want none", g.Zones, lines)
				}
				return
			}
			if !g.NeedsConfirmation() || g.Token == "" || !strings.Contains(lines, c.line) {
				t.Errorf("confirmation %v, token %q, consequences %q; want one naming %q", g.NeedsConfirmation(), g.Token, lines, c.line)
			}
		})
	}

	// A world whose hosts run nothing has no zone trap, whatever moves.
	idle := zoneWorld(t)
	idle.Servers = nil
	g, err := GateOf(mustSnapshot(t, idle), cases[0].changes)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Zones) != 0 || g.NeedsConfirmation() {
		t.Errorf("an idle world: zones %v, consequences %q", g.Zones, g.Consequences())
	}
}
