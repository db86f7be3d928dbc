package main

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/web/webtest"
)

// TestBadWorldSameAnswerAtEveryDoor sends each bad world through the three
// doors that receive a world file — `corral import`, the world page's
// upload and `corral preview` — and wants the same answer from each: bad
// input (exit 2, status 400) naming the same field, by index.
func TestBadWorldSameAnswerAtEveryDoor(t *testing.T) {
	const providers = `"providers": [{"name": "cn1"}, {"name": "cn2"}]`
	cases := []struct{ name, world, field string }{
		{"empty trait", `{"providers": [{"name": "cn1"}, {"name": "cn2", "traits": ["CUSTOM_A", " "]}]}`, "providers[1].traits"},
		{"negative inventory", `{"providers": [{"name": "cn1", "inventories": {"VCPU": {"total": -1, "allocation_ratio": 1}}}]}`, "providers[0].inventories"},
		{"same aggregate name twice", `{"aggregates": [{"name": "x"}, {"name": " x "}]}`, "aggregates[1].name"},
		{"empty metadata key", `{"aggregates": [{"name": "x"}, {"name": "y", "metadata": {" ": "v"}}]}`, "aggregates[1].metadata"},
		{"unknown member", `{` + providers + `, "aggregates": [{"name": "a"}, {"name": "b"}, {"name": "c"},
			{"name": "d", "members": ["cn1", "cn9"]}]}`, "aggregates[3].members[1]"},
		{"negative vcpus", `{"flavors": [{"name": "f", "vcpus": -1}]}`, "flavors[0].vcpus"},
		{"rules without anti-affinity", `{"server_groups": [{"name": "g", "policy": "affinity", "rules": {"max_server_per_host": 2}}]}`, "server_groups[0].rules"},
		{"server in two groups", `{` + providers + `, "servers": [{"name": "s", "host": "cn1"}],
			"server_groups": [{"name": "g1", "policy": "affinity", "members": ["s"]}, {"name": "g2", "policy": "affinity", "members": ["s"]}]}`,
			"server_groups[1].members[0]"},
		{"unknown host filter", `{"settings": {"enabled_filters": ["NoSuchFilter"]}}`, "settings.enabled_filters"},
		{"negative multiplier", `{"settings": {"soft_affinity_weight_multiplier": -1}}`, "settings.soft_affinity_weight_multiplier"},
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	app := webtest.StartWith(t, webtest.Options{Demo: true, Users: []webtest.User{{Name: "root", Role: "admin"}}})
	page := app.SignIn(t, "root")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, "world.json")
			if err := os.WriteFile(file, []byte(tc.world), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, mode := range [][]string{nil, {"--replace"}} {
				args := append([]string{"import", "--db", db}, mode...)
				code, _, stderr := runCLI(t, "", append(args, file)...)
				if code != 2 || !strings.Contains(stderr, ": "+tc.field+": ") {
					t.Errorf("corral %s: exit %d, stderr %q; want 2 naming %s", strings.Join(args, " "), code, stderr, tc.field)
				}
			}

			code, _, stderr := runCLI(t, `{"world": `+tc.world+`}`, "preview")
			if code != 2 || !strings.Contains(stderr, ": world."+tc.field+": ") {
				t.Errorf("corral preview: exit %d, stderr %q; want 2 naming world.%s", code, stderr, tc.field)
			}

			for _, mode := range []string{"merge", "replace"} {
				var body bytes.Buffer
				mw := multipart.NewWriter(&body)
				_ = mw.WriteField("_csrf", page.CSRF("/world"))
				_ = mw.WriteField("mode", mode)
				fw, err := mw.CreateFormFile("file", "cloud.json")
				if err != nil {
					t.Fatal(err)
				}
				fw.Write([]byte(tc.world))
				mw.Close()
				r := page.Request(http.MethodPost, "/world/preview", &body, "Content-Type", mw.FormDataContentType())
				msg := r.Words(t, "error-file")
				if r.StatusCode != http.StatusBadRequest || !strings.Contains(msg, "— "+tc.field+": ") {
					t.Errorf("world page (%s): status %d, error %q; want 400 naming %s", mode, r.StatusCode, msg, tc.field)
				}
			}
		})
	}
}
