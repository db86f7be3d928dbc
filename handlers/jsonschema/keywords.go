package jsonschema

import (
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"corral/models/pycompat"
)

// ---- type

type typeKW []string

// Type is "type": one type name, or several (["integer", "string"]).
func Type(types ...string) Keyword { return typeKW(types) }

func (t typeKW) check(e *eval, s Schema, v any, path []string) bool {
	for _, name := range t {
		if e.isType(v, name) {
			return true
		}
	}
	quoted := make([]string, len(t))
	for i, n := range t {
		quoted[i] = pycompat.ReprString(n)
	}
	return e.failf("type", s, v, path, "%s is not of type %s", repr(v), strings.Join(quoted, ", "))
}

func (e *eval) isType(v any, name string) bool {
	switch name {
	case "object":
		_, ok := v.(*pycompat.Object)
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
		switch t := v.(type) {
		case pycompat.Int:
			return true
		case pycompat.Float:
			f := float64(t)
			return e.d.IntegralFloats && f == math.Trunc(f) && !math.IsInf(f, 0)
		}
	case "number":
		switch v.(type) {
		case pycompat.Int, pycompat.Float:
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

// Properties is "properties", checked in the order given.
func Properties(p ...Prop) Keyword { return propsKW(p) }

func (p propsKW) check(e *eval, _ Schema, v any, path []string) bool {
	o, ok := v.(*pycompat.Object)
	if !ok {
		return true
	}
	for _, prop := range p {
		if x, ok := o.Vals[prop.Name]; ok {
			if !prop.Schema.check(e, x, with(path, prop.Name)) {
				return false
			}
		}
	}
	return true
}

// PatternProp is a patternProperties entry.
type PatternProp struct {
	Pattern string
	Schema  Schema
}

type patternPropsKW []PatternProp

// PatternProperties is "patternProperties"; the patterns are checked in
// the order given, the keys in request order.
func PatternProperties(p ...PatternProp) Keyword {
	for _, pp := range p {
		compile(pp.Pattern)
	}
	return patternPropsKW(p)
}

func (p patternPropsKW) check(e *eval, _ Schema, v any, path []string) bool {
	o, ok := v.(*pycompat.Object)
	if !ok {
		return true
	}
	for _, pp := range p {
		re := compile(pp.Pattern)
		for _, k := range o.Keys {
			if pySearch(re, k) {
				if !pp.Schema.check(e, o.Vals[k], with(path, k)) {
					return false
				}
			}
		}
	}
	return true
}

type requiredKW []string

// Required is "required".
func Required(names ...string) Keyword { return requiredKW(names) }

func (r requiredKW) check(e *eval, s Schema, v any, path []string) bool {
	o, ok := v.(*pycompat.Object)
	if !ok {
		return true
	}
	for _, n := range r {
		if !o.Has(n) {
			if !e.failf("required", s, v, path, "%s is a required property", pycompat.ReprString(n)) {
				return false
			}
		}
	}
	return true
}

// noAdditionalKW is additionalProperties: false; it needs the sibling
// property names and patterns, as jsonschema does.
type noAdditionalKW struct {
	names    []string
	patterns []string
}

// NoAdditional is "additionalProperties": false next to properties names
// and patternProperties patterns.
func NoAdditional(names []string, patterns ...string) Keyword {
	for _, p := range patterns {
		compile(p)
	}
	return noAdditionalKW{names: names, patterns: patterns}
}

func (a noAdditionalKW) check(e *eval, s Schema, v any, path []string) bool {
	o, ok := v.(*pycompat.Object)
	if !ok {
		return true
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
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return true
	}
	// jsonschema sorts the extras (Python orders str by code point, as
	// Go orders UTF-8 bytes) and, with patterns, the patterns too.
	sort.Strings(extra)
	quoted := make([]string, len(extra))
	for i, k := range extra {
		quoted[i] = pycompat.ReprString(k)
	}
	if len(a.patterns) > 0 {
		verb := "does"
		if len(extra) > 1 {
			verb = "do"
		}
		pats := append([]string(nil), a.patterns...)
		sort.Strings(pats)
		for i, p := range pats {
			pats[i] = pycompat.ReprString(p)
		}
		return e.failf("additionalProperties", s, v, path, "%s %s not match any of the regexes: %s",
			strings.Join(quoted, ", "), verb, strings.Join(pats, ", "))
	}
	verb := "was"
	if len(extra) > 1 {
		verb = "were"
	}
	return e.failf("additionalProperties", s, v, path, "Additional properties are not allowed (%s %s unexpected)",
		strings.Join(quoted, ", "), verb)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type propCountKW struct {
	n   int
	max bool
}

// MinProperties is "minProperties".
func MinProperties(n int) Keyword { return propCountKW{n: n} }

func (p propCountKW) check(e *eval, s Schema, v any, path []string) bool {
	o, ok := v.(*pycompat.Object)
	switch {
	case !ok:
		return true
	case !p.max && len(o.Keys) < p.n:
		return e.failf("minProperties", s, v, path, "%s does not have enough properties", repr(v))
	case p.max && len(o.Keys) > p.n:
		return e.failf("maxProperties", s, v, path, "%s has too many properties", repr(v))
	}
	return true
}

// ---- arrays

type prefixItemsKW []Schema

// PrefixItems is draft 4's "items" given as a list (2020-12's
// "prefixItems"): one schema per leading element.
func PrefixItems(s ...Schema) Keyword { return prefixItemsKW(s) }

func (p prefixItemsKW) check(e *eval, _ Schema, v any, path []string) bool {
	arr, ok := v.([]any)
	if !ok {
		return true
	}
	for i, s := range p {
		if i >= len(arr) {
			break
		}
		if !s.check(e, arr[i], index(path, i)) {
			return false
		}
	}
	return true
}

type itemsKW struct{ s Schema }

// Items is "items" with one schema for every element.
func Items(s Schema) Keyword { return itemsKW{s} }

func (it itemsKW) check(e *eval, _ Schema, v any, path []string) bool {
	arr, ok := v.([]any)
	if !ok {
		return true
	}
	for i, x := range arr {
		if !it.s.check(e, x, index(path, i)) {
			return false
		}
	}
	return true
}

type uniqueItemsKW struct{}

// UniqueItems is "uniqueItems": true. Equality is Python's (1 == 1.0),
// except that a boolean equals only a boolean, as in jsonschema.
func UniqueItems() Keyword { return uniqueItemsKW{} }

func (uniqueItemsKW) check(e *eval, s Schema, v any, path []string) bool {
	arr, ok := v.([]any)
	if !ok {
		return true
	}
	for i := range arr {
		for j := 0; j < i; j++ {
			if equal(arr[i], arr[j]) {
				return e.failf("uniqueItems", s, v, path, "%s has non-unique elements", repr(v))
			}
		}
	}
	return true
}

// equal is jsonschema._utils.equal on decoded JSON values.
func equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case pycompat.Int, pycompat.Float:
		xn, ok1 := number(a)
		yn, ok2 := number(b)
		return ok1 && ok2 && xn.Cmp(yn) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *pycompat.Object:
		y, ok := b.(*pycompat.Object)
		if !ok || len(x.Keys) != len(y.Keys) {
			return false
		}
		for _, k := range x.Keys {
			yv, ok := y.Vals[k]
			if !ok || !equal(x.Vals[k], yv) {
				return false
			}
		}
		return true
	}
	return false
}

// number is a JSON number's exact value (NaN and ±inf are not numbers here).
func number(v any) (*big.Float, bool) {
	switch t := v.(type) {
	case pycompat.Int:
		f, _, err := big.ParseFloat(t.Lit, 10, 512, big.ToNearestEven)
		return f, err == nil
	case pycompat.Float:
		if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
			return nil, false
		}
		return big.NewFloat(float64(t)), true
	}
	return nil, false
}

type minItemsKW int

// MinItems is "minItems".
func MinItems(n int) Keyword { return minItemsKW(n) }

func (m minItemsKW) check(e *eval, s Schema, v any, path []string) bool {
	if arr, ok := v.([]any); ok && len(arr) < int(m) {
		return e.failf("minItems", s, v, path, "%s is too short", repr(v))
	}
	return true
}

type maxItemsKW int

// MaxItems is "maxItems".
func MaxItems(n int) Keyword { return maxItemsKW(n) }

func (m maxItemsKW) check(e *eval, s Schema, v any, path []string) bool {
	if arr, ok := v.([]any); ok && len(arr) > int(m) {
		return e.failf("maxItems", s, v, path, "%s is too long", repr(v))
	}
	return true
}

// ---- strings

type minLengthKW int

// MinLength is "minLength", in characters.
func MinLength(n int) Keyword { return minLengthKW(n) }

func (m minLengthKW) check(e *eval, s Schema, v any, path []string) bool {
	if str, ok := v.(string); ok && utf8.RuneCountInString(str) < int(m) {
		return e.failf("minLength", s, v, path, "%s is too short", repr(v))
	}
	return true
}

type maxLengthKW int

// MaxLength is "maxLength", in characters.
func MaxLength(n int) Keyword { return maxLengthKW(n) }

func (m maxLengthKW) check(e *eval, s Schema, v any, path []string) bool {
	if str, ok := v.(string); ok && utf8.RuneCountInString(str) > int(m) {
		return e.failf("maxLength", s, v, path, "%s is too long", repr(v))
	}
	return true
}

type patternKW struct {
	src string
	re  *regexp.Regexp
}

// Pattern is "pattern" (re.search). Only patterns that mean the same to
// Go's regexp and Python's re may be used.
func Pattern(p string) Keyword { return patternKW{p, compile(p)} }

func (p patternKW) check(e *eval, s Schema, v any, path []string) bool {
	str, ok := v.(string)
	if !ok || pySearch(p.re, str) {
		return true
	}
	return e.failf("pattern", s, v, path, "%s does not match %s", repr(v), pycompat.ReprString(p.src))
}

// ---- enum, minimum, maximum

type enumKW []any

// Enum is "enum" over strings, booleans and null. As in jsonschema, a
// boolean equals only a boolean.
func Enum(values ...any) Keyword { return enumKW(values) }

func (en enumKW) check(e *eval, s Schema, v any, path []string) bool {
	for _, x := range en {
		if equal(x, v) {
			return true
		}
	}
	return e.failf("enum", s, v, path, "%s is not one of %s", repr(v), repr([]any(en)))
}

type boundKW struct {
	n     *big.Float
	shown string // the bound as Python prints it
	max   bool
}

// Minimum is "minimum". In the Nova dialect it also applies to strings
// and booleans Python's int() or float() can read, as Nova's validator
// converts them first.
func Minimum(n int64) Keyword {
	return boundKW{n: new(big.Float).SetInt64(n), shown: strconv.FormatInt(n, 10)}
}

// Maximum is "maximum", read as Minimum is.
func Maximum(n int64) Keyword {
	return boundKW{n: new(big.Float).SetInt64(n), shown: strconv.FormatInt(n, 10), max: true}
}

// MaximumFloat is "maximum" with a float bound.
func MaximumFloat(f float64) Keyword {
	return boundKW{n: big.NewFloat(f), shown: pycompat.ReprFloat(f), max: true}
}

func (b boundKW) check(e *eval, s Schema, v any, path []string) bool {
	n, shown, ok := e.boundValue(v)
	if !ok {
		return true
	}
	c := n.Cmp(b.n)
	switch {
	case !b.max && c < 0:
		return e.failf("minimum", s, v, path, "%s is less than the minimum of %s", shown, b.shown)
	case b.max && c > 0:
		return e.failf("maximum", s, v, path, "%s is greater than the maximum of %s", shown, b.shown)
	}
	return true
}

// boundValue is the number minimum/maximum compare, and how the message
// prints it: Nova converts a string first, so "0" is reported as 0.
func (e *eval) boundValue(v any) (*big.Float, string, bool) {
	if n, ok := number(v); ok {
		return n, repr(v), true
	}
	if f, ok := v.(pycompat.Float); ok && math.IsInf(float64(f), 0) {
		// ±inf compares beyond every bound.
		return new(big.Float).SetInf(math.IsInf(float64(f), -1)), repr(v), true
	}
	if !e.d.NumericStrings {
		return nil, "", false
	}
	switch t := v.(type) {
	case bool:
		if t {
			return big.NewFloat(1), "1", true
		}
		return big.NewFloat(0), "0", true
	case string:
		str := strings.TrimSpace(strings.ReplaceAll(t, "_", ""))
		if str == "" {
			return nil, "", false
		}
		f, _, err := big.ParseFloat(str, 10, 256, big.ToNearestEven)
		if err != nil {
			return nil, "", false
		}
		if isDigits(strings.TrimLeft(str, "+-")) {
			return f, pycompat.CanonicalInt(strings.TrimPrefix(str, "+")), true
		}
		x, _ := f.Float64()
		return f, pycompat.ReprFloat(x), true
	}
	return nil, "", false
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

// AnyOf is "anyOf".
func AnyOf(s ...Schema) Keyword { return anyOfKW(s) }

func (a anyOfKW) check(e *eval, s Schema, v any, path []string) bool {
	var context []*Error
	for _, sub := range a {
		errs := e.sub(sub, v)
		if len(errs) == 0 {
			return true
		}
		context = append(context, errs...)
	}
	return e.add(&Error{Path: path, Value: v, keyword: "anyOf", matchesType: e.matchesType(s, v), context: context,
		Msg: repr(v) + " is not valid under any of the given schemas"})
}

type oneOfKW []Schema

// OneOf is "oneOf". When several subschemas match, jsonschema lists them
// in its message; here they are "the given schemas" (the schemas in use
// have subschemas that exclude each other).
func OneOf(s ...Schema) Keyword { return oneOfKW(s) }

func (o oneOfKW) check(e *eval, s Schema, v any, path []string) bool {
	var context []*Error
	n := 0
	for _, sub := range o {
		errs := e.sub(sub, v)
		if len(errs) == 0 {
			n++
		} else if n == 0 {
			context = append(context, errs...)
		}
	}
	switch {
	case n == 0:
		return e.add(&Error{Path: path, Value: v, keyword: "oneOf", matchesType: e.matchesType(s, v), context: context,
			Msg: repr(v) + " is not valid under any of the given schemas"})
	case n > 1:
		return e.fail("oneOf", s, v, path, repr(v)+" is valid under each of the given schemas")
	}
	return true
}

// ---- formats

type formatKW struct {
	format  string
	valid   func(string) bool
	badName string
}

// Format is "format" with the service's checker for it; anything but a
// string fails, as the services' checkers (uuid_like, …) refuse it.
func Format(format string, valid func(string) bool) Keyword {
	return formatKW{format: format, valid: valid}
}

// NameFormat is one of Nova's name formats, whose failure Nova reports as
// InvalidName with reason instead of jsonschema's message.
func NameFormat(format string, valid func(string) bool, reason string) Keyword {
	return formatKW{format: format, valid: valid, badName: reason}
}

func (f formatKW) check(e *eval, s Schema, v any, path []string) bool {
	if str, ok := v.(string); ok && f.valid(str) {
		return true
	}
	err := &Error{Path: path, Value: v, keyword: "format", matchesType: e.matchesType(s, v), BadName: f.badName,
		Msg: repr(v) + " is not a " + pycompat.ReprString(f.format)}
	return e.add(err)
}

// ---- regexp helpers

// compile caches the (constant) patterns of the schemas; a bad one is a
// bug caught when the schemas are built at init.
func compile(p string) *regexp.Regexp {
	if re, ok := reCache.Load(p); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(p)
	reCache.Store(p, re)
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

// EnumStrings is Enum over strings.
func EnumStrings(values ...string) Keyword {
	e := make(enumKW, len(values))
	for i, v := range values {
		e[i] = v
	}
	return e
}
