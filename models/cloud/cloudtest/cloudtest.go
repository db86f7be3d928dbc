// Package cloudtest runs the real OpenStack services a connected corral
// talks to — Debian's Placement and nova-api, SQLite and noauth2 — on free
// loopback ports in a temporary directory, for integration tests.
package cloudtest

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

// Token is accepted by both services under noauth2 as the admin.
const Token = "admin:admin"

// Cloud is a running Placement and nova-api pair.
type Cloud struct {
	Dir          string
	PlacementURL string // root, serving the version document
	ComputeURL   string // …/v2.1
	// With Keystone (StartWithKeystone): its URL (…/v3), the bootstrap
	// admin's password, and a token for that admin.
	KeystoneURL   string
	AdminPassword string
	AdminToken    string
	pids          []int
}

// Missing says why the services cannot run here ("" when they can).
func Missing() string {
	if _, err := os.Stat("/usr/bin/placement-api"); err != nil {
		return "Debian's python3-placement is not installed (/usr/bin/placement-api)"
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import nova.cmd.api").Run(); err != nil {
		return "Debian's python3-nova is not installed"
	}
	return ""
}

// SkipOrFail skips a test when the services cannot run here, and fails it
// under CI, where .ci/run installs them.
func SkipOrFail(t testing.TB) {
	t.Helper()
	if why := Missing(); why != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: %s", why)
		}
		t.Skip(why)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "cloud.sh")
}

// Start configures and starts both services under dir.
func Start(dir string) (*Cloud, error) {
	return StartServed(dir, 1)
}

// StartServed is Start with Placement served by uWSGI with the given
// number of worker processes (1: Debian's single-process placement-api).
func StartServed(dir string, placementProcesses int) (*Cloud, error) {
	if placementProcesses > 1 {
		if _, err := os.Stat("/usr/lib/uwsgi/plugins/python3_plugin.so"); err != nil {
			return nil, fmt.Errorf("uWSGI with python3 (Debian's uwsgi-core, uwsgi-plugin-python3) is not installed")
		}
	}
	c, err := start(dir, nil, "PLACEMENT_PROCESSES="+strconv.Itoa(placementProcesses))
	if err != nil {
		return nil, err
	}
	return c, nil
}

// StartWithKeystone starts Keystone too (Debian's python3-keystone, SQLite,
// bootstrapped, compute and placement in its catalog) and has both services
// check tokens with it.
func StartWithKeystone(dir string) (*Cloud, error) {
	if _, err := os.Stat("/usr/bin/keystone-manage"); err != nil {
		return nil, fmt.Errorf("python3-keystone (Debian's) is not installed: no /usr/bin/keystone-manage")
	}
	kp, err := freePort()
	if err != nil {
		return nil, err
	}
	password := newUUID()
	c := &Cloud{Dir: dir, AdminPassword: password, KeystoneURL: fmt.Sprintf("http://127.0.0.1:%d/v3", kp)}
	// Keystone's database takes longest to make: it is set up while nova
	// and Placement start (they ask Keystone only when a token comes).
	type result struct {
		out []byte
		err error
	}
	ksDone := make(chan result, 1)
	go func() {
		cmd := exec.Command("bash", filepath.Join(filepath.Dir(script()), "keystone.sh"), dir, strconv.Itoa(kp))
		cmd.Env = append(os.Environ(), "KEYSTONE_ADMIN_PASSWORD="+password)
		out, kerr := cmd.CombinedOutput() // a goroutine: its own error
		ksDone <- result{out, kerr}
	}()
	_, startErr := start(dir, c)
	ks := <-ksDone
	c.readPids("keystone.pid")
	switch {
	case ks.err != nil:
		c.Stop()
		return nil, fmt.Errorf("starting keystone: %v\n%s", ks.err, ks.out)
	case startErr != nil:
		c.Stop()
		return nil, startErr
	}
	if out, cerr := exec.Command("/usr/bin/python3", filepath.Join(filepath.Dir(script()), "catalog.py"), c.KeystoneURL, c.AdminPassword, c.ComputeURL, c.PlacementURL).CombinedOutput(); cerr != nil {
		c.Stop()
		return nil, fmt.Errorf("keystone catalog: %v\n%s", cerr, out)
	}
	if c.AdminToken, err = c.token(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cloud) readPids(files ...string) {
	for _, f := range files {
		if b, e := os.ReadFile(filepath.Join(c.Dir, f)); e == nil {
			if pid, e := strconv.Atoi(strings.TrimSpace(string(b))); e == nil {
				c.pids = append(c.pids, pid)
			}
		}
	}
}

// token asks Keystone for a project-scoped token of the admin.
func (c *Cloud) token() (string, error) {
	body := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{"user": map[string]any{
			"name": "admin", "domain": map[string]any{"id": "default"}, "password": c.AdminPassword}}},
		"scope": map[string]any{"project": map[string]any{"name": "admin", "domain": map[string]any{"id": "default"}}}}}
	b, _ := json.Marshal(body)
	resp, err := http.Post(c.KeystoneURL+"/auth/tokens", "application/json", bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		msg, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("keystone token: %d %s", resp.StatusCode, msg)
	}
	return resp.Header.Get("X-Subject-Token"), nil
}

func start(dir string, ks *Cloud, env ...string) (*Cloud, error) {
	pp, err := freePort()
	if err != nil {
		return nil, err
	}
	np, err := freePort()
	if err != nil {
		return nil, err
	}
	qp, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("bash", script(), dir, strconv.Itoa(pp), strconv.Itoa(np), strconv.Itoa(qp))
	c := &Cloud{Dir: dir}
	cmd.Env = append(os.Environ(), env...)
	if ks != nil {
		c = ks
		cmd.Env = append(cmd.Env, "KEYSTONE_URL="+c.KeystoneURL, "KEYSTONE_ADMIN_PASSWORD="+c.AdminPassword)
	}
	out, err := cmd.CombinedOutput()
	c.readPids("placement.pid", "nova.pid", "neutron.pid")
	if err != nil {
		if ks == nil {
			c.Stop()
		}
		return c, fmt.Errorf("starting placement and nova-api: %v\n%s", err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "placement "); ok {
			c.PlacementURL = u
		}
		if u, ok := strings.CutPrefix(sc.Text(), "compute "); ok {
			c.ComputeURL = u
		}
	}
	return c, nil
}

// Stop ends both services (each started in its own session: the process
// group takes nova's worker with it).
func (c *Cloud) Stop() {
	for _, pid := range c.pids {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
	}
	for _, pid := range c.pids {
		for i := 0; i < 50 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	c.pids = nil
}

var (
	shared     *Cloud
	sharedErr  error
	sharedOnce sync.Once
	sharedDir  string
)

// Shared starts the services once per test binary (nova-api takes about
// ten seconds); Main stops them. Tests that share them must use names of
// their own.
func Shared(t testing.TB) *Cloud {
	t.Helper()
	SkipOrFail(t)
	sharedOnce.Do(func() {
		sharedDir, sharedErr = os.MkdirTemp("", "corral-cloud-")
		if sharedErr == nil {
			shared, sharedErr = Start(sharedDir)
		}
		if sharedErr == nil {
			// Every test that shares the cloud creates its server groups
			// in the token's project: Nova's default of 10 would end the
			// suite partway.
			sharedErr = shared.Call("compute", "PUT", "os-quota-sets/admin", map[string]any{"quota_set": map[string]any{
				"server_groups": -1, "server_group_members": -1}}, nil, 200)
		}
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// Main runs the tests and then stops the shared services.
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	if sharedDir != "" && code == 0 {
		os.RemoveAll(sharedDir)
	}
	return code
}

// LongAgo is when the compute services AddComputeHost makes were last
// heard from (Nova's time format).
const LongAgo = "2000-01-01 00:00:00"

// AddComputeHost gives nova a compute host: a nova-compute service, a
// compute node whose uuid is the host's root provider's, and the host's
// cell mapping — what add_host and os-hypervisors need.
func (c *Cloud) AddComputeHost(name, providerUUID string) error {
	ver, err := os.ReadFile(filepath.Join(c.Dir, "nova", "service_version"))
	if err != nil {
		return err
	}
	cell, err := sql.Open("sqlite3", filepath.Join(c.Dir, "nova", "nova.db"))
	if err != nil {
		return err
	}
	defer cell.Close()
	now := time.Now().UTC().Format("2006-01-02 15:04:05")
	// No process heartbeats this service: it is written as last heard
	// from long ago, so that Nova holds it down from the start instead of
	// turning it down a minute later, in the middle of some test.
	res, err := cell.Exec(`INSERT INTO services (created_at, updated_at, host, binary, topic, report_count, disabled, deleted, forced_down, version, uuid)
		VALUES (?, ?, ?, 'nova-compute', 'compute', 0, 0, 0, 0, ?, ?)`, LongAgo, LongAgo, name, strings.TrimSpace(string(ver)), newUUID())
	if err != nil {
		return fmt.Errorf("service row: %w", err)
	}
	sid, _ := res.LastInsertId()
	if _, err = cell.Exec(`INSERT INTO compute_nodes (created_at, updated_at, service_id, host, uuid, hypervisor_hostname,
		vcpus, memory_mb, local_gb, vcpus_used, memory_mb_used, local_gb_used, hypervisor_type, hypervisor_version, cpu_info,
		deleted, running_vms, free_ram_mb, free_disk_gb, current_workload, disk_available_least, host_ip, supported_instances, pci_stats, metrics, extra_resources, stats, numa_topology, cpu_allocation_ratio, ram_allocation_ratio, disk_allocation_ratio, mapped)
		VALUES (?, ?, ?, ?, ?, ?, 8, 16384, 100, 0, 0, 0, 'fake', 1, '{}', 0, 0, 16384, 100, 0, 100, '127.0.0.1', '[]', NULL, '[]', NULL, '{}', NULL, 16.0, 1.5, 1.0, 1)`,
		now, now, sid, name, providerUUID, name); err != nil {
		return fmt.Errorf("compute node row: %w", err)
	}
	api, err := sql.Open("sqlite3", filepath.Join(c.Dir, "nova", "nova_api.db"))
	if err != nil {
		return err
	}
	defer api.Close()
	if _, err := api.Exec(`INSERT INTO host_mappings (created_at, cell_id, host) SELECT ?, id, ? FROM cell_mappings WHERE name = 'cell1'`, now, name); err != nil {
		return fmt.Errorf("host mapping row: %w", err)
	}
	return nil
}

func newUUID() string {
	b := make([]byte, 16)
	f, _ := os.Open("/dev/urandom")
	io.ReadFull(f, b)
	f.Close()
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// CallKeystone is Call for Keystone's API (below …/v3).
func (c *Cloud) CallKeystone(method, path string, body, out any, want int, hdr ...string) error {
	return c.Call("identity", method, path, body, out, want, hdr...)
}

// Call makes one API call as the admin: service is "compute" or
// "placement", path is below the endpoint. A body that is not nil is sent
// as JSON; the answer is decoded into out when out is not nil. Any status
// other than want is an error carrying the body. hdr are more headers,
// name and value in turn.
func (c *Cloud) Call(service, method, path string, body, out any, want int, hdr ...string) error {
	base, mv := c.PlacementURL, "placement 1.39"
	switch service {
	case "compute":
		base, mv = c.ComputeURL, "compute 2.93"
	case "identity":
		base, mv = c.KeystoneURL, "identity 3"
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+"/"+strings.TrimPrefix(path, "/"), rd)
	if err != nil {
		return err
	}
	tok := Token
	if c.AdminToken != "" {
		tok = c.AdminToken
	}
	req.Header.Set("X-Auth-Token", tok)
	req.Header.Set("OpenStack-API-Version", mv)
	req.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s %s: %d %s", service, method, path, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// AddServer puts a server on host (a compute host added with
// AddComputeHost) into nova's databases with nova's own objects, and into
// group when it is not empty.
func (c *Cloud) AddServer(uuid, name, project, user, host, flavorID, group string) error {
	args := []string{filepath.Join(filepath.Dir(script()), "add_server.py"), filepath.Join(c.Dir, "nova", "nova.conf"),
		uuid, name, project, user, host, flavorID}
	if group != "" {
		args = append(args, group)
	}
	cmd := exec.Command("/usr/bin/python3", args...)
	cmd.Dir = filepath.Join(c.Dir, "nova")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("add server %s: %v\n%s", name, err, out)
	}
	return nil
}

// PlacementCPU is the processor time Placement's processes (the server
// and, under uWSGI, its workers) have used so far.
func (c *Cloud) PlacementCPU() (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(c.Dir, "placement.pid"))
	if err != nil {
		return 0, err
	}
	root := strings.TrimSpace(string(b))
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var ticks int64
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // not a process, or gone
		}
		// pid (comm) state ppid … utime stime: fields after the command.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 13 || (e.Name() != root && f[1] != root) {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += ut + st
	}
	// Linux reports in USER_HZ, 100 a second on every architecture Go runs.
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
