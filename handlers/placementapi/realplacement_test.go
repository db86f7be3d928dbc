package placementapi_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Debian's python3-placement (Placement 8.0.0) ships these.
const (
	placementAPI    = "/usr/bin/placement-api"
	placementManage = "/usr/bin/placement-manage"
)

// startRealPlacement runs the real Placement on a free loopback port with
// its own SQLite file and noauth2 (token "admin" is an admin), and returns
// its root URL. It skips when the package is missing, except under CI.
func startRealPlacement(t testing.TB) string { return startRealPlacementWith(t, nil) }

// startRealPlacementWith is startRealPlacement with prepare run on the
// synced, empty database file before the server starts (a benchmark loads
// a large world with SQL there).
func startRealPlacementWith(t testing.TB, prepare func(dbPath string)) string {
	t.Helper()
	for _, f := range []string{placementAPI, placementManage} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not found: install python3-placement", f)
			}
			t.Skipf("%s not found; install python3-placement to compare with the real Placement", f)
		}
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "placement.conf")
	body := fmt.Sprintf("[DEFAULT]\ndebug = False\nlog_file = %s\n[api]\nauth_strategy = noauth2\n[placement_database]\nconnection = sqlite:///%s\n",
		filepath.Join(dir, "placement.log"), filepath.Join(dir, "placement.db"))
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8", "OS_PLACEMENT_CONFIG_DIR=" + dir}
	sync := exec.Command(placementManage, "--config-file", conf, "db", "sync")
	sync.Env = env
	if out, err := sync.CombinedOutput(); err != nil {
		t.Fatalf("placement-manage db sync: %v\n%s", err, out)
	}
	if prepare != nil {
		prepare(filepath.Join(dir, "placement.db"))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logf, err := os.Create(filepath.Join(dir, "api.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(placementAPI, "--host", "127.0.0.1", "--port", fmt.Sprint(port))
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start placement-api: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_, _ = cmd.Process.Wait()
		logf.Close()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get(url + "/")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return url
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "api.log"))
			t.Fatalf("placement-api did not answer on %s: %v\n%s", url, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
