package compute

import "unicode"

// Nova's name formats (nova/api/validation/parameter_types.py), written out
// instead of as its generated regular expressions. "Printable" is any
// character below U+FFFF that is not a control/format/unassigned character
// or a line/paragraph separator; spaces (Zs) are printable.

const (
	reasonName             = "printable characters. Can not start or end with whitespace."
	reasonNameWithSpaces   = "printable characters with at least one non space character"
	reasonAZName           = "printable characters except :.Can not start or end with whitespace."
	reasonAZNameWithSpaces = "printable characters except :, with at least one non space character"
)

func printable(r rune) bool {
	return r < 0xFFFF && unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs)
}

func printableNoSpace(r rune) bool { return printable(r) && !unicode.Is(unicode.Zs, r) }

// body strips the one trailing newline Python's "$" tolerates.
func body(s []rune) []rune {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		return s[:n-1]
	}
	return s
}

// strictName: printable, not starting or ending with whitespace. The empty
// string passes on purpose (minLength reports it), as in Nova.
func strictName(s string, allowed func(rune) bool) bool {
	rs := []rune(s)
	if len(rs) > 0 && !printableNoSpace(rs[0]) {
		return false
	}
	all := func(rs []rune) bool {
		for _, r := range rs {
			if !allowed(r) {
				return false
			}
		}
		return true
	}
	for _, cand := range [][]rune{rs, body(rs)} {
		if !all(cand) {
			continue
		}
		if len(cand) == 0 || printableNoSpace(cand[len(cand)-1]) {
			return true
		}
	}
	return false
}

// looseName: printable with at least one non-space character; leading and
// trailing spaces allowed (they are stripped afterwards).
func looseName(s string, allowed func(rune) bool) bool {
	rs := body([]rune(s))
	seen := false
	for _, r := range rs {
		if !allowed(r) {
			return false
		}
		if !unicode.Is(unicode.Zs, r) {
			seen = true
		}
	}
	return seen
}

func isName(s string) bool { return strictName(s, printable) }

func isNameWithSpaces(s string) bool { return looseName(s, printable) }

func azPrintable(r rune) bool { return r != ':' && printable(r) }

func isAZName(s string) bool { return strictName(s, azPrintable) }
