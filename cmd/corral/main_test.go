package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"corral/models/store"
)

// runCLI runs the command in-process and returns its exit status and output.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestBadUsage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	cases := [][]string{
		{},
		{"frobnicate"},
		{"serve", "--addr", "nonsense", "--db", db},
		{"serve", "--no-such-flag"},
		{"user"},
		{"user", "create", "--db", db, "--role", "admin"},
		{"user", "create", "--db", db, "--name", "x", "--role", "boss"},
		{"token", "create", "--db", db},
		{"import", "--db", db},
		{"export", "--db", db, "extra"},
	}
	for _, args := range cases {
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		if n := strings.Count(stderr, "\n"); n != 1 {
			t.Errorf("%q: %d lines on stderr, want 1: %q", args, n, stderr)
		}
	}
}

func TestUserTokenExportImport(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	if code, _, stderr := runCLI(t, "", "user", "create", "--db", db, "--name", "ops", "--role", "member", "--project", "tA"); code != 2 || !strings.Contains(stderr, "password") {
		t.Errorf("no password on stdin: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "hunter2hunter2\n", "user", "create", "--db", db, "--name", "ops", "--role", "member", "--project", "tA"); code != 0 {
		t.Fatalf("user create: exit %d: %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "hunter2hunter2\n", "user", "create", "--db", db, "--name", "ops", "--role", "member"); code != 1 {
		t.Errorf("duplicate user: exit %d, want 1", code)
	}
	code, out, stderr := runCLI(t, "", "token", "create", "--db", db, "--user", "ops")
	if code != 0 {
		t.Fatalf("token create: exit %d: %s", code, stderr)
	}
	plain := strings.TrimSpace(out)
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	u, _, err := st.UserByToken(context.Background(), plain)
	if err != nil || u.Name != "ops" || u.ProjectID != "tA" {
		t.Errorf("printed token %q: user %+v, %v", plain, u, err)
	}
	if _, err := st.Authenticate(context.Background(), "ops", "hunter2hunter2"); err != nil {
		t.Errorf("password from stdin does not sign in: %v", err)
	}
	if _, err := st.LoadDemo(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, world, stderr := runCLI(t, "", "export", "--db", db)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	var doc struct {
		Format     string            `json:"format"`
		Aggregates []json.RawMessage `json:"aggregates"`
	}
	if err := json.Unmarshal([]byte(world), &doc); err != nil || doc.Format != "corral.world/v1" || len(doc.Aggregates) == 0 {
		t.Fatalf("export wrote %d aggregates, format %q, err %v", len(doc.Aggregates), doc.Format, err)
	}
	file := filepath.Join(dir, "world.json")
	if err := os.WriteFile(file, []byte(world), 0o644); err != nil {
		t.Fatal(err)
	}
	db2 := filepath.Join(dir, "c2.db")
	// Flags after the file work too.
	if code, _, stderr := runCLI(t, "", "import", file, "--db", db2, "--replace"); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	code, world2, _ := runCLI(t, "", "export", "--db", db2)
	var doc2 struct {
		Aggregates []json.RawMessage `json:"aggregates"`
	}
	if code != 0 || json.Unmarshal([]byte(world2), &doc2) != nil || len(doc2.Aggregates) != len(doc.Aggregates) {
		t.Errorf("round trip: %d aggregates, want %d", len(doc2.Aggregates), len(doc.Aggregates))
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format": "corral.world/v1", "bogus": 1}`), 0o644)
	if code, _, stderr := runCLI(t, "", "import", "--db", db2, bad); code != 2 || strings.Count(stderr, "\n") != 1 {
		t.Errorf("bad world: exit %d, stderr %q; want 2 and one line", code, stderr)
	}
}

// TestMakeRun is the `make run` contract: the built binary serves the demo
// on a free port, prints the URL and a one-time admin password, and that
// password signs in. A second start prints how to sign in instead.
func TestMakeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "corral")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "demo.db")

	base, lines, stop := startServe(t, bin, db)
	password := ""
	for _, l := range lines {
		if p, ok := strings.CutPrefix(l, passwordPrefix); ok {
			password = p
		}
	}
	if password == "" {
		t.Fatalf("no admin password printed:\n%s", strings.Join(lines, "\n"))
	}
	signIn(t, base, "admin", password)
	if code := stop(); code != 0 {
		t.Errorf("after SIGTERM: exit %d, want 0", code)
	}

	_, lines, stop = startServe(t, bin, db)
	all := strings.Join(lines, "\n")
	if strings.Contains(all, passwordPrefix) {
		t.Errorf("second start printed a new password:\n%s", all)
	}
	if !strings.Contains(all, "corral user create") {
		t.Errorf("second start does not say how to add a user:\n%s", all)
	}
	stop()
}

// startServe runs `corral serve --demo` on a free port and returns its URL,
// the lines it printed, and a func that stops it with SIGTERM and returns
// the exit status.
func startServe(t *testing.T, bin, db string) (string, []string, func() int) {
	t.Helper()
	return startServeCmd(t, exec.Command(bin, "serve", "--demo", "--addr", "127.0.0.1:0", "--db", db))
}

// startServeCmd is startServe for a command the caller prepared (its
// environment, its flags).
func startServeCmd(t *testing.T, cmd *exec.Cmd) (string, []string, func() int) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	stop := func() int {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case code := <-done:
			return code
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Errorf("serve did not stop within 30s of SIGTERM")
			return -1
		}
	}
	// The URL line comes first and the sign-in lines right after; read until
	// the output pauses on a line about signing in.
	linec := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			linec <- sc.Text()
		}
		close(linec)
		io.Copy(io.Discard, stdout)
		cmd.Wait()
		done <- cmd.ProcessState.ExitCode()
	}()
	var lines []string
	base := ""
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-linec:
			if !ok {
				t.Fatalf("serve exited early:\n%s\nstderr:\n%s", strings.Join(lines, "\n"), stderr.String())
			}
			lines = append(lines, l)
			if u, ok := strings.CutPrefix(l, servingPrefix); ok {
				base = strings.TrimSuffix(u, "/")
			}
			if base != "" && (strings.HasPrefix(l, passwordPrefix) || strings.Contains(l, "corral user")) {
				go func() {
					for range linec {
					}
				}()
				t.Cleanup(func() { cmd.Process.Kill() })
				return base, lines, stop
			}
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("serve printed no URL and sign-in note within 60s:\n%s\nstderr:\n%s", strings.Join(lines, "\n"), stderr.String())
		}
	}
}

// signIn loads the login page, posts the form and checks the dashboard.
func signIn(t *testing.T, base, name, password string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := c.Get(base + "/login")
	if err != nil {
		t.Fatalf("GET /login: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /login: status %d, %v", resp.StatusCode, err)
	}
	csrf, _ := doc.Find(`input[name="_csrf"]`).Attr("value")
	resp, err = c.PostForm(base+"/login", url.Values{"name": {name}, "password": {password}, "_csrf": {csrf}})
	if err != nil {
		t.Fatalf("POST /login: %v", err)
	}
	doc, err = goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("after sign-in: status %d, %v", resp.StatusCode, err)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid="current-user"]`).Text()); got != name {
		t.Fatalf("after sign-in the page shows user %q, want %q", got, name)
	}
	if doc.Find(`[data-testid="page-dashboard"]`).Length() == 0 {
		t.Errorf("after sign-in the dashboard is not shown")
	}
}

// When `make run` cannot bind its port, no admin is made whose one-time
// password nobody saw: the next start makes it and prints the password.
func TestServeOnABusyPortMakesNoAdmin(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	db := filepath.Join(t.TempDir(), "demo.db")
	var out, errOut strings.Builder
	if code := run([]string{"serve", "--demo", "--addr", busy.Addr().String(), "--db", db}, strings.NewReader(""), &out, &errOut); code == 0 {
		t.Fatalf("serve on a busy port exited 0:\n%s", out.String())
	}
	if strings.Contains(out.String(), passwordPrefix) {
		t.Errorf("a password was printed although the server never started:\n%s", out.String())
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := st.CountUsers(context.Background()); err != nil || n != 0 {
		t.Errorf("users after the failed start: %d, %v; want none", n, err)
	}
}
