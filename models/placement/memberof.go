package placement

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"corral/models"
)

// Version is a Placement microversion, 1.x.
type Version struct {
	Major, Minor int
}

// V returns microversion 1.minor.
func V(minor int) Version { return Version{Major: 1, Minor: minor} }

// Latest is the highest microversion corral speaks (Placement 8.0.0 and
// upstream HEAD both stop at 1.39).
var Latest = V(39)

// AtLeast reports whether v is 1.minor or later.
func (v Version) AtLeast(minor int) bool {
	return v.Major > 1 || (v.Major == 1 && v.Minor >= minor)
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// ParseVersion reads "1.x" (or "latest").
func ParseVersion(s string) (Version, error) {
	if s == "latest" {
		return Latest, nil
	}
	maj, min, ok := strings.Cut(s, ".")
	if !ok {
		return Version{}, models.E(models.Invalid, "version", "invalid version string %q", s)
	}
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if err1 != nil || err2 != nil || a < 0 || b < 0 {
		return Version{}, models.E(models.Invalid, "version", "invalid version string %q", s)
	}
	return Version{Major: a, Minor: b}, nil
}

// Terms is one request group's parsed member_of: Required is AND-ed, each
// inner list is OR-ed; Forbidden is the union of every `!` and `!in:` value.
// Elements are aggregate UUIDs exactly as sent (Placement does not normalise
// them and matches by plain string equality).
type Terms struct {
	Required  [][]string `json:"required,omitempty"`
	Forbidden []string   `json:"forbidden,omitempty"`
}

// Empty reports whether the terms restrict nothing.
func (t Terms) Empty() bool { return len(t.Required) == 0 && len(t.Forbidden) == 0 }

// And returns t with u's terms AND-ed on: required lists appended, forbidden
// sets unioned.
func (t Terms) And(u Terms) Terms {
	out := Terms{
		Required:  append(append([][]string(nil), t.Required...), u.Required...),
		Forbidden: append([]string(nil), t.Forbidden...),
	}
	seen := make(map[string]bool, len(out.Forbidden))
	for _, f := range out.Forbidden {
		seen[f] = true
	}
	for _, f := range u.Forbidden {
		if !seen[f] {
			seen[f] = true
			out.Forbidden = append(out.Forbidden, f)
		}
	}
	return out
}

// Values renders the terms as nova sends them: one `in:` value per required
// list (members sorted) and one `!in:` value for the forbidden set, the
// values sorted as nova's to_querystring sorts its parameters.
func (t Terms) Values() []string {
	var vals []string
	for _, req := range t.Required {
		s := append([]string(nil), req...)
		sort.Strings(s)
		vals = append(vals, "in:"+strings.Join(s, ","))
	}
	if len(t.Forbidden) > 0 {
		s := append([]string(nil), t.Forbidden...)
		sort.Strings(s)
		vals = append(vals, "!in:"+strings.Join(s, ","))
	}
	sort.Strings(vals)
	return vals
}

// Key prefix shared by every member_of parameter.
const memberOfKey = "member_of"

var (
	numberedSuffix = regexp.MustCompile(`^[1-9][0-9]*$`)
	stringSuffix   = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
)

// SplitKey returns the group suffix of a member_of parameter name ("" for
// the unnumbered group) and whether key is a member_of parameter at all.
func SplitKey(key string) (suffix string, ok bool) {
	if !strings.HasPrefix(key, memberOfKey) {
		return "", false
	}
	suffix = key[len(memberOfKey):]
	if suffix == "" || stringSuffix.MatchString(suffix) {
		return suffix, true
	}
	return "", false
}

// unexpected is Placement's JSON-schema complaint for a parameter that does
// not exist at the requested microversion.
func unexpected(key string) error {
	return models.E(models.Invalid, key,
		"Invalid query string parameters: Additional properties are not allowed ('%s' was unexpected)", key)
}

// ParseMemberOf validates the values of one member_of parameter (key is
// "member_of" or "member_of<suffix>") at microversion v, in Placement's order
// and with its exact messages. Errors are *models.Error of kind Invalid whose
// Msg is what Placement puts in its 400 body and whose Field is key.
//
// member_of itself needs 1.3 (GET /resource_providers; GET
// /allocation_candidates needs 1.21, which its handler checks), numbered
// suffixes 1.25, string suffixes 1.33, repeated values 1.24, `!` 1.32.
func ParseMemberOf(key string, values []string, v Version) (Terms, error) {
	suffix, ok := SplitKey(key)
	if !ok {
		return Terms{}, unexpected(key)
	}
	switch {
	case !v.AtLeast(3):
		return Terms{}, unexpected(key)
	case suffix == "":
	case numberedSuffix.MatchString(suffix):
		if !v.AtLeast(25) {
			return Terms{}, unexpected(key)
		}
	default:
		if !v.AtLeast(33) {
			return Terms{}, unexpected(key)
		}
	}
	if !v.AtLeast(24) && len(values) > 1 {
		return Terms{}, models.E(models.Invalid, key, "Multiple member_of%s parameters are not supported", suffix)
	}
	var t Terms
	seen := map[string]bool{}
	for _, value := range values {
		req, forb, err := parseValue(key, value)
		if err != nil {
			return Terms{}, err
		}
		// Placement checks the microversion for `!` only once the value has
		// parsed, so a malformed value wins over an early microversion.
		if len(forb) > 0 && !v.AtLeast(32) {
			return Terms{}, models.E(models.Invalid, key,
				"Forbidden member_of%s parameters are not supported in the specified microversion", suffix)
		}
		if req != nil {
			t.Required = append(t.Required, req)
		}
		for _, f := range forb {
			if !seen[f] {
				seen[f] = true
				t.Forbidden = append(t.Forbidden, f)
			}
		}
	}
	return t, nil
}

// parseValue parses one value; exactly one of the results is non-nil on
// success. Duplicates inside a list are dropped (Placement builds sets).
func parseValue(key, value string) (required, forbidden []string, err error) {
	if strings.Contains(value, ",") && !strings.HasPrefix(value, "in:") && !strings.HasPrefix(value, "!in:") {
		return nil, nil, models.E(models.Invalid, key,
			"Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: %s", value)
	}
	var elems []string
	neg := false
	switch {
	case strings.HasPrefix(value, "!in:"):
		elems, neg = strings.Split(value[4:], ","), true
	case strings.HasPrefix(value, "!"):
		elems, neg = []string{value[1:]}, true
	case strings.HasPrefix(value, "in:"):
		elems = strings.Split(value[3:], ",")
	default:
		elems = []string{value}
	}
	out := make([]string, 0, len(elems))
	seen := make(map[string]bool, len(elems))
	for _, e := range elems {
		if !IsUUIDLike(e) {
			return nil, nil, models.E(models.Invalid, key,
				"Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: %s", e)
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	if neg {
		return nil, out, nil
	}
	return out, nil, nil
}

// IsUUIDLike mirrors oslo_utils.uuidutils.is_uuid_like: after removing
// "urn:" and "uuid:", surrounding braces and every dash, 32 hex digits of
// either case remain. Placement accepts exactly these.
func IsUUIDLike(s string) bool {
	if len(s) > 200 {
		return false
	}
	s = strings.ReplaceAll(s, "urn:", "")
	s = strings.ReplaceAll(s, "uuid:", "")
	s = strings.Trim(s, "{}")
	s = strings.ReplaceAll(s, "-", "")
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
