package scheduling

import (
	"reflect"
	"strings"
	"testing"

	"corral/models"
)

type hfOutcome int

const (
	hfNo hfOutcome = iota
	hfYes
	hfCrash // nova raises (ValueError, IndexError)
)

func (o hfOutcome) String() string { return [...]string{"no match", "match", "nova raises"}[o] }

func hfOutcomeOf(ok bool, err error) hfOutcome {
	switch {
	case err != nil:
		return hfCrash
	case ok:
		return hfYes
	}
	return hfNo
}

// hfNovaMatchCases are answers of nova's extra_specs_ops.match (nova 26.2,
// run through /work/shared/peers/nova_oracle.py): value, requirement, hfOutcome.
var hfNovaMatchCases = []struct {
	value, req string
	want       hfOutcome
}{
	{"4", ">= 2", hfYes},
	{"1", ">= 2", hfNo},
	{"2", ">= 2", hfYes},
	{"x", ">= 2", hfCrash},
	{"4", ">= x", hfCrash},
	{"4", "= 2", hfYes},
	{"2", "= 4", hfNo},
	{"4", "= 4", hfYes},
	{"4", "== 4.0", hfYes},
	{"4", "!= 4", hfNo},
	{"5", "!= 4", hfYes},
	{"3", "<= 4", hfYes},
	{"5", "<= 4", hfNo},
	{"1_000", "= 999", hfYes},
	{" 5 ", "== 5", hfYes},
	{"0x10", "== 16", hfCrash},
	{"1e3", "== 1000", hfYes},
	{"nan", "!= nan", hfYes},
	{"nan", "== nan", hfNo},
	{"nan", ">= 0", hfNo},
	{"inf", ">= 1e308", hfYes},
	{"-inf", "<= -1e308", hfYes},
	{"\u0663", "== 3", hfYes},
	{"1e1_0", "== 1e10", hfYes},
	{"-nan", "!= 1", hfYes},
	{"infinity", "== inf", hfYes},
	{"1.", "== .1e1", hfYes},
	{"1__0", "== 10", hfCrash},
	{"_1", "== 1", hfCrash},
	{"1_", "== 1", hfCrash},
	{"+-1", "== -1", hfCrash},
	{"1e400", "== inf", hfYes},
	{"abc", "s== abc", hfYes},
	{"abc def", "s== abc def", hfNo},
	{"abc", "s!= abc", hfNo},
	{"abd", "s!= abc", hfYes},
	{"10", "s>= 9", hfNo},
	{"9", "s>= 10", hfYes},
	{"a", "s< b", hfYes},
	{"b", "s< b", hfNo},
	{"b", "s<= b", hfYes},
	{"c", "s> b", hfYes},
	{"b", "s> b", hfNo},
	{"B", "s>= a", hfNo},
	{"\u00e9", "s> z", hfYes},
	{"avx2 sse", "<in> avx", hfYes},
	{"AVX", "<in> avx", hfNo},
	{"sse", "<in> avx sse", hfNo},
	{"aes avx", "<all-in> aes avx", hfYes},
	{"aes", "<all-in> aes avx", hfNo},
	{"aesavx", "<all-in> aes avx", hfYes},
	{"a", "<or> a <or> b", hfYes},
	{"b", "<or> a <or> b", hfYes},
	{"c", "<or> a <or> b", hfNo},
	{"b", "<or> a b c", hfNo},
	{"c", "<or> a b c", hfYes},
	{"a", "<or> a <or>", hfYes},
	{"a", "<or>", hfCrash},
	{"<or>", "<or> x <or>", hfNo},
	{"4", "> 4", hfNo},
	{"> 4", "> 4", hfYes},
	{"1", "<OR> 1", hfNo},
	{"<OR> 1", "<OR> 1", hfYes},
	{"x", ">=", hfNo},
	{"x", "s==", hfNo},
	{"x", "<in>", hfNo},
	{"x", "<all-in>", hfNo},
	{"x", "", hfNo},
	{"", "", hfYes},
	{" 1", "1", hfNo},
	{"1", " 1", hfNo},
	{"1 ", "1 ", hfYes},
	{"x", "\u001cs== x", hfYes},
	{"x\u001c", "x\u001c", hfYes},
	{"x", "\u00a0s== x", hfYes},
	{"x", "\u200bs== x", hfNo},
	{"true", "true", hfYes},
	{"True", "true", hfNo},
	{"", "s== ", hfNo},
	{"", "s!= x", hfYes},
}

func TestMatchSpecAgreesWithNova(t *testing.T) {
	for _, c := range hfNovaMatchCases {
		got := hfOutcomeOf(MatchSpec(c.value, c.req))
		if got != c.want {
			t.Errorf("match(%q, %q) = %v, nova: %v", c.value, c.req, got, c.want)
		}
	}
}

func TestParseRequirement(t *testing.T) {
	cases := []struct {
		spec     string
		op       string
		operands []string
		wantErr  bool
		alts     []string
		ignored  []string
		canon    string
	}{
		{spec: "true", canon: "true"},
		{spec: " 1", canon: " 1"},
		{spec: "", canon: ""},
		{spec: "> 4", canon: "> 4"}, // not an operator: literal
		{spec: "<OR> a", canon: "<OR> a"},
		{spec: ">= 4", op: ">=", operands: []string{"4"}, canon: ">= 4"},
		{spec: "  =\t2  ", op: "=", operands: []string{"2"}, canon: "= 2"},
		{spec: ">= x", op: ">=", operands: []string{"x"}, wantErr: true, canon: ">= x"},
		{spec: "== 1_000", op: "==", operands: []string{"1_000"}, canon: "== 1_000"},
		{spec: "s==", op: "s==", wantErr: true, canon: "s=="},
		{spec: "<or>", op: "<or>", wantErr: true, canon: "<or>"},
		{spec: "<or> a <or> b", op: "<or>", operands: []string{"a", "<or>", "b"}, alts: []string{"a", "b"}, canon: "<or> a <or> b"},
		{spec: "<or> a b c", op: "<or>", operands: []string{"a", "b", "c"}, alts: []string{"a", "c"}, ignored: []string{"b"}, canon: "<or> a b c"},
		{spec: "s== abc def", op: "s==", operands: []string{"abc", "def"}, ignored: []string{"def"}, canon: "s== abc def"},
		{spec: "<all-in> aes  avx", op: "<all-in>", operands: []string{"aes", "avx"}, canon: "<all-in> aes avx"},
		{spec: "\x1cs== x", op: "s==", operands: []string{"x"}, canon: "s== x"},
	}
	for _, c := range cases {
		r, err := ParseRequirement(c.spec)
		if (err != nil) != c.wantErr {
			t.Errorf("ParseRequirement(%q) error = %v, want error %v", c.spec, err, c.wantErr)
		}
		if err != nil && models.KindOf(err) != models.Invalid {
			t.Errorf("ParseRequirement(%q) error kind = %v, want invalid", c.spec, models.KindOf(err))
		}
		if r.Op != c.op || !reflect.DeepEqual(hfNilIfEmpty(r.Operands), c.operands) {
			t.Errorf("ParseRequirement(%q) = op %q operands %q, want %q %q", c.spec, r.Op, r.Operands, c.op, c.operands)
		}
		if c.op == "" && r.Literal != c.spec {
			t.Errorf("ParseRequirement(%q) literal = %q", c.spec, r.Literal)
		}
		if !reflect.DeepEqual(r.Alternatives(), c.alts) {
			t.Errorf("%q alternatives = %q, want %q", c.spec, r.Alternatives(), c.alts)
		}
		if !reflect.DeepEqual(r.Ignored(), c.ignored) {
			t.Errorf("%q ignored = %q, want %q", c.spec, r.Ignored(), c.ignored)
		}
		if r.String() != c.canon {
			t.Errorf("%q canonical = %q, want %q", c.spec, r.String(), c.canon)
		}
	}
}

func hfNilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// hfHost builds a host whose root provider is in aggregates with the given
// metadata.
func hfHost(name string, mds ...map[string]string) *HostState {
	h := &HostState{Provider: &models.Provider{UUID: name + "-uuid", Name: name}}
	for i, md := range mds {
		h.Aggregates = append(h.Aggregates, &models.Aggregate{ID: int64(i + 1), Name: name + "-agg", Metadata: md})
	}
	return h
}

func hfRequest(specs map[string]string) *Request {
	return &Request{Flavor: &models.Flavor{Name: "f", ExtraSpecs: specs}, NumInstances: 1, Settings: models.DefaultSettings()}
}

// hfNovaFilterCases are answers of nova's AggregateInstanceExtraSpecsFilter
// (through nova_oracle.py): aggregate metadata of one host, flavor extra
// specs, whether the host passes.
var hfNovaFilterCases = []struct {
	aggs  []map[string]string
	specs map[string]string
	want  bool
}{
	{[]map[string]string{{"ssd": "true"}}, map[string]string{"ssd": "true"}, true},
	{[]map[string]string{{"ssd": "false"}}, map[string]string{"ssd": "true"}, false},
	{[]map[string]string{{"ssd": "true"}, {"ssd": "false"}}, map[string]string{"ssd": "false"}, true},
	{[]map[string]string{{"ssd": " a , b"}}, map[string]string{"aggregate_instance_extra_specs:ssd": "b"}, true},
	{[]map[string]string{}, map[string]string{"hw:cpu_policy": "dedicated"}, true},
	{[]map[string]string{}, map[string]string{"ssd": "true"}, false},
	{[]map[string]string{{}}, map[string]string{}, true},
	{[]map[string]string{{"ssd": "true"}}, map[string]string{"Aggregate_Instance_Extra_Specs:ssd": "false"}, true},
	{[]map[string]string{{"ssd": "true"}}, map[string]string{":ssd": "false"}, true},
	{[]map[string]string{{"aggregate_instance_extra_specs": "x"}}, map[string]string{"aggregate_instance_extra_specs": "x"}, true},
	{[]map[string]string{{"foo:bar": "1"}}, map[string]string{"aggregate_instance_extra_specs:foo:bar": "1"}, true},
	{[]map[string]string{{"cpu": "aes,avx"}}, map[string]string{"cpu": "<all-in> aes avx"}, false},
	{[]map[string]string{{"cpu": "aes avx"}}, map[string]string{"cpu": "<all-in> aes avx"}, true},
	{[]map[string]string{{"k": ""}}, map[string]string{"k": ""}, true},
	{[]map[string]string{{"k": "a,,b"}}, map[string]string{"k": ""}, true},
	{[]map[string]string{{"k": "1,2"}}, map[string]string{"k": "1,2"}, false},
	{[]map[string]string{{"ram": "16"}}, map[string]string{"aggregate_instance_extra_specs:ram": ">= 8", "ssd": "true"}, false},
	{[]map[string]string{{"ram": "16", "ssd": "true"}}, map[string]string{"aggregate_instance_extra_specs:ram": ">= 8", "ssd": "true"}, true},
	{[]map[string]string{{"ram": "4"}, {"ram": "32"}}, map[string]string{"ram": "= 8"}, true},
	{[]map[string]string{{"k": "v"}}, map[string]string{"k": "<or> x <or> v", "quota:cpu_shares": "1", "resources:VCPU": "2", "trait:CUSTOM_X": "required"}, true},
}

func TestAggregateInstanceExtraSpecsFilterAgreesWithNova(t *testing.T) {
	for _, c := range hfNovaFilterCases {
		v := AggregateInstanceExtraSpecsFilter{}.Filter(hfHost("h", c.aggs...), hfRequest(c.specs))
		if v.Passed != c.want {
			t.Errorf("aggregates %v, extra specs %v: passed %v (%s), nova: %v", c.aggs, c.specs, v.Passed, v.Reason, c.want)
		}
	}
}

func TestAggregateInstanceExtraSpecsFilterReasons(t *testing.T) {
	cases := []struct {
		aggs   []map[string]string
		specs  map[string]string
		passed bool
		reason string
	}{
		{[]map[string]string{{"ssd": "false"}}, map[string]string{"aggregate_instance_extra_specs:ssd": "true"}, false,
			"ssd: aggregate values {false} do not satisfy 'true'"},
		{[]map[string]string{{"ssd": "false, nvme"}}, map[string]string{"ssd": "true"}, false,
			"ssd: aggregate values {false, nvme} do not satisfy 'true'"},
		{nil, map[string]string{"ssd": "true"}, false,
			`ssd: no aggregate of the host has this key (required by "true")`},
		{[]map[string]string{{"ram": "fast"}, {"ram": "32"}}, map[string]string{"ram": ">= 8"}, false,
			`ram: aggregate value "fast" cannot be compared with '>= 8': value "fast" is not a number, as '>=' requires (nova raises ValueError)`},
		{[]map[string]string{{"k": "a"}}, map[string]string{"k": "<or>"}, false,
			`k: extra spec "<or>" cannot be evaluated: '<or>' needs at least one alternative (nova raises IndexError on a bare '<or>')`},
		{[]map[string]string{{"a": "1"}}, map[string]string{"a": "2", "b": "3"}, false,
			"a: aggregate values {1} do not satisfy '2'; b: no aggregate of the host has this key (required by \"3\")"},
		{[]map[string]string{{"a": "1"}}, map[string]string{"hw:cpu_policy": "dedicated"}, true, "no extra spec is for this filter"},
		{nil, nil, true, "the flavor has no extra specs"},
	}
	for _, c := range cases {
		v := AggregateInstanceExtraSpecsFilter{}.Filter(hfHost("h", c.aggs...), hfRequest(c.specs))
		if v.Passed != c.passed || v.Reason != c.reason {
			t.Errorf("aggregates %v, specs %v:\n got  %v %q\n want %v %q", c.aggs, c.specs, v.Passed, v.Reason, c.passed, c.reason)
		}
	}
}

func TestHostAggregateMetadataUnitesAndSplits(t *testing.T) {
	h := hfHost("h", map[string]string{"k": "b , a", "e": ""}, map[string]string{"k": "a,c", "x": "a,,b"})
	got := HostAggregateMetadata(h)
	want := HostMetadata{"k": {"a", "b", "c"}, "e": {""}, "x": {"", "a", "b"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("HostAggregateMetadata = %v, want %v", got, want)
	}
	if strings.Join(HostAggregateMetadata(nil)["k"], "") != "" {
		t.Error("nil host has metadata")
	}
}
