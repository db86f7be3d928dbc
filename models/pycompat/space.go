package pycompat

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsSpace is Python's str.isspace for one character: Go's unicode.IsSpace
// plus the four ASCII separators U+001C..U+001F, which Python treats as
// whitespace (bidirectional class B/S) and Go does not.
func IsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// Split is Python's s.split(): runs of whitespace separate words; leading
// and trailing whitespace yields no empty word.
func Split(s string) []string { return strings.FieldsFunc(s, IsSpace) }

// Strip is Python's s.strip().
func Strip(s string) string {
	// Fast path: most values start and end with a printable ASCII byte.
	if n := len(s); n == 0 || (s[0] > ' ' && s[0] < utf8.RuneSelf && s[n-1] > ' ' && s[n-1] < utf8.RuneSelf) {
		return s
	}
	return strings.TrimFunc(s, IsSpace)
}
