package store_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"corral/models"
	"corral/models/store"
)

// TestRevisionBeacon: on SQLite the revision is read from the database
// only when a write rang the beacon, and a write by another process — a
// real one — is seen by the very next read.
func TestRevisionBeacon(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corral.db")
	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	r0, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q0 := s.RevisionQueries()
	for range 100 {
		if r, err := s.Revision(ctx); err != nil || r != r0 {
			t.Fatalf("revision %d (%v), want %d", r, err, r0)
		}
	}
	if n := s.RevisionQueries() - q0; n != 0 {
		t.Errorf("100 reads with no write between them queried the database %d times, want 0", n)
	}

	// Another store in this process.
	mustAggregate(t, other, "beacon-a")
	if r, _ := s.Revision(ctx); r != r0+1 {
		t.Errorf("after another store's write: revision %d, want %d", r, r0+1)
	}
	if n := s.RevisionQueries() - q0; n != 1 {
		t.Errorf("one write, %d queries; want 1", n)
	}

	// Another process: this test binary again, writing one aggregate.
	cmd := exec.Command(os.Args[0], "-test.run=^TestBeaconWriterProcess$")
	cmd.Env = append(os.Environ(), "CORRAL_BEACON_WRITER_DB="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writer process: %v\n%s", err, out)
	}
	if r, _ := s.Revision(ctx); r != r0+2 {
		t.Errorf("after another process's write: revision %d, want %d", r, r0+2)
	}
	if _, rev, err := s.Live().Get(ctx); err != nil || rev != r0+2 {
		t.Errorf("live snapshot at %d (%v), want %d", rev, err, r0+2)
	}
}

// TestBeaconWriterProcess is the other process of TestRevisionBeacon.
func TestBeaconWriterProcess(t *testing.T) {
	path := os.Getenv("CORRAL_BEACON_WRITER_DB")
	if path == "" {
		t.Skip("run by TestRevisionBeacon as another process")
	}
	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateAggregate(ctx, admin, &models.Aggregate{Name: "beacon-from-another-process"}); err != nil {
		t.Fatal(err)
	}
}

// TestRevisionRecheck: a change that rang no beacon (a process that died
// between its commit and its ring) is seen once the revision is older
// than the recheck bound.
func TestRevisionRecheck(t *testing.T) {
	defer store.SetRevisionRecheck(50 * time.Millisecond)()
	path := filepath.Join(t.TempDir(), "corral.db")
	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r0, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ExecRaw("UPDATE corral_revision SET revision = revision + 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := s.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r == r0+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a change without a ring was never seen: revision still %d", r)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
