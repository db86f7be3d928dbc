package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"corral/models/store"
)

// TestKeysRotate: `corral keys rotate` puts a new pair first and keeps the
// previous one, so sessions signed before stay valid; it is audited.
func TestKeysRotate(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	keys := func() [][]byte {
		t.Helper()
		st, err := store.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		k, err := st.SessionKeys(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	before := keys()
	code, out, stderr := runCLI(t, "", "keys", "rotate", "--db", db)
	if code != 0 || !strings.Contains(out, "rotated") {
		t.Fatalf("keys rotate: exit %d, out %q, stderr %q", code, out, stderr)
	}
	after := keys()
	if len(before) < 2 || len(after) < 4 {
		t.Fatalf("key pairs: %d before, %d after; want a pair at least before and two after", len(before)/2, len(after)/2)
	}
	if bytes.Equal(after[0], before[0]) || !bytes.Equal(after[2], before[0]) || !bytes.Equal(after[3], before[1]) {
		t.Error("after a rotation the new pair is not first with the previous pair after it")
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	events, _, err := st.ListAudit(context.Background(), store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range events {
		found = found || e.Action == "rotate" && e.ObjectType == "session_keys"
	}
	if !found {
		t.Error("the rotation is not in the audit log")
	}
	for _, args := range [][]string{{"keys"}, {"keys", "spin", "--db", db}, {"keys", "rotate", "--db", db, "extra"}} {
		if code, _, _ := runCLI(t, "", args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
