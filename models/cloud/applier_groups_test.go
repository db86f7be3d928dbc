package cloud_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"corral/models"
	"corral/models/cloud/cloudtest"
	"corral/web/webtest"
)

// novaGroup is a server group as nova-api itself answers it.
type novaGroup struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Policy    string         `json:"policy"`
	Rules     map[string]any `json:"rules"`
	Members   []string       `json:"members"`
	ProjectID string         `json:"project_id"`
	UserID    string         `json:"user_id"`
}

// novaHasGroup is the group id as Nova has it, or nil when Nova answers
// 404 for it.
func novaHasGroup(t *testing.T, c *cloudtest.Cloud, id string) *novaGroup {
	t.Helper()
	var out struct {
		ServerGroup novaGroup `json:"server_group"`
	}
	err := c.Call("compute", "GET", "os-server-groups/"+url.PathEscape(id), nil, &out, 200)
	if err != nil {
		if c.Call("compute", "GET", "os-server-groups/"+url.PathEscape(id), nil, nil, 404) == nil {
			return nil
		}
		t.Fatal(err)
	}
	return &out.ServerGroup
}

// TestConnectedServerGroupsReachNova: served connected, a server group
// created through corral's compute API (the real openstack client) or the
// console's form is created in Nova, and the door answers with the uuid
// Nova gave it; corral then holds the group under that uuid and a dry-run
// sync finds nothing to bring in; deleting it through either door deletes
// it in Nova. What Nova cannot change in a group (its members) is refused
// with the reason, and nothing is sent. Before, both doors refused the
// create and the delete while connected.
func TestConnectedServerGroupsReachNova(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "csg-")
	a := startConnected(t, c)
	ctx := context.Background()
	tok := a.Tokens[webtest.AdminName]
	viaCorral := a.URL + "/compute/v2.1"

	// The compute API: openstack server group create pointed at corral.
	var made novaGroup
	must(t, json.Unmarshal([]byte(openstackCLI(t, viaCorral, tok, "--os-compute-api-version", "2.64",
		"server", "group", "create", "--policy", "anti-affinity", "--rule", "max_server_per_host=3", "csg-api", "-f", "json")), &made))
	// The real client, pointed at the real Nova, finds it by that id.
	var shown novaGroup
	must(t, json.Unmarshal([]byte(openstackCLI(t, c.ComputeURL, cloudtest.Token, "--os-compute-api-version", "2.64",
		"server", "group", "show", made.ID, "-f", "json")), &shown))
	if shown.ID != made.ID || shown.Name != "csg-api" || shown.Policy != "anti-affinity" || fmt.Sprint(shown.Rules["max_server_per_host"]) != "3" {
		t.Errorf("corral answered group %+v; nova has %+v", made, shown)
	}
	if made.ProjectID != shown.ProjectID || made.UserID != shown.UserID || made.ProjectID != "admin" {
		t.Errorf("corral answered project %q user %q, nova has %q %q (want the caller's project admin)", made.ProjectID, made.UserID, shown.ProjectID, shown.UserID)
	}
	if g, err := a.Store.GetServerGroup(ctx, made.ID); err != nil || g.Name != "csg-api" {
		t.Errorf("corral does not hold nova's group %s: %v %v", made.ID, g, err)
	}
	a.inSync(t, "csg-")

	openstackCLI(t, viaCorral, tok, "--os-compute-api-version", "2.64", "server", "group", "delete", made.ID)
	if g := novaHasGroup(t, c, made.ID); g != nil {
		t.Errorf("after openstack server group delete through corral nova still has %+v", g)
	}
	if _, err := a.Store.GetServerGroup(ctx, made.ID); models.KindOf(err) != models.NotFound {
		t.Errorf("corral still holds the deleted group: %v", err)
	}
	a.inSync(t, "csg-")

	// The console's form, for another project.
	r := a.admin.Submit("/server-groups/new", "/server-groups", url.Values{"name": {"csg-form"}, "policy": {"anti-affinity"},
		"max_server_per_host": {"2"}, "project": {"p1"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("the new-group form: %d %s", r.StatusCode, r.ErrorsText())
	}
	id, ok := strings.CutPrefix(r.Header.Get("Location"), "/server-groups/")
	if !ok {
		t.Fatalf("the new-group form sends the browser to %q", r.Header.Get("Location"))
	}
	page := a.admin.Get("/server-groups/" + id)
	if msg := flashes(t, page); !strings.Contains(msg, "Rolled out to the cloud: 1 call") {
		t.Errorf("the new-group form says %q", msg)
	}
	g := novaHasGroup(t, c, id)
	if g == nil || g.Name != "csg-form" || g.ProjectID != "p1" || fmt.Sprint(g.Rules["max_server_per_host"]) != "2" {
		t.Fatalf("the form's group %s in nova: %+v", id, g)
	}
	a.inSync(t, "csg-")

	// Members: Nova has no call for them; refused, nothing sent.
	gpage := "/server-groups/" + f.group
	form := formOf(t, a.admin.Get(gpage).Doc(t), gpage+"/members/remove")
	form.Set("server", f.server1)
	r = a.admin.Submit(gpage, gpage+"/members/remove", form)
	if r.StatusCode == http.StatusSeeOther {
		r = a.admin.Get(r.Header.Get("Location"))
	}
	if msg := flashes(t, r); !strings.Contains(msg, "Nova puts a server in a group only when the server is created") || !strings.Contains(msg, "nothing was sent") {
		t.Errorf("a member removed while connected says %q", msg)
	}
	if g := novaHasGroup(t, c, f.group); g == nil || len(g.Members) != 1 || g.Members[0] != f.server1 {
		t.Errorf("after a refused member removal nova's group is %+v", g)
	}

	// Deleting through the console's form.
	r = a.admin.Follow("/server-groups/"+id+"/delete", "/server-groups/"+id+"/delete", url.Values{})
	if msg := flashes(t, r); !strings.Contains(msg, "Rolled out to the cloud: 1 call") || !strings.Contains(msg, "DELETE /os-server-groups/"+id) {
		t.Errorf("the delete form says %q", msg)
	}
	if g := novaHasGroup(t, c, id); g != nil {
		t.Errorf("after the delete form nova still has %+v", g)
	}
	a.inSync(t, "csg-")
}
