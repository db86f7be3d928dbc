package jsonschema

import (
	"fmt"
	"strconv"
	"sync"

	"corral/models/pycompat"
)

// Schema is an ordered list of keywords, checked in order.
type Schema []Keyword

// Keyword is one schema keyword.
type Keyword interface {
	// check reports the keyword's errors on v through e; it returns false
	// when e wants no more errors.
	check(e *eval, s Schema, v any, path []string) bool
}

// Error is one failed keyword: where (the keys and indexes leading to the
// value), the value, and jsonschema's message.
type Error struct {
	Path  []string
	Value any
	Msg   string
	// BadName is the reason of Nova's InvalidName when one of its name
	// formats failed; Nova then answers with it instead of Msg.
	BadName string

	keyword     string
	matchesType bool     // the value has the type its schema asks for
	context     []*Error // the subschemas' errors of a failed anyOf/oneOf
}

func (e *Error) Error() string { return e.Msg }

// Dialect is how a service runs jsonschema.
type Dialect struct {
	// IntegralFloats: "integer" also takes 3.0 (draft 6 and later).
	IntegralFloats bool
	// NumericStrings: minimum and maximum also read strings and booleans
	// as numbers, as Nova's validator does.
	NumericStrings bool
	// BestMatch: report jsonschema.exceptions.best_match of all errors
	// rather than the first.
	BestMatch bool
}

var (
	// Nova is nova.api.validation's _SchemaValidator: Draft4Validator with
	// minimum/maximum reading numeric strings, first error.
	Nova = Dialect{NumericStrings: true}
	// Placement is placement.util.extract_json: jsonschema.validate with
	// the latest draft, best_match.
	Placement = Dialect{IntegralFloats: true, BestMatch: true}
)

// Validate checks v against s and returns the error the service reports,
// or nil when v is valid.
func (d Dialect) Validate(s Schema, v any) *Error {
	e := &eval{d: d, all: d.BestMatch}
	s.check(e, v, nil)
	if len(e.errs) == 0 {
		return nil
	}
	if !d.BestMatch {
		return e.errs[0]
	}
	return bestMatch(e.errs)
}

// eval collects the errors of one validation.
type eval struct {
	d    Dialect
	all  bool // collect every error, not just the first
	errs []*Error
}

func (s Schema) check(e *eval, v any, path []string) bool {
	for _, k := range s {
		if !k.check(e, s, v, path) {
			return false
		}
	}
	return true
}

// fail records an error of keyword kw of schema s on v.
func (e *eval) fail(kw string, s Schema, v any, path []string, msg string) bool {
	return e.add(&Error{Path: path, Value: v, Msg: msg, keyword: kw, matchesType: e.matchesType(s, v)})
}

func (e *eval) failf(kw string, s Schema, v any, path []string, format string, args ...any) bool {
	return e.fail(kw, s, v, path, fmt.Sprintf(format, args...))
}

func (e *eval) add(err *Error) bool {
	e.errs = append(e.errs, err)
	return e.all
}

// valid reports whether v passes s, and its errors for best_match's
// descent into anyOf/oneOf; paths are relative to v, as jsonschema's
// context errors are.
func (e *eval) sub(s Schema, v any) []*Error {
	sub := &eval{d: e.d, all: e.d.BestMatch}
	s.check(sub, v, nil)
	return sub.errs
}

// matchesType is ValidationError._matches_type: whether v has one of the
// types s's "type" keyword names (false when s has none).
func (e *eval) matchesType(s Schema, v any) bool {
	for _, k := range s {
		if t, ok := k.(typeKW); ok {
			for _, name := range t {
				if e.isType(v, name) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// relevance is jsonschema.exceptions.relevance, as a comparable tuple:
// (-len(path), not weak, strong (never), not matches type).
func relevance(err *Error) [3]int {
	b := func(x bool) int {
		if x {
			return 1
		}
		return 0
	}
	weak := err.keyword == "anyOf" || err.keyword == "oneOf"
	return [3]int{-len(err.Path), b(!weak), b(!err.matchesType)}
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// bestMatch is jsonschema.exceptions.best_match: the first most relevant
// error, then down into anyOf/oneOf context to the least relevant one,
// stopping where two tie.
func bestMatch(errs []*Error) *Error {
	best := errs[0]
	for _, err := range errs[1:] {
		if less(relevance(best), relevance(err)) {
			best = err
		}
	}
	for len(best.context) > 0 {
		// heapq.nsmallest(2, …): the two least relevant, first ones first.
		first, second := -1, -1
		for i, err := range best.context {
			switch {
			case first < 0 || less(relevance(err), relevance(best.context[first])):
				first, second = i, first
			case second < 0 || less(relevance(err), relevance(best.context[second])):
				second = i
			}
		}
		if second >= 0 && relevance(best.context[first]) == relevance(best.context[second]) {
			return best
		}
		best = best.context[first]
	}
	return best
}

func with(path []string, elem string) []string {
	p := make([]string, len(path)+1)
	copy(p, path)
	p[len(path)] = elem
	return p
}

func index(path []string, i int) []string { return with(path, strconv.Itoa(i)) }

// repr is Python's repr, which every message quotes values with.
func repr(v any) string { return pycompat.Repr(v) }

var reCache sync.Map
