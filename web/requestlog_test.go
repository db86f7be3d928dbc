package web

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestRequestLevel: successful reads are logged at Debug only; every
// change, refusal and error at Info or above.
func TestRequestLevel(t *testing.T) {
	for _, c := range []struct {
		method, path string
		status       int
		want         slog.Level
	}{
		{http.MethodGet, "/placement/resource_providers", 200, slog.LevelDebug},
		{http.MethodHead, "/", 200, slog.LevelDebug},
		{http.MethodPost, "/api/preview", 200, slog.LevelDebug},
		{http.MethodGet, "/aggregates", 304, slog.LevelDebug},
		{http.MethodPost, "/aggregates", 303, slog.LevelInfo},
		{http.MethodPut, "/placement/resource_providers/x", 200, slog.LevelInfo},
		{http.MethodDelete, "/compute/v2.1/os-aggregates/1", 200, slog.LevelInfo},
		{http.MethodGet, "/placement/resource_providers", 400, slog.LevelInfo},
		{http.MethodPost, "/api/preview", 404, slog.LevelInfo},
		{http.MethodGet, "/placement/resource_providers", 503, slog.LevelError},
		{http.MethodPost, "/login", 500, slog.LevelError},
	} {
		if got := requestLevel(c.method, c.path, c.status); got != c.want {
			t.Errorf("%s %s %d: level %v, want %v", c.method, c.path, c.status, got, c.want)
		}
	}
}

// TestRequestIDs: ids are 32 hex characters, never repeat within a
// process, and differ between processes (generators).
func TestRequestIDs(t *testing.T) {
	a, b := requestIDs(), requestIDs()
	seen := map[string]bool{}
	for range 10000 {
		id := a()
		if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("id %q: want 32 hex characters", id)
		}
		if seen[id] {
			t.Fatalf("id %q repeated", id)
		}
		seen[id] = true
	}
	if id := b(); seen[id] || id[:16] == a()[:16] {
		t.Errorf("two generators share a prefix: %q", id)
	}
}
