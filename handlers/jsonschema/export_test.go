package jsonschema

import (
	"math/big"
	"slices"

	"corral/models/pycompat"
)

// Keywords only the tests use: jsonschema's vocabulary that no Nova schema
// here needs, kept checked against the oracle for when one does.

type extraPropsKW struct {
	s        Schema
	names    []string
	patterns []string
}

// MaxProperties is "maxProperties".
func MaxProperties(n int) Keyword { return propCountKW{n: n, max: true} }

// MinimumFloat is "minimum" with a float bound (printed as Python does).
func MinimumFloat(f float64) Keyword {
	return boundKW{n: big.NewFloat(f), shown: pycompat.ReprFloat(f)}
}

// ExtraProperties is "additionalProperties" given as a schema: every key
// that is neither one of names nor matches one of patterns must match s.
// (jsonschema visits them in a set's order; here they go in request order.)
func ExtraProperties(s Schema, names []string, patterns ...string) Keyword {
	for _, p := range patterns {
		compile(p)
	}
	return extraPropsKW{s: s, names: names, patterns: patterns}
}

func (a extraPropsKW) check(e *eval, _ Schema, v any, path []string) bool {
	o, ok := v.(*pycompat.Object)
	if !ok {
		return true
	}
	for _, k := range o.Keys {
		if contains(a.names, k) || slices.ContainsFunc(a.patterns, func(p string) bool { return pySearch(compile(p), k) }) {
			continue
		}
		if !a.s.check(e, o.Vals[k], with(path, k)) {
			return false
		}
	}
	return true
}
