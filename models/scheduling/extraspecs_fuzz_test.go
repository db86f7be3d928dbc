package scheduling

import (
	"reflect"
	"strings"
	"testing"

	"corral/models/pycompat"
)

// FuzzParseRequirement checks the extra-spec parser and nova's match on
// arbitrary input: nothing panics, the canonical form parses back to the
// same requirement, and each operator keeps its defining property.
func FuzzParseRequirement(f *testing.F) {
	for _, c := range hfNovaMatchCases {
		f.Add(c.req, c.value)
	}
	f.Add("<or> ! <or> ~", "x")
	f.Add("<or> * <or> 1", "1")
	f.Add("\u0085s>=\u2028z", "\u00e9")
	f.Fuzz(func(t *testing.T, spec, value string) {
		r, err := ParseRequirement(spec)
		ok, merr := r.Match(value)
		_ = r.Alternatives()
		_ = r.Ignored()
		_ = ParseTypeRequirement(spec).Err()
		_, _ = ParseTypeRequirement(spec).eval(true, valueSource{list: []string{value}})

		// Round trip through the canonical form.
		canon := r.String()
		r2, err2 := ParseRequirement(canon)
		if r2.Op != r.Op || !reflect.DeepEqual(r2.Operands, r.Operands) || (r.Op == "" && r2.Literal != r.Literal) {
			t.Fatalf("ParseRequirement(%q) = %#v, but its form %q parses to %#v", spec, r, canon, r2)
		}
		if (err == nil) != (err2 == nil) {
			t.Fatalf("%q error %v, canonical %q error %v", spec, err, canon, err2)
		}
		if r2.String() != canon {
			t.Fatalf("canonical form of %q is not stable: %q then %q", spec, canon, r2.String())
		}

		if r.Op == "" {
			if r.Literal != spec || err != nil || merr != nil || ok != (value == spec) {
				t.Fatalf("literal %q vs %q: match %v err %v/%v", spec, value, ok, err, merr)
			}
			return
		}
		if !IsExtraSpecOp(r.Op) {
			t.Fatalf("%q: %q is not an operator", spec, r.Op)
		}
		for _, w := range r.Operands {
			if w == "" || strings.IndexFunc(w, pycompat.IsSpace) >= 0 {
				t.Fatalf("%q: operand %q is empty or holds whitespace", spec, w)
			}
		}
		// Only numeric operators and a bare <or> can make nova raise.
		if merr != nil && !IsNumericOp(r.Op) && !(r.Op == OpOr && len(r.Operands) == 0) {
			t.Fatalf("%q vs %q: unexpected error %v", spec, value, merr)
		}
		if err != nil && merr == nil && len(r.Operands) > 0 && r.Op != OpOr {
			// A numeric operand nova cannot read fails every numeric value
			// too (float(y) raises), unless the value is what fails first.
			if _, vok := pycompat.ParseFloat(value); vok {
				t.Fatalf("%q vs numeric %q: no error although the operand is bad", spec, value)
			}
		}
		switch r.Op {
		case OpOr:
			for _, alt := range r.Alternatives() {
				if m, e := r.Match(alt); !m || e != nil {
					t.Fatalf("%q does not accept its own alternative %q", spec, alt)
				}
			}
		case OpStrEq, OpStrLe, OpStrGe, OpIn, OpAllIn:
			if len(r.Operands) > 0 {
				self := r.Operands[0]
				if r.Op == OpAllIn {
					self = strings.Join(r.Operands, " ")
				}
				if m, e := r.Match(self); !m || e != nil {
					t.Fatalf("%q does not accept %q", spec, self)
				}
			}
		case OpStrNe, OpStrLt, OpStrGt:
			if len(r.Operands) > 0 {
				if m, _ := r.Match(r.Operands[0]); m {
					t.Fatalf("%q accepts its own operand", spec)
				}
			}
		}
	})
}
