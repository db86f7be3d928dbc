package query

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestResponseCacheKeepsRecentAnswersAndSharesComputations(t *testing.T) {
	c := newResponseCache(2, 10)
	var computed atomic.Int32
	answer := func(s string) func() ([]byte, error) {
		return func() ([]byte, error) { computed.Add(1); return []byte(s), nil }
	}
	k := func(s string) [32]byte { return cacheKey([]byte(s)) }

	for _, step := range []struct {
		key, want string
		computes  int32
	}{
		{"a", "a", 1},
		{"a", "a", 1}, // held
		{"b", "b", 2},
		{"c", "c", 3}, // evicts a, the least recent
		{"b", "b", 3},
		{"a", "a", 4},
	} {
		got, err := c.get(k(step.key), answer(step.key))
		if err != nil || string(got) != step.want || computed.Load() != step.computes {
			t.Fatalf("get(%s) = %q, %v after %d computations; want %q after %d", step.key, got, err, computed.Load(), step.want, step.computes)
		}
	}
	// Errors and oversized answers are not kept.
	if _, err := c.get(k("bad"), func() ([]byte, error) { return nil, errors.New("no") }); err == nil {
		t.Fatal("error not returned")
	}
	big := []byte("0123456789abc")
	c.get(k("big"), func() ([]byte, error) { return big, nil })
	n := 0
	c.get(k("big"), func() ([]byte, error) { n++; return big, nil })
	if n != 1 {
		t.Errorf("an answer over the size limit was kept")
	}
	// Concurrent askers of one key share one computation.
	release := make(chan struct{})
	var slow atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.get(k("slow"), func() ([]byte, error) { slow.Add(1); <-release; return []byte("s"), nil })
		}()
	}
	for {
		c.mu.Lock()
		_, started := c.inflight[k("slow")]
		c.mu.Unlock()
		if started {
			break
		}
	}
	close(release)
	wg.Wait()
	if slow.Load() != 1 {
		t.Errorf("%d computations for one key asked concurrently, want 1", slow.Load())
	}
}
