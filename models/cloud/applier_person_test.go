package cloud_test

import (
	"context"
	"encoding/json"
	"testing"

	"corral/models/cloud"
	"corral/models/store/storetest"
	"corral/web"
	"corral/web/webtest"
)

// TestConnectedPersonCreatesServerGroup: connected through Keystone, a
// member's server group created through corral's compute API (the real
// openstack client, with her Keystone token) is created in Nova with her
// token: in her project, with her user id — what Nova answers when she
// creates it herself — and corral answers with Nova's id; she deletes it
// through corral too. Before, the door refused it; and a member's write
// stopped at the drift check, which listed Nova's aggregates with her
// token (403) although the write touched none.
func TestConnectedPersonCreatesServerGroup(t *testing.T) {
	c, o, people := keystonePeople(t)
	ctx := context.Background()
	id, err := cloud.NewIdentity(ctx, o)
	must(t, err)
	st := storetest.Open(t)
	s := &cloud.Syncer{Store: st, Options: o}
	app := webtest.StartWith(t, webtest.Options{Store: st, Config: web.Config{Cloud: s, Identity: id}})
	if _, err := s.SyncNow(ctx, actor); err != nil {
		t.Fatal(err)
	}
	alpha, err := c.EnsureProject("ks-alpha")
	must(t, err)
	alice := people["alice"]
	tok, err := c.PersonToken(alice, "ks-alpha")
	must(t, err)

	var made novaGroup
	must(t, json.Unmarshal([]byte(openstackCLI(t, app.URL+"/compute/v2.1", tok, "--os-compute-api-version", "2.64",
		"server", "group", "create", "--policy", "anti-affinity", "alice-web", "-f", "json")), &made))
	g := novaHasGroup(t, c, made.ID)
	if g == nil || g.Name != "alice-web" || g.ProjectID != alpha || g.UserID != alice.ID {
		t.Fatalf("alice's group %s in nova: %+v, want project %s user %s", made.ID, g, alpha, alice.ID)
	}
	if made.ProjectID != alpha || made.UserID != alice.ID {
		t.Errorf("corral answered project %q user %q, nova has %q %q", made.ProjectID, made.UserID, g.ProjectID, g.UserID)
	}
	if sg, err := st.GetServerGroup(ctx, made.ID); err != nil || sg.UserID != alice.ID {
		t.Errorf("corral holds %+v (%v), want nova's group", sg, err)
	}

	openstackCLI(t, app.URL+"/compute/v2.1", tok, "--os-compute-api-version", "2.64", "server", "group", "delete", made.ID)
	if g := novaHasGroup(t, c, made.ID); g != nil {
		t.Errorf("after alice's delete through corral nova still has %+v", g)
	}
}
