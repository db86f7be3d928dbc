package placementapi

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"corral/models"
	"corral/models/placement"
)

// TestAppendProviderMatchesEncodingJSON: the encoding written once per
// snapshot must be byte for byte what encoding/json makes of the
// serialized provider, at every microversion, names with characters JSON
// escapes included.
func TestAppendProviderMatchesEncodingJSON(t *testing.T) {
	parent := "7a3e1e0c-5d6f-4c41-9f5e-2f0b9e1a0b01"
	providers := []models.Provider{
		{UUID: "0d1f7c51-7a0e-4a43-8f67-32f8f2e0f4a1", Name: "cn1", Generation: 7},
		{UUID: "1c9a5f0e-43ad-4b8e-9d2a-60b1f3c2a9d3", Name: `numa "0" <&> \ é ` + "\u2028\t", Generation: 1,
			ParentUUID: &parent, RootUUID: parent},
		{UUID: "2b6c8d1e-0f3a-4c5b-8e7d-9a1b2c3d4e5f", Name: "", RootUUID: ""},
	}
	for minor := 0; minor <= placement.Latest.Minor; minor++ {
		v := placement.V(minor)
		for i := range providers {
			p := &providers[i]
			want, err := json.Marshal(serializeProvider(p, v))
			if err != nil {
				t.Fatal(err)
			}
			if got := appendProvider(nil, p, v); string(got) != string(want) {
				t.Errorf("1.%d %q:\n got %s\nwant %s", minor, p.Name, got, want)
			}
		}
		if s := shapeOf(v); s < 0 || s >= numShapes {
			t.Errorf("1.%d: shape %d", minor, s)
		}
	}
}

// TestSelectAllRuns: the runs of a selection cover exactly the providers
// not excluded and kept, in order.
func TestSelectAllRuns(t *testing.T) {
	const n = 200
	ex := placement.NewBitset(n)
	for _, i := range []int{0, 1, 63, 64, 65, 127, 130, 199} {
		ex.Set(i)
	}
	keep := func(i int) bool { return i%50 != 7 }
	for _, k := range []func(int) bool{nil, keep} {
		sel := &selection{}
		selectAll(sel, n, ex, k)
		var got []int
		for _, s := range sel.spans {
			for i := s.from; i < s.to; i++ {
				got = append(got, i)
			}
		}
		var want []int
		for i := 0; i < n; i++ {
			if !ex.Has(i) && (k == nil || k(i)) {
				want = append(want, i)
			}
		}
		if len(got) != len(want) || sel.count != len(want) {
			t.Fatalf("%d providers in runs (count %d), want %d", len(got), sel.count, len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("runs list %v, want %v", got, want)
			}
		}
	}
}

// TestLargeLimitQueuesThenRefuses: a slot is waited for, then refused.
func TestLargeLimitQueuesThenRefuses(t *testing.T) {
	ctx := context.Background()
	l := newLargeLimit(1, time.Millisecond)
	if !l.acquire(ctx) {
		t.Fatal("the first list was refused")
	}
	if l.acquire(ctx) {
		t.Fatal("a second list got the only slot")
	}
	if l.refused.Load() != 1 {
		t.Errorf("%d refusals counted, want 1", l.refused.Load())
	}
	// With time to wait, a list in line gets the slot when it is freed.
	l = newLargeLimit(1, time.Hour)
	l.acquire(ctx)
	done := make(chan bool)
	go func() { done <- l.acquire(ctx) }()
	l.release()
	if !<-done {
		t.Error("a list waiting in line did not get the freed slot")
	}
}
