package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestMain lets the harness start this test binary as its floor server,
// as it starts itself in `make bench`.
func TestMain(m *testing.M) {
	if body := os.Getenv(floorServerEnv); body != "" {
		os.Exit(serveFloor(body, os.Stdout))
	}
	os.Exit(m.Run())
}

// TestSmallWorld runs the whole harness on the small generated cloud: both
// servers start, every answer is compared with the real Placement's, every
// phase runs. It measures nothing (the targets are for `make bench`), but a
// difference between the answers fails it.
func TestSmallWorld(t *testing.T) {
	if !placementInstalled() {
		if os.Getenv("CI") != "" {
			t.Fatal("the real Placement (python3-placement) is not installed")
		}
		t.Skip("the real Placement (python3-placement) is not installed")
	}
	if testing.Short() {
		t.Skip("builds corral and starts two servers")
	}
	var out, errs bytes.Buffer
	code := run([]string{"-small", "-samples", "3", "-big-samples", "1", "-list-for", "1s", "-preview-for", "1s"}, &out, &errs)
	t.Log(out.String())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"answers compared on", ": 0 differ", "| `all providers` |", "only sends its bytes", "resident memory", "POST /api/preview", "first preview after a one-aggregate write"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// TestBadUsage: flags only, and positive counts.
func TestBadUsage(t *testing.T) {
	for _, args := range [][]string{{"extra"}, {"-samples", "0"}, {"-nonsense"}} {
		var out, errs bytes.Buffer
		if code := run(args, &out, &errs); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestPreviewOnlyWithBaseline: -preview-only needs no Placement, and
// -baseline measures a second server beside corral (here the same build).
func TestPreviewOnlyWithBaseline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds corral and starts two servers")
	}
	bin := filepath.Join(t.TempDir(), "corral")
	if out, err := exec.Command("go", "build", "-o", bin, "corral/cmd/corral").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	var out, errs bytes.Buffer
	code := run([]string{"-small", "-preview-only", "-corral", bin, "-baseline", bin, "-preview-for", "1s"}, &out, &errs)
	t.Log(out.String())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"corral: POST /api/preview", "baseline: POST /api/preview", "baseline: first preview after a one-aggregate write"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(out.String(), "placement-api") {
		t.Error("-preview-only started Placement")
	}
}

// TestSyncClient: the timing client sends the token and the version,
// reads whole answers on one connection, and dials again when the server
// closes it.
func TestSyncClient(t *testing.T) {
	var conns, requests atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("X-Auth-Token") != "tok" || r.Header.Get("OpenStack-API-Version") != "placement 1.32" || r.URL.Path != "/placement/x" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if r.URL.Query().Get("close") != "" {
			w.Header().Set("Connection", "close")
		}
		w.Write(bytes.Repeat([]byte("a"), 100_000))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := newSyncClient(srv.URL+"/placement", "X-Auth-Token", "tok")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	for _, path := range []string{"/x", "/x", "/x?close=1", "/x", "/x"} {
		took, status, err := c.timeGet(path)
		if err != nil || status != http.StatusOK || took <= 0 {
			t.Fatalf("%s: %v %d %v", path, took, status, err)
		}
	}
	if requests.Load() != 5 || conns.Load() != 2 {
		t.Errorf("%d requests on %d connections, want 5 on 2", requests.Load(), conns.Load())
	}
}
