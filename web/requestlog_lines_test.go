package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"corral/models"
	"corral/web/webtest"
)

// requestLines are the request log's lines in l.
func (l *lockedBuffer) lines(t *testing.T) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == "request" {
			out = append(out, m)
		}
	}
	return out
}

// TestRequestLogLines: at Info a successful read leaves no line; a change
// and a refusal leave one each, with the status sent, the user and the
// request id the response carried.
func TestRequestLogLines(t *testing.T) {
	var buf lockedBuffer
	a := webtest.StartWith(t, webtest.Options{Tokens: true, Log: &buf,
		Users: []webtest.User{{Name: "alice", Role: models.RoleAdmin}}})
	c := a.TokenClient(t, "alice")
	pl := []string{"OpenStack-API-Version", "placement 1.39"}

	if r := c.Get("/placement/resource_providers", pl...); r.StatusCode != http.StatusOK {
		t.Fatalf("list: %d %s", r.StatusCode, r.Body)
	}
	if got := buf.lines(t); len(got) != 0 {
		t.Fatalf("a successful read was logged at Info: %v", got)
	}
	created := c.JSON(http.MethodPost, "/placement/resource_providers", map[string]any{"name": "logged"}, pl...)
	refused := c.JSON(http.MethodPost, "/placement/resource_providers", map[string]any{"nome": "x"}, pl...)
	if created.StatusCode != http.StatusOK || refused.StatusCode != http.StatusBadRequest {
		t.Fatalf("create %d, refused create %d", created.StatusCode, refused.StatusCode)
	}
	// A console refusal: a sign-in with a wrong password.
	signin := a.Client(t).Login("alice", "not her password")
	got := buf.lines(t)
	if len(got) != 3 {
		t.Fatalf("%d request lines, want 3: %v", len(got), got)
	}
	for i, r := range []*webtest.Response{created, refused} {
		line := got[i]
		// Placement's own id, as Placement sends it; no X-Request-Id.
		want := map[string]any{"level": "INFO", "method": "POST", "path": "/placement/resource_providers",
			"status": float64(r.StatusCode), "user": "alice", "request_id": r.Header.Get("X-Openstack-Request-Id")}
		for k, v := range want {
			if line[k] != v {
				t.Errorf("line %d: %s = %v, want %v (%v)", i, k, line[k], v, line)
			}
		}
		if id, _ := line["request_id"].(string); !strings.HasPrefix(id, "req-") || len(id) != 40 || r.Header.Get("X-Request-Id") != "" {
			t.Errorf("line %d: request id %q, X-Request-Id %q", i, id, r.Header.Get("X-Request-Id"))
		}
	}
	if line := got[2]; line["path"] != "/login" || line["status"] != float64(signin.StatusCode) ||
		line["request_id"] != signin.Header.Get("X-Request-Id") || len(signin.Header.Get("X-Request-Id")) != 32 {
		t.Errorf("sign-in line %v; response status %d, X-Request-Id %q", line, signin.StatusCode, signin.Header.Get("X-Request-Id"))
	}
}
