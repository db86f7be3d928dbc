package scheduling

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"corral/models/cloudgen"
)

// TestRunConcurrently: runs sharing one snapshot (and its lazily built
// tables, caches and scratch sets) give each the answer a run alone
// gives, through Run or RunJSON. Run it with -race to check the sharing.
func TestRunConcurrently(t *testing.T) {
	w := cloudgen.Generate(cloudgen.Small())
	s, err := NewSnapshot(w)
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for i := range 24 {
		docs = append(docs, fmt.Sprintf(`{"project_id":"project-%d","flavor":%q,"limit":20,"num_instances":%d,"placement":{"member_of":["!%s","in:%s,%s"]}}`,
			i%10, w.Flavors[i%len(w.Flavors)].Name, 1+i%3, w.Aggregates[i%len(w.Aggregates)].UUID,
			w.Aggregates[(i*7)%len(w.Aggregates)].UUID, w.Aggregates[(i*3+1)%len(w.Aggregates)].UUID))
	}
	encode := func(doc string, oneSlot bool) []byte {
		spec, err := DecodeRequestJSON([]byte(doc), "")
		if err != nil {
			t.Error(err)
			return nil
		}
		if oneSlot {
			b, err := s.RunJSON(spec, nil)
			if err != nil {
				t.Error(err)
			}
			return b
		}
		tr, err := s.Run(spec)
		if err != nil {
			t.Error(err)
			return nil
		}
		b, err := tr.AppendJSON(nil)
		if err != nil {
			t.Error(err)
		}
		return b
	}
	// Concurrent first, so that the lazy tables are built under contention.
	got := make([][]byte, len(docs)*4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = encode(docs[i%len(docs)], i%2 == 0) })
	}
	wg.Wait()
	for i, b := range got {
		if want := encode(docs[i%len(docs)], false); !bytes.Equal(b, want) {
			t.Fatalf("request %d: a concurrent run answered differently from a run alone", i%len(docs))
		}
	}
}
