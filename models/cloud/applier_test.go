package cloud_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/models"
	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/scheduling"
	"corral/models/store/storetest"
	"corral/web"
	"corral/web/webtest"
)

// connectedApp is a corral served connected to the test cloud, as
// `corral serve --os-cloud` serves it: web.Config.Cloud set, nothing else.
type connectedApp struct {
	*webtest.App
	c      *cloudtest.Cloud
	syncer *cloud.Syncer
	admin  *webtest.Client
}

func startConnected(t *testing.T, c *cloudtest.Cloud) *connectedApp {
	t.Helper()
	st := storetest.Open(t)
	s := &cloud.Syncer{Store: st, Options: cloud.Options{ComputeURL: c.ComputeURL, PlacementURL: c.PlacementURL, Token: cloudtest.Token}}
	app := webtest.StartWith(t, webtest.Options{Store: st, Config: web.Config{Cloud: s}, Tokens: true,
		Users: []webtest.User{{Name: webtest.AdminName, Role: models.RoleAdmin, Project: "admin", Password: webtest.AdminPassword}}})
	app.AdminName, app.AdminPassword = webtest.AdminName, webtest.AdminPassword
	if _, err := s.SyncNow(context.Background(), actor); err != nil {
		t.Fatal(err)
	}
	return &connectedApp{App: app, c: c, syncer: s, admin: app.SignIn(t, webtest.AdminName)}
}

// formOf is what the page's form posting to action would send as it is.
func formOf(t *testing.T, doc *goquery.Document, action string) url.Values {
	t.Helper()
	f := doc.Find(`form[action="` + action + `"]`).First()
	if f.Length() == 0 {
		t.Fatalf("no form posts to %s", action)
	}
	v := url.Values{}
	f.Find("input, textarea, select").Each(func(_ int, s *goquery.Selection) {
		name, ok := s.Attr("name")
		typ, _ := s.Attr("type")
		if !ok || name == "" || typ == "submit" || ((typ == "checkbox" || typ == "radio") && s.AttrOr("checked", "-") == "-") {
			return
		}
		switch {
		case goquery.NodeName(s) == "textarea":
			v.Add(name, s.Text())
		case goquery.NodeName(s) == "select":
			v.Add(name, s.Find("option[selected]").AttrOr("value", ""))
		default:
			v.Add(name, s.AttrOr("value", ""))
		}
	})
	return v
}

// flashes is the page's flash messages, one line.
func flashes(t *testing.T, r *webtest.Response) string {
	t.Helper()
	return strings.Join(strings.Fields(r.Doc(t).Find(".flash, [data-testid=error-message], .error").Text()), " ")
}

// inSync fails t unless a dry-run sync finds corral and the cloud alike
// for the objects named with prefix.
func (a *connectedApp) inSync(t *testing.T, prefix string) {
	t.Helper()
	res, err := cloud.Sync(context.Background(), a.Store, connect(t, a.c, cloudtest.Token), actor, cloud.SyncOptions{DryRun: true})
	must(t, err)
	for _, ch := range res.Changes {
		if strings.HasPrefix(ch.Name, prefix) {
			t.Errorf("corral and the cloud differ after the write: %s", ch)
		}
	}
}

type aggregateShow struct {
	ID         int               `json:"id"`
	Hosts      []string          `json:"hosts"`
	Properties map[string]string `json:"properties"`
}

func showAggregate(t *testing.T, c *cloudtest.Cloud, name string) aggregateShow {
	t.Helper()
	var show aggregateShow
	must(t, json.Unmarshal([]byte(openstackCLI(t, c.ComputeURL, cloudtest.Token, "--os-compute-api-version", "2.41", "aggregate", "show", name, "-f", "json")), &show))
	return show
}

func flavorProperties(t *testing.T, c *cloudtest.Cloud, id string) (map[string]string, int) {
	t.Helper()
	var show struct {
		Properties map[string]string `json:"properties"`
		VCPUs      int               `json:"vcpus"`
	}
	must(t, json.Unmarshal([]byte(openstackCLI(t, c.ComputeURL, cloudtest.Token, "--os-compute-api-version", "2.61", "flavor", "show", id, "-f", "json")), &show))
	return show.Properties, show.VCPUs
}

func providerTraits(t *testing.T, c *cloudtest.Cloud, rp string) []string {
	t.Helper()
	var rows []struct {
		Name string `json:"name"`
	}
	must(t, json.Unmarshal([]byte(openstackCLI(t, c.PlacementURL, cloudtest.Token, "--os-placement-api-version", "1.6", "resource", "provider", "trait", "list", rp, "-f", "json")), &rows))
	var out []string
	for _, r := range rows {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

// TestConnectedConsoleWritesReachTheCloud: served connected, each console
// form that corral can roll out changes the cloud (read back with the
// openstack client) and says so; a dry-run sync then finds nothing to
// bring in. Before the cloud write path, the forms answered "saved" and
// the cloud never saw the change.
func TestConnectedConsoleWritesReachTheCloud(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "cw-")
	a := startConnected(t, c)

	// Aggregate metadata.
	page := "/aggregates/" + f.aggB
	form := formOf(t, a.admin.Get(page).Doc(t), page+"/metadata")
	form.Add("key", "cw-color")
	form.Add("value", "blue")
	r := a.admin.Follow(page, page+"/metadata", form)
	if msg := flashes(t, r); !strings.Contains(msg, "Rolled out to the cloud: 1 call") {
		t.Errorf("metadata save says %q", msg)
	}
	if got := showAggregate(t, c, "cw-aggB").Properties["cw-color"]; got != "blue" {
		t.Errorf("after the metadata form nova has cw-color=%q", got)
	}
	a.inSync(t, "cw-")

	// Aggregate members: a compute host, through Nova's add_host.
	form = formOf(t, a.admin.Get(page).Doc(t), page+"/members")
	form.Set("provider", f.cn1)
	r = a.admin.Follow(page, page+"/members", form)
	if msg := flashes(t, r); !strings.Contains(msg, "Rolled out to the cloud: 1 call") {
		t.Errorf("members add says %q", msg)
	}
	if hosts := showAggregate(t, c, "cw-aggB").Hosts; !slices.Contains(hosts, "cw-cn1") {
		t.Errorf("after the members form nova's cw-aggB holds %v", hosts)
	}
	a.inSync(t, "cw-")

	// Flavor extra specs.
	fpage := "/flavors/" + f.flavorPublic
	form = formOf(t, a.admin.Get(fpage).Doc(t), fpage)
	form.Add("key", "hw:mem_page_size")
	form.Add("value", "large")
	r = a.admin.Follow(fpage, fpage, form)
	if msg := flashes(t, r); !strings.Contains(msg, "Rolled out to the cloud: 1 call") {
		t.Errorf("flavor save says %q", msg)
	}
	if props, _ := flavorProperties(t, c, f.flavorPublic); props["hw:mem_page_size"] != "large" || props["hw:cpu_policy"] != "shared" {
		t.Errorf("after the flavor form nova's extra specs are %v", props)
	}
	a.inSync(t, "cw-")

	// Provider traits.
	ppage := "/providers/" + f.cn1
	form = formOf(t, a.admin.Get(ppage).Doc(t), ppage+"/traits")
	form.Set("traits", "HW_CPU_X86_SSE42")
	r = a.admin.Follow(ppage, ppage+"/traits", form)
	if msg := flashes(t, r); !strings.Contains(msg, "Rolled out to the cloud: 1 call") {
		t.Errorf("traits save says %q", msg)
	}
	if got := providerTraits(t, c, f.cn1); !slices.Equal(got, []string{"HW_CPU_X86_SSE42"}) {
		t.Errorf("after the traits form placement says %v", got)
	}
	a.inSync(t, "cw-")
}

// TestConnectedAPIWritesReachTheCloud: the openstack client pointed at
// corral's /compute and /placement changes the cloud.
func TestConnectedAPIWritesReachTheCloud(t *testing.T) {
	c := cloudtest.Shared(t)
	// A deleted aggregate leaves a gap in Nova's ids that corral's own
	// numbering does not have: the ids differ from here on.
	gapID, _ := (&fixture{c: c}).aggregate(t, "cx-gap", "", nil, nil)
	must(t, c.Call("compute", "DELETE", fmt.Sprintf("os-aggregates/%d", gapID), nil, nil, 200))
	f := build(t, c, "cx-")
	a := startConnected(t, c)
	tok := a.Tokens[webtest.AdminName]

	// The mirror APIs answer with the cloud's ids and generations.
	var viaCorral aggregateShow
	must(t, json.Unmarshal([]byte(openstackCLI(t, a.URL+"/compute/v2.1", tok, "--os-compute-api-version", "2.41", "aggregate", "show", "cx-aggA", "-f", "json")), &viaCorral))
	if viaCorral.ID != f.aggAID {
		t.Errorf("corral's compute API says cx-aggA is aggregate %d, nova says %d", viaCorral.ID, f.aggAID)
	}
	var rp struct {
		Generation int64 `json:"generation"`
	}
	must(t, json.Unmarshal([]byte(openstackCLI(t, a.URL+"/placement", tok, "--os-placement-api-version", "1.14", "resource", "provider", "show", f.cn2, "-f", "json")), &rp))
	if want := f.generation(t, f.cn2); rp.Generation != want {
		t.Errorf("corral's placement API says cx-cn2 is at generation %d, placement says %d", rp.Generation, want)
	}
	// A write with a generation placement no longer has: Placement's 409,
	// and nothing sent.
	stale := a.TokenClient(t, webtest.AdminName).JSON("PUT", "/placement/resource_providers/"+f.cn2+"/traits",
		map[string]any{"traits": []string{"HW_CPU_X86_SSE"}, "resource_provider_generation": f.generation(t, f.cn2) - 1}, "OpenStack-API-Version", "placement 1.6")
	if stale.StatusCode != http.StatusConflict || !slices.Equal(providerTraits(t, c, f.cn2), []string{"CUSTOM_FAST", "HW_CPU_X86_AVX2"}) {
		t.Errorf("a stale generation through corral: %d %s; placement has %v", stale.StatusCode, stale.Body, providerTraits(t, c, f.cn2))
	}

	openstackCLI(t, a.URL+"/compute/v2.1", tok, "--os-compute-api-version", "2.41", "aggregate", "set", "--property", "cx-api=yes", "cx-aggA")
	if got := showAggregate(t, c, "cx-aggA").Properties["cx-api"]; got != "yes" {
		t.Errorf("after openstack aggregate set through corral nova has cx-api=%q", got)
	}
	a.inSync(t, "cx-")

	openstackCLI(t, a.URL+"/compute/v2.1", tok, "--os-compute-api-version", "2.41", "aggregate", "add", "host", "cx-aggB", "cx-cn1")
	if hosts := sortedCopy(showAggregate(t, c, "cx-aggB").Hosts...); !slices.Equal(hosts, []string{"cx-cn1", "cx-cn2"}) {
		t.Errorf("after openstack aggregate add host through corral nova's cx-aggB holds %v", hosts)
	}
	a.inSync(t, "cx-")

	openstackCLI(t, a.URL+"/placement", tok, "--os-placement-api-version", "1.6", "resource", "provider", "trait", "set", "--trait", "HW_CPU_X86_AVX", "--trait", "HW_CPU_X86_AVX2", "--trait", "CUSTOM_FAST", f.cn2)
	if got := providerTraits(t, c, f.cn2); !slices.Equal(got, []string{"CUSTOM_FAST", "HW_CPU_X86_AVX", "HW_CPU_X86_AVX2"}) {
		t.Errorf("after openstack resource provider trait set through corral placement says %v", got)
	}
	a.inSync(t, "cx-")
}

// TestConnectedRefusals: what the cloud's API cannot carry is refused with
// a message that says why and what to do, and nothing is sent; the
// settings are kept in corral only, and the answer says so.
func TestConnectedRefusals(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "cr-")
	a := startConnected(t, c)

	// A flavor's size: Nova's flavors are immutable.
	fpage := "/flavors/" + f.flavorPublic
	form := formOf(t, a.admin.Get(fpage).Doc(t), fpage)
	form.Set("vcpus", "4")
	form.Add("key", "cr-spec")
	form.Add("value", "x")
	r := a.admin.Submit(fpage, fpage, form)
	if r.StatusCode == http.StatusSeeOther {
		r = a.admin.Get(r.Header.Get("Location"))
	}
	if msg := flashes(t, r); !strings.Contains(msg, "immutable") || !strings.Contains(msg, "create a new flavor") {
		t.Errorf("a flavor resize says %q", msg)
	}
	if props, vcpus := flavorProperties(t, c, f.flavorPublic); vcpus != 2 || props["cr-spec"] != "" {
		t.Errorf("after a refused resize nova has vcpus %d, extra specs %v", vcpus, props)
	}

	// A server group's policy: Nova fixes it when the group is made, so a
	// world that changes it is refused whole and nothing is sent. (New
	// and deleted groups reach Nova: TestConnectedServerGroupsReachNova.)
	w, err := a.Store.ExportWorld(context.Background())
	must(t, err)
	for i := range w.ServerGroups {
		if w.ServerGroups[i].UUID == f.group {
			w.ServerGroups[i].Policy, w.ServerGroups[i].Rules = models.PolicyAffinity, map[string]int{}
		}
	}
	admin := models.Actor{Name: webtest.AdminName, Via: "console", Role: models.RoleAdmin}
	err = a.Env.Writer.ImportWorldAt(context.Background(), admin, w, false, -1)
	if msg := fmt.Sprint(err); !strings.Contains(msg, "server group cr-g1: Nova cannot change a server group's policy or rules") || !strings.Contains(msg, "nothing was sent") {
		t.Errorf("a group's policy changed while connected: %v", err)
	}
	var g struct {
		ServerGroup novaGroup `json:"server_group"`
	}
	must(t, c.Call("compute", "GET", "os-server-groups/"+f.group, nil, &g, 200))
	if g.ServerGroup.Policy != models.PolicyAntiAffinity || fmt.Sprint(g.ServerGroup.Rules["max_server_per_host"]) != "2" {
		t.Errorf("after a refused policy change nova's group is %+v", g.ServerGroup)
	}
	if st, err := a.Store.GetServerGroup(context.Background(), f.group); err != nil || st.Policy != models.PolicyAntiAffinity {
		t.Errorf("after a refused policy change corral holds %+v (%v)", st, err)
	}

	// Quotas through corral's compute API reach Nova's.
	resp := a.TokenClient(t, webtest.AdminName).JSON("PUT", "/compute/v2.1/os-quota-sets/p9", map[string]any{"quota_set": map[string]any{"server_groups": 3}})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a quota set through corral's compute API: %d %s", resp.StatusCode, resp.Body)
	}
	var quota struct {
		QuotaSet map[string]any `json:"quota_set"`
	}
	must(t, c.Call("compute", "GET", "os-quota-sets/p9", nil, &quota, 200))
	if got := fmt.Sprint(quota.QuotaSet["server_groups"]); got != "3" {
		t.Errorf("nova's server_groups quota for p9 after corral's PUT: %s, want 3", got)
	}

	// The settings live in nova.conf: kept in corral, with the lines, and
	// the page says they are an assumption.
	sdoc := a.admin.Get("/settings").Doc(t)
	if note := sdoc.Find(`[data-testid="settings-assumption"]`).Text(); !strings.Contains(note, "Assumed, not read") {
		t.Errorf("the connected settings page does not mark the settings as assumed: %q", note)
	}
	form = formOf(t, sdoc, "/settings")
	form.Set("limit_tenants_to_placement_aggregate", "on")
	r = a.admin.Follow("/settings", "/settings", form)
	if msg := flashes(t, r); !strings.Contains(msg, "kept in corral only") || !strings.Contains(msg, "[scheduler] limit_tenants_to_placement_aggregate = true") {
		t.Errorf("a settings save says %q", msg)
	}
	if st, _, err := a.Store.GetSettings(context.Background()); err != nil || !st.LimitTenantsToPlacementAggregate {
		t.Errorf("the settings were not kept in corral: %+v %v", st, err)
	}
}

// TestConnectedDriftRefused: the cloud changed between the last sync and a
// write → refused, naming the object and the field, and the cloud keeps
// its own value.
func TestConnectedDriftRefused(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "cd-")
	a := startConnected(t, c)
	must(t, c.Call("compute", "POST", fmt.Sprintf("os-aggregates/%d/action", f.aggAID),
		map[string]any{"set_metadata": map[string]any{"metadata": map[string]any{"ssd": "false"}}}, nil, 200))

	page := "/aggregates/" + f.aggA
	form := formOf(t, a.admin.Get(page).Doc(t), page+"/metadata")
	form.Add("key", "cd-owner")
	form.Add("value", "ops")
	r := a.admin.Submit(page, page+"/metadata", form)
	if r.StatusCode == http.StatusSeeOther {
		r = a.admin.Get(r.Header.Get("Location"))
	}
	if msg := flashes(t, r); !strings.Contains(msg, `aggregate cd-aggA: metadata ssd "true" → "false"`) || !strings.Contains(msg, "nothing was sent") {
		t.Errorf("a write after drift says %q", msg)
	}
	props := showAggregate(t, c, "cd-aggA").Properties
	if props["cd-owner"] != "" || props["ssd"] != "false" {
		t.Errorf("after a refused write nova has %v", props)
	}
}

// TestConnectedPartialFailureAndImport: a write whose second call the
// cloud refuses keeps the first (it is in the cloud) and says so, naming
// the draft that undoes it; a world import rolls its difference out, and
// one that would change what Nova owns is refused whole.
func TestConnectedPartialFailureAndImport(t *testing.T) {
	c := cloudtest.Shared(t)
	f := build(t, c, "cp-")
	a := startConnected(t, c)
	ctx := context.Background()
	admin := models.Actor{Name: webtest.AdminName, Via: "console", Role: models.RoleAdmin}

	// Placement refuses a trait it does not know: the metadata call before
	// it is done and stays.
	_, err := a.Env.Writer.Apply(ctx, admin, []scheduling.Change{
		{Op: scheduling.OpSetMetadata, Aggregate: "cp-aggA", Key: "cp-step", Value: "1"},
		{Op: scheduling.OpAddTrait, Provider: f.cn1, Trait: "HW_NO_SUCH_TRAIT_CP"},
	})
	msg := fmt.Sprint(err)
	if err == nil || !strings.Contains(msg, "Done before it (and kept in the cloud): POST /os-aggregates/") || !strings.Contains(msg, "/drafts/") {
		t.Fatalf("a partial failure says %q", msg)
	}
	if got := showAggregate(t, c, "cp-aggA").Properties["cp-step"]; got != "1" {
		t.Errorf("the call done before the failure is not in nova: cp-step=%q", got)
	}
	undoID := msg[strings.Index(msg, "/drafts/")+len("/drafts/"):]
	undoID = strings.TrimSuffix(strings.Fields(undoID)[0], ")")
	if _, changes, err := a.Store.PendingDraft(ctx, undoID); err != nil || len(changes) != 1 || changes[0].Op != scheduling.OpUnsetMetadata {
		t.Errorf("undo draft %s: %v %v", undoID, changes, err)
	}
	a.inSync(t, "cp-")

	// A world import: the metadata it changes is rolled out.
	w, err := a.Store.ExportWorld(ctx)
	must(t, err)
	for i := range w.Aggregates {
		if w.Aggregates[i].Name == "cp-aggB" {
			w.Aggregates[i].Metadata["cp-imported"] = "yes"
		}
	}
	must(t, a.Env.Writer.ImportWorldAt(ctx, admin, w, false, -1))
	if got := showAggregate(t, c, "cp-aggB").Properties["cp-imported"]; got != "yes" {
		t.Errorf("after the import nova has cp-imported=%q", got)
	}
	a.inSync(t, "cp-")

	// One that moves a server (Nova's to do) is refused whole.
	w, err = a.Store.ExportWorld(ctx)
	must(t, err)
	for i := range w.Aggregates {
		if w.Aggregates[i].Name == "cp-aggB" {
			w.Aggregates[i].Metadata["cp-second"] = "no"
		}
	}
	for i := range w.Servers {
		if w.Servers[i].Name == "cp-vm1" {
			w.Servers[i].Name = "cp-vm1-renamed"
		}
	}
	err = a.Env.Writer.ImportWorldAt(ctx, admin, w, false, -1)
	if err == nil || !strings.Contains(err.Error(), "server cp-vm1-renamed: servers are Nova's") {
		t.Errorf("an import renaming a server: %v", err)
	}
	if got := showAggregate(t, c, "cp-aggB").Properties["cp-second"]; got != "" {
		t.Errorf("a refused import reached nova: cp-second=%q", got)
	}
}
