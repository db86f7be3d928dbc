package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestAnonymousFloodMemory: eight parallel 50 MB anonymous multipart
// requests to /login, /world/preview, a Placement and a Nova route (half
// with a declared length, half chunked) leave the server's
// peak resident memory under 150 MB and no temporary file behind. Before
// the body limit, the CSRF check parsed each whole body and the server
// grew past 1 GB.
func TestAnonymousFloodMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "corral")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--demo", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "c.db"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	base, _, stop := startServeCmd(t, cmd)
	defer stop()
	before := procStatus(t, cmd.Process.Pid, "VmRSS")

	const size = 50 << 20
	// Each target twice (a declared length, then chunked): the sign-in
	// form, the world upload (the largest route limit) and the two APIs,
	// which ask for a token first.
	targets := [][2]string{
		{http.MethodPost, "/login"},
		{http.MethodPost, "/world/preview"},
		{http.MethodPut, "/placement/resource_providers/00000000-0000-4000-8000-000000000001/traits"},
		{http.MethodPost, "/compute/v2.1/os-aggregates"},
	}
	var wg sync.WaitGroup
	statuses := make([]string, 2*len(targets))
	for i := range statuses {
		wg.Go(func() {
			boundary := "corralflood"
			head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\nContent-Type: application/octet-stream\r\n\r\n"
			tail := "\r\n--" + boundary + "--\r\n"
			body := io.MultiReader(strings.NewReader(head), io.LimitReader(zeros{}, size), strings.NewReader(tail))
			target := targets[i/2]
			req, _ := http.NewRequest(target[0], base+target[1], body)
			req.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
			if i%2 == 0 {
				req.ContentLength = int64(len(head) + size + len(tail))
			} else {
				req.ContentLength = -1 // chunked: no length to refuse up front
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses[i] = "connection closed"
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = strconv.Itoa(resp.StatusCode)
		})
	}
	wg.Wait()
	peak := procStatus(t, cmd.Process.Pid, "VmHWM")
	t.Logf("server RSS before %d MB, peak %d MB; answers %v", before>>20, peak>>20, statuses)
	for _, s := range statuses {
		if s == "200" || s == "303" || strings.HasPrefix(s, "5") {
			t.Errorf("answers %v: a flood request was accepted or failed inside", statuses)
			break
		}
	}
	if peak > 150<<20 {
		t.Errorf("peak RSS %d MB, want under 150 MB", peak>>20)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("%d temporary files left behind, e.g. %s", len(left), left[0].Name())
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// procStatus reads a size field (kB) of /proc/<pid>/status, in bytes.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
