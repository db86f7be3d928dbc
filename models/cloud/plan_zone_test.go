package cloud_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/scheduling"
	"corral/models/store/storetest"
)

// The real nova-api refuses to change the zone of an aggregate whose host
// runs a server, and to take an aggregate out of its zone; corral's plan,
// from a sync of that cloud, refuses both before sending anything.
func TestPlanRefusesTheZoneChangesRealNovaRefuses(t *testing.T) {
	c := cloudtest.Shared(t)
	f := &fixture{c: c}
	tag := strings.ReplaceAll(newUUID()[:8], "-", "")
	host, aggName, az := "zr-"+tag+"-cn1", "zr-"+tag+"-agg", "zr-"+tag+"-az"
	must(t, c.AddComputeHost(host, f.provider(t, host, "")))
	id, _ := f.aggregate(t, aggName, az, []string{host}, nil)
	t.Cleanup(func() {
		_ = c.Call("compute", "POST", fmt.Sprintf("os-aggregates/%d/action", id), map[string]any{"remove_host": map[string]any{"host": host}}, nil, 200)
		_ = c.Call("compute", "DELETE", fmt.Sprintf("os-aggregates/%d", id), nil, nil, 200)
	})
	must(t, c.AddServer(newUUID(), "zr-"+tag+"-vm1", "p1", "u1", host, f.flavor(t, "zr-"+tag+"-m1", true, nil), ""))
	for body, want := range map[string]string{az + "2": "One or more hosts contain instances in this zone", "": "does not support empty named availability zone"} {
		zone := any(body)
		if body == "" {
			zone = nil
		}
		err := c.Call("compute", "PUT", fmt.Sprintf("os-aggregates/%d", id), map[string]any{"aggregate": map[string]any{"availability_zone": zone}}, nil, 200)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("nova on zone %q: %v, want a 400 saying %q", body, err, want)
		}
	}

	st := storetest.Open(t)
	_, err := cloud.Sync(context.Background(), st, connect(t, c, cloudtest.Token), actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)
	renamed, cleared := az+"2", ""
	for _, tc := range []struct {
		zone *string
		want string
	}{
		{&renamed, "nova refuses to change the zone of an aggregate whose hosts run servers (" + host + " runs 1)"},
		{&cleared, "nova refuses to take an aggregate out of its zone"},
	} {
		d := draft(t, st, "zone", scheduling.Change{Op: scheduling.OpSetZone, Aggregate: aggName, AvailabilityZone: tc.zone})
		_, err := cloud.PlanDraft(context.Background(), st, d.ID)
		if models.KindOf(err) != models.Invalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("plan of zone %q: %v, want Invalid with %q", *tc.zone, err, tc.want)
		}
	}
}
