package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"corral/models"
	"corral/web/webtest"
)

// TestDisconnectedClientIsNotAServerError: a request whose client went
// away (its context canceled) is logged as 499 at Info, not as a 500.
func TestDisconnectedClientIsNotAServerError(t *testing.T) {
	var buf lockedBuffer
	a := webtest.StartWith(t, webtest.Options{Tokens: true, Log: &buf,
		Users: []webtest.User{{Name: "alice", Role: models.RoleAdmin}}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/placement/resource_providers", nil)
	req.Header.Set("X-Auth-Token", a.Tokens["alice"])
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	a.Echo.ServeHTTP(httptest.NewRecorder(), req)
	got := buf.lines(t)
	if len(got) != 1 {
		t.Fatalf("%d request lines, want 1: %v", len(got), got)
	}
	if line := got[0]; line["status"] != float64(499) || line["level"] != "INFO" || line["err"] != "the client disconnected before the answer" {
		t.Errorf("logged %v, want status 499 at INFO", line)
	}
}
