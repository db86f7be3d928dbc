package scheduling

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Nova's filters run on Python strings. The helpers below reproduce the
// three Python behaviours that decide their outcome — str.split() and
// str.strip() without arguments, and float() — so that corral and nova agree
// on every edge case (checked against nova's own code, see the tests).

// pyIsSpace is Python's str.isspace for one character: Go's unicode.IsSpace
// plus the four ASCII separators U+001C..U+001F, which Python treats as
// whitespace (bidirectional class B/S) and Go does not.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pySplit is Python's s.split(): runs of whitespace separate words, leading
// and trailing whitespace yields no empty word.
func pySplit(s string) []string { return strings.FieldsFunc(s, pyIsSpace) }

// pyStrip is Python's s.strip().
func pyStrip(s string) string {
	// Fast path: most values start and end with a printable ASCII byte.
	if n := len(s); n == 0 || (s[0] > ' ' && s[0] < utf8.RuneSelf && s[n-1] > ' ' && s[n-1] < utf8.RuneSelf) {
		return s
	}
	return strings.TrimFunc(s, pyIsSpace)
}

// pyFloat is Python's float(s) for a str: surrounding whitespace is
// ignored, any Unicode decimal digit counts, underscores may separate digits,
// "inf", "infinity" and "nan" are accepted in any case with a sign, and
// overflow gives ±Inf instead of an error. Hexadecimal ("0x10") is refused,
// unlike Go's strconv.ParseFloat.
func pyFloat(s string) (float64, bool) {
	t := s
	if !plainASCII(s) {
		var ok bool
		if t, ok = pyFloatASCII(s); !ok {
			return 0, false
		}
	}
	if t == "" || strings.ContainsRune(t, ' ') {
		return 0, false
	}
	return pyFloatBody(t)
}

// plainASCII reports whether s is printable ASCII without spaces, which
// pyFloat can read as it is.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// pyFloatASCII maps Unicode digits to ASCII and whitespace to spaces, then
// trims the spaces, as Python does before it parses a float.
func pyFloatASCII(s string) (string, bool) {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && !pyIsSpace(r):
			b.WriteRune(r)
		case pyIsSpace(r):
			b.WriteByte(' ')
		case unicode.Is(unicode.Nd, r):
			b.WriteByte(byte('0' + ndDigitValue(r)))
		default:
			return "", false
		}
	}
	return strings.Trim(b.String(), " "), true
}

// pyFloatBody parses a trimmed ASCII float in Python's grammar.
func pyFloatBody(t string) (float64, bool) {
	body := strings.TrimLeft(t, "+-")
	if len(t)-len(body) > 1 {
		return 0, false
	}
	switch strings.ToLower(body) {
	case "inf", "infinity":
		if t[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	clean, ok := pyDecimal(body)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(clean, 64)
	if err != nil {
		// Only a range error can remain after pyDecimal; Python returns the
		// rounded value (±Inf or 0) just as ParseFloat does.
		if ne, isNum := err.(*strconv.NumError); !isNum || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	if t[0] == '-' {
		f = -f
	}
	return f, true
}

// pyDecimal checks Python's unsigned decimal float grammar
// (digits [. digits] | . digits)(e [sign] digits), with single underscores
// allowed between digits, and returns the number without underscores.
func pyDecimal(s string) (string, bool) {
	if !strings.ContainsRune(s, '_') && validDecimal(s) {
		return s, true
	}
	var out strings.Builder
	i := 0
	digits := func() int {
		n := 0
		for i < len(s) {
			c := s[i]
			if c >= '0' && c <= '9' {
				out.WriteByte(c)
				i++
				n++
				continue
			}
			if c == '_' && n > 0 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
				i++
				continue
			}
			break
		}
		return n
	}
	intDigits := digits()
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		out.WriteByte('.')
		i++
		fracDigits = digits()
	}
	if intDigits == 0 && fracDigits == 0 {
		return "", false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		out.WriteByte('e')
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			out.WriteByte(s[i])
			i++
		}
		if digits() == 0 {
			return "", false
		}
	}
	return out.String(), i == len(s)
}

// ndDigitValue is the value of a Unicode decimal digit. Unicode allocates
// category Nd in contiguous runs of whole 0..9 sequences, so the value is
// the distance from the start of the run, modulo 10.
func ndDigitValue(r rune) int {
	start := r
	for start > 0 && unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return int(r-start) % 10
}

// validDecimal is pyDecimal's grammar without underscores, checked without
// allocating (the common case).
func validDecimal(s string) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	n := digits()
	if i < len(s) && s[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
