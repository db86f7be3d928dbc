package doctor

import (
	"sync"
	"testing"
	"time"

	"corral/models/cloudgen"
	"corral/models/scheduling"
)

var (
	benchOnce sync.Once
	benchSnap *scheduling.Snapshot
)

// BenchmarkCheck100k is the whole check on the generated 100,000-provider
// cloud (cloudgen.Default), on the live snapshot as a store keeps it; the
// budget is one second.
func BenchmarkCheck100k(b *testing.B) {
	benchOnce.Do(func() {
		s, err := scheduling.NewSnapshot(cloudgen.Generate(cloudgen.Default()))
		if err != nil {
			panic(err)
		}
		benchSnap = s
	})
	b.ResetTimer()
	n := 0
	for b.Loop() {
		// The matrix index the check reads is cached on a snapshot: a
		// snapshot of the same world that shares the index of providers
		// and aggregates but not that cache (as after a write to a
		// flavor) makes every run pay for it, without timing NewSnapshot.
		s, err := benchSnap.WithObjects(benchSnap.World())
		if err != nil {
			b.Fatal(err)
		}
		fs, err := Check(Input{Snapshot: s})
		if err != nil {
			b.Fatal(err)
		}
		n = len(fs)
	}
	b.ReportMetric(float64(n), "findings")
	if per := b.Elapsed() / time.Duration(b.N); per > time.Second {
		b.Errorf("the whole check took %v, over its budget of 1s", per)
	}
}
