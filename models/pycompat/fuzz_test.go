package pycompat

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzPyString checks the str helpers on arbitrary text: Strip leaves no
// whitespace at either end and is idempotent, Split's words hold none,
// a float ParseFloat reads prints (ReprFloat) to text it reads back to the
// same value, and ReprString reads back to the text. TestStringsAgainstPython
// runs this corpus through Python as well.
func FuzzPyString(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st := Strip(s)
		if Strip(st) != st {
			t.Fatalf("Strip(%q) = %q is not stable", s, st)
		}
		if r, _ := utf8.DecodeRuneInString(st); st != "" && IsSpace(r) {
			t.Fatalf("Strip(%q) = %q starts with whitespace", s, st)
		}
		if r, _ := utf8.DecodeLastRuneInString(st); st != "" && IsSpace(r) {
			t.Fatalf("Strip(%q) = %q ends with whitespace", s, st)
		}
		for _, w := range Split(s) {
			if w == "" || strings.IndexFunc(w, IsSpace) >= 0 {
				t.Fatalf("Split(%q) gives word %q", s, w)
			}
		}
		if x, ok := ParseFloat(s); ok {
			y, ok2 := ParseFloat(ReprFloat(x))
			if !ok2 || (y != x && !(math.IsNaN(x) && math.IsNaN(y))) || math.Signbit(x) != math.Signbit(y) && !math.IsNaN(x) {
				t.Fatalf("float(%q) = %v prints as %s, which reads back as %v", s, x, ReprFloat(x), y)
			}
		}
		if utf8.ValidString(s) {
			if back, err := unrepr(ReprString(s)); err != nil || back != s {
				t.Fatalf("ReprString(%q) = %s reads back as %q (%v)", s, ReprString(s), back, err)
			}
		}
	})
}

var fuzzSeeds = []string{"", " 1_0.5e-1_0 ", "\x1c7", "\u3000\u0663\u0662\t", "it's \"x\"\n", "-iNfinity",
	"\u0085\u00a0\u200b\u2028", "1e400", "\U0001D7D9.5", "0x10", "\\x41"}

// unrepr reads a Python str literal as ReprString writes it, by turning it
// into a Go literal: \xhh is a code point in Python, a byte in Go.
func unrepr(lit string) (string, error) {
	if len(lit) < 2 {
		return "", strconv.ErrSyntax
	}
	body := lit[1 : len(lit)-1]
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body) && body[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == '\\' && i+1 < len(body) && body[i+1] == 'x':
			b.WriteString(`\u00`)
			i++
		case c == '\\' && i+1 < len(body):
			b.WriteByte(c)
			b.WriteByte(body[i+1])
			i++
		case c == '"':
			b.WriteString(`\"`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return strconv.Unquote(b.String())
}
