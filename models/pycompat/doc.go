// Package pycompat reproduces the few Python behaviours that decide what
// OpenStack's services answer, so that corral answers the same: str.strip()
// and str.split() without arguments and str.isspace (Python's whitespace is
// not Go's), float() of a str, repr() and str() of the values json.loads
// returns (dicts in insertion order, 'single quotes', True/None, \x/\u/\U
// escapes of what str.isprintable refuses), and json.loads itself into those
// ordered values.
//
// Nova's filters run these on aggregate metadata and extra specs, and Nova's
// and Placement's validation messages quote offending values with repr, so
// every answer that depends on them goes through this package. The tests
// compare it with Debian's /usr/bin/python3. One difference is the Unicode
// tables': characters assigned in Unicode 15 (Go's) but not 14 (Python
// 3.11's) are printable here, escaped there.
//
// The package imports only the standard library, so the pure core
// (models/scheduling) may use it.
package pycompat
