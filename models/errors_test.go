package models

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestErrorShowsPeopleNoOp(t *testing.T) {
	cause := errors.New("UNIQUE constraint failed: users.name")
	for _, tc := range []struct {
		err          *Error
		shown, trace string
	}{
		{&Error{Op: "store.CreateUser", Kind: Conflict, Field: "name", Msg: "already exists", Err: cause},
			"name: already exists", "store.CreateUser: name: already exists: UNIQUE constraint failed: users.name"},
		{&Error{Op: "store.LoadWorld", Kind: Internal, Err: cause},
			"UNIQUE constraint failed: users.name", "store.LoadWorld: UNIQUE constraint failed: users.name"},
		{E(Invalid, "vcpus", "must be at least %d", 1), "vcpus: must be at least 1", "vcpus: must be at least 1"},
		{&Error{Op: "x.Y", Kind: NotFound}, "not found", "x.Y: not found"},
		{&Error{Op: "outer", Err: &Error{Op: "inner", Field: "f", Msg: "m"}}, "f: m", "outer: inner: f: m"},
	} {
		if got := tc.err.Error(); got != tc.shown {
			t.Errorf("Error() = %q, want %q", got, tc.shown)
		}
		if got := tc.err.Detail(); got != tc.trace {
			t.Errorf("Detail() = %q, want %q", got, tc.trace)
		}
		if got := Detail(tc.err); got != tc.trace {
			t.Errorf("Detail(err) = %q, want %q", got, tc.trace)
		}
	}
}

func TestDetailOfWrappedErrors(t *testing.T) {
	ce := Wrap("store.GetAggregate", E(NotFound, "aggregate", "no aggregate %q", "x"))
	if got, want := Detail(fmt.Errorf("loading: %w", ce)), `loading: store.GetAggregate: aggregate: no aggregate "x"`; got != want {
		t.Errorf("Detail = %q, want %q", got, want)
	}
	if got := Detail(errors.New("plain")); got != "plain" {
		t.Errorf("Detail(plain) = %q", got)
	}
	if got := Detail(nil); got != "" {
		t.Errorf("Detail(nil) = %q", got)
	}
}

// A corral error logged as a value shows its operation.
func TestErrorLogValue(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	log.Error("request failed", "err", Wrap("store.ImportWorld", E(Invalid, "providers[0].name", "a provider needs a name")))
	if !strings.Contains(buf.String(), `err="store.ImportWorld: providers[0].name: a provider needs a name"`) {
		t.Errorf("log line %q does not show op: field: message", buf.String())
	}
}
