package cloud

import (
	"strings"
	"testing"
)

// The release follows the compute API's maximum microversion; where two
// releases share it, a setting naming either is kept.
func TestDetectNovaRelease(t *testing.T) {
	for _, tc := range []struct {
		mv, current, want string
		change            bool
		note              string
	}{
		{"2.93", "gazpacho", "zed", true, "set to zed"},
		{"2.93", "zed", "zed", false, ""},
		{"2.96", "gazpacho", "caracal", true, "caracal and dalmatian share it"},
		{"2.96", "dalmatian", "dalmatian", false, "keeps dalmatian"},
		{"2.104", "zed", "gazpacho", true, "set to gazpacho"},
		{"2.60", "zed", "zed", false, "older than the oldest"},
		{"", "zed", "zed", false, ""},
	} {
		got, change, note := DetectNovaRelease(tc.mv, tc.current)
		if got != tc.want || change != tc.change || !strings.Contains(note, tc.note) || (tc.note == "") != (note == "") {
			t.Errorf("%s from %s: %s %v %q, want %s %v %q", tc.mv, tc.current, got, change, note, tc.want, tc.change, tc.note)
		}
	}
}
