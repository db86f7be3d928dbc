package scheduling

import (
	"io"
	"slices"
	"strings"

	"corral/models"
)

// Helpers only the tests use: nova's own functions the oracle tests compare
// against, and conveniences over what the program calls.

// MatchSpec is nova's extra_specs_ops.match(value, spec).
func MatchSpec(value, spec string) (bool, error) {
	r, _ := ParseRequirement(spec)
	return r.Match(value)
}

// String is the canonical form: the literal itself, or the operator and its
// operands separated by single spaces. ParseRequirement(r.String()) gives r
// back for every r that ParseRequirement produced.
func (r Requirement) String() string {
	if r.Op == "" {
		return r.Literal
	}
	if len(r.Operands) == 0 {
		return r.Op
	}
	return r.Op + " " + strings.Join(r.Operands, " ")
}

// Alternatives are the values an "<or>" requirement accepts: nova takes the
// words at even positions and skips the ones in between as separators
// without checking them, so "<or> a b c" accepts "a" and "c" only.
func (r Requirement) Alternatives() []string {
	if r.Op != OpOr {
		return nil
	}
	var alts []string
	for i := 0; i < len(r.Operands); i += 2 {
		alts = append(alts, r.Operands[i])
	}
	return alts
}

// AntiAffinityRoom is how many more members of the request's anti-affinity
// group host h can take; -1 when the request has no anti-affinity group
// (no limit).
func AntiAffinityRoom(h *HostState, r *Request) int {
	if r == nil || r.Group == nil || r.Group.Policy != models.PolicyAntiAffinity {
		return -1
	}
	room := r.Group.MaxServerPerHost() - r.GroupHosts[hfHostName(h)]
	if room < 0 {
		return 0
	}
	return room
}

// NormalizeWeigherWeights is nova's weights.normalize: it maps raw weights
// linearly onto [0, 1]; when all are equal every weight becomes 0.
func NormalizeWeigherWeights(raw []float64) []float64 {
	out := make([]float64, len(raw))
	if len(raw) == 0 {
		return out
	}
	lo, hi := raw[0], raw[0]
	for _, w := range raw[1:] {
		lo = min(lo, w)
		hi = max(hi, w)
	}
	if lo == hi {
		return out
	}
	for i, w := range raw {
		out[i] = (w - lo) / (hi - lo)
	}
	return out
}

// HasErrors reports whether any problem is an error.
func HasErrors(ps []Problem) bool {
	return slices.ContainsFunc(ps, func(p Problem) bool { return p.Severity == SeverityError })
}

// ValidateExtraSpecs checks a flavor's extra specs with the default
// settings; see ValidateExtraSpecsFor.
func ValidateExtraSpecs(specs map[string]string) []Problem {
	return ValidateExtraSpecsFor(specs, models.DefaultSettings())
}

// DecodeRequest reads a request document strictly: unknown fields, wrong
// types and malformed values are Invalid errors naming the field.
func DecodeRequest(r io.Reader) (*RequestSpec, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, models.Wrap("decode request", err)
	}
	return DecodeRequestJSON(data, "")
}

// HostFilterNames lists every known host filter, in the default order.
func HostFilterNames() []string {
	names := make([]string, len(hostFilters))
	for i, f := range hostFilters {
		names[i] = f.Name()
	}
	return names
}
