package console_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"corral/models/store"
)

func TestAggregateListSearchSortPaginate(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)

	r := c.Get("/aggregates")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("status %d", r.StatusCode)
	}
	names := r.Texts(t, "aggregate-name")
	if len(names) != 13 {
		t.Fatalf("demo has 13 aggregates, page shows %d: %v", len(names), names)
	}
	// Counts and typed tags are shown per row.
	row := func(r *response, name string) string {
		var out string
		r.Doc(t).Find(sel("aggregate-row")).EachWithBreak(func(_ int, s *goqSel) bool {
			if strings.TrimSpace(s.Find(sel("aggregate-name")).Text()) == name {
				var cells []string
				s.Find("td").Each(func(_ int, td *goqSel) { cells = append(cells, strings.Join(strings.Fields(td.Text()), " ")) })
				out = " " + strings.Join(cells, " | ") + " "
				return false
			}
			return true
		})
		return out
	}
	if got := row(r, "tenant-acme"); !strings.Contains(got, "2 tenants") {
		t.Errorf("tenant-acme row = %q, want 2 tenants", got)
	}
	if got := row(r, "blazar-freepool"); !strings.Contains(got, "free pool") {
		t.Errorf("freepool row = %q, want the free pool badge", got)
	}
	if got := row(r, "reservation-r42"); !strings.Contains(got, "reservation r42") {
		t.Errorf("reservation row = %q, want reservation r42", got)
	}
	if got := row(r, "az-east"); !strings.Contains(got, "east") || !strings.Contains(got, "| 4 |") {
		t.Errorf("az-east row = %q, want zone east and 4 members", got)
	}

	// Search narrows on the server.
	r = c.Get("/aggregates?q=tenant")
	if got := r.Texts(t, "aggregate-name"); !slices.Equal(got, []string{"tenant-acme", "tenant-globex"}) {
		t.Errorf("search tenant = %v", got)
	}
	// htmx asks for the list alone while someone types.
	frag := c.Get("/aggregates?q=tenant", "HX-Request", "true")
	if strings.Contains(frag.Body, "<html") || !slices.Equal(frag.Texts(t, "aggregate-name"), []string{"tenant-acme", "tenant-globex"}) {
		t.Errorf("htmx search: %v", frag.Texts(t, "aggregate-name"))
	}
	r = c.Get("/aggregates?q=nothing-like-this")
	if !strings.Contains(r.Text(t, "aggregate-empty"), "nothing-like-this") {
		t.Errorf("empty search should say so, got %q", r.Text(t, "aggregate-empty"))
	}

	// Sort by name, both ways.
	asc := c.Get("/aggregates?sort=name").Texts(t, "aggregate-name")
	desc := c.Get("/aggregates?sort=name&desc=1").Texts(t, "aggregate-name")
	if !slices.IsSorted(asc) {
		t.Errorf("sort=name not ascending: %v", asc)
	}
	slices.Reverse(desc)
	if !slices.Equal(asc, desc) {
		t.Errorf("desc is not the reverse of asc:\n%v\n%v", asc, desc)
	}
	// An unknown sort is ignored rather than failing.
	if r := c.Get("/aggregates?sort=drop+table"); r.StatusCode != http.StatusOK {
		t.Errorf("unknown sort: status %d", r.StatusCode)
	}

	// Pages come from the server: 5 per page, the third page has the rest.
	p1 := c.Get("/aggregates?sort=name&limit=5")
	p3 := c.Get("/aggregates?sort=name&limit=5&offset=10")
	if n := p1.Count(t, "aggregate-row"); n != 5 {
		t.Errorf("page 1 has %d rows, want 5", n)
	}
	if got := p3.Texts(t, "aggregate-name"); !slices.Equal(got, asc[10:]) {
		t.Errorf("page 3 = %v, want %v", got, asc[10:])
	}
	if got := p1.Text(t, "pager-range"); got != "1–5 of 13" {
		t.Errorf("pager = %q", got)
	}
}

func TestAggregateCreateWithZoneAndHosts(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)

	// A zone without the acknowledgement comes back with the message next
	// to the tick box, and nothing is created.
	r := refused(t, c, "/aggregates/new", "/aggregates", url.Values{"name": {"fresh"}, "availability_zone": {"north"}})
	if !strings.Contains(r.Text(t, "error-confirm_az"), "north") {
		t.Errorf("confirm error = %q", r.Text(t, "error-confirm_az"))
	}
	if v, _ := r.Doc(t).Find(`input[name="name"]`).Attr("value"); v != "fresh" {
		t.Errorf("the form should keep the typed name, got %q", v)
	}
	if _, err := a.Store.GetAggregate(t.Context(), "fresh"); err == nil {
		t.Fatal("aggregate created despite the refusal")
	}

	// An unknown host refuses the whole create.
	r = refused(t, c, "/aggregates/new", "/aggregates", url.Values{"name": {"fresh"}, "hosts": {"cn1, nosuch"}})
	if !strings.Contains(r.Text(t, "error-hosts"), "nosuch") {
		t.Fatalf("unknown host: status %d, error %q", r.StatusCode, r.Text(t, "error-hosts"))
	}
	if _, err := a.Store.GetAggregate(t.Context(), "fresh"); err == nil {
		t.Fatal("aggregate created although a host was unknown")
	}

	// Empty name.
	r = refused(t, c, "/aggregates/new", "/aggregates", url.Values{"name": {"  "}})
	if r.Text(t, "error-name") == "" {
		t.Fatalf("empty name: status %d, error %q", r.StatusCode, r.Text(t, "error-name"))
	}
	// Duplicate name: the store's conflict lands next to the name.
	r = refused(t, c, "/aggregates/new", "/aggregates", url.Values{"name": {"aggA"}})
	if !strings.Contains(r.Text(t, "error-name"), "aggA") {
		t.Fatalf("duplicate: status %d, error %q", r.StatusCode, r.Text(t, "error-name"))
	}

	// Hosts already in zone east cannot join a second zone (Nova's rule).
	r = refused(t, c, "/aggregates/new", "/aggregates", url.Values{
		"name": {"fresh"}, "availability_zone": {"north"}, "confirm_az": {"1"}, "hosts": {"cn1\ncn2"}})
	if !strings.Contains(r.Body, "availability zones: already in east") {
		t.Fatalf("second zone: status %d", r.StatusCode)
	}

	// All good: one step, one message.
	page := c.Follow("/aggregates/new", "/aggregates", url.Values{
		"name": {"fresh"}, "availability_zone": {"east"}, "confirm_az": {"1"}, "hosts": {"cn1\ncn2"}})
	if got := page.Texts(t, "flash-success"); len(got) != 1 || !strings.Contains(got[0], "zone “east”") || !strings.Contains(got[0], "2 members") {
		t.Errorf("flash = %v", got)
	}
	agg := a.aggregate("fresh")
	if agg.AvailabilityZone == nil || *agg.AvailabilityZone != "east" || len(agg.Members) != 2 {
		t.Errorf("stored %+v", agg)
	}
	if got := page.Texts(t, "member-name"); !slices.Equal(got, []string{"cn1", "cn2"}) {
		t.Errorf("members listed: %v", got)
	}
}

func TestAggregateEditNameAndZone(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)
	agg := a.aggregate("aggA")
	path := "/aggregates/" + agg.UUID

	// Changing the zone needs the tick.
	r := refused(t, c, path, path, url.Values{"name": {"aggA"}, "availability_zone": {"east"}, "generation": {gen(agg.Generation)}})
	if r.Text(t, "error-confirm_az") == "" {
		t.Fatalf("status %d, confirm error %q", r.StatusCode, r.Text(t, "error-confirm_az"))
	}
	if a.aggregate("aggA").AvailabilityZone != nil {
		t.Fatal("zone saved without confirmation")
	}
	page := c.Follow(path, path, url.Values{"name": {"aggA2"}, "availability_zone": {"east"}, "confirm_az": {"1"}, "generation": {gen(agg.Generation)}})
	flash := page.Texts(t, "flash-success")
	if len(flash) != 1 || !strings.Contains(flash[0], "renamed to “aggA2”") || !strings.Contains(flash[0], "zone set to “east”") {
		t.Errorf("flash = %v", flash)
	}
	if page.Count(t, "flash-error") != 0 {
		t.Errorf("mixed messages: %v", page.Texts(t, "flash-error"))
	}

	// A stale generation (someone else saved since) is a conflict shown as
	// such, and nothing changes.
	r = refused(t, c, path, path, url.Values{"name": {"aggA3"}, "availability_zone": {"east"}, "generation": {gen(agg.Generation)}})
	if v, _ := r.Doc(t).Find(`input[name="name"]`).Attr("value"); v != "aggA3" {
		t.Errorf("the form should keep the typed name, got %q", v)
	}
	if got := r.Text(t, "form-error"); !strings.Contains(got, "changed by someone else") || !strings.Contains(got, "reload") {
		t.Errorf("stale message = %q", got)
	}
	if a.aggregate(agg.UUID).Name != "aggA2" {
		t.Error("stale save changed the name")
	}
	// The form keeps the stale generation: saving again without reloading
	// is refused again rather than overwriting.
	if g, _ := r.Doc(t).Find(`[data-testid="aggregate-form"] input[name="generation"]`).Attr("value"); g != gen(agg.Generation) {
		t.Errorf("form generation after a conflict = %s, want the stale %d", g, agg.Generation)
	}

	// Clearing the zone also needs the tick, then says so.
	cur := a.aggregate(agg.UUID)
	page = c.Follow(path, path, url.Values{"name": {"aggA2"}, "availability_zone": {""}, "confirm_az": {"1"}, "generation": {gen(cur.Generation)}})
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "zone “east” cleared") {
		t.Errorf("flash = %q", got)
	}
}

func TestAggregateMetadataEditor(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)
	agg := a.aggregate("gpu") // force_metadata_check=True: values are requirements
	path := "/aggregates/" + agg.UUID

	r := c.Get(path)
	keys := r.Doc(t).Find(`[data-testid="metadata-editor"] input[name="key"]`)
	var shown []string
	keys.Each(func(_ int, s *goqSel) {
		if v, _ := s.Attr("value"); v != "" {
			shown = append(shown, v)
		}
	})
	if !slices.Equal(shown, []string{"force_metadata_check", "gpu"}) {
		t.Errorf("editor shows %v", shown)
	}

	cases := []struct {
		name      string
		rows      [][2]string
		wantError string // substring of an error shown next to the row, "" = saved
		wantKey   string
	}{
		{"bang mixed with others", [][2]string{{"force_metadata_check", "True"}, {"gpu", "<or> ! <or> a100"}}, "cannot be combined", "gpu"},
		{"numeric operator on a word", [][2]string{{"force_metadata_check", "True"}, {"gpu", ">= many"}}, "not a number", "gpu"},
		{"operator without operand", [][2]string{{"force_metadata_check", "True"}, {"gpu", "s=="}}, "needs an operand", "gpu"},
		{"duplicate key", [][2]string{{"gpu", "a"}, {"gpu", "b"}}, "twice", "gpu"},
		{"tenant key belongs to its field", [][2]string{{"filter_tenant_id3", "x"}}, "Tenants field", "filter_tenant_id3"},
		{"key with bad characters", [][2]string{{"my/key", "x"}}, "letters, digits", "my/key"},
		{"force_metadata_check neither True nor False", [][2]string{{"force_metadata_check", "yes"}}, "True or False", "force_metadata_check"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			form := url.Values{"generation": {gen(agg.Generation)}}
			for _, kv := range tc.rows {
				form.Add("key", kv[0])
				form.Add("value", kv[1])
			}
			// Refused: back on the aggregate's page (post/redirect/get),
			// the typed rows kept and the error beside the row.
			r := c.Follow(path, path+"/metadata", form)
			if r.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200 after the redirect", r.StatusCode)
			}
			var msg string
			r.Doc(t).Find(`[data-testid="metadata-editor"] [data-testid="kv-row"]`).Each(func(_ int, s *goqSel) {
				if v, _ := s.Find(`input[name="key"]`).Attr("value"); v == tc.wantKey {
					msg += s.Find(sel("kv-error")).Text()
				}
			})
			if !strings.Contains(msg, tc.wantError) {
				t.Errorf("error next to %s = %q, want it to contain %q", tc.wantKey, msg, tc.wantError)
			}
			if got := a.aggregate(agg.UUID); got.Generation != agg.Generation {
				t.Error("refused metadata was saved")
			}
		})
	}

	// A valid edit saves, keeps the typed keys it does not show, and counts.
	tenant := a.aggregate("tenant-acme")
	tpath := "/aggregates/" + tenant.UUID
	form := url.Values{"generation": {gen(tenant.Generation)}, "key": {"ssd", "", "os"}, "value": {"true", "", "<in> linux"}}
	page := c.Follow(tpath, tpath+"/metadata", form)
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "2 added, 0 changed, 0 removed") {
		t.Errorf("flash = %q", got)
	}
	// An operator in a literal aggregate value is allowed but flagged.
	if got := page.Text(t, "flash-warning"); !strings.Contains(got, "1 warning") {
		t.Errorf("warning flash = %q", got)
	}
	md := a.aggregate(tenant.UUID).Metadata
	if md["filter_tenant_id"] != "acme" || md["filter_tenant_id2"] != "acme-dev" || md["ssd"] != "true" {
		t.Errorf("metadata now %v", md)
	}

	// Live validation answers with the findings only and saves nothing.
	form = url.Values{"key": {"force_metadata_check", "gpu"}, "value": {"True", "<or> ! <or> *"}}
	r = c.Submit(path, path+"/metadata/validate", form)
	if r.StatusCode != http.StatusOK || !strings.Contains(r.Text(t, "kv-error"), "cannot be combined") {
		t.Errorf("live validate: status %d, %q", r.StatusCode, r.Body)
	}
	if strings.Contains(r.Body, "<html") {
		t.Error("live validation should answer with a fragment")
	}
	form = url.Values{"key": {"gpu"}, "value": {"true"}}
	if r := c.Submit(path, path+"/metadata/validate", form); r.Count(t, "kv-ok") != 1 {
		t.Errorf("valid metadata should say no problems: %s", r.Body)
	}
}

func TestTenantTags(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)
	agg := a.aggregate("tenant-acme")
	path := "/aggregates/" + agg.UUID

	page := c.Follow(path, path+"/tenants", url.Values{"project": {"initech"}, "generation": {gen(agg.Generation)}})
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "initech") || !strings.Contains(got, "filter_tenant_id3") {
		t.Errorf("flash = %q", got)
	}
	if got := page.Doc(t).Find(sel("tags-tenants") + " " + sel("tag-value")).Map(func(_ int, s *goqSel) string { return s.Text() }); !slices.Equal(got, []string{"acme", "acme-dev", "initech"}) {
		t.Errorf("tenants shown %v", got)
	}
	if md := a.aggregate(agg.UUID).Metadata; md["filter_tenant_id3"] != "initech" {
		t.Errorf("metadata %v", md)
	}

	// Invalid input comes back next to the field on the aggregate's own
	// page (post/redirect/get) with the value kept, nothing saved.
	cur := a.aggregate(agg.UUID)
	for _, bad := range []string{"", "a,b", "acme"} {
		r := c.Follow(path, path+"/tenants", url.Values{"project": {bad}, "generation": {gen(cur.Generation)}})
		field := r.Doc(t).Find(sel("tags-tenants") + ` input[name="project"]`)
		if r.StatusCode != http.StatusOK || r.Doc(t).Find(sel("tags-tenants")+" "+sel("error-project")).Length() != 1 || field.AttrOr("value", "?") != bad {
			t.Errorf("value %q: status %d, errors %q, field %q", bad, r.StatusCode, r.ErrorsText(), field.AttrOr("value", "?"))
		}
	}
	if a.aggregate(agg.UUID).Generation != cur.Generation {
		t.Error("a refused tenant was saved")
	}

	// Remove.
	c.FollowConfirmed(path, path+"/tenants/remove", url.Values{"value": {"acme-dev"}, "generation": {gen(cur.Generation)}})
	if md := a.aggregate(agg.UUID).Metadata; md["filter_tenant_id2"] != "" || md["filter_tenant_id"] != "acme" {
		t.Errorf("after remove %v", md)
	}

	// A comma list is flagged, and can be split into one key per project.
	globex := a.aggregate("tenant-globex")
	if _, err := a.Store.UpdateAggregate(t.Context(), store.Actor{Name: "test"}, globex.UUID, store.AnyGeneration, func(g *modelsAggregate) error {
		g.Metadata["filter_tenant_id"] = "globex, hooli"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	gpath := "/aggregates/" + globex.UUID
	r := c.Get(gpath)
	if w := r.Text(t, "tag-warning"); !strings.Contains(w, "comma list") || !strings.Contains(w, "pre-filter") {
		t.Errorf("warning = %q", w)
	}
	globex = a.aggregate(globex.UUID)
	c.Follow(gpath, gpath+"/tenants", url.Values{"split": {"1"}, "generation": {gen(globex.Generation)}})
	md := a.aggregate(globex.UUID).Metadata
	if md["filter_tenant_id"] != "globex" || md["filter_tenant_id2"] != "hooli" {
		t.Errorf("after split %v", md)
	}
}

func TestReservationTags(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)
	agg := a.aggregate("aggB")
	path := "/aggregates/" + agg.UUID
	page := c.FollowConfirmed(path, path+"/reservations", url.Values{"reservation": {"r77"}, "generation": {gen(agg.Generation)}})
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "reservation:r77") {
		t.Errorf("flash = %q", got)
	}
	if got := page.Doc(t).Find(sel("tags-reservations") + " " + sel("tag-value")).Text(); got != "r77" {
		t.Errorf("reservations shown %q", got)
	}
	if _, ok := a.aggregate(agg.UUID).Metadata["reservation:r77"]; !ok {
		t.Errorf("metadata %v", a.aggregate(agg.UUID).Metadata)
	}
	// The free pool is named as such.
	fp := a.aggregate("blazar-freepool")
	if got := c.Get("/aggregates/"+fp.UUID).Text(t, "tag-note"); got != "the free pool" {
		t.Errorf("free pool note = %q", got)
	}
	// Invalid ids come back next to the field; nothing is saved.
	cur := a.aggregate(agg.UUID)
	for _, tc := range []struct{ id, want string }{{"", "Type a reservation id"}, {"a b", "without commas or spaces"}, {"r77", "already on this aggregate"}} {
		r := c.Follow(path, path+"/reservations", url.Values{"reservation": {tc.id}, "generation": {gen(cur.Generation)}})
		if got := r.Doc(t).Find(sel("tags-reservations") + " " + sel("error-reservation")).Text(); r.StatusCode != http.StatusOK || !strings.Contains(got, tc.want) {
			t.Errorf("reservation %q: status %d error %q", tc.id, r.StatusCode, got)
		}
	}
	if a.aggregate(agg.UUID).Generation != cur.Generation {
		t.Error("a refused reservation was saved")
	}
	c.Follow(path, path+"/reservations/remove", url.Values{"value": {"r77"}, "generation": {gen(cur.Generation)}})
	if md := a.aggregate(agg.UUID).Metadata; len(md) != 0 {
		t.Errorf("metadata after remove %v", md)
	}

	// With no prefix configured the field says why it is off.
	st, g, _ := a.Store.GetSettings(t.Context())
	st.RequiredMemberPrefix = ""
	if err := a.Store.UpdateSettings(t.Context(), store.Actor{Name: "test"}, g, st); err != nil {
		t.Fatal(err)
	}
	r := c.Get(path)
	if got := r.Text(t, "tag-disabled"); !strings.Contains(got, "Settings") || r.Count(t, "reservation-add") != 0 {
		t.Errorf("disabled field: %q", got)
	}
}

func TestAggregateMembers(t *testing.T) {
	a := newApp(t)
	c := a.as(a.AdminName)
	agg := a.aggregate("aggC") // numa1_1 and ss2
	path := "/aggregates/" + agg.UUID

	r := c.Get(path)
	kinds := map[string]string{}
	r.Doc(t).Find(sel("member-row")).Each(func(_ int, s *goqSel) {
		kinds[strings.TrimSpace(s.Find(sel("member-name")).Text())] = strings.TrimSpace(s.Find(sel("member-kind")).Text())
	})
	if kinds["numa1_1"] != "child" || kinds["ss2"] != "sharing" {
		t.Errorf("kinds %v", kinds)
	}
	// No host is a member: delete is offered.
	if r.Count(t, "aggregate-delete-button") != 1 || r.Count(t, "aggregate-delete-disabled") != 0 {
		t.Error("delete should be offered for an aggregate without hosts")
	}

	// The picker finds providers with their tree.
	r = c.Get(path + "?pq=numa2")
	if got := r.Texts(t, "picker-name"); !slices.Equal(got, []string{"numa2_1", "numa2_2"}) {
		t.Errorf("picker found %v", got)
	}
	if !strings.Contains(r.Text(t, "picker-row"), "in cn2") {
		t.Errorf("picker rows should show the tree: %q", r.Text(t, "picker-row"))
	}
	// A host comes with its tree, so a child can be picked under it.
	if got := c.Get(path+"?pq=cn2").Texts(t, "picker-name"); !slices.Equal(got, []string{"cn2", "numa2_1", "numa2_2"}) {
		t.Errorf("picker for cn2 found %v", got)
	}
	frag := c.Get("/aggregates/"+agg.UUID+"/picker?pq=numa1", "HX-Request", "true")
	if frag.StatusCode != http.StatusOK || strings.Contains(frag.Body, "<html") || frag.Count(t, "picker-row") != 2 {
		t.Errorf("htmx picker: status %d rows %d", frag.StatusCode, frag.Count(t, "picker-row"))
	}
	if d, ok := frag.Doc(t).Find(`input[value="` + a.providerUUID("numa1_1") + `"]`).Attr("disabled"); !ok {
		t.Errorf("a member should not be offered again (disabled=%q)", d)
	}

	// Bulk add: ticked and pasted, in one step.
	page := c.Follow(path, path+"/members", url.Values{"provider": {a.providerUUID("cn3")}, "bulk": {"cn4, numa1_1"}, "generation": {gen(agg.Generation)}})
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "Added 2 providers to “aggC”: cn3, cn4.") || !strings.Contains(got, "Already members: numa1_1") {
		t.Errorf("flash = %q", got)
	}
	members := a.aggregate(agg.UUID).Members
	if len(members) != 4 {
		t.Errorf("members %v", members)
	}

	// Unknown pasted name: refused next to the field, nothing added.
	cur := a.aggregate(agg.UUID)
	r = refused(t, c, path, path+"/members", url.Values{"bulk": {"cn5 ghost"}, "generation": {gen(cur.Generation)}})
	if !strings.Contains(r.Text(t, "error-bulk"), "ghost") {
		t.Errorf("unknown: status %d, error %q", r.StatusCode, r.Text(t, "error-bulk"))
	}
	if a.aggregate(agg.UUID).Generation != cur.Generation {
		t.Error("refused add changed the aggregate")
	}

	// With hosts in it, delete is refused with the reason, not hidden.
	r = c.Get(path)
	if r.Count(t, "aggregate-delete-disabled") != 1 || !strings.Contains(r.Text(t, "delete-reason"), "cn3") {
		t.Errorf("delete should be disabled with a reason naming cn3: %q", r.Text(t, "delete-reason"))
	}
	page = c.Follow(path, path+"/delete", nil)
	if got := page.Text(t, "flash-error"); !strings.Contains(got, "still has hosts") {
		t.Errorf("forced delete flash = %q", got)
	}

	// Bulk remove the hosts, then delete after confirming.
	page = c.Follow(path, path+"/members/remove", url.Values{"provider": {a.providerUUID("cn3"), a.providerUUID("cn4")}, "generation": {gen(cur.Generation)}})
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "Removed 2 providers") {
		t.Errorf("remove flash = %q", got)
	}
	confirm := c.Get(path + "/delete")
	if confirm.Count(t, "confirm-submit") != 1 {
		t.Fatalf("no confirmation step: %d", confirm.StatusCode)
	}
	page = c.Follow(path+"/delete", path+"/delete", nil)
	if got := page.Text(t, "flash-success"); !strings.Contains(got, "deleted") {
		t.Errorf("delete flash = %q", got)
	}
	if _, err := a.Store.GetAggregate(t.Context(), agg.UUID); err == nil {
		t.Error("aggregate still there")
	}
}

func TestAggregatePermissions(t *testing.T) {
	a := newApp(t)
	agg := a.aggregate("aggA")
	path := "/aggregates/" + agg.UUID
	c := a.as("rita") // reader
	r := c.Get(path)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("reader view: %d", r.StatusCode)
	}
	if r.Count(t, "aggregate-form") != 0 || r.Count(t, "member-add-form") != 0 || r.Count(t, "metadata-editor-save") != 0 {
		t.Error("a reader should see no edit forms")
	}
	for _, p := range []string{"/aggregates/no-such-aggregate", "/flavors/no-such-flavor", "/server-groups/" + agg.UUID, "/providers/no-such-provider"} {
		if r := c.Get(p); r.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, r.StatusCode)
		}
	}
	if r := c.Get("/aggregates/new"); r.StatusCode != http.StatusForbidden {
		t.Errorf("reader GET new: %d", r.StatusCode)
	}
	r = c.Submit(path, path+"/tenants", url.Values{"project": {"x"}, "generation": {gen(agg.Generation)}})
	if r.StatusCode != http.StatusForbidden {
		t.Errorf("reader POST: %d", r.StatusCode)
	}
}
