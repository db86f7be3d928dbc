// Package novatest runs a small real Nova cloud with Nova's own scheduler —
// Debian's Nova "Zed" (api, conductor, scheduler, one nova-compute per host
// with Zed's fake virt drivers), RabbitMQ and Placement — on free loopback
// ports in a temporary directory, for tests that boot servers for real and
// read what the scheduler decided (testdata/novacloud.sh).
package novatest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Fake virt drivers of Zed, by size (nova/virt/fake.py).
const (
	DriverHuge   = "FakeDriver"       // 1000 VCPU, 800000 MB, 600000 GB
	DriverMedium = "MediumFakeDriver" // 10 VCPU, 8192 MB, 1028 GB
	DriverSmall  = "SmallFakeDriver"  // 2 VCPU, 8192 MB, 1028 GB
	// DriverNested is MediumFakeDriver with a child provider holding 10
	// CUSTOM_MAGIC: a real provider tree.
	DriverNested = "MediumFakeDriverWithNestedCustomResources"
)

// Host is one nova-compute process: its host name and fake driver.
type Host struct {
	Name   string
	Driver string
}

// Image is one image the Glance stand-in serves: its id, name and the
// properties Nova reads.
type Image struct {
	ID         string
	Name       string
	Properties map[string]string
}

// Cloud is a running Nova cloud.
type Cloud struct {
	Dir          string
	PlacementURL string // root
	ComputeURL   string // …/v2.1
	pids         map[string]int
}

// Missing says why the cloud cannot run here ("" when it can).
func Missing() string {
	for _, f := range []struct{ path, pkg string }{
		{"/usr/bin/placement-api", "python3-placement"},
		{"/usr/lib/rabbitmq/bin/rabbitmq-server", "rabbitmq-server"},
		{"/usr/bin/epmd", "erlang-base (rabbitmq-server's)"},
	} {
		if _, err := os.Stat(f.path); err != nil {
			return fmt.Sprintf("Debian's %s is not installed (%s)", f.pkg, f.path)
		}
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import nova.cmd.scheduler, nova.cmd.compute, oslo_messaging").Run(); err != nil {
		return "Debian's python3-nova or python3-oslo.messaging is not installed"
	}
	return ""
}

// SkipOrFail skips a test when the cloud cannot run here, and fails it
// under CI, where .ci/run installs the packages.
func SkipOrFail(t testing.TB) {
	t.Helper()
	if why := Missing(); why != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: %s", why)
		}
		t.Skip(why)
	}
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "novacloud.sh")
}

// Start configures and starts the cloud under dir with the given computes
// and images; schedulerConf holds the scheduler's [scheduler] and
// [filter_scheduler] options (RestartScheduler changes them).
func Start(dir string, hosts []Host, images []Image, schedulerConf string) (*Cloud, error) {
	if err := writeImages(filepath.Join(dir, "images.json"), images); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "scheduler.conf"), []byte(schedulerConf), 0o600); err != nil {
		return nil, err
	}
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	var spec []string
	for _, h := range hosts {
		spec = append(spec, h.Name+":"+h.Driver)
	}
	cmd := exec.Command("bash", script(), "up", dir, strings.Join(spec, ","))
	cmd.Env = append(os.Environ(), "EPMD_PORT="+strconv.Itoa(ports[0]), "AMQP_PORT="+strconv.Itoa(ports[1]),
		"DIST_PORT="+strconv.Itoa(ports[2]), "PLACEMENT_PORT="+strconv.Itoa(ports[3]), "NOVA_PORT="+strconv.Itoa(ports[4]),
		"STUB_PORT="+strconv.Itoa(ports[5]), "OWNER_PID="+strconv.Itoa(os.Getpid()))
	out, err := cmd.CombinedOutput()
	c := &Cloud{Dir: dir}
	c.readPids()
	if err != nil {
		c.Stop()
		return nil, fmt.Errorf("starting the nova cloud: %v\n%s", err, out)
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

func writeImages(path string, images []Image) error {
	var docs []map[string]any
	for _, im := range images {
		d := map[string]any{"id": im.ID, "name": im.Name, "status": "active", "visibility": "public",
			"protected": false, "os_hidden": false, "size": 1024, "virtual_size": nil, "min_ram": 0, "min_disk": 0,
			"disk_format": "raw", "container_format": "bare", "checksum": nil, "owner": "admin",
			"created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z", "tags": []string{}}
		for k, v := range im.Properties {
			d[k] = v
		}
		docs = append(docs, d)
	}
	b, err := json.Marshal(docs)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// readPids reads every process's pid from Dir/pids.
func (c *Cloud) readPids() {
	c.pids = map[string]int{}
	entries, _ := os.ReadDir(filepath.Join(c.Dir, "pids"))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(c.Dir, "pids", e.Name()))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			c.pids[strings.TrimSuffix(e.Name(), ".pid")] = pid
		}
	}
}

// stop ends one process group (each service is its own session) and
// waits for its leader.
func stop(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	for i := 0; i < 50 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// RestartScheduler stops nova-scheduler and starts it again with conf as
// its options, returning once it has read the cloud's instances.
func (c *Cloud) RestartScheduler(conf string) error {
	if pid, ok := c.pids["scheduler"]; ok {
		stop(pid)
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "scheduler.conf"), []byte(conf), 0o600); err != nil {
		return err
	}
	out, err := exec.Command("bash", script(), "scheduler", c.Dir).CombinedOutput()
	c.readPids()
	if err != nil {
		return fmt.Errorf("restarting nova-scheduler: %v\n%s", err, out)
	}
	return nil
}

// Stop ends every process of the cloud, the services before RabbitMQ and
// epmd.
func (c *Cloud) Stop() {
	last := []string{"rabbit", "epmd"}
	for name, pid := range c.pids {
		if name != last[0] && name != last[1] {
			_ = syscall.Kill(-pid, syscall.SIGTERM)
		}
	}
	for name, pid := range c.pids {
		if name != last[0] && name != last[1] {
			stop(pid)
		}
	}
	for _, name := range last {
		if pid, ok := c.pids[name]; ok {
			stop(pid)
		}
	}
	c.pids = nil
	if b, err := os.ReadFile(filepath.Join(c.Dir, "watchdog.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			stop(pid)
		}
	}
}

// Compute makes one compute API call as project's admin (noauth2's
// "admin:project" token; "" is the admin project) and returns the
// request id. A 500 from SQLite's "database is locked" is retried.
func (c *Cloud) Compute(method, path, project string, body, out any, want int) (string, error) {
	if project == "" {
		project = "admin"
	}
	var (
		id  string
		err error
	)
	for try := 0; try < 5; try++ {
		var status int
		id, status, err = c.call(c.ComputeURL, "compute 2.93", "admin:"+project, method, path, body, out, want)
		if status != http.StatusInternalServerError || !strings.Contains(err.Error(), "OperationalError") {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	return id, err
}

// Placement makes one Placement call as the admin; any status of want is
// a success.
func (c *Cloud) Placement(method, path string, body, out any, want ...int) error {
	_, _, err := c.call(c.PlacementURL, "placement 1.39", "admin", method, path, body, out, want...)
	return err
}

func (c *Cloud) call(base, version, token, method, path string, body, out any, want ...int) (string, int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return "", 0, err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+"/"+strings.TrimPrefix(path, "/"), rd)
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("OpenStack-API-Version", version)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	id := resp.Header.Get("X-Openstack-Request-Id")
	if !slices.Contains(want, resp.StatusCode) {
		return id, resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil && len(b) > 0 {
		return id, resp.StatusCode, json.Unmarshal(b, out)
	}
	return id, resp.StatusCode, nil
}
