package models_test

import (
	"bytes"
	"testing"

	"corral/models"
	"corral/models/cloudgen"
)

// BenchmarkWorldJSON decodes the 100,000-provider world (what corral
// import and a large corral preview read).
func BenchmarkWorldJSON(b *testing.B) {
	var buf bytes.Buffer
	if err := models.EncodeWorld(&buf, cloudgen.Generate(cloudgen.Default())); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := models.DecodeWorldJSON(data, ""); err != nil {
			b.Fatal(err)
		}
	}
}
