package pycompat

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ParseFloat is Python's float(s) for a str: surrounding whitespace is
// ignored, any Unicode decimal digit counts, underscores may separate digits,
// "inf", "infinity" and "nan" are accepted in any case with a sign, and
// overflow gives ±Inf instead of an error. Hexadecimal ("0x10") is refused,
// unlike Go's strconv.ParseFloat.
func ParseFloat(s string) (float64, bool) {
	t := s
	if !plainASCII(s) {
		var ok bool
		if t, ok = floatASCII(s); !ok {
			return 0, false
		}
	}
	if t == "" || strings.ContainsAny(t, " \t\n\v\f\r") {
		return 0, false
	}
	return floatBody(t)
}

// plainASCII reports whether s is printable ASCII without spaces, which
// ParseFloat can read as it is.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// floatASCII maps Unicode digits to ASCII and non-ASCII whitespace to
// spaces, then trims ASCII whitespace, as Python does before it parses a
// float (so U+001C..U+001F, whitespace to str.strip, are refused here).
func floatASCII(s string) (string, bool) {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case IsSpace(r):
			b.WriteByte(' ')
		case unicode.Is(unicode.Nd, r):
			b.WriteByte(byte('0' + ndDigitValue(r)))
		default:
			return "", false
		}
	}
	return strings.Trim(b.String(), " \t\n\v\f\r"), true
}

// floatBody parses a trimmed ASCII float in Python's grammar.
func floatBody(t string) (float64, bool) {
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
	clean, ok := decimal(body)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(clean, 64)
	if err != nil {
		// Only a range error can remain after decimal; Python returns the
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

// decimal checks Python's unsigned decimal float grammar
// (digits [. digits] | . digits)(e [sign] digits), with single underscores
// allowed between digits, and returns the number without underscores.
func decimal(s string) (string, bool) {
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

// validDecimal is decimal's grammar without underscores, checked without
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

// ReprFloat is Python's repr of a float: the shortest digits that read
// back the same, fixed notation for exponents in [-4, 16), always with a
// fractional part or an exponent.
func ReprFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expS, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expS)
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1
	var out string
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			out = "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			out = digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			out = digits[:decpt] + "." + digits[decpt:]
		}
	} else {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign = "-"
			exp = -exp
		}
		out = fmt.Sprintf("%se%s%02d", m, sign, exp)
	}
	if neg {
		out = "-" + out
	}
	return out
}
