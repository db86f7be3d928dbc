package store_test

import (
	"fmt"
	"testing"

	"corral/models/scheduling"
	"corral/models/store"
)

// One change on a 10,000-provider cloud: Apply reads only what the change
// names, so this costs a small part of BenchmarkLoadWorld10kProviders.
func BenchmarkApplyOneChange10kProviders(b *testing.B) {
	forEachDB(b, func(b *testing.B, s *store.Store) {
		fill(b, s, 3334)
		i := 0
		for b.Loop() {
			i++
			if _, err := s.Apply(ctx, admin, []scheduling.Change{{Op: scheduling.OpSetMetadata, Aggregate: "agg1", Key: "k", Value: fmt.Sprint(i)}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
