package main

import (
	"os/exec"
	"strings"
	"testing"
)

// deadcodeExceptions are functions no program reaches that stay on
// purpose, each with its reason, keyed by directory and name as deadcode
// reports them ("models/x/f.go:12:6: unreachable func: T.Name" is
// "models/x.T.Name").
var deadcodeExceptions = map[string]string{
	"handlers.DeclaredBodyLimits": "the route-table test of web lists every declared body limit through it; the table is the kernel's",
}

// TestNoDeadCode runs the pinned deadcode (go.mod's tool block) over every
// program: a function only tests reach belongs in a _test.go file (an
// export_test.go for a helper), or goes; an exception is named above with
// its reason.
func TestNoDeadCode(t *testing.T) {
	if testing.Short() {
		t.Skip("deadcode builds every program: not in -short")
	}
	cmd := exec.Command("go", "tool", "deadcode", "./cmd/...")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool deadcode ./cmd/...: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		file, name, ok := strings.Cut(line, ": unreachable func: ")
		if !ok {
			t.Errorf("deadcode said %q", line)
			continue
		}
		dir := file[:max(strings.LastIndexByte(file, '/'), 0)]
		if _, ok := deadcodeExceptions[dir+"."+name]; ok {
			continue
		}
		t.Errorf("%s: %s is reached by no program: remove it, use it, move it to a _test.go file, or name it in deadcodeExceptions with the reason", file, name)
	}
}
