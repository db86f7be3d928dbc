package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"corral/models"
	"corral/models/store"
)

// prepareCorral stores w in a new SQLite database and returns an admin's
// API token, and the world as corral reads it back: providers in corral's
// order (by name), which Placement's ids then follow, since Placement lists
// in id order.
func prepareCorral(ctx context.Context, path string, w *models.World) (string, *models.World, error) {
	s, err := store.Open(ctx, path)
	if err != nil {
		return "", nil, err
	}
	defer s.Close()
	actor := store.Actor{Name: "corral-bench", Via: "cli", Role: models.RoleAdmin}
	if err = s.ImportWorld(ctx, actor, w, true); err != nil {
		return "", nil, err
	}
	if _, err = s.CreateUser(ctx, actor, "bench", "bench-password-1234", models.RoleAdmin, ""); err != nil {
		return "", nil, err
	}
	token, _, err := s.CreateToken(ctx, actor, "bench", "corral-bench")
	if err != nil {
		return "", nil, err
	}
	stored, _, err := s.LoadWorld(ctx)
	return token, stored, err
}

// corralServer is a running `corral serve`.
type corralServer struct {
	url         string
	cmd         *exec.Cmd
	firstAnswer time.Duration
}

func (c *corralServer) pid() int { return c.cmd.Process.Pid }

func (c *corralServer) stop() {
	if c.cmd.Process != nil {
		c.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.cmd.Process.Kill()
			<-done
		}
	}
}

// startCorral starts `corral serve` on a free port and times the first
// answer to path from the moment the process starts.
func startCorral(ctx context.Context, bin, db, logPath, token, path, pprofAddr string) (*corralServer, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--db", db}
	if pprofAddr != "" {
		args = append(args, "--pprof-addr", pprofAddr)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	cs := &corralServer{cmd: cmd}
	lines := bufio.NewScanner(stdout)
	const prefix = "corral is serving "
	for lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), prefix); ok {
			cs.url = strings.TrimRight(u, "/")
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	if cs.url == "" {
		cs.stop()
		return nil, fmt.Errorf("corral serve did not say where it serves; see %s", logPath)
	}
	c := newClient(cs.url+"/placement", "X-Auth-Token", token, 1)
	for time.Since(start) < 2*time.Minute {
		res, err := c.get(path)
		if err == nil && res.status == http.StatusOK {
			cs.firstAnswer = time.Since(start)
			return cs, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	cs.stop()
	return nil, fmt.Errorf("corral serve did not answer %s within 2 minutes; see %s", path, logPath)
}

// profile saves a CPU profile of the server taken over d.
func profile(pprofAddr, file string, d time.Duration) error {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, max(1, int(d.Seconds()))))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}
