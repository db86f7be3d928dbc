package console_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"corral/models"
	"corral/models/store"
)

func TestServerGroupList(t *testing.T) {
	a := newApp(t)
	// Admins see every project's groups, with the project column.
	r := a.as(a.AdminName).Get("/server-groups")
	if got := r.Texts(t, "group-name"); !slices.Equal(got, []string{"web", "db", "batch", "spread"}) {
		t.Errorf("admin sees %v", got)
	}
	if r.Count(t, "group-project") != 4 {
		t.Error("admin list should show projects")
	}
	// Filtered by project.
	if got := a.as(a.AdminName).Get("/server-groups?project=globex").Texts(t, "group-name"); !slices.Equal(got, []string{"batch"}) {
		t.Errorf("project=globex: %v", got)
	}
	// A member sees only its own project's.
	r = a.as("mike").Get("/server-groups")
	if got := r.Texts(t, "group-name"); !slices.Equal(got, []string{"web", "db", "spread"}) {
		t.Errorf("mike (acme) sees %v", got)
	}
	if r.Count(t, "group-project") != 0 {
		t.Error("a member's list needs no project column")
	}
	// ?project= does not widen a member's view.
	if got := a.as("mike").Get("/server-groups?project=globex").Texts(t, "group-name"); slices.Contains(got, "batch") {
		t.Errorf("member widened the view: %v", got)
	}
	// Another project's group is a 404 for a non-admin.
	batch := store.DemoUUID("server_group", "batch")
	if r := a.as("mike").Get("/server-groups/" + batch); r.StatusCode != http.StatusNotFound {
		t.Errorf("mike GET batch: %d, want 404", r.StatusCode)
	}
	if r := a.as("rita").Get("/server-groups/" + batch); r.StatusCode != http.StatusOK {
		t.Errorf("rita (globex reader) GET batch: %d", r.StatusCode)
	} else if href, _ := r.Doc(t).Find(`[data-testid="quota-link"]`).Attr("href"); href != "/quotas/globex" {
		t.Errorf("the group's quota link goes to %q, want /quotas/globex", href)
	}
}

func TestServerGroupCreate(t *testing.T) {
	a := newApp(t)
	c := a.as("mike")
	cases := []struct {
		name  string
		form  url.Values
		field string
		want  string
	}{
		{"rules on affinity", url.Values{"name": {"g"}, "policy": {"affinity"}, "max_server_per_host": {"2"}}, "max_server_per_host", "Only anti-affinity"},
		{"zero limit", url.Values{"name": {"g"}, "policy": {"anti-affinity"}, "max_server_per_host": {"0"}}, "max_server_per_host", "at least 1"},
		{"not a number", url.Values{"name": {"g"}, "policy": {"anti-affinity"}, "max_server_per_host": {"two"}}, "max_server_per_host", "at least 1"},
		{"unknown policy", url.Values{"name": {"g"}, "policy": {"spread-out"}}, "policy", "four policies"},
		{"no name", url.Values{"name": {""}, "policy": {"affinity"}}, "name", "needs a name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := refused(t, c, "/server-groups/new", "/server-groups", tc.form)
			if got := r.Text(t, "error-"+tc.field); !strings.Contains(got, tc.want) {
				t.Errorf("error next to %s = %q, want %q", tc.field, got, tc.want)
			}
		})
	}
	if n, _ := a.Store.CountServerGroups(context.Background(), "acme"); n != 3 {
		t.Fatalf("refused creates saved something: acme has %d groups", n)
	}
	page := c.Follow("/server-groups/new", "/server-groups", url.Values{"name": {"spread3"}, "policy": {"anti-affinity"}, "max_server_per_host": {"3"}})
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "max_server_per_host=3") {
		t.Errorf("flash = %q", got)
	}
	if page.Text(t, "group-max") != "3" || page.Text(t, "group-project") != "acme" {
		t.Errorf("detail shows max %q project %q", page.Text(t, "group-max"), page.Text(t, "group-project"))
	}
	// A member cannot pick another project; an admin must name one.
	r := refused(t, a.as(a.AdminName), "/server-groups/new", "/server-groups", url.Values{"name": {"x"}, "policy": {"affinity"}})
	if r.Text(t, "error-project") == "" {
		t.Errorf("admin without project: %d %q", r.StatusCode, r.Text(t, "error-project"))
	}
	// Readers cannot create.
	if r := a.as("rita").Get("/server-groups/new"); r.StatusCode != http.StatusForbidden {
		t.Errorf("reader: %d", r.StatusCode)
	}
}

func TestServerGroupDetailCountsAndViolations(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)
	web := store.DemoUUID("server_group", "web") // anti-affinity, max 2: web-1, web-2 on cn3, web-3 on cn4
	path := "/server-groups/" + web
	r := c.Get(path)
	counts := map[string]string{}
	r.Doc(t).Find(sel("host-row")).Each(func(_ int, s *goqSel) {
		counts[strings.TrimSpace(s.Find(sel("host-name")).Text())] = strings.TrimSpace(s.Find(sel("host-count")).Text()) + "/" + strings.TrimSpace(s.Find(sel("host-limit")).Text())
	})
	if counts["cn3"] != "2/2" || counts["cn4"] != "1/2" {
		t.Errorf("per-host counts %v", counts)
	}
	if r.Count(t, "group-violation") != 0 {
		t.Error("web is within its limit")
	}
	// Add cache-1 (on cn1), then move web-3 onto cn3 to break the limit.
	g, _ := a.Store.GetServerGroup(context.Background(), web)
	page := c.Follow(path, path+"/members", url.Values{"servers": {"cache-1"}, "generation": {gen(g.Generation)}})
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "cache-1") {
		t.Errorf("flash = %q", got)
	}
	if _, err := a.Store.UpdateServer(context.Background(), store.Actor{Name: "test"}, store.DemoUUID("server", "web-3"), func(s *models.Server) error {
		s.Host = "cn3"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r = c.Get(path)
	if v := r.Text(t, "group-violation"); !strings.Contains(v, "cn3 runs 3 members") {
		t.Errorf("violation = %q", v)
	}
	if r.Count(t, "host-over") != 1 {
		t.Error("cn3 should be marked over the limit")
	}
	if !slices.Contains(c.Get("/server-groups").Texts(t, "group-violation"), "policy violated") {
		t.Error("the list should flag the violated group")
	}

	// Invalid additions come back next to the field and save nothing.
	g, _ = a.Store.GetServerGroup(context.Background(), web)
	for _, tc := range []struct{ servers, want string }{
		{"batch-1", "No server"},      // globex's: not found in acme
		{"web-1", "already a member"}, // in this group
		{"", "at least one"},
	} {
		r := refused(t, c, path, path+"/members", url.Values{"servers": {tc.servers}, "generation": {gen(g.Generation)}})
		if !strings.Contains(r.Text(t, "error-servers"), tc.want) {
			t.Errorf("%q: status %d error %q", tc.servers, r.StatusCode, r.Text(t, "error-servers"))
		}
	}
	// Another group's member is refused by the store (one group per server).
	r = refused(t, c, path, path+"/members", url.Values{"servers": {"db-1"}, "generation": {gen(g.Generation)}})
	if !strings.Contains(r.Text(t, "error-servers"), "already in server group db") {
		t.Errorf("db-1: status %d error %q", r.StatusCode, r.Text(t, "error-servers"))
	}
	// Stale generation.
	r = refused(t, c, path, path+"/members", url.Values{"servers": {"reserved-1"}, "generation": {gen(g.Generation - 1)}})
	if !strings.Contains(r.Text(t, "error-servers"), "changed by someone else") {
		t.Errorf("stale: status %d error %q", r.StatusCode, r.Text(t, "error-servers"))
	}
	if cur, _ := a.Store.GetServerGroup(context.Background(), web); cur.Generation != g.Generation {
		t.Error("refused additions were saved")
	}

	// Remove members, then delete the group after confirming.
	page = c.Follow(path, path+"/members/remove", url.Values{"server": {store.DemoUUID("server", "cache-1")}, "generation": {gen(g.Generation)}})
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "Removed 1 server") {
		t.Errorf("flash = %q", got)
	}
	if c.Get(path+"/delete").Count(t, "confirm-submit") != 1 {
		t.Error("no confirmation page")
	}
	page = c.Follow(path+"/delete", path+"/delete", nil)
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "deleted") {
		t.Errorf("delete flash %q", got)
	}
}

func TestAffinityViolation(t *testing.T) {
	a := newApp(t)
	db := store.DemoUUID("server_group", "db") // affinity: db-1, db-2 on cn4
	if _, err := a.Store.UpdateServer(context.Background(), store.Actor{Name: "test"}, store.DemoUUID("server", "db-2"), func(s *models.Server) error {
		s.Host = "cn3"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r := a.as("mike").Get("/server-groups/" + db)
	if v := r.Text(t, "group-violation"); !strings.Contains(v, "2 hosts (cn3, cn4)") {
		t.Errorf("violation = %q", v)
	}
}

func TestFlavorPages(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)
	r := c.Get("/flavors")
	if n := r.Count(t, "flavor-row"); n != 7 {
		t.Errorf("flavors listed: %d", n)
	}
	if got := c.Get("/flavors?q=ssd").Texts(t, "flavor-name"); !slices.Equal(got, []string{"m1.not-ssd", "m1.ssd"}) {
		t.Errorf("search ssd: %v", got)
	}

	// Invalid extra specs come back next to the row; nothing is created.
	cases := []struct {
		key, value, want string
	}{
		{"aggregate_instance_extra_specs:cpu", ">= lots", "not a number"},
		{"aggregate_instance_extra_specs:x", "<or>", "at least one alternative"},
		{"aggregate_instance_extra_specs:gpu", "<or> ! <or> *", "cannot be combined"},
		{"trait:CUSTOM_X", "yes", "required' or 'forbidden"},
	}
	for _, tc := range cases {
		form := url.Values{"name": {"f-bad"}, "vcpus": {"1"}, "ram_mb": {"512"}, "disk_gb": {"1"}, "key": {tc.key}, "value": {tc.value}}
		r := refused(t, c, "/flavors/new", "/flavors", form)
		if !strings.Contains(r.Text(t, "kv-error"), tc.want) {
			t.Errorf("%s=%s: status %d, errors %q", tc.key, tc.value, r.StatusCode, r.Text(t, "kv-error"))
		}
	}
	r = refused(t, c, "/flavors/new", "/flavors", url.Values{"name": {"f-bad"}, "vcpus": {"0"}, "ram_mb": {"x"}, "disk_gb": {"1"}})
	if r.Text(t, "error-vcpus") == "" || r.Text(t, "error-ram_mb") == "" {
		t.Errorf("sizes: %d %q %q", r.StatusCode, r.Text(t, "error-vcpus"), r.Text(t, "error-ram_mb"))
	}
	if _, err := a.Store.GetFlavor(context.Background(), "f-bad"); err == nil {
		t.Fatal("a refused flavor was saved")
	}

	// Create, then edit with the generation, then a stale edit.
	page := c.Follow("/flavors/new", "/flavors", url.Values{"name": {"f1"}, "vcpus": {"2"}, "ram_mb": {"4096"}, "disk_gb": {"10"},
		"key": {"aggregate_instance_extra_specs:ssd", ""}, "value": {"true", ""}})
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "1 extra spec") {
		t.Errorf("flash %q", got)
	}
	fl, err := a.Store.GetFlavor(context.Background(), "f1")
	if err != nil || fl.ExtraSpecs["aggregate_instance_extra_specs:ssd"] != "true" {
		t.Fatalf("stored %+v %v", fl, err)
	}
	path := "/flavors/" + fl.ID
	page = c.FollowConfirmed(path, path, url.Values{"name": {"f1"}, "vcpus": {"2"}, "ram_mb": {"4096"}, "disk_gb": {"10"}, "generation": {gen(fl.Generation)},
		"key": {"aggregate_instance_extra_specs:ssd", "aggregate_instance_extra_specs:gpu"}, "value": {"s!= true", "<in> a100"}})
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "1 added, 1 changed, 0 removed") {
		t.Errorf("flash %q", got)
	}
	r = refused(t, c, path, path, url.Values{"name": {"f1"}, "vcpus": {"2"}, "ram_mb": {"4096"}, "disk_gb": {"10"}, "generation": {gen(fl.Generation)}})
	if !strings.Contains(r.Text(t, "form-error"), "changed by someone else") {
		t.Errorf("stale: %d %q", r.StatusCode, r.Text(t, "form-error"))
	}

	// Live validation of the specs.
	r = c.Submit(path, "/flavors/validate", url.Values{"key": {"aggregate_instance_extra_specs:ram"}, "value": {"= lots"}})
	if !strings.Contains(r.Text(t, "kv-error"), "not a number") || strings.Contains(r.Body, "<html") {
		t.Errorf("live: %s", r.Body)
	}

	// Delete after confirming.
	page = c.Follow(path+"/delete", path+"/delete", nil)
	if !strings.Contains(page.Text(t, "flash-success"), "deleted") {
		t.Errorf("delete flash %q", page.Text(t, "flash-success"))
	}
	// A reader sees flavors but no save button.
	if r := a.as("rita").Get("/flavors/" + store.DemoUUID("flavor", "m1.ssd")); r.StatusCode != http.StatusOK || r.Count(t, "flavor-submit") != 0 {
		t.Errorf("reader flavor page: %d, submit %d", r.StatusCode, r.Count(t, "flavor-submit"))
	}
}

func TestProviderPages(t *testing.T) {
	a := newApp(t)
	c := a.as("rita")
	r := c.Get("/providers")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("status %d", r.StatusCode)
	}
	// Roots only at the top: 8 hosts and 2 sharing providers, children nested.
	roots := r.Doc(t).Find(sel("provider-tree") + " > li")
	if roots.Length() != 10 {
		t.Errorf("%d roots", roots.Length())
	}
	cn1 := r.Doc(t).Find(sel("provider-tree") + " > li").First()
	if name := strings.TrimSpace(cn1.Find(sel("node-name")).First().Text()); name != "cn1" {
		t.Errorf("first root %q", name)
	}
	if kids := cn1.Find(sel("node-child")).Length(); kids != 2 {
		t.Errorf("cn1 children %d", kids)
	}
	// Sharing providers show the trees they serve: ss1 shares aggB with cn2.
	var ss1 string
	r.Doc(t).Find(sel("node-sharing")).Each(func(_ int, s *goqSel) {
		if strings.TrimSpace(s.Find(sel("node-name")).First().Text()) == "ss1" {
			ss1 = strings.Join(s.Find(sel("served-tree")).Map(func(_ int, x *goqSel) string { return x.Text() }), ",")
		}
	})
	if ss1 != "cn2" {
		t.Errorf("ss1 serves %q, want cn2", ss1)
	}
	// Paged on the server.
	p := c.Get("/providers?limit=3")
	if n := p.Doc(t).Find(sel("provider-tree") + " > li").Length(); n != 3 {
		t.Errorf("limit=3 shows %d roots", n)
	}
	if p.Text(t, "pager-range") != "1–3 of 10" {
		t.Errorf("pager %q", p.Text(t, "pager-range"))
	}
	// Search finds children too, with their place in the tree.
	s := c.Get("/providers?q=numa1_")
	if got := s.Texts(t, "provider-name"); !slices.Equal(got, []string{"numa1_1", "numa1_2"}) {
		t.Errorf("search: %v", got)
	}
	if got := s.Texts(t, "provider-path"); !slices.Equal(got, []string{"cn1", "cn1"}) {
		t.Errorf("paths: %v", got)
	}
	// Detail: traits, aggregates, parent and root.
	d := c.Get("/providers/numa1_1")
	if d.Text(t, "provider-kind") != "child" || d.Text(t, "provider-parent") != "cn1" {
		t.Errorf("numa1_1: kind %q parent %q", d.Text(t, "provider-kind"), d.Text(t, "provider-parent"))
	}
	if got := d.Doc(t).Find(sel("provider-facts") + " " + sel("provider-aggregate")).Text(); got != "aggC" {
		t.Errorf("numa1_1 aggregates %q", got)
	}
	if got := c.Get("/providers/cn6").Doc(t).Find(sel("provider-facts") + " " + sel("trait")).Map(func(_ int, x *goqSel) string { return x.Text() }); !slices.Equal(got, []string{"CUSTOM_GPU", "HW_CPU_X86_AVX2"}) {
		t.Errorf("cn6 traits %v", got)
	}
	if r := c.Get("/providers/nope"); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown provider: %d", r.StatusCode)
	}
	// A host's compute service, when known, and a warning when it takes
	// the host out of scheduling.
	if n := c.Get("/providers/cn2").Count(t, "provider-service"); n != 0 {
		t.Errorf("cn2 shows a compute service it has not got (%d)", n)
	}
	w, err := models.DecodeWorldJSON([]byte(`{"providers": [{"name": "cn2", "compute": {"host": "cn2", "status": "disabled", "disabled_reason": "disk swap", "state": "up"}}]}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Store.ImportWorld(context.Background(), models.Actor{Name: "admin", Role: models.RoleAdmin}, w, false); err != nil {
		t.Fatal(err)
	}
	cn2 := c.Get("/providers/cn2")
	if got := cn2.Text(t, "provider-service"); !strings.Contains(got, "disabled (disk swap), up") || cn2.Doc(t).Find(sel("provider-service")+" .warn").Length() != 1 {
		t.Errorf("cn2's service reads %q", got)
	}
}

func TestSettingsPage(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)
	r := c.Get("/settings")
	if got := r.Texts(t, "filter-name"); len(got) != len(models.HostFilters) || got[0] != models.FilterAggregateInstanceExtraSpecs {
		t.Errorf("filters %v", got)
	}
	form := func(gen int64) url.Values {
		return url.Values{
			"generation":                                  {strings.TrimSpace(itoaGen(gen))},
			"limit_tenants_to_placement_aggregate":        {"1"},
			"required_member_prefix":                      {"resv:"},
			"default_forbidden_member_prefix":             {"resv:"},
			"filter":                                      {models.FilterAggregateMultiTenancy, models.FilterAggregateInstanceType},
			"order_" + models.FilterAggregateMultiTenancy: {"2"},
			"order_" + models.FilterAggregateInstanceType: {"1"},
			"soft_affinity_weight_multiplier":             {"2.5"},
			"soft_anti_affinity_weight_multiplier":        {"1"},
		}
	}
	// Bad multiplier: next to the field, nothing saved.
	bad := form(0)
	bad.Set("soft_affinity_weight_multiplier", "lots")
	r = refused(t, c, "/settings", "/settings", bad)
	if r.Text(t, "error-soft_affinity_weight_multiplier") == "" {
		t.Errorf("bad multiplier: %d", r.StatusCode)
	}
	neg := form(0)
	neg.Set("soft_anti_affinity_weight_multiplier", "-1")
	r = refused(t, c, "/settings", "/settings", neg)
	if !strings.Contains(r.Text(t, "error-soft_anti_affinity_weight_multiplier"), "negative") {
		t.Errorf("negative multiplier: %d %q", r.StatusCode, r.Text(t, "error-soft_anti_affinity_weight_multiplier"))
	}
	if _, g, _ := a.Store.GetSettings(context.Background()); g != 0 {
		t.Fatal("refused settings were saved")
	}
	page := c.FollowConfirmed("/settings", "/settings", form(0))
	if got := page.Text(t, "flash-success"); !strings.Contains(got, models.FilterAggregateInstanceType+" → "+models.FilterAggregateMultiTenancy) {
		t.Errorf("flash %q", got)
	}
	st, g, _ := a.Store.GetSettings(context.Background())
	if !st.LimitTenantsToPlacementAggregate || st.RequiredMemberPrefix != "resv:" || st.SoftAffinityWeightMultiplier != 2.5 ||
		!slices.Equal(st.EnabledFilters, []string{models.FilterAggregateInstanceType, models.FilterAggregateMultiTenancy}) || g != 1 {
		t.Errorf("stored %+v gen %d", st, g)
	}
	// The page shows the matching nova.conf lines, one per line.
	lines := c.Get("/settings").Text(t, "settings-novaconf-lines")
	for _, want := range []string{"\nlimit_tenants_to_placement_aggregate = true\n", "\nplacement_req_required_member_prefix = resv:\n",
		"\nenabled_filters = " + models.FilterAggregateInstanceType + "," + models.FilterAggregateMultiTenancy + "\n"} {
		if !strings.Contains(lines, want) {
			t.Errorf("nova.conf lines lack %q:\n%s", want, lines)
		}
	}
	// A stale save is refused.
	r = refused(t, c, "/settings", "/settings", form(0))
	if !strings.Contains(r.Text(t, "form-error"), "changed by someone else") {
		t.Errorf("stale: %d %q", r.StatusCode, r.Text(t, "form-error"))
	}
	// Saved with the audit log.
	evs, _, err := a.Store.ListAudit(context.Background(), store.AuditQuery{ObjectType: "settings"})
	if err != nil || len(evs) != 1 || evs[0].Actor != a.AdminName {
		t.Errorf("audit %+v %v", evs, err)
	}
	// Readers see the page, cannot save.
	if r := a.as("rita").Get("/settings"); r.StatusCode != http.StatusOK || r.Count(t, "settings-save") != 0 {
		t.Errorf("reader: %d", r.StatusCode)
	}
}

func itoaGen(g int64) string { return gen(g) }

// The kind filter finds sharing providers (and hosts, and children) however
// far down the name order they sit on a big cloud.
func TestProviderKindFilter(t *testing.T) {
	a := newApp(t)
	c := a.as("rita")
	topNames := func(r *response) []string {
		return r.Doc(t).Find(sel("provider-tree") + " > li > .node-line " + sel("node-name")).Map(func(_ int, x *goqSel) string { return strings.TrimSpace(x.Text()) })
	}
	cases := []struct {
		path  string
		trees []string // top-level nodes, when shown as trees
		flat  int      // rows, when shown as a flat list
		kinds string   // the kind badge every top-level node or row has
		pager string
	}{
		{"/providers?kind=sharing", []string{"ss1", "ss2"}, 0, "sharing", "1–2 of 2"},
		{"/providers?kind=host&limit=3", []string{"cn1", "cn2", "cn3"}, 0, "host", "1–3 of 8"},
		{"/providers?kind=child&limit=5&offset=5", nil, 5, "child", "6–10 of 16"},
		{"/providers?kind=sharing&q=s", nil, 2, "sharing", "1–2 of 2"},
		{"/providers?kind=host&q=numa", nil, 0, "", ""},
	}
	for _, tc := range cases {
		r := c.Get(tc.path)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", tc.path, r.StatusCode)
		}
		if tc.trees != nil {
			if got := topNames(r); !slices.Equal(got, tc.trees) {
				t.Errorf("%s: trees %v, want %v", tc.path, got, tc.trees)
			}
			if n := r.Count(t, "node-"+tc.kinds); n < len(tc.trees) {
				t.Errorf("%s: %d %s nodes", tc.path, n, tc.kinds)
			}
		} else {
			if n := r.Count(t, "provider-match"); n != tc.flat {
				t.Errorf("%s: %d rows, want %d", tc.path, n, tc.flat)
			}
			r.Doc(t).Find(sel("provider-match") + " td:nth-child(2) .badge").Each(func(_ int, x *goqSel) {
				if !x.HasClass("kind-" + tc.kinds) {
					t.Errorf("%s: row kind badge %q", tc.path, x.Text())
				}
			})
		}
		if tc.pager != "" && r.Text(t, "pager-range") != tc.pager {
			t.Errorf("%s: pager %q, want %q", tc.path, r.Text(t, "pager-range"), tc.pager)
		}
		if tc.pager == "" && r.Count(t, "provider-empty") != 1 {
			t.Errorf("%s: no empty-list message", tc.path)
		}
		// The filter shows what is selected, so paging and searching keep it.
		kind := r.Doc(t).Find(sel("provider-kind-filter")+" option[selected]").AttrOr("value", "")
		if want := r.Request.URL.Query().Get("kind"); kind != want {
			t.Errorf("%s: filter shows %q, want %q", tc.path, kind, want)
		}
	}
	// Sharing providers listed flat still say which trees they serve.
	s := c.Get("/providers?kind=sharing&q=ss1")
	if got := strings.Join(s.Texts(t, "served-tree"), ","); got != "cn2" {
		t.Errorf("ss1 in the flat list serves %q, want cn2", got)
	}
	// Paging links carry the filter.
	h := c.Get("/providers?kind=host&limit=3")
	if next := h.Doc(t).Find(sel("pager-next")).AttrOr("href", ""); !strings.Contains(next, "kind=host") {
		t.Errorf("next page link %q lacks the filter", next)
	}
	// An unknown kind shows every root, as without a filter.
	if got := topNames(c.Get("/providers?kind=compute")); len(got) != 10 {
		t.Errorf("unknown kind shows %d roots, want 10", len(got))
	}
}
