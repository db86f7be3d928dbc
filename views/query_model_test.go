package views

import (
	"testing"
)

func TestQueryURL(t *testing.T) {
	cases := []struct {
		name string
		form QueryForm
		want string
	}{
		{"empty", QueryForm{}, "/query"},
		{"fields and terms in a stable order",
			QueryForm{Project: "acme", Flavor: "m1.small", MemberOf: []QueryTerm{{Value: "!aggA"}, {Value: ""}, {Value: "in:aggB,aggC"}}},
			"/query?flavor=m1.small&member_of=%21aggA&member_of=in%3AaggB%2CaggC&project=acme"},
		{"numbered terms keep their group",
			QueryForm{Numbered: []QueryNumberedTerm{{Group: "2", Value: "!aggA"}, {Group: "3", Value: ""}}, Draft: "d1"},
			"/query?draft=d1&gm=%21aggA&gn=2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.form.QueryURL(); got != tc.want {
				t.Errorf("QueryURL() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTermRowsLeaveABlankRowToTypeIn(t *testing.T) {
	cases := []struct {
		terms []QueryTerm
		more  bool
		rows  int
	}{
		{nil, false, 3},
		{[]QueryTerm{{Value: "a"}, {Value: "b"}, {Value: "c"}}, false, 4},
		{[]QueryTerm{{Value: "a"}}, true, 6},
	}
	for _, tc := range cases {
		rows := QueryForm{MemberOf: tc.terms, More: tc.more}.termRows()
		if len(rows) != tc.rows || rows[len(rows)-1].Value != "" {
			t.Errorf("termRows(%v, more=%v) = %d rows ending %q, want %d ending blank", tc.terms, tc.more, len(rows), rows[len(rows)-1].Value, tc.rows)
		}
	}
	num := QueryForm{Numbered: []QueryNumberedTerm{{Group: "1", Value: "x"}, {Group: "1", Value: "y"}}}.numberedRows()
	if last := num[len(num)-1]; last.Value != "" || last.Group != "3" {
		t.Errorf("blank numbered row = %+v, want group 3 offered", last)
	}
}
