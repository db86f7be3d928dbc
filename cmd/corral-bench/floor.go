package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// floorServerEnv names the file whose bytes this program, started again
// with it set, serves on every path: the floor of the latency table.
const floorServerEnv = "CORRAL_BENCH_FLOOR_BODY"

// serveFloor answers every request with the bytes of file as JSON, on a
// free loopback port it prints, until killed.
func serveFloor(file string, stdout io.Writer) int {
	body, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "serving http://%s\n", ln.Addr())
	err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// floorServer is this program serving one answer's bytes.
type floorServer struct {
	url string
	cmd *exec.Cmd
}

func (f *floorServer) stop() {
	f.cmd.Process.Kill()
	f.cmd.Wait()
}

// startFloorServer starts this program again as a server of body.
func startFloorServer(ctx context.Context, dir string, body []byte) (*floorServer, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "floor-answer.json")
	if err = os.WriteFile(file, body, 0o600); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), floorServerEnv+"="+file)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	f := &floorServer{cmd: cmd}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-line:
		if u, ok := strings.CutPrefix(l, "serving "); ok {
			f.url = u
			return f, nil
		}
	case <-time.After(10 * time.Second):
	}
	f.stop()
	return nil, fmt.Errorf("the floor server did not start")
}
