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
// API token.
func prepareCorral(ctx context.Context, path string, w *models.World) (string, error) {
	s, err := store.Open(ctx, path)
	if err != nil {
		return "", err
	}
	defer s.Close()
	actor := store.Actor{Name: "corral-bench", Via: "cli", Role: models.RoleAdmin}
	if err := s.ImportWorld(ctx, actor, w, true); err != nil {
		return "", err
	}
	if _, err := s.CreateUser(ctx, actor, "bench", "bench-password-1234", models.RoleAdmin, ""); err != nil {
		return "", err
	}
	token, _, err := s.CreateToken(ctx, actor, "bench", "corral-bench")
	return token, err
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
func startCorral(ctx context.Context, bin, db, logPath, token, path string) (*corralServer, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", db)
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
