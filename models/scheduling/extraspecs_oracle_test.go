package scheduling

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// hfNovaOracle finds nova_oracle.py (CORRAL_NOVA_ORACLE, or the project's
// shared peers directory) and a Python that can import nova; the test is
// skipped, saying why, when either is missing.
func hfNovaOracle(t *testing.T) (python, script string) {
	t.Helper()
	script = os.Getenv("CORRAL_NOVA_ORACLE")
	if script == "" {
		script = filepath.Join("..", "..", "..", "shared", "peers", "nova_oracle.py")
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("nova oracle not found at %s (set CORRAL_NOVA_ORACLE): %v", script, err)
	}
	python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import nova.scheduler.filters.extra_specs_ops").Run(); err != nil {
		t.Skipf("%s cannot import nova (apt-get install python3-nova): %v", python, err)
	}
	return python, script
}

// TestMatchAgainstLiveNova runs a hfGrid of values and requirements through
// nova's own extra_specs_ops.match and compares every answer.
func TestMatchAgainstLiveNova(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nova's code in a Python process")
	}
	python, script := hfNovaOracle(t)
	values := []string{"", "0", "1", "4", "8", "16", "-1", "1.5", "1e3", "1_0", " 7 ", "nan", "inf",
		"x", "true", "True", "abc", "abc def", "aes avx", "avx2", "a", "b", "<or>", "> 4", "0x10", "\u0664"}
	reqs := []string{"", "1", "true", "abc def", "> 4", "= 4", "= 1e1", "== 4", "!= 4", ">= 4", "<= 4",
		">= x", "== nan", "s== a", "s!= a", "s< b", "s<= a", "s> 9", "s>= 10", "s== abc def",
		"<in> av", "<in> a", "<all-in> aes avx", "<all-in> a", "<or> a <or> b", "<or> a b",
		"<or> a b c", "<or> 4", "<or> x <or>", "<or>", ">=", "<OR> a", "\u00a0== 4"}
	type match struct {
		Op    string  `json:"op"`
		Value *string `json:"value"`
		Req   string  `json:"req"`
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	var cases []match
	for i := range values {
		for _, r := range reqs {
			c := match{Op: "extra_specs_match", Value: &values[i], Req: r}
			cases = append(cases, c)
			if err := enc.Encode(c); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command(python, script)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("nova oracle: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var line struct {
			Case   match `json:"case"`
			Result struct {
				Match *bool `json:"match"`
			} `json:"result"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("oracle line %q: %v", sc.Text(), err)
		}
		if line.Error != "" {
			t.Fatalf("oracle rejected case %+v: %s", line.Case, line.Error)
		}
		want := hfCrash
		if line.Result.Match != nil {
			want = hfOutcomeOf(*line.Result.Match, nil)
		}
		got := hfOutcomeOf(MatchSpec(*line.Case.Value, line.Case.Req))
		if got != want {
			t.Errorf("match(%q, %q) = %v, nova: %v", *line.Case.Value, line.Case.Req, got, want)
		}
		n++
	}
	if n != len(cases) {
		t.Fatalf("oracle answered %d of %d cases", n, len(cases))
	}
}

// TestExtraSpecsFilterAgainstLiveNova runs hosts (sets of aggregates) and
// flavors through nova's AggregateInstanceExtraSpecsFilter. Where nova
// raises, corral must fail the host; where nova's answer would depend on
// Python's set order (one value raises, another matches) corral fails it too.
func TestExtraSpecsFilterAgainstLiveNova(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nova's code in a Python process")
	}
	python, script := hfNovaOracle(t)
	hosts := [][]map[string]string{
		nil,
		{{}},
		{{"ssd": "true"}},
		{{"ssd": "true"}, {"ssd": "false"}},
		{{"ssd": "true , nvme", "ram": "16"}},
		{{"ram": "8"}, {"ram": "32"}},
		{{"ram": "fast"}},
		{{"cpu": "aes,avx"}, {"foo:bar": "1"}},
		{{"cpu": "aes avx2", "aggregate_instance_extra_specs": "x"}},
		{{"k": ""}},
	}
	flavors := []map[string]string{
		{},
		{"ssd": "true"},
		{"aggregate_instance_extra_specs:ssd": "nvme"},
		{"ssd": "<or> false <or> nvme"},
		{"ram": ">= 16"},
		{"aggregate_instance_extra_specs:ram": "= 32", "ssd": "true"},
		{"ram": "s< 2"},
		{"cpu": "<in> avx"},
		{"cpu": "<all-in> aes avx"},
		{"aggregate_instance_extra_specs:foo:bar": "1"},
		{"hw:cpu_policy": "dedicated", "trait:CUSTOM_X": "required"},
		{"Aggregate_Instance_Extra_Specs:ssd": "x"},
		{"aggregate_instance_extra_specs": "x"},
		{"k": ""},
	}
	type filterCase struct {
		Op         string            `json:"op"`
		Aggregates []map[string]any  `json:"aggregates"`
		ExtraSpecs map[string]string `json:"extra_specs"`
		hostMD     []map[string]string
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	var cases []filterCase
	for _, h := range hosts {
		aggs := []map[string]any{}
		for _, md := range h {
			aggs = append(aggs, map[string]any{"metadata": md})
		}
		for _, f := range flavors {
			c := filterCase{Op: "aggregate_instance_extra_specs", Aggregates: aggs, ExtraSpecs: f, hostMD: h}
			cases = append(cases, c)
			if err := enc.Encode(c); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command(python, script)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("nova oracle: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	i := 0
	for ; sc.Scan(); i++ {
		var line struct {
			Result struct {
				Passes *bool `json:"passes"`
			} `json:"result"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Error != "" || i >= len(cases) {
			t.Fatalf("oracle line %d %q: %v", i, sc.Text(), err)
		}
		c := cases[i]
		v := AggregateInstanceExtraSpecsFilter{}.Filter(hfHost("h", c.hostMD...), hfRequest(c.ExtraSpecs))
		want := line.Result.Passes != nil && *line.Result.Passes
		if v.Passed != want {
			t.Errorf("aggregates %v, extra specs %v: passed %v (%s); nova passes=%v", c.hostMD, c.ExtraSpecs, v.Passed, v.Reason, hfDescribePasses(line.Result.Passes))
		}
	}
	if i != len(cases) {
		t.Fatalf("oracle answered %d of %d cases", i, len(cases))
	}
}

func hfDescribePasses(p *bool) string {
	if p == nil {
		return "raises"
	}
	if *p {
		return "true"
	}
	return "false"
}
