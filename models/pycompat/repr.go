package pycompat

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Repr is Python's repr(v) for the values LoadJSON returns (nil, bool,
// string, Int, Float, []any, *Object), plus int and []string for callers
// that build messages themselves.
func Repr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

// Str is Python's str(v): a string as it is, anything else as repr.
func Str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return Repr(v)
}

func writeRepr(b *strings.Builder, v any) {
	switch t := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if t {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		b.WriteString(ReprString(t))
	case Int:
		b.WriteString(CanonicalInt(t.Lit))
	case Float:
		b.WriteString(ReprFloat(float64(t)))
	case int:
		b.WriteString(strconv.Itoa(t))
	case int64:
		b.WriteString(strconv.FormatInt(t, 10))
	case []any:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, x)
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(ReprString(x))
		}
		b.WriteByte(']')
	case *Object:
		b.WriteByte('{')
		for i, k := range t.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(ReprString(k))
			b.WriteString(": ")
			writeRepr(b, t.Vals[k])
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "%v", t)
	}
}

// CanonicalInt is Python's repr of int(lit) for a JSON integer literal:
// no leading zeros, no "-0".
func CanonicalInt(lit string) string {
	neg := strings.HasPrefix(lit, "-")
	d := strings.TrimLeft(strings.TrimPrefix(lit, "-"), "0")
	if d == "" {
		return "0"
	}
	if neg {
		return "-" + d
	}
	return d
}

// ReprString is Python 3's repr of a str: single quotes unless the text
// holds a single quote and no double quote; \t \n \r and \\ escaped; other
// characters str.isprintable refuses as \xhh, \uhhhh or \Uhhhhhhhh.
func ReprString(s string) string {
	quote := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, "\"") {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// Not UTF-8: Python would hold a lone surrogate here
			// (surrogateescape), which repr escapes.
			fmt.Fprintf(&b, `\udc%02x`, s[i])
			i++
			continue
		}
		i += size
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case IsPrintable(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// IsPrintable is str.isprintable for one character: the space, letters,
// marks, numbers, punctuation and symbols; not other separators, control,
// format, private-use, surrogate or unassigned characters.
func IsPrintable(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= ' ' && r < 0x7f
	}
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
}
