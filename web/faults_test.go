package web_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	osuser "os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corral/models"
	"corral/models/store"
	"corral/web/webtest"
)

// pgCluster is a throwaway PostgreSQL server of the test's own, on a free
// port in a temporary directory (as .ci/postgres.sh starts one), so that
// the test can stop and start it without disturbing anyone else's.
type pgCluster struct {
	t          *testing.T
	bin, dir   string
	port       int
	asPostgres bool
}

func startPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("initdb not found: install postgresql")
		}
		t.Skip("initdb not found: install postgresql")
	}
	sort.Strings(bins)
	c := &pgCluster{t: t, bin: filepath.Dir(bins[len(bins)-1]), asPostgres: os.Getuid() == 0}
	dir, err := os.MkdirTemp("", "corral-pgfault-")
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	t.Cleanup(func() {
		c.run("pg_ctl", "-D", filepath.Join(dir, "data"), "-m", "immediate", "stop")
		os.RemoveAll(dir)
	})
	if c.asPostgres {
		// initdb refuses to run as root: the cluster belongs to postgres.
		u, err := osuser.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root without a postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if out, err := c.run("initdb", "-D", filepath.Join(dir, "data"), "-U", "corral", "--auth=trust", "-E", "UTF8"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	c.start()
	if out, err := c.run("createdb", "-h", "127.0.0.1", "-p", strconv.Itoa(c.port), "-U", "corral", "corral"); err != nil {
		t.Fatalf("createdb: %v\n%s", err, out)
	}
	return c
}

func (c *pgCluster) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	if c.asPostgres {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(c.bin, name)}, args...)...)
	}
	return cmd.CombinedOutput()
}

func (c *pgCluster) start() {
	c.t.Helper()
	opts := fmt.Sprintf("-h 127.0.0.1 -p %d -k %s -c fsync=off", c.port, c.dir)
	if out, err := c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-l", filepath.Join(c.dir, "server.log"), "-w", "-o", opts, "start"); err != nil {
		c.t.Fatalf("pg_ctl start: %v\n%s", err, out)
	}
}

func (c *pgCluster) stop() {
	c.t.Helper()
	if out, err := c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "fast", "-w", "stop"); err != nil {
		c.t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

func (c *pgCluster) dsn() string {
	return fmt.Sprintf("postgres://corral@127.0.0.1:%d/corral?sslmode=disable", c.port)
}

// TestPostgresRestartUnderLoad: while clients use the compute API, the
// Placement API and the console, PostgreSQL stops and starts again. Every
// request that fails meanwhile is a 503 that says the database is
// unavailable (never a 500), and corral serves again once the database is
// back, without a restart.
func TestPostgresRestartUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	pg := startPGCluster(t)
	st, err := store.Open(context.Background(), pg.dsn())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a := webtest.StartWith(t, webtest.Options{Store: st, Demo: true, Tokens: true, Users: []webtest.User{{Name: "alice", Role: models.RoleAdmin}}})
	token := a.Tokens["alice"]
	paths := []string{"/compute/v2.1/os-aggregates", "/placement/resource_providers", "/aggregates", "/api/whoami"}
	get := func(path string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, a.URL+path, nil)
		req.Header.Set("X-Auth-Token", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, p := range paths {
		if s, body := get(p); s != http.StatusOK {
			t.Fatalf("before the restart: GET %s: %d %s", p, s, body)
		}
	}

	var stop atomic.Bool
	var mu sync.Mutex
	statuses := map[int]int{}
	var bad []string
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for n := 0; !stop.Load(); n++ {
				p := paths[(i+n)%len(paths)]
				s, body := get(p)
				mu.Lock()
				statuses[s]++
				if s != http.StatusOK && (s != http.StatusServiceUnavailable || !strings.Contains(strings.ToLower(body), "unavailable")) && len(bad) < 10 {
					bad = append(bad, fmt.Sprintf("GET %s: %d %.200s", p, s, body))
				}
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	pg.stop()
	// Requests that need the database fail while it is down.
	down := 0
	for _, p := range paths {
		if s, body := get(p); s == http.StatusServiceUnavailable {
			down++
		} else if s != http.StatusOK {
			t.Errorf("while the database is down: GET %s: %d %.200s", p, s, body)
		}
	}
	if down == 0 {
		t.Error("no request failed while the database was down: the test did not exercise the outage")
	}
	pg.start()
	// corral recovers on its own: broken pooled connections are replaced.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok := 0
		for _, p := range paths {
			if s, _ := get(p); s == http.StatusOK {
				ok++
			}
		}
		if ok == len(paths) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("corral did not recover within 30 s of the database coming back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("statuses under load across the restart: %v", statuses)
	for _, b := range bad {
		t.Errorf("a request failed otherwise than with a clear 503: %s", b)
	}
	for _, p := range paths {
		if s, body := get(p); s != http.StatusOK {
			t.Errorf("after recovery: GET %s: %d %s", p, s, body)
		}
	}
}
