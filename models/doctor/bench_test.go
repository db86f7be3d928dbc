package doctor

import (
	"sync"
	"testing"

	"corral/models/cloudgen"
	"corral/models/scheduling"
)

var (
	benchOnce sync.Once
	benchSnap *scheduling.Snapshot
)

// BenchmarkCheck100k is the whole check on the generated 100,000-provider
// cloud (cloudgen.Default), on a snapshot built once as the live one is;
// the budget is one second.
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
		// A fresh snapshot per run would measure NewSnapshot; the check's
		// impact index is cached on the snapshot, so drop it by rebuilding
		// only the part the check caches: run on a copy of the world.
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
}
