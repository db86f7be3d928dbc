package cloud_test

import (
	"context"
	"testing"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/scheduling"
	"corral/models/store/storetest"
)

// A sync reads each host's nova-compute service and hypervisor from the
// real nova-api:
// disabled with its reason, forced down, and down for want of a heartbeat
// (the test cloud's services have none since cloudtest.LongAgo). The
// state is steady, so the next sync finds no change; ComputeFilter then
// fails each host with Nova's reason.
func TestSyncReadsComputeServices(t *testing.T) {
	c := cloudtest.Shared(t)
	f := &fixture{c: c, prefix: "svc-"}
	hosts := map[string]string{}
	for _, h := range []string{"svc-plain", "svc-disabled", "svc-forced"} {
		hosts[h] = f.provider(t, h, "")
		f.inventories(t, hosts[h], map[string]any{"VCPU": map[string]any{"total": 8}})
		must(t, c.AddComputeHost(h, hosts[h]))
	}
	setService := func(host string, body map[string]any) {
		var out struct {
			Services []struct {
				ID string `json:"id"`
			} `json:"services"`
		}
		must(t, c.Call("compute", "GET", "os-services?binary=nova-compute&host="+host, nil, &out, 200))
		if len(out.Services) != 1 {
			t.Fatalf("services of %s: %+v", host, out.Services)
		}
		must(t, c.Call("compute", "PUT", "os-services/"+out.Services[0].ID, body, nil, 200))
	}
	setService("svc-disabled", map[string]any{"status": "disabled", "disabled_reason": "maintenance"})
	setService("svc-forced", map[string]any{"forced_down": true})

	ctx := context.Background()
	st := storetest.Open(t)
	cl := connect(t, c, cloudtest.Token)
	_, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{Connection: "test"})
	must(t, err)
	w, _, err := st.LoadWorld(ctx)
	must(t, err)
	lastSeen := "2000-01-01T00:00:00.000000"
	want := map[string]models.ComputeHost{
		"svc-plain": {Host: "svc-plain", Status: models.ServiceEnabled, State: models.ServiceDown, LastSeen: lastSeen},
		// Disabling wrote the row: Nova's updated_at is then, though the
		// service is no more alive than before (Nova judges liveness by
		// last_seen_up or created_at).
		"svc-disabled": {Host: "svc-disabled", Status: models.ServiceDisabled, DisabledReason: "maintenance", State: models.ServiceDown},
		// Forced down: no heartbeat kept (a forced-down service still sends them).
		"svc-forced": {Host: "svc-forced", Status: models.ServiceEnabled, State: models.ServiceDown, ForcedDown: true},
	}
	for _, p := range w.Providers {
		if wnt, ok := want[p.Name]; ok {
			if p.Name == "svc-disabled" && p.Compute != nil && p.Compute.LastSeen > lastSeen {
				wnt.LastSeen = p.Compute.LastSeen
			}
			// The compute node cloudtest writes: a fake hypervisor.
			wnt.HypervisorType, wnt.HypervisorVersion, wnt.HostIP = "fake", 1, "127.0.0.1"
			if p.Compute == nil || *p.Compute != wnt {
				t.Errorf("%s's service %+v, want %+v", p.Name, p.Compute, wnt)
			}
			delete(want, p.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("hosts not synced: %v", want)
	}

	// Steady: nothing to report on the next look.
	res, err := cloud.Sync(ctx, st, cl, actor, cloud.SyncOptions{DryRun: true, Connection: "test"})
	must(t, err)
	for _, ch := range res.Changes {
		if _, mine := hosts[ch.Name]; mine {
			t.Errorf("a second sync reports a change of %s: %s", ch.Name, ch)
		}
	}

	// ComputeFilter reads them as Nova's does.
	w.Settings.EnabledFilters = []string{models.FilterCompute}
	snap, err := scheduling.NewSnapshot(w)
	must(t, err)
	tr, err := snap.Run(&scheduling.RequestSpec{ProjectID: "admin", Flavor: scheduling.FlavorRef{Inline: &models.Flavor{VCPUs: 1}}})
	must(t, err)
	reasons := map[string]string{
		"svc-plain":    "the host's compute service has not been heard from in a while (down at the last sync); last heartbeat " + lastSeen,
		"svc-disabled": "the host's compute service is disabled, reason: maintenance", // disabled is judged first, as in Nova
		"svc-forced":   "the host's compute service is forced down",
	}
	for _, h := range tr.Hosts {
		if r, ok := reasons[h.Name]; ok {
			if h.Passed || h.Stage != models.FilterCompute || h.Reason != r {
				t.Errorf("%s: passed %v at %s: %q, want %q", h.Name, h.Passed, h.Stage, h.Reason, r)
			}
			delete(reasons, h.Name)
		}
	}
	if len(reasons) > 0 {
		t.Errorf("hosts missing from the trace: %v", reasons)
	}
}
