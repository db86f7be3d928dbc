package world_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"corral/models"
	"corral/models/store"
	"corral/web/webtest"
)

// The world page is tested through the real application (webtest.Start:
// the whole Echo stack with sessions and CSRF, on a SQLite file holding
// the demo cloud), driven over loopback HTTP like a browser without
// JavaScript.

const worldTestPassword = "world-test-password"

// worldClient is a webtest client with the world page's forms.
type worldClient struct{ *webtest.Client }

type worldResp = webtest.Response

func worldLogin(t *testing.T, app *webtest.App, name, password string) *worldClient {
	t.Helper()
	c := &worldClient{app.Client(t)}
	if r := c.Login(name, password); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in as %s: status %d", name, r.StatusCode)
	}
	return c
}

// do sends body as ctype ("" for none).
func (c *worldClient) do(method, path, ctype string, body io.Reader, hdr ...string) *worldResp {
	c.T.Helper()
	if ctype != "" {
		hdr = append([]string{"Content-Type", ctype}, hdr...)
	}
	return c.Request(method, path, body, hdr...)
}

// upload submits the world page's import form with file as the world.
func (c *worldClient) upload(file []byte, mode string, blazar bool) *worldResp {
	c.T.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("_csrf", c.CSRF("/world"))
	_ = mw.WriteField("mode", mode)
	if blazar {
		_ = mw.WriteField("blazar", "true")
	}
	fw, err := mw.CreateFormFile("file", "cloud.json")
	if err != nil {
		c.T.Fatal(err)
	}
	fw.Write(file)
	mw.Close()
	return c.do(http.MethodPost, "/world/preview", mw.FormDataContentType(), &body)
}

// apply submits the confirm form of a preview page.
func (c *worldClient) apply(preview *worldResp) *worldResp {
	c.T.Helper()
	id, ok := preview.Doc(c.T).Find(`[data-testid="world-apply-form"] input[name="preview"]`).Attr("value")
	if !ok {
		c.T.Fatalf("the preview page has no apply form (status %d): %s", preview.StatusCode, preview.Words(c.T, "world-form"))
	}
	tok := c.CSRF("/world")
	return c.do(http.MethodPost, "/world/apply", "application/x-www-form-urlencoded",
		strings.NewReader(url.Values{"_csrf": {tok}, "preview": {id}}.Encode()))
}

func (c *worldClient) download() []byte {
	c.T.Helper()
	r := c.Get("/world/export")
	if r.StatusCode != http.StatusOK {
		c.T.Fatalf("GET /world/export: status %d", r.StatusCode)
	}
	return []byte(r.Body)
}

// diffCounts reads the preview table: kind → [added, changed, removed].
func diffCounts(t *testing.T, r *worldResp) map[string][3]int {
	t.Helper()
	out := map[string][3]int{}
	r.Doc(t).Find(`[data-testid="world-diff-row"]`).Each(func(_ int, row *goquery.Selection) {
		kind, _ := row.Attr("data-kind")
		if kind == "settings" {
			return
		}
		var n [3]int
		for i, what := range []string{"added", "changed", "removed"} {
			v, err := strconv.Atoi(strings.TrimSpace(row.Find(`[data-testid="diff-` + what + `-count"]`).Text()))
			if err != nil {
				t.Fatalf("preview row %s: %s count: %v", kind, what, err)
			}
			n[i] = v
		}
		out[kind] = n
	})
	if len(out) != 6 {
		t.Fatalf("preview rows: %v, want the six kinds (status %d, errors %q)", out, r.StatusCode, r.Words(t, "world-form"))
	}
	return out
}

func exportJSON(t *testing.T, st *store.Store) []byte {
	t.Helper()
	w, err := st.ExportWorld(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := models.EncodeWorld(&b, w); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func decodeWorld(t *testing.T, b []byte) *models.World {
	t.Helper()
	w, err := models.DecodeWorldJSON(b, "")
	if err != nil {
		t.Fatalf("decode world: %v", err)
	}
	return w
}

func encodeWorld(t *testing.T, w *models.World) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := models.EncodeWorld(&b, w); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestWorldDownloadRoundTrips(t *testing.T) {
	app := webtest.Start(t)
	c := worldLogin(t, app, app.AdminName, app.AdminPassword)
	// One consumer with allocations: the download carries it.
	consumer := "bbbbbbbb-0000-4000-8000-000000000001"
	if err := app.Store.SetAllocations(context.Background(), store.Actor{Name: "test", Via: "cli"}, []store.ConsumerAllocations{{
		ConsumerUUID: consumer, ProjectID: "acme", UserID: "alice", ConsumerType: "INSTANCE",
		Allocations: []models.Allocation{{ProviderUUID: store.DemoUUID("provider", "numa1_1"), ResourceClass: "VCPU", Used: 1}}}}); err != nil {
		t.Fatal(err)
	}

	r := c.Get("/world/export")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET /world/export: status %d", r.StatusCode)
	}
	if cs := decodeWorld(t, []byte(r.Body)).Consumers; len(cs) != 1 || cs[0].UUID != consumer || cs[0].ConsumerType != "INSTANCE" || cs[0].Generation != 1 {
		t.Errorf("the download's consumers: %+v", cs)
	}
	want := `attachment; filename="corral-world-` + time.Now().UTC().Format("2006-01-02") + `.json"`
	if got := r.Header.Get("Content-Disposition"); got != want {
		t.Errorf("Content-Disposition = %q, want %q", got, want)
	}
	if !bytes.Equal([]byte(r.Body), exportJSON(t, app.Store)) {
		t.Error("the download differs from what corral export writes")
	}
	if w := decodeWorld(t, []byte(r.Body)); len(w.Providers) == 0 || len(w.Aggregates) == 0 || len(w.ServerGroups) == 0 {
		t.Fatalf("the download is missing the demo cloud: %d providers, %d aggregates, %d groups",
			len(w.Providers), len(w.Aggregates), len(w.ServerGroups))
	}

	for _, mode := range []string{"merge", "replace"} {
		t.Run(mode, func(t *testing.T) {
			before := c.download()
			p := c.upload(before, mode, true)
			if p.StatusCode != http.StatusOK {
				t.Fatalf("preview: status %d: %s", p.StatusCode, p.Words(t, "world-form"))
			}
			for kind, n := range diffCounts(t, p) {
				if n != [3]int{} {
					t.Errorf("%s: added/changed/removed = %v, want nothing", kind, n)
				}
			}
			if got := p.Words(t, "diff-settings"); got != "unchanged" {
				t.Errorf("settings: %q, want unchanged", got)
			}
			if p.Words(t, "world-no-change") == "" || p.Words(t, "world-blazar") != "" {
				t.Errorf("want the no-change note and no Blazar lines; got %q / %q", p.Words(t, "world-no-change"), p.Words(t, "world-blazar"))
			}
			a := c.apply(p)
			if a.StatusCode != http.StatusSeeOther || a.Header.Get("Location") != "/world" {
				t.Fatalf("apply: status %d, location %q", a.StatusCode, a.Header.Get("Location"))
			}
			if got := c.Get("/world").Words(t, "flash-success"); !strings.Contains(got, "0 added, 0 changed, 0 removed") {
				t.Errorf("flash after apply: %q", got)
			}
			if after := c.download(); !bytes.Equal(before, after) {
				t.Errorf("the world changed on re-importing its own download (%d bytes before, %d after)", len(before), len(after))
			}
		})
	}
}

func TestWorldBadFileChangesNothing(t *testing.T) {
	app := webtest.Start(t)
	c := worldLogin(t, app, app.AdminName, app.AdminPassword)
	good := decodeWorld(t, c.download())
	cn1 := good.Providers[0].UUID

	bad := func(edit func(w *models.World)) []byte {
		w := decodeWorld(t, encodeWorld(t, good))
		edit(w)
		return encodeWorld(t, w)
	}
	type want struct {
		status int
		field  string // what the message must name
	}
	both := func(status int, field string) map[string]want {
		return map[string]want{"merge": {status, field}, "replace": {status, field}}
	}
	// A member of the demo's group web (with its host) put into a new
	// group. The file is valid on its own, but merged, web keeps the
	// server too: a conflict only the store can find.
	grabbed := bad(func(w *models.World) {
		web := w.ServerGroups[0]
		var srv models.Server
		for _, s := range w.Servers {
			if s.UUID == web.Members[0] {
				srv = s
			}
		}
		var host models.Provider
		for _, p := range w.Providers {
			if p.Name == srv.Host {
				host = p
			}
		}
		w.Providers, w.Aggregates, w.Flavors = []models.Provider{host}, nil, nil
		w.Servers = []models.Server{srv}
		w.ServerGroups = []models.ServerGroup{{Name: "grabby", ProjectID: "acme", UserID: "u1", Policy: models.PolicyAntiAffinity,
			Members: []string{srv.UUID}}}
	})
	cases := []struct {
		name  string
		file  []byte
		modes map[string]want
	}{
		{"not JSON", []byte(`{"format": "corral.world/v1", "providers": [`), both(http.StatusBadRequest, "")},
		{"unknown field", []byte(`{"format": "corral.world/v1", "providers": [{"name": "x", "colour": "red"}]}`), both(http.StatusBadRequest, "colour")},
		{"member that does not exist", []byte(`{"format": "corral.world/v1", "aggregates": [{"name": "lonely", "members": ["no-such-host"]}]}`), both(http.StatusBadRequest, "aggregates[0].members")},
		{"bad policy", bad(func(w *models.World) { w.ServerGroups[0].Policy = "sideways" }), both(http.StatusBadRequest, "server_groups[0].policy")},
		{"server on no host", bad(func(w *models.World) { w.Servers[0].Host = "nowhere" }), both(http.StatusBadRequest, "servers[0].host")},
		{"provider its own parent", bad(func(w *models.World) { w.Providers[0].ParentUUID = &cn1 }), both(http.StatusBadRequest, "providers")},
		{"server taken from another group", grabbed, map[string]want{
			"merge": {http.StatusConflict, "members: server " + good.ServerGroups[0].Members[0] + " is already in server group"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rev, err := app.Store.Revision(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			before := exportJSON(t, app.Store)
			for mode, w := range tc.modes {
				r := c.upload(tc.file, mode, true)
				if r.StatusCode != w.status {
					t.Errorf("%s: status %d, want %d; error %q", mode, r.StatusCode, w.status, r.Words(t, "error-file"))
				}
				msg := r.Words(t, "error-file")
				if msg == "" || !strings.Contains(msg, w.field) || !strings.Contains(msg, "cloud.json") {
					t.Errorf("%s: error %q, want one naming cloud.json and %q", mode, msg, w.field)
				}
				if r.Doc(t).Find(`[data-testid="world-apply-form"]`).Length() != 0 {
					t.Errorf("%s: a bad file offers to apply", mode)
				}
			}
			if now, _ := app.Store.Revision(context.Background()); now != rev {
				t.Errorf("revision moved from %d to %d", rev, now)
			}
			if !bytes.Equal(before, exportJSON(t, app.Store)) {
				t.Error("a bad file changed the world")
			}
		})
	}
}

// TestWorldPreviewCounts edits a download and checks the preview's counts
// against the edits, then that applying it does what the preview said.
func TestWorldPreviewCounts(t *testing.T) {
	type edit struct {
		name   string
		mode   string
		blazar bool
		edit   func(w *models.World) map[string][3]int // returns the expected counts
		lines  []string
	}
	cases := []edit{
		{name: "merge adds and changes", mode: "merge", blazar: true, edit: func(w *models.World) map[string][3]int {
			w.Providers = append(w.Providers, models.Provider{Name: "cn-new"}, models.Provider{Name: "cn-new-numa", ParentUUID: new("cn-new")})
			w.Aggregates[0].Metadata["colour"] = "blue"
			w.Aggregates[1].Members = nil
			w.Flavors = append(w.Flavors, models.Flavor{Name: "f.new", VCPUs: 1, RAMMB: 512, DiskGB: 1})
			w.Servers[0].Name += "-renamed"
			return map[string][3]int{"providers": {2, 0, 0}, "aggregates": {0, 2, 0}, "flavors": {1, 0, 0}, "servers": {0, 1, 0}}
		}},
		{name: "merge of a partial file removes nothing", mode: "merge", blazar: true, edit: func(w *models.World) map[string][3]int {
			w.Providers, w.Servers, w.ServerGroups = nil, nil, nil
			w.Aggregates = w.Aggregates[:1]
			w.Aggregates[0].Members = nil
			w.Flavors = w.Flavors[:1]
			return map[string][3]int{"aggregates": {0, 1, 0}}
		}},
		{name: "replace removes what the file lacks", mode: "replace", blazar: true, edit: func(w *models.World) map[string][3]int {
			groups, servers := len(w.ServerGroups), len(w.Servers)
			w.ServerGroups, w.Servers = nil, nil
			flavors := len(w.Flavors) - 1
			w.Flavors = w.Flavors[:1]
			return map[string][3]int{"servers": {0, 0, servers}, "server_groups": {0, 0, groups}, "flavors": {0, 0, flavors}}
		}},
		{name: "Blazar conventions translated", mode: "merge", blazar: true, edit: func(w *models.World) map[string][3]int {
			w.Aggregates = append(w.Aggregates,
				models.Aggregate{Name: "freepool", Metadata: map[string]string{}},
				models.Aggregate{Name: "r-7", Metadata: map[string]string{"reservation": "r-7", "blazar:owner": "p7"}})
			return map[string][3]int{"aggregates": {2, 0, 0}}
		}, lines: []string{
			"aggregate freepool: Blazar free pool → reservation:freepool",
			"aggregate r-7: reservation=r-7 → reservation:r-7",
			"aggregate r-7: blazar:owner=p7 → filter_tenant_id=p7",
		}},
		{name: "Blazar conventions kept as they are", mode: "merge", blazar: false, edit: func(w *models.World) map[string][3]int {
			w.Aggregates = append(w.Aggregates, models.Aggregate{Name: "freepool", Metadata: map[string]string{}})
			return map[string][3]int{"aggregates": {1, 0, 0}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := webtest.Start(t)
			c := worldLogin(t, app, app.AdminName, app.AdminPassword)
			w := decodeWorld(t, c.download())
			want := tc.edit(w)
			file := encodeWorld(t, w)

			p := c.upload(file, tc.mode, tc.blazar)
			if p.StatusCode != http.StatusOK {
				t.Fatalf("preview: status %d: %s", p.StatusCode, p.Words(t, "error-file"))
			}
			got := diffCounts(t, p)
			for _, k := range []string{"providers", "aggregates", "flavors", "servers", "server_groups", "consumers"} {
				if got[k] != want[k] {
					t.Errorf("%s: added/changed/removed = %v, want %v", k, got[k], want[k])
				}
			}
			var lines []string
			p.Doc(t).Find(`[data-testid="blazar-line"]`).Each(func(_ int, s *goquery.Selection) {
				lines = append(lines, strings.TrimSpace(s.Text()))
			})
			if strings.Join(lines, "\n") != strings.Join(tc.lines, "\n") {
				t.Errorf("Blazar lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(tc.lines, "\n"))
			}

			before := decodeWorld(t, exportJSON(t, app.Store))
			if a := c.apply(p); a.StatusCode != http.StatusSeeOther {
				t.Fatalf("apply: status %d: %s", a.StatusCode, a.Words(t, "form-error"))
			}
			after := decodeWorld(t, exportJSON(t, app.Store))
			kinds, _ := store.DiffWorlds(before, after)
			for _, k := range kinds {
				if n := [3]int{len(k.Added), len(k.Changed), len(k.Removed)}; n != want[k.Kind] {
					t.Errorf("after apply, %s: added/changed/removed = %v, want %v as previewed", k.Kind, n, want[k.Kind])
				}
			}
			if tc.lines != nil {
				fp, err := app.Store.GetAggregate(context.Background(), "freepool")
				if err != nil {
					t.Fatal(err)
				}
				if fp.Metadata["reservation:freepool"] == "" {
					t.Errorf("freepool metadata after apply: %v, want the reservation tag", fp.Metadata)
				}
			}
		})
	}
}

// TestWorldPreviewCountsConsumers checks that the preview counts the
// consumers (with their allocations) an import adds, changes and removes,
// and that applying it does what the preview said.
func TestWorldPreviewCountsConsumers(t *testing.T) {
	app := webtest.Start(t)
	c := worldLogin(t, app, app.AdminName, app.AdminPassword)
	const (
		kept    = "c0000000-0000-4000-8000-00000000000a"
		dropped = "c0000000-0000-4000-8000-00000000000b"
		added   = "c0000000-0000-4000-8000-00000000000c"
	)
	// host is a provider with VCPU inventory; allocations are added on
	// top of its usage, so its usage beyond them stays as it was.
	host := func(w *models.World) *models.Provider {
		for i := range w.Providers {
			if inv, ok := w.Providers[i].Inventories["VCPU"]; ok && inv.Total >= 8 {
				return &w.Providers[i]
			}
		}
		t.Fatal("the demo world has no provider with 8 VCPU")
		return nil
	}
	allocate := func(w *models.World, consumer string, vcpu int64) {
		p := host(w)
		if p.Usages == nil {
			p.Usages = map[string]int64{}
		}
		p.Usages["VCPU"] += vcpu
		w.Consumers = append(w.Consumers, models.Consumer{UUID: consumer, ProjectID: "p1", UserID: "u1",
			Allocations: []models.Allocation{{ConsumerUUID: consumer, ProviderUUID: p.UUID, ResourceClass: "VCPU", Used: vcpu}}})
	}
	step := func(name, mode string, edit func(w *models.World), want [3]int) {
		t.Helper()
		w := decodeWorld(t, c.download())
		edit(w)
		p := c.upload(encodeWorld(t, w), mode, false)
		if p.StatusCode != http.StatusOK {
			t.Fatalf("%s: preview: status %d: %s", name, p.StatusCode, p.Words(t, "error-file"))
		}
		if got := diffCounts(t, p)["consumers"]; got != want {
			t.Errorf("%s: consumers added/changed/removed = %v, want %v", name, got, want)
		}
		before := decodeWorld(t, exportJSON(t, app.Store))
		if a := c.apply(p); a.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: apply: status %d: %s", name, a.StatusCode, a.Words(t, "form-error"))
		}
		kinds, _ := store.DiffWorlds(before, decodeWorld(t, exportJSON(t, app.Store)))
		for _, k := range kinds {
			if n := [3]int{len(k.Added), len(k.Changed), len(k.Removed)}; k.Kind == "consumers" && n != want {
				t.Errorf("%s: after apply, consumers added/changed/removed = %v, want %v as previewed", name, n, want)
			}
		}
	}
	step("merge adds two", "merge", func(w *models.World) {
		allocate(w, kept, 1)
		allocate(w, dropped, 1)
	}, [3]int{2, 0, 0})
	step("replace changes, removes and adds one each", "replace", func(w *models.World) {
		var rest []models.Consumer
		for _, cs := range w.Consumers {
			switch cs.UUID {
			case kept:
				cs.Allocations[0].Used++
				host(w).Usages["VCPU"]++
			case dropped:
				host(w).Usages["VCPU"] -= cs.Allocations[0].Used
				continue
			}
			rest = append(rest, cs)
		}
		w.Consumers = rest
		allocate(w, added, 1)
	}, [3]int{1, 1, 1})
	step("the same file again changes nothing", "merge", func(*models.World) {}, [3]int{0, 0, 0})
}

func TestWorldStalePreviewIsRefused(t *testing.T) {
	app := webtest.Start(t)
	c := worldLogin(t, app, app.AdminName, app.AdminPassword)
	w := decodeWorld(t, c.download())
	w.Aggregates[0].Metadata["colour"] = "blue"
	p := c.upload(encodeWorld(t, w), "merge", true)
	if p.StatusCode != http.StatusOK {
		t.Fatalf("preview: status %d: %s", p.StatusCode, p.Words(t, "error-file"))
	}

	// Someone else edits the world between the preview and the apply.
	ctx := context.Background()
	other := w.Aggregates[1]
	if _, err := app.Store.UpdateAggregate(ctx, store.Actor{Name: "someone", Via: "cli"}, other.UUID, store.AnyGeneration,
		func(a *models.Aggregate) error { a.Metadata["edited"] = "yes"; return nil }); err != nil {
		t.Fatal(err)
	}
	before := exportJSON(t, app.Store)

	r := c.apply(p)
	if r.StatusCode != http.StatusConflict {
		t.Fatalf("apply of a stale preview: status %d, want 409", r.StatusCode)
	}
	if msg := r.Words(t, "form-error"); !strings.Contains(msg, "changed by someone else — reload") {
		t.Errorf("error %q, want it to say the world was changed by someone else", msg)
	}
	if !bytes.Equal(before, exportJSON(t, app.Store)) {
		t.Error("a stale preview changed the world")
	}
	// The stale preview is gone: applying it again cannot succeed either.
	if r := c.apply(p); r.StatusCode != http.StatusConflict || !strings.Contains(r.Words(t, "form-error"), "upload the file again") {
		t.Errorf("second apply: status %d, error %q", r.StatusCode, r.Words(t, "form-error"))
	}
	// A fresh preview of the same file applies.
	if r := c.apply(c.upload(encodeWorld(t, w), "merge", true)); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("apply of a fresh preview: status %d: %s", r.StatusCode, r.Words(t, "form-error"))
	}
	if agg, err := app.Store.GetAggregate(ctx, w.Aggregates[0].UUID); err != nil || agg.Metadata["colour"] != "blue" {
		t.Errorf("after apply: %v, %v; want colour=blue", agg, err)
	}
}

func TestWorldAccess(t *testing.T) {
	app := webtest.Start(t)
	ctx := context.Background()
	actor := store.Actor{Name: "test", Via: "cli"}
	for _, u := range []struct {
		name string
		role models.Role
	}{{"rita", models.RoleReader}, {"mike", models.RoleMember}, {"ada", models.RoleAdmin}} {
		if _, err := app.Store.CreateUser(ctx, actor, u.name, worldTestPassword, u.role, "acme"); err != nil {
			t.Fatal(err)
		}
	}
	token := func(user string) string {
		plain, _, err := app.Store.CreateToken(ctx, actor, user, "t")
		if err != nil {
			t.Fatal(err)
		}
		return plain
	}

	for _, name := range []string{"rita", "mike"} {
		c := worldLogin(t, app, name, worldTestPassword)
		for _, path := range []string{"/world", "/world/export"} {
			if r := c.Get(path); r.StatusCode != http.StatusForbidden {
				t.Errorf("%s GET %s: status %d, want 403", name, path, r.StatusCode)
			}
		}
		// The form's token from a page the user may see.
		tok := c.CSRF("/tokens")
		r := c.do(http.MethodPost, "/world/preview", "application/x-www-form-urlencoded",
			strings.NewReader(url.Values{"_csrf": {tok}}.Encode()))
		if r.StatusCode != http.StatusForbidden {
			t.Errorf("%s POST /world/preview: status %d, want 403", name, r.StatusCode)
		}
		r = c.do(http.MethodGet, "/api/world", "", nil, "X-Auth-Token", token(name))
		if r.StatusCode != http.StatusForbidden {
			t.Errorf("%s GET /api/world: status %d, want 403", name, r.StatusCode)
		}
	}

	anon := &worldClient{app.Client(t)}
	if r := anon.Get("/api/world"); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /api/world without a token: status %d, want 401", r.StatusCode)
	}
	r := anon.do(http.MethodGet, "/api/world", "", nil, "X-Auth-Token", token("ada"))
	if r.StatusCode != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("admin GET /api/world: status %d, type %q", r.StatusCode, r.Header.Get("Content-Type"))
	}
	if !bytes.Equal([]byte(r.Body), exportJSON(t, app.Store)) {
		t.Error("GET /api/world differs from the export")
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.Body), &doc); err != nil || doc["format"] != models.WorldFormat {
		t.Errorf("GET /api/world: format %v, err %v", doc["format"], err)
	}

	// One admin cannot apply another's preview.
	admin := worldLogin(t, app, app.AdminName, app.AdminPassword)
	p := admin.upload(admin.download(), "merge", true)
	ada := worldLogin(t, app, "ada", worldTestPassword)
	if r := ada.apply(p); r.StatusCode != http.StatusConflict {
		t.Errorf("applying another admin's preview: status %d, want 409", r.StatusCode)
	}
	if r := admin.apply(p); r.StatusCode != http.StatusSeeOther {
		t.Errorf("the uploader's apply: status %d, want 303", r.StatusCode)
	}
}

// TestDiffWorlds pins down what counts as added, changed and removed.
