package query

import (
	"bytes"
	"encoding/json"
	"testing"

	"corral/models/scheduling"
)

// TestPreviewResponseEncode: the answer written with the trace's own
// encoder is what json.Marshal writes, with and without the fields that
// follow the trace.
func TestPreviewResponseEncode(t *testing.T) {
	msg := "no valid host <was> found"
	tr := &scheduling.Trace{PlacementQuery: "member_of=in:a&b", Providers: []scheduling.ProviderEntry{{UUID: "u", Name: "n"}},
		Hosts: []scheduling.HostEntry{}, Error: &msg, Selections: []string{"cn1"}}
	for name, r := range map[string]previewResponse{
		"trace alone":   {Trace: tr},
		"no trace":      {Warnings: []string{"w"}},
		"warnings":      {Trace: tr, Warnings: []string{"Nova & Placement disagree"}},
		"empty lists":   {Trace: tr, Warnings: []string{}, DraftOnly: []string{}},
		"draft and all": {Trace: tr, Draft: &draftRef{ID: "d1", Name: "drain"}, Diff: &scheduling.TraceDiff{Incomplete: true}, DraftOnly: []string{"agg"}, Warnings: []string{"w"}},
	} {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
