package cloud_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
)

// openConns is a keep-alive proxy in front of a real service that counts
// the client connections it holds open.
type openConns struct {
	mu   sync.Mutex
	open map[net.Conn]bool
}

func (o *openConns) proxy(t *testing.T, service string) string {
	t.Helper()
	u, err := url.Parse(service)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		o.mu.Lock()
		defer o.mu.Unlock()
		switch s {
		case http.StateNew:
			o.open[c] = true
		case http.StateClosed, http.StateHijacked:
			delete(o.open, c)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + u.Path
}

func (o *openConns) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.open)
}

// TestCloseLetsGoOfConnections: a closed client holds no connection to
// either service, after a read that went through and after one that nova
// refused while Placement was being read (the read is cancelled midway).
// Placement's development server serves one connection at a time: one left
// open stalls every later client until the transport's idle timeout.
func TestCloseLetsGoOfConnections(t *testing.T) {
	c := cloudtest.Shared(t)
	conns := &openConns{open: map[net.Conn]bool{}}
	compute, placement := conns.proxy(t, c.ComputeURL), conns.proxy(t, c.PlacementURL)
	for _, tc := range []struct {
		token   string
		refused bool
	}{{cloudtest.Token, false}, {"reader:p9", true}} {
		cl, err := cloud.Connect(context.Background(), cloud.Options{ComputeURL: compute, PlacementURL: placement, Token: tc.token})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.Read(context.Background(), cloud.ReadOptions{})
		if (err != nil) != tc.refused {
			t.Fatalf("token %s: read error %v", tc.token, err)
		}
		if conns.count() == 0 {
			t.Fatalf("token %s: no connection kept alive before Close: the test shows nothing", tc.token)
		}
		cl.Close()
		deadline := time.Now().Add(5 * time.Second)
		for conns.count() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := conns.count(); n > 0 {
			t.Errorf("token %s: %d connection(s) still open after Close", tc.token, n)
		}
	}
}
