package scheduling

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"corral/models"
	"corral/models/pycompat"
)

// Extra-spec operators (nova/scheduler/filters/extra_specs_ops.py).
const (
	OpAtLeast = "="  // numeric: value >= operand (not equality)
	OpNumEq   = "==" // numeric
	OpNumNe   = "!=" // numeric
	OpNumGe   = ">=" // numeric
	OpNumLe   = "<=" // numeric
	OpStrEq   = "s=="
	OpStrNe   = "s!="
	OpStrLt   = "s<"
	OpStrLe   = "s<="
	OpStrGt   = "s>"
	OpStrGe   = "s>="
	OpIn      = "<in>"     // the operand is a substring of the value
	OpAllIn   = "<all-in>" // every operand is a substring of the value
	OpOr      = "<or>"     // the value equals one of the alternatives
)

// ScopeExtra is the extra-spec scope AggregateInstanceExtraSpecsFilter
// reads: "aggregate_instance_extra_specs:<key>" compares <key>.
const ScopeExtra = "aggregate_instance_extra_specs"

var extraSpecOps = map[string]bool{
	OpAtLeast: true, OpNumEq: true, OpNumNe: true, OpNumGe: true, OpNumLe: true,
	OpStrEq: true, OpStrNe: true, OpStrLt: true, OpStrLe: true, OpStrGt: true, OpStrGe: true,
	OpIn: true, OpAllIn: true, OpOr: true,
}

// IsExtraSpecOp reports whether word is one of nova's operators. Operators
// are case-sensitive: "<OR>" and ">" are not operators.
func IsExtraSpecOp(word string) bool { return extraSpecOps[word] }

// IsNumericOp reports whether op compares values as floats.
func IsNumericOp(op string) bool {
	return op == OpAtLeast || op == OpNumEq || op == OpNumNe || op == OpNumGe || op == OpNumLe
}

// Requirement is a flavor extra-spec value as nova's extra_specs_ops.match
// reads it: an operator and the words after it, or a literal.
type Requirement struct {
	// Op is the operator; "" means the value must equal Literal exactly
	// (the whole, unsplit, unstripped string).
	Op      string
	Literal string
	// Operands are the words after Op, split on whitespace as Python's
	// str.split() does. Which of them nova uses depends on Op.
	Operands []string

	// operand is Operands[0] read as a float, for numeric operators
	// (parsed once: filters match one requirement against many hosts).
	operand   float64
	operandOK bool
}

// ParseRequirement parses an extra-spec value. It never fails on what nova
// accepts: a first word that is not an operator makes the whole string a
// literal. It returns an Invalid error for values nova would crash on (a
// bare "<or>", a numeric operator with a non-numeric operand) or could never
// match (an operator without an operand); the Requirement is returned even
// then, describing what nova would do.
func ParseRequirement(spec string) (Requirement, error) {
	words := pycompat.Split(spec)
	if len(words) == 0 || !extraSpecOps[words[0]] {
		return Requirement{Literal: spec}, nil
	}
	r := Requirement{Op: words[0], Operands: words[1:]}
	if IsNumericOp(r.Op) && len(r.Operands) > 0 {
		r.operand, r.operandOK = pycompat.ParseFloat(r.Operands[0])
	}
	return r, r.check()
}

// check reports what makes r crash or never match in nova.
func (r Requirement) check() error {
	if r.Op == "" {
		return nil
	}
	if len(r.Operands) == 0 {
		if r.Op == OpOr {
			return models.E(models.Invalid, "", "'<or>' needs at least one alternative (nova raises IndexError on a bare '<or>')")
		}
		return models.E(models.Invalid, "", "operator '%s' needs an operand: without one nothing ever matches", r.Op)
	}
	if IsNumericOp(r.Op) {
		if _, ok := pycompat.ParseFloat(r.Operands[0]); !ok {
			return models.E(models.Invalid, "", "operator '%s' compares numbers but %q is not a number (nova raises ValueError)", r.Op, r.Operands[0])
		}
	}
	return nil
}

// Ignored lists the operand words nova silently ignores: extra words after
// a single-operand operator, and "<or>" separators that are something else.
// A non-empty answer almost always means the value does not say what its
// author meant.
func (r Requirement) Ignored() []string {
	switch {
	case r.Op == "" || r.Op == OpAllIn:
		return nil
	case r.Op == OpOr:
		var ign []string
		for i := 1; i < len(r.Operands); i += 2 {
			if r.Operands[i] != OpOr {
				ign = append(ign, r.Operands[i])
			}
		}
		return ign
	case len(r.Operands) > 1:
		return r.Operands[1:]
	}
	return nil
}

// Match is nova's extra_specs_ops.match(value, req) for one aggregate value.
// Where nova raises (ValueError, IndexError) Match returns an Invalid error
// that names the offending value, instead of an answer.
func (r Requirement) Match(value string) (bool, error) {
	if r.Op == "" {
		return value == r.Literal, nil
	}
	if r.Op == OpOr {
		if len(r.Operands) == 0 {
			return false, r.check()
		}
		for i := 0; i < len(r.Operands); i += 2 { // the Alternatives
			if r.Operands[i] == value {
				return true, nil
			}
		}
		return false, nil
	}
	if len(r.Operands) == 0 {
		return false, nil
	}
	y := r.Operands[0]
	if IsNumericOp(r.Op) {
		// Python evaluates float(x) before float(y): the value is blamed first.
		fx, ok := pycompat.ParseFloat(value)
		if !ok {
			return false, models.E(models.Invalid, "", "value %q is not a number, as '%s' requires (nova raises ValueError)", value, r.Op)
		}
		fy, ok := r.operand, r.operandOK
		if !ok {
			// Also reached by a Requirement built by hand.
			if fy, ok = pycompat.ParseFloat(y); !ok {
				return false, r.check()
			}
		}
		switch r.Op {
		case OpAtLeast, OpNumGe:
			return fx >= fy, nil
		case OpNumEq:
			return fx == fy, nil
		case OpNumNe:
			return fx != fy, nil
		case OpNumLe:
			return fx <= fy, nil
		}
	}
	// Go compares strings byte-wise; for valid UTF-8 that is Python's
	// code-point order.
	switch r.Op {
	case OpStrEq:
		return value == y, nil
	case OpStrNe:
		return value != y, nil
	case OpStrLt:
		return value < y, nil
	case OpStrLe:
		return value <= y, nil
	case OpStrGt:
		return value > y, nil
	case OpStrGe:
		return value >= y, nil
	case OpIn:
		return strings.Contains(value, y), nil
	case OpAllIn:
		for _, w := range r.Operands {
			if !strings.Contains(value, w) {
				return false, nil
			}
		}
		return true, nil
	}
	return false, models.E(models.Internal, "", "operator %q has no implementation", r.Op)
}

// requirementCache memoises ParseRequirement for the filters, which read
// the same few flavor values once per host. It is cleared when full, so
// that inline flavors of many previews cannot grow it without bound.
var requirementCache = struct {
	sync.RWMutex
	m map[string]parsedRequirement
}{m: map[string]parsedRequirement{}}

type parsedRequirement struct {
	r   Requirement
	err error
}

const requirementCacheSize = 4096

func cachedRequirement(spec string) (Requirement, error) {
	requirementCache.RLock()
	p, ok := requirementCache.m[spec]
	requirementCache.RUnlock()
	if ok {
		return p.r, p.err
	}
	r, err := ParseRequirement(spec)
	requirementCache.Lock()
	if len(requirementCache.m) >= requirementCacheSize {
		clear(requirementCache.m)
	}
	requirementCache.m[spec] = parsedRequirement{r, err}
	requirementCache.Unlock()
	return r, err
}

// HostMetadata is the metadata of all a host's aggregates united as nova's
// aggregate_metadata_get_by_host does: per key, the set of every value of
// every aggregate, each value split on commas and each piece stripped. A
// present key always has at least one value (possibly "").
type HostMetadata map[string][]string

// HostAggregateMetadata builds the united metadata of h's aggregates. The
// values of each key are sorted and unique. Filters that need a few keys
// use eachHostValue instead, which does not allocate.
func HostAggregateMetadata(h *HostState) HostMetadata {
	md := HostMetadata{}
	if h == nil {
		return md
	}
	for _, a := range h.Aggregates {
		if a == nil {
			continue
		}
		for k, v := range a.Metadata {
			eachPiece(v, func(piece string) bool {
				md[k] = append(md[k], piece)
				return true
			})
		}
	}
	for k, vs := range md {
		md[k] = hfSortedUnique(vs)
	}
	return md
}

// eachPiece calls fn for each comma-separated, stripped piece of an
// aggregate metadata value, until fn returns false.
func eachPiece(v string, fn func(string) bool) bool {
	for {
		piece, rest, more := strings.Cut(v, ",")
		if !fn(pycompat.Strip(piece)) {
			return false
		}
		if !more {
			return true
		}
		v = rest
	}
}

// eachHostValue calls fn for every united value of key among h's aggregates
// (possibly repeating one), until fn returns false. It reports whether any
// aggregate has the key.
func eachHostValue(h *HostState, key string, fn func(string) bool) (present bool) {
	if h == nil {
		return false
	}
	for _, a := range h.Aggregates {
		if a == nil {
			continue
		}
		v, ok := a.Metadata[key]
		if !ok {
			continue
		}
		present = true
		if !eachPiece(v, fn) {
			return true
		}
	}
	return present
}

// hostValues is the sorted set of key's united values among h's aggregates.
func hostValues(h *HostState, key string) []string {
	var vs []string
	eachHostValue(h, key, func(v string) bool {
		vs = append(vs, v)
		return true
	})
	return hfSortedUnique(vs)
}

func hfSortedUnique(vs []string) []string {
	sort.Strings(vs)
	out := vs[:0]
	for i, v := range vs {
		if i == 0 || v != vs[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// hfFormatValues renders a value set for a reason: {a, b}.
func hfFormatValues(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		if v == "" || strings.ContainsAny(v, ", {}") {
			q[i] = fmt.Sprintf("%q", v)
		} else {
			q[i] = v
		}
	}
	return "{" + strings.Join(q, ", ") + "}"
}

// hfSortedKeys returns m's keys in order, so that reasons are reproducible.
func hfSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
