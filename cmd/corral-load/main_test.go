package main

import (
	"bytes"
	"regexp"
	"testing"
)

// The load test on the small cloud: it must start the real application,
// answer every request and report percentiles for both phases.
func TestLoadOnTheSmallCloud(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"-small", "-requests", "40", "-distinct", "16", "-clients", "4"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{
		`working set of 64 requests: 40 requests, 4 clients`,
		`16 distinct requests \(nothing reused\): 16 requests, 4 clients`,
		`p50 [0-9.]+ms  p90 [0-9.]+ms  p99 [0-9.]+ms`,
		`, 0 failed`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestBadFlagsExitTwo(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-clients", "0"}, &out, &errOut); code != 2 {
		t.Errorf("-clients 0: exit %d, want 2", code)
	}
	if code := run([]string{"-nope"}, &out, &errOut); code != 2 {
		t.Errorf("unknown flag: exit %d, want 2", code)
	}
}
