package placement

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"corral/models"
)

const (
	uA = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	uB = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
)

// Messages of placement/util.py, as the reference and the recorded probe
// of the real service give them.
const (
	msgBadUUID   = "Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: "
	msgMultiVals = "Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: "
)

func TestParseMemberOfErrors(t *testing.T) {
	cases := []struct {
		key    string
		values []string
		v      Version
		msg    string
	}{
		{"member_of", []string{"in:" + uA + ",!" + uB}, Latest, msgBadUUID + "!" + uB},
		{"member_of", []string{"in:!" + uA}, Latest, msgBadUUID + "!" + uA},
		{"member_of", []string{"!in:" + uA + ",!" + uB}, Latest, msgBadUUID + "!" + uB},
		{"member_of", []string{"!" + uA + "," + uB}, Latest, msgMultiVals + "!" + uA + "," + uB},
		{"member_of", []string{uA + "," + uB}, Latest, msgMultiVals + uA + "," + uB},
		{"member_of", []string{"in:"}, Latest, msgBadUUID},
		{"member_of", []string{"!in:"}, Latest, msgBadUUID},
		{"member_of", []string{"!"}, Latest, msgBadUUID},
		{"member_of", []string{""}, Latest, msgBadUUID},
		{"member_of", []string{"not-a-uuid"}, Latest, msgBadUUID + "not-a-uuid"},
		{"member_of", []string{"!not-a-uuid"}, Latest, msgBadUUID + "not-a-uuid"},
		{"member_of", []string{"!!" + uA}, Latest, msgBadUUID + "!" + uA},
		{"member_of", []string{"in:" + uA + ",," + uB}, Latest, msgBadUUID},
		{"member_of", []string{" " + uA}, Latest, msgBadUUID + " " + uA},
		{"member_of", []string{"!" + uA}, V(31), "Forbidden member_of parameters are not supported in the specified microversion"},
		{"member_of", []string{"!in:" + uA + "," + uB}, V(31), "Forbidden member_of parameters are not supported in the specified microversion"},
		{"member_of1", []string{"!" + uA}, V(31), "Forbidden member_of1 parameters are not supported in the specified microversion"},
		// A malformed value is reported before the microversion of `!`, but
		// values are judged in order (both checked against Placement 8.0.0).
		{"member_of", []string{"!bad"}, V(31), msgBadUUID + "bad"},
		{"member_of", []string{"!" + uA, "bad"}, V(31), "Forbidden member_of parameters are not supported in the specified microversion"},
		{"member_of", []string{"bad", uA}, V(23), "Multiple member_of parameters are not supported"},
		{"member_of", []string{"in:" + uA + ","}, Latest, msgBadUUID},
		{"member_of", []string{"!in:!" + uA}, Latest, msgBadUUID + "!" + uA},
		{"member_of", []string{uA, uB}, V(23), "Multiple member_of parameters are not supported"},
		{"member_of2", []string{uA, uB}, V(23), "Invalid query string parameters: Additional properties are not allowed ('member_of2' was unexpected)"},
		{"member_of", []string{uA}, V(2), "Invalid query string parameters: Additional properties are not allowed ('member_of' was unexpected)"},
		{"member_of1", []string{uA}, V(24), "Invalid query string parameters: Additional properties are not allowed ('member_of1' was unexpected)"},
		{"member_of_gpu", []string{uA}, V(32), "Invalid query string parameters: Additional properties are not allowed ('member_of_gpu' was unexpected)"},
		{"member_ofé", []string{uA}, Latest, "Invalid query string parameters: Additional properties are not allowed ('member_ofé' was unexpected)"},
	}
	for _, c := range cases {
		_, err := ParseMemberOf(c.key, c.values, c.v)
		var ce *models.Error
		if !errors.As(err, &ce) {
			t.Errorf("%s=%q @%s: err = %v, want %q", c.key, c.values, c.v, err, c.msg)
			continue
		}
		if ce.Msg != c.msg || ce.Kind != models.Invalid || ce.Field != c.key {
			t.Errorf("%s=%q @%s: got (%s, %q, %q), want (invalid, %q, %q)", c.key, c.values, c.v, ce.Kind, ce.Field, ce.Msg, c.key, c.msg)
		}
	}
}

func TestParseMemberOfOK(t *testing.T) {
	upper := strings.ToUpper(uA)
	cases := []struct {
		key    string
		values []string
		v      Version
		want   Terms
	}{
		{"member_of", []string{uA}, V(3), Terms{Required: [][]string{{uA}}}},
		{"member_of", []string{"in:" + uA + "," + uB}, V(3), Terms{Required: [][]string{{uA, uB}}}},
		{"member_of", []string{uA, "in:" + uB}, V(24), Terms{Required: [][]string{{uA}, {uB}}}},
		{"member_of", []string{"!in:" + uA + "," + uB, "!" + uA}, V(32), Terms{Forbidden: []string{uA, uB}}},
		{"member_of", []string{"in:" + uA + "," + uB, "!" + uA}, Latest, Terms{Required: [][]string{{uA, uB}}, Forbidden: []string{uA}}},
		{"member_of1", []string{uA}, V(25), Terms{Required: [][]string{{uA}}}},
		{"member_of_gpu", []string{uA}, V(33), Terms{Required: [][]string{{uA}}}},
		// is_uuid_like quirks: upper case and dashless hex are accepted as sent.
		{"member_of", []string{upper}, Latest, Terms{Required: [][]string{{upper}}}},
		{"member_of", []string{strings.ReplaceAll(uA, "-", "")}, Latest, Terms{Required: [][]string{{strings.ReplaceAll(uA, "-", "")}}}},
		{"member_of", []string{"{" + uA + "}"}, Latest, Terms{Required: [][]string{{"{" + uA + "}"}}}},
		{"member_of", []string{"urn:uuid:" + uA}, Latest, Terms{Required: [][]string{{"urn:uuid:" + uA}}}},
		{"member_of0", []string{uA}, Latest, Terms{Required: [][]string{{uA}}}},
		{"member_of", []string{"in:" + uA + "," + uA}, Latest, Terms{Required: [][]string{{uA}}}},
		{"member_of", nil, Latest, Terms{}},
	}
	for _, c := range cases {
		got, err := ParseMemberOf(c.key, c.values, c.v)
		if err != nil {
			t.Errorf("%s=%q @%s: %v", c.key, c.values, c.v, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s=%q @%s: got %+v, want %+v", c.key, c.values, c.v, got, c.want)
		}
	}
}

func TestParseMemberOfValues(t *testing.T) {
	got, err := ParseMemberOf("member_of", []string{"in:" + uB + "," + uA, "!" + uB, "!" + uA}, Latest)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"!in:" + uA + "," + uB, "in:" + uA + "," + uB}
	if v := got.Values(); !reflect.DeepEqual(v, want) {
		t.Errorf("Values = %q, want %q", v, want)
	}
	if g, err := ParseMemberOf("member_of1", []string{uA}, Latest); err != nil || !reflect.DeepEqual(g, Terms{Required: [][]string{{uA}}}) {
		t.Errorf("group 1 = %+v, %v", g, err)
	}
}

func TestParseVersion(t *testing.T) {
	for s, want := range map[string]Version{"1.32": V(32), "latest": Latest, "1.0": V(0)} {
		if v, err := ParseVersion(s); err != nil || v != want {
			t.Errorf("ParseVersion(%q) = %v, %v", s, v, err)
		}
	}
	for _, s := range []string{"", "1", "1.a", "-1.2"} {
		if _, err := ParseVersion(s); models.KindOf(err) != models.Invalid {
			t.Errorf("ParseVersion(%q): %v, want Invalid", s, err)
		}
	}
}

// FuzzParseMemberOf checks that the parser never panics, that what it
// accepts is made of UUID-like elements, and that nova's rendering of the
// parsed terms parses back to the same sets.
func FuzzParseMemberOf(f *testing.F) {
	for _, s := range []string{uA, "in:" + uA + "," + uB, "!" + uA, "!in:" + uA + ",!" + uB, "in:", "!", "", ",", "in:a,!b", "{" + uA + "}", "urn:uuid:" + uA} {
		f.Add(s, "", uint8(39))
		f.Add(s, "!"+uB, uint8(31))
	}
	f.Fuzz(func(t *testing.T, a, b string, minor uint8) {
		v := V(int(minor % 45))
		values := []string{a}
		if b != "" {
			values = append(values, b)
		}
		terms, err := ParseMemberOf("member_of", values, v)
		if err != nil {
			if models.KindOf(err) != models.Invalid || models.FieldOf(err) != "member_of" {
				t.Fatalf("error kind %s field %q: %v", models.KindOf(err), models.FieldOf(err), err)
			}
			return
		}
		for _, req := range terms.Required {
			if len(req) == 0 {
				t.Fatalf("empty required list from %q", values)
			}
			for _, u := range req {
				if !IsUUIDLike(u) {
					t.Fatalf("accepted non-uuid %q from %q", u, values)
				}
			}
		}
		for _, u := range terms.Forbidden {
			if !IsUUIDLike(u) {
				t.Fatalf("accepted non-uuid %q from %q", u, values)
			}
		}
		again, err := ParseMemberOf("member_of", terms.Values(), Latest)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", terms.Values(), err)
		}
		if !sameTerms(terms, again) {
			t.Fatalf("round trip %+v -> %q -> %+v", terms, terms.Values(), again)
		}
	})
}

// sameTerms compares terms as sets of sets.
func sameTerms(a, b Terms) bool {
	set := func(t Terms) (map[string]bool, map[string]bool) {
		req, forb := map[string]bool{}, map[string]bool{}
		for _, r := range t.Required {
			s := append([]string(nil), r...)
			sortStrings(s)
			req[strings.Join(s, ",")] = true
		}
		for _, f := range t.Forbidden {
			forb[f] = true
		}
		return req, forb
	}
	ra, fa := set(a)
	rb, fb := set(b)
	return reflect.DeepEqual(ra, rb) && reflect.DeepEqual(fa, fb)
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
