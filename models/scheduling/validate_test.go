package scheduling

import (
	"reflect"
	"strings"
	"testing"

	"corral/models"
)

// hfWant is one expected problem: key, severity and a fragment of the message.
type hfWant struct {
	key, sev, fragment string
}

func hfCheckProblems(t *testing.T, name string, got []Problem, wants []hfWant) {
	t.Helper()
	if len(got) != len(wants) {
		t.Errorf("%s: %d problems, want %d:\n%s", name, len(got), len(wants), hfDumpProblems(got))
		return
	}
	for i, w := range wants {
		g := got[i]
		if g.Key != w.key || g.Severity != w.sev || !strings.Contains(g.Message, w.fragment) {
			t.Errorf("%s: problem %d = %+v, want key %q %s containing %q", name, i, g, w.key, w.sev, w.fragment)
		}
	}
}

func hfDumpProblems(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.Key + " " + p.Severity + ": " + p.Message + "\n")
	}
	return b.String()
}

const (
	hfErr  = SeverityError
	hfWarn = SeverityWarning
)

func TestValidateAggregateMetadata(t *testing.T) {
	s := models.DefaultSettings()
	typeOn := s
	typeOn.EnabledFilters = append([]string{models.FilterAggregateInstanceType}, s.EnabledFilters...)
	isolated := s
	isolated.EnableIsolatedAggregateFiltering = true
	limit := s
	limit.LimitTenantsToPlacementAggregate = true
	cases := []struct {
		name  string
		md    map[string]string
		s     models.Settings
		wants []hfWant
	}{
		{"clean", map[string]string{"ssd": "true", "x-y.z w": "1", "filter_tenant_id": "tA", "filter_tenant_id2": "tB", "reservation:r1": "true"}, s, nil},
		{"empty key", map[string]string{"": "x"}, s, []hfWant{{"", hfErr, "must not be empty"}}},
		{"bad key", map[string]string{"ssd/fast": "x"}, s, []hfWant{{"ssd/fast", hfErr, "only letters"}}},
		{"long value", map[string]string{"k": strings.Repeat("x", 256)}, s, []hfWant{{"k", hfErr, "at most 255"}}},
		{"fmc true, filter off", map[string]string{"force_metadata_check": "True"}, s, []hfWant{{"force_metadata_check", hfWarn, "not enabled"}}},
		{"fmc true, filter on", map[string]string{"force_metadata_check": "true"}, typeOn, nil},
		{"fmc false", map[string]string{"force_metadata_check": "False"}, s, nil},
		{"fmc bad", map[string]string{"force_metadata_check": "yes"}, s, []hfWant{{"force_metadata_check", hfErr, "True or False"}}},
		{"tenant comma list", map[string]string{"filter_tenant_id": "tA,tB"}, s, []hfWant{{"filter_tenant_id", hfWarn, "one project per filter_tenant_id<suffix>"}}},
		{"tenant comma list, pre-filter on", map[string]string{"filter_tenant_id": "tA,tB"}, limit, []hfWant{{"filter_tenant_id", hfWarn, "limit_tenants_to_placement_aggregate is on"}}},
		{"tenant empty entry", map[string]string{"filter_tenant_id": "tA,,tB"}, s, []hfWant{{"filter_tenant_id", hfWarn, "comma list"}, {"filter_tenant_id", hfWarn, "empty entry"}}},
		{"tenant empty", map[string]string{"filter_tenant_id3": " "}, s, []hfWant{{"filter_tenant_id3", hfWarn, "accept nobody"}}},
		{"tenant spaces", map[string]string{"filter_tenant_id": " tA"}, s, []hfWant{{"filter_tenant_id", hfWarn, "surrounding spaces"}}},
		{"az", map[string]string{"availability_zone": "az1"}, s, []hfWant{{"availability_zone", hfWarn, "availability zone field"}}},
		{"az empty", map[string]string{"availability_zone": ""}, s, []hfWant{{"availability_zone", hfErr, "empty availability zone"}}},
		{"az colon", map[string]string{"availability_zone": "az:1"}, s, []hfWant{{"availability_zone", hfErr, "':'"}}},
		{"trait required, filtering off", map[string]string{"trait:CUSTOM_GPU": "required"}, s, []hfWant{{"trait:CUSTOM_GPU", hfWarn, "enable_isolated_aggregate_filtering is off"}}},
		{"trait required, filtering on", map[string]string{"trait:CUSTOM_GPU": "required"}, isolated, nil},
		{"trait other value", map[string]string{"trait:CUSTOM_GPU": "yes"}, isolated, []hfWant{{"trait:CUSTOM_GPU", hfWarn, "only the value 'required'"}}},
		{"trait bad name", map[string]string{"trait:custom_gpu": "required"}, isolated, []hfWant{{"trait:custom_gpu", hfErr, "not a trait name"}}},
		{"reservation without id", map[string]string{"reservation:": "true"}, s, []hfWant{{"reservation:", hfErr, "needs an id"}}},
		{"reservation spaces", map[string]string{"reservation: r1": "true"}, s, []hfWant{{"reservation: r1", hfWarn, "surrounding spaces"}}},
		{"blazar convention", map[string]string{"reservation": "r1"}, s, []hfWant{{"reservation", hfWarn, "Blazar's convention"}}},
		{"scoped aggregate key", map[string]string{"aggregate_instance_extra_specs:ssd": "true"}, s, []hfWant{{"aggregate_instance_extra_specs:ssd", hfWarn, `name this key "ssd"`}}},
		{"multiplier", map[string]string{KeySoftAffinityMultiplier: "high", KeySoftAntiAffinityMultiplier: "-1"}, s,
			[]hfWant{{KeySoftAffinityMultiplier, hfWarn, "not a number"}, {KeySoftAntiAffinityMultiplier, hfWarn, "negative"}}},
		{"literal operator", map[string]string{"ram": ">= 8"}, s, []hfWant{{"ram", hfWarn, "compared literally"}}},
		{"literal sentinel", map[string]string{"key": "*"}, s, []hfWant{{"key", hfWarn, "compared literally"}}},
		{"forced sentinels", map[string]string{"force_metadata_check": "True", "a": "*", "b": "<or> 1 <or> ~", "c": "!"}, typeOn, nil},
		{"forced bang mixed", map[string]string{"force_metadata_check": "True", "a": "<or> ! <or> 1"}, typeOn, []hfWant{{"a", hfErr, "'!' (must be absent) cannot be combined"}}},
		{"forced bare or", map[string]string{"force_metadata_check": "True", "a": "<or>"}, typeOn, []hfWant{{"a", hfErr, "needs at least one alternative"}}},
		{"forced numeric", map[string]string{"force_metadata_check": "True", "ram": ">= lots", "disk": ">= 8"}, typeOn, []hfWant{{"ram", hfErr, "not a number"}}},
		{"forced tenant key", map[string]string{"force_metadata_check": "True", "filter_tenant_id": "tA"}, typeOn, []hfWant{{"filter_tenant_id", hfWarn, "requires every flavor to carry this key"}}},
	}
	for _, c := range cases {
		hfCheckProblems(t, c.name, ValidateAggregateMetadata(c.md, c.s), c.wants)
	}
}

func TestValidateExtraSpecs(t *testing.T) {
	cases := []struct {
		name  string
		specs map[string]string
		wants []hfWant
	}{
		{"clean", map[string]string{"aggregate_instance_extra_specs:ssd": "true", "ram": ">= 8", "cpu": "<or> avx <or> sse",
			"hw:cpu_policy": "dedicated", "trait:CUSTOM_GPU": "required", "reservation:r1": "true", "resources:VCPU": "2"}, nil},
		{"numeric operand", map[string]string{"ram": ">= lots"}, []hfWant{{"ram", hfErr, `"lots" is not a number`}}},
		{"bare or", map[string]string{"k": "<or>"}, []hfWant{{"k", hfErr, "IndexError"}}},
		{"no operand", map[string]string{"k": "s=="}, []hfWant{{"k", hfErr, "needs an operand"}}},
		{"or without separators", map[string]string{"k": "<or> a b c"}, []hfWant{{"k", hfWarn, "nova skips {b} as separators"}}},
		{"extra words", map[string]string{"k": "s== abc def"}, []hfWant{{"k", hfWarn, "nova ignores {def}"}}},
		{"all-in takes all", map[string]string{"k": "<all-in> aes avx"}, nil},
		{"bogus op", map[string]string{"k": "> 4"}, []hfWant{{"k", hfWarn, `">" is not an operator`}}},
		{"wrong case op", map[string]string{"k": "<OR> a <OR> b"}, []hfWant{{"k", hfWarn, `"<OR>" is not an operator`}}},
		{"spaces", map[string]string{"k": " true"}, []hfWant{{"k", hfWarn, "never match"}}},
		{"comma", map[string]string{"k": "a,b"}, []hfWant{{"k", hfWarn, "split at commas"}}},
		{"sentinel with extra-specs filter", map[string]string{"k": "*"}, []hfWant{{"k", hfWarn, "compares them literally"}}},
		{"sentinel on other scope", map[string]string{"hw:x": "~"}, nil},
		{"bang mixed", map[string]string{"hw:x": "<or> ! <or> ~"}, []hfWant{{"hw:x", hfErr, "cannot be combined"}}},
		{"empty scope key", map[string]string{"aggregate_instance_extra_specs:": "x"}, []hfWant{{"aggregate_instance_extra_specs:", hfErr, "needs a key"}}},
		{"scope case", map[string]string{"Aggregate_Instance_Extra_Specs:ssd": "true"}, []hfWant{{"Aggregate_Instance_Extra_Specs:ssd", hfWarn, "case-sensitive"}}},
		{"force key", map[string]string{"force_metadata_check": "True"}, []hfWant{{"force_metadata_check", hfWarn, "belongs in aggregate metadata"}}},
		{"trait value", map[string]string{"trait:CUSTOM_GPU": "yes"}, []hfWant{{"trait:CUSTOM_GPU", hfErr, "'required' or 'forbidden'"}}},
		{"trait name", map[string]string{"trait:gpu": "required"}, []hfWant{{"trait:gpu", hfErr, "not a trait name"}}},
		{"reservation id", map[string]string{"reservation:": "true"}, []hfWant{{"reservation:", hfErr, "needs an id"}}},
		{"bad key", map[string]string{"a/b": "1"}, []hfWant{{"a/b", hfErr, "only letters"}}},
		{"sorted by key", map[string]string{"b": ">= x", "a": "<or>"}, []hfWant{{"a", hfErr, "<or>"}, {"b", hfErr, "not a number"}}},
	}
	for _, c := range cases {
		hfCheckProblems(t, c.name, ValidateExtraSpecs(c.specs), c.wants)
	}
	// Without AggregateInstanceExtraSpecsFilter, sentinels are not a surprise.
	s := models.DefaultSettings()
	s.EnabledFilters = []string{models.FilterAggregateInstanceType}
	hfCheckProblems(t, "sentinel, type filter only", ValidateExtraSpecsFor(map[string]string{"k": "<or> * <or> ~"}, s), nil)
	if !HasErrors(ValidateExtraSpecs(map[string]string{"k": "<or>"})) || HasErrors(ValidateExtraSpecs(map[string]string{"k": "> 4"})) {
		t.Error("HasErrors disagrees with the severities")
	}
}

func TestTenantTags(t *testing.T) {
	md := map[string]string{"filter_tenant_id": "tB, tA", "filter_tenant_id2": "tC", "filter_tenant_ids": "tA,,", "ssd": "tZ"}
	if got, want := TenantTags(md), []string{"tA", "tB", "tC"}; !reflect.DeepEqual(got, want) {
		t.Errorf("TenantTags = %v, want %v", got, want)
	}
	if got := TenantTags(nil); len(got) != 0 {
		t.Errorf("TenantTags(nil) = %v", got)
	}
}

func TestSetTenantTags(t *testing.T) {
	cases := []struct {
		name     string
		md       map[string]string
		projects []string
		want     map[string]string
	}{
		{"new", map[string]string{"ssd": "true"}, []string{"tA", "tB"},
			map[string]string{"ssd": "true", "filter_tenant_id": "tA", "filter_tenant_id2": "tB"}},
		{"stable suffixes", map[string]string{"filter_tenant_id": "tA", "filter_tenant_id2": "tB", "filter_tenant_id3": "tC"}, []string{"tC", "tD"},
			map[string]string{"filter_tenant_id3": "tC", "filter_tenant_id": "tD"}},
		{"comma list split", map[string]string{"filter_tenant_id": "tA,tB"}, []string{"tA", "tB", "tA"},
			map[string]string{"filter_tenant_id": "tA", "filter_tenant_id2": "tB"}},
		{"custom key kept", map[string]string{"filter_tenant_id_gr1": "tX"}, []string{"tX", "tY"},
			map[string]string{"filter_tenant_id_gr1": "tX", "filter_tenant_id": "tY"}},
		{"clear", map[string]string{"filter_tenant_id": "tA", "az": "x"}, nil, map[string]string{"az": "x"}},
		{"trim and drop empty", nil, []string{" tA ", "", "tB,tC"},
			map[string]string{"filter_tenant_id": "tA", "filter_tenant_id2": "tB", "filter_tenant_id3": "tC"}},
	}
	for _, c := range cases {
		before := map[string]string{}
		for k, v := range c.md {
			before[k] = v
		}
		got := SetTenantTags(c.md, c.projects)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: SetTenantTags = %v, want %v", c.name, got, c.want)
		}
		if len(c.md) > 0 && !reflect.DeepEqual(c.md, before) {
			t.Errorf("%s: input modified: %v", c.name, c.md)
		}
		// Every result is one project per key and round-trips.
		if ps := ValidateAggregateMetadata(got, models.DefaultSettings()); HasErrors(ps) || strings.Contains(hfDumpProblems(ps), "comma") {
			t.Errorf("%s: result has problems:\n%s", c.name, hfDumpProblems(ps))
		}
		wantTags := orderedTags(c.projects, true)
		if gotTags := TenantTags(got); len(gotTags) != len(wantTags) {
			t.Errorf("%s: TenantTags(result) = %v, want %v", c.name, gotTags, wantTags)
		}
	}
}

func TestReservationTags(t *testing.T) {
	md := map[string]string{"reservation:r2": "x", "reservation:r1": "true", "reservation:": "true", "reservation": "r9", "ssd": "true"}
	if got, want := ReservationTags(md, "reservation:"), []string{"r1", "r2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ReservationTags = %v, want %v", got, want)
	}
	if got := ReservationTags(md, ""); got != nil {
		t.Errorf("ReservationTags with no prefix = %v", got)
	}
	got := SetReservationTags(md, "reservation:", []string{"r2", " r3 ", ""})
	want := map[string]string{"reservation:r2": "x", "reservation:r3": ReservationTagValue, "reservation": "r9", "ssd": "true"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SetReservationTags = %v, want %v", got, want)
	}
	if _, ok := md["reservation:r3"]; ok || len(md) != 5 {
		t.Errorf("input modified: %v", md)
	}
	if got := SetReservationTags(md, "", []string{"r5"}); !reflect.DeepEqual(got, md) {
		t.Errorf("SetReservationTags with no prefix = %v", got)
	}
	if got := SetReservationTags(map[string]string{"blazar:r1": "true"}, "blazar:", nil); len(got) != 0 {
		t.Errorf("clearing with another prefix = %v", got)
	}
}
