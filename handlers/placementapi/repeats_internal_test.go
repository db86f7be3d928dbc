package placementapi

import (
	"net/url"
	"strings"
	"testing"

	"corral/models/placement"
)

const repeatedAgg = "11111111-1111-4111-8111-111111111111"

// repeatedQuery is resources=VCPU:1 and n repeats each of member_of and
// required, parsed as parseCandidateQuery sees it (past the repeat bound,
// so that the parser's own growth is what is measured).
func repeatedQuery(n int) ([]queryParam, url.Values) {
	vals := url.Values{"resources": {"VCPU:1"}}
	for range n {
		vals["member_of"] = append(vals["member_of"], repeatedAgg)
		vals["required"] = append(vals["required"], "HW_CPU_X86_AVX2")
	}
	params := []queryParam{{"resources", vals["resources"]}, {"member_of", vals["member_of"]}, {"required", vals["required"]}}
	return params, vals
}

func parseRepeated(tb testing.TB, params []queryParam, vals url.Values) {
	var q placement.CandidateQuery
	if _, e := parseRequestGroups(&q, params, vals, placement.Latest); e != nil {
		tb.Fatal(e.Msg)
	}
	if len(q.Groups) != 1 || len(q.Groups[0].MemberOf.Required) != len(vals["member_of"]) {
		tb.Fatalf("groups %+v", q.Groups)
	}
}

// TestRepeatedGroupKeysParseInLinearWork: four times the repeats of
// member_of and required cost about four times the allocations, not
// sixteen (each value used to re-parse every value of its key).
func TestRepeatedGroupKeysParseInLinearWork(t *testing.T) {
	allocs := func(n int) float64 {
		params, vals := repeatedQuery(n)
		return testing.AllocsPerRun(3, func() { parseRepeated(t, params, vals) })
	}
	small, large := allocs(1000), allocs(4000)
	if ratio := large / small; ratio > 6 {
		t.Errorf("4x the repeats cost %.1fx the allocations (%.0f vs %.0f): not linear", ratio, large, small)
	}
}

// BenchmarkRepeatedMemberOf parses a query with 1,000 repeats each of
// member_of and required, the most the bound admits.
func BenchmarkRepeatedMemberOf(b *testing.B) {
	params, vals := repeatedQuery(MaxRepeatedParam)
	b.ReportAllocs()
	for b.Loop() {
		parseRepeated(b, params, vals)
	}
}

// TestRepeatBoundNamesTheParameter: one repeat past the bound is a 400
// naming the parameter, from every parser of query strings.
func TestRepeatBoundNamesTheParameter(t *testing.T) {
	raw := strings.Repeat("member_of="+repeatedAgg+"&", MaxRepeatedParam) + "member_of=" + repeatedAgg
	_, _, e := orderedQuery(raw)
	if e == nil || e.Status != 400 || !strings.Contains(e.Msg, "'member_of' may be repeated at most 1000 times; got 1001") {
		t.Fatalf("got %+v", e)
	}
	if _, _, e := orderedQuery(raw[:strings.LastIndex(raw, "&")]); e != nil {
		t.Fatalf("at the bound: %+v", e)
	}
}
