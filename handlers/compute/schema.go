package compute

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// A small JSON-schema evaluator with exactly the keywords Nova's request
// schemas use. Nova reports the first error its validator meets, and that
// depends on the order of keywords in each schema, so a Schema here is an
// ordered list of keywords rather than a struct.

// Schema is an ordered list of keywords.
type Schema []keyword

type keyword interface {
	check(v any, path []string) *schemaError
}

// schemaError is one failed keyword: where (path of keys/indexes), the
// value, jsonschema's message, and whether a name format failed (Nova then
// reports its own InvalidName text instead).
type schemaError struct {
	Path    []string
	Value   any
	Msg     string
	BadName string // non-empty: the reason of an InvalidName
}

// Validate runs s on v and returns the first error, or nil.
func (s Schema) Validate(v any) *schemaError { return s.check(v, nil) }

func (s Schema) check(v any, path []string) *schemaError {
	for _, k := range s {
		if e := k.check(v, path); e != nil {
			return e
		}
	}
	return nil
}

// BodyMessage formats e like nova's validator does for request bodies.
func (e *schemaError) BodyMessage() string {
	if e.BadName != "" {
		return "An invalid 'name' value was provided. The name must be: " + e.BadName
	}
	if len(e.Path) == 0 {
		return e.Msg
	}
	return fmt.Sprintf("Invalid input for field/attribute %s. Value: %s. %s",
		e.Path[len(e.Path)-1], pyStr(e.Value), e.Msg)
}

// QueryMessage formats e like nova's validator does for query strings,
// where the first path element is the parameter name.
func (e *schemaError) QueryMessage() string {
	if e.BadName != "" {
		return "An invalid 'name' value was provided. The name must be: " + e.BadName
	}
	if len(e.Path) == 0 {
		return e.Msg
	}
	return fmt.Sprintf("Invalid input for query parameters %s. Value: %s. %s",
		e.Path[0], pyStr(e.Value), e.Msg)
}

func fail(v any, path []string, format string, args ...any) *schemaError {
	return &schemaError{Path: path, Value: v, Msg: fmt.Sprintf(format, args...)}
}

func with(path []string, elem string) []string {
	p := make([]string, len(path)+1)
	copy(p, path)
	p[len(path)] = elem
	return p
}

// ---- type

type typeKW []string

func Type(types ...string) keyword { return typeKW(types) }

func (t typeKW) check(v any, path []string) *schemaError {
	for _, name := range t {
		if isType(v, name) {
			return nil
		}
	}
	quoted := make([]string, len(t))
	for i, n := range t {
		quoted[i] = reprString(n)
	}
	return fail(v, path, "%s is not of type %s", pyRepr(v), strings.Join(quoted, ", "))
}

func isType(v any, name string) bool {
	switch name {
	case "object":
		_, ok := v.(*Object)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		// Like the draft-4 validator of the nova-api we compare against:
		// 3.0 is a float, not an integer (newer drafts accept it, and
		// Nova then fails converting "3.0" back to an int).
		_, ok := v.(Int)
		return ok
	case "number":
		switch v.(type) {
		case Int, Float:
			return true
		}
	}
	return false
}

// ---- properties, required, additionalProperties, patternProperties

// Prop is one named property and its schema.
type Prop struct {
	Name   string
	Schema Schema
}

type propsKW []Prop

func Properties(p ...Prop) keyword { return propsKW(p) }

func (p propsKW) check(v any, path []string) *schemaError {
	o, ok := v.(*Object)
	if !ok {
		return nil
	}
	for _, prop := range p {
		if x, ok := o.Vals[prop.Name]; ok {
			if e := prop.Schema.check(x, with(path, prop.Name)); e != nil {
				return e
			}
		}
	}
	return nil
}

// PatternProp is a patternProperties entry.
type PatternProp struct {
	Pattern string
	Schema  Schema
}

type patternPropsKW []PatternProp

func PatternProperties(p ...PatternProp) keyword {
	for _, pp := range p {
		compile(pp.Pattern)
	}
	return patternPropsKW(p)
}

func (p patternPropsKW) check(v any, path []string) *schemaError {
	o, ok := v.(*Object)
	if !ok {
		return nil
	}
	for _, pp := range p {
		re := compile(pp.Pattern)
		for _, k := range o.Keys {
			if pySearch(re, k) {
				if e := pp.Schema.check(o.Vals[k], with(path, k)); e != nil {
					return e
				}
			}
		}
	}
	return nil
}

type requiredKW []string

func Required(names ...string) keyword { return requiredKW(names) }

func (r requiredKW) check(v any, path []string) *schemaError {
	o, ok := v.(*Object)
	if !ok {
		return nil
	}
	for _, n := range r {
		if !o.Has(n) {
			return fail(v, path, "%s is a required property", reprString(n))
		}
	}
	return nil
}

// noAdditionalKW is additionalProperties: false; it needs the sibling
// property names and patterns, as jsonschema does.
type noAdditionalKW struct {
	names    []string
	patterns []string
}

func NoAdditional(names []string, patterns ...string) keyword {
	for _, p := range patterns {
		compile(p)
	}
	return noAdditionalKW{names: names, patterns: patterns}
}

func (a noAdditionalKW) check(v any, path []string) *schemaError {
	o, ok := v.(*Object)
	if !ok {
		return nil
	}
	var extra []string
	for _, k := range o.Keys {
		if contains(a.names, k) {
			continue
		}
		matched := false
		for _, p := range a.patterns {
			if pySearch(compile(p), k) {
				matched = true
				break
			}
		}
		if !matched {
			extra = append(extra, reprString(k))
		}
	}
	if len(extra) == 0 {
		return nil
	}
	if len(a.patterns) > 0 {
		// jsonschema words it differently when patterns exist, and sorts.
		sort.Strings(extra)
		verb := "does"
		if len(extra) > 1 {
			verb = "do"
		}
		quoted := make([]string, len(a.patterns))
		for i, p := range a.patterns {
			quoted[i] = reprString(p)
		}
		return fail(v, path, "%s %s not match any of the regexes: %s",
			strings.Join(extra, ", "), verb, strings.Join(quoted, ", "))
	}
	verb := "was"
	if len(extra) > 1 {
		verb = "were"
	}
	return fail(v, path, "Additional properties are not allowed (%s %s unexpected)", strings.Join(extra, ", "), verb)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ---- arrays

type prefixItemsKW []Schema

func PrefixItems(s ...Schema) keyword { return prefixItemsKW(s) }

func (p prefixItemsKW) check(v any, path []string) *schemaError {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	for i, s := range p {
		if i >= len(arr) {
			break
		}
		if e := s.check(arr[i], with(path, strconv.Itoa(i))); e != nil {
			return e
		}
	}
	return nil
}

type itemsKW struct{ s Schema }

func Items(s Schema) keyword { return itemsKW{s} }

func (it itemsKW) check(v any, path []string) *schemaError {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	for i, x := range arr {
		if e := it.s.check(x, with(path, strconv.Itoa(i))); e != nil {
			return e
		}
	}
	return nil
}

type uniqueItemsKW struct{}

func UniqueItems() keyword { return uniqueItemsKW{} }

func (uniqueItemsKW) check(v any, path []string) *schemaError {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	for _, x := range arr {
		k := pyRepr(x)
		if seen[k] {
			return fail(v, path, "%s has non-unique elements", pyRepr(v))
		}
		seen[k] = true
	}
	return nil
}

type minItemsKW int

func MinItems(n int) keyword { return minItemsKW(n) }

func (m minItemsKW) check(v any, path []string) *schemaError {
	if arr, ok := v.([]any); ok && len(arr) < int(m) {
		return fail(v, path, "%s is too short", pyRepr(v))
	}
	return nil
}

type maxItemsKW int

func MaxItems(n int) keyword { return maxItemsKW(n) }

func (m maxItemsKW) check(v any, path []string) *schemaError {
	if arr, ok := v.([]any); ok && len(arr) > int(m) {
		return fail(v, path, "%s is too long", pyRepr(v))
	}
	return nil
}

// ---- strings

type minLengthKW int

func MinLength(n int) keyword { return minLengthKW(n) }

func (m minLengthKW) check(v any, path []string) *schemaError {
	if s, ok := v.(string); ok && utf8.RuneCountInString(s) < int(m) {
		return fail(v, path, "%s is too short", pyRepr(v))
	}
	return nil
}

type maxLengthKW int

func MaxLength(n int) keyword { return maxLengthKW(n) }

func (m maxLengthKW) check(v any, path []string) *schemaError {
	if s, ok := v.(string); ok && utf8.RuneCountInString(s) > int(m) {
		return fail(v, path, "%s is too long", pyRepr(v))
	}
	return nil
}

type patternKW struct {
	src string
	re  *regexp.Regexp
}

func Pattern(p string) keyword { return patternKW{p, compile(p)} }

func (p patternKW) check(v any, path []string) *schemaError {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if !p.re.MatchString(s) {
		return fail(v, path, "%s does not match %s", pyRepr(v), reprString(p.src))
	}
	return nil
}

// ---- enum, minimum

type enumKW []string

func Enum(values ...string) keyword { return enumKW(values) }

func (e enumKW) check(v any, path []string) *schemaError {
	if s, ok := v.(string); ok && contains(e, s) {
		return nil
	}
	return fail(v, path, "%s is not one of %s", pyRepr(v), pyRepr([]string(e)))
}

type minimumKW int64

// Minimum applies to numbers and, like Nova's validator, to strings that
// Python's int() or float() can read.
func Minimum(n int64) keyword { return minimumKW(n) }

func (m minimumKW) check(v any, path []string) *schemaError {
	n, ok := numberOf(v)
	if !ok {
		return nil
	}
	if n.Cmp(new(big.Float).SetInt64(int64(m))) < 0 {
		return fail(v, path, "%s is less than the minimum of %d", reprNumber(v, n), int64(m))
	}
	return nil
}

func numberOf(v any) (*big.Float, bool) {
	switch t := v.(type) {
	case Int:
		f, _, err := big.ParseFloat(t.Lit, 10, 256, big.ToNearestEven)
		return f, err == nil
	case Float:
		if math.IsNaN(float64(t)) {
			return nil, false
		}
		return big.NewFloat(float64(t)), true
	case bool:
		if t {
			return big.NewFloat(1), true
		}
		return big.NewFloat(0), true
	case string:
		s := strings.TrimSpace(strings.ReplaceAll(t, "_", ""))
		if s == "" {
			return nil, false
		}
		if f, _, err := big.ParseFloat(s, 10, 256, big.ToNearestEven); err == nil {
			return f, true
		}
	}
	return nil, false
}

// reprNumber prints the number Nova's minimum check compared: a string is
// converted first, so "0" is reported as 0.
func reprNumber(v any, n *big.Float) string {
	switch t := v.(type) {
	case string:
		s := strings.TrimSpace(strings.ReplaceAll(t, "_", ""))
		if _, err := strconv.ParseInt(s, 10, 64); err == nil || isDigits(strings.TrimLeft(s, "+-")) {
			return canonicalInt(strings.TrimPrefix(s, "+"))
		}
		f, _ := n.Float64()
		return reprFloat(f)
	case bool:
		if t {
			return "1"
		}
		return "0"
	}
	return pyRepr(v)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// ---- combinators

type anyOfKW []Schema

func AnyOf(s ...Schema) keyword { return anyOfKW(s) }

func (a anyOfKW) check(v any, path []string) *schemaError {
	for _, s := range a {
		if s.check(v, path) == nil {
			return nil
		}
	}
	return fail(v, path, "%s is not valid under any of the given schemas", pyRepr(v))
}

type oneOfKW []Schema

func OneOf(s ...Schema) keyword { return oneOfKW(s) }

func (o oneOfKW) check(v any, path []string) *schemaError {
	n := 0
	for _, s := range o {
		if s.check(v, path) == nil {
			n++
		}
	}
	switch {
	case n == 0:
		return fail(v, path, "%s is not valid under any of the given schemas", pyRepr(v))
	case n > 1:
		return fail(v, path, "%s is valid under each of the given schemas", pyRepr(v))
	}
	return nil
}

// ---- formats (Nova's name checks)

type formatKW struct {
	check_ func(string) bool
	reason string
}

// Format wraps one of Nova's name checks; a failure is an InvalidName.
func Format(fn func(string) bool, reason string) keyword { return formatKW{fn, reason} }

func (f formatKW) check(v any, path []string) *schemaError {
	s, ok := v.(string)
	if ok && f.check_(s) {
		return nil
	}
	return &schemaError{Path: path, Value: v, Msg: "invalid name", BadName: f.reason}
}

// ---- regexp helpers

var (
	reMu    sync.Mutex
	reCache = map[string]*regexp.Regexp{}
)

// compile caches the package's (constant) patterns; a bad one is a bug
// caught when the schemas are built at init.
func compile(p string) *regexp.Regexp {
	reMu.Lock()
	defer reMu.Unlock()
	if re, ok := reCache[p]; ok {
		return re
	}
	re := regexp.MustCompile(p)
	reCache[p] = re
	return re
}

// pySearch is re.search for patterns anchored with $: Python's $ also
// matches just before a final newline.
func pySearch(re *regexp.Regexp, s string) bool {
	if re.MatchString(s) {
		return true
	}
	return strings.HasSuffix(s, "\n") && re.MatchString(s[:len(s)-1])
}
