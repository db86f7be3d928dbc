package pycompat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// python3 is Debian's interpreter, the one nova and placement run on.
func python3(t *testing.T) string {
	t.Helper()
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import json, unicodedata").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: %v", python, err)
		}
		t.Skipf("%s is missing (apt-get install python3): %v", python, err)
	}
	return python
}

// oracleScript answers one JSON line per input line: for {"s": text} what
// Python's str methods, float() and repr() make of text, for {"j": doc}
// repr() and str() of json.loads(doc).
const oracleScript = `
import json, sys, unicodedata
for line in sys.stdin:
    case = json.loads(line)
    out = {}
    if "s" in case:
        s = case["s"]
        out["repr"] = repr(s)
        out["strip"] = s.strip()
        out["split"] = s.split()
        out["isprintable"] = s.isprintable()
        out["spaces"] = [c.isspace() for c in s]
        out["unassigned"] = [unicodedata.category(c) == "Cn" for c in s]
        try:
            out["float"] = repr(float(s))
        except ValueError:
            out["float"] = None
    else:
        v = json.loads(case["j"])
        out["repr"] = repr(v)
        out["str"] = str(v)
        out["unassigned"] = [unicodedata.category(c) == "Cn" for c in case["j"]]
    print(json.dumps(out))
`

type oracleAnswer struct {
	Repr        string   `json:"repr"`
	Str         string   `json:"str"`
	Strip       string   `json:"strip"`
	Split       []string `json:"split"`
	IsPrintable bool     `json:"isprintable"`
	Spaces      []bool   `json:"spaces"`
	Unassigned  []bool   `json:"unassigned"`
	Float       *string  `json:"float"`
}

// askPython sends cases (each {"s": …} or {"j": …}) and returns the answers.
func askPython(t *testing.T, cases []map[string]string) []oracleAnswer {
	t.Helper()
	python := python3(t)
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, c := range cases {
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(python, "-c", oracleScript)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var answers []oracleAnswer
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var a oracleAnswer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("python line %q: %v", sc.Text(), err)
		}
		answers = append(answers, a)
	}
	if len(answers) != len(cases) {
		t.Fatalf("python answered %d of %d cases", len(answers), len(cases))
	}
	return answers
}

// interesting are characters where Python and Go are likely to differ:
// whitespace of every kind, separators, controls, format characters,
// quotes, Unicode digits, signs and letters of float syntax.
var interesting = []rune("\t\n\v\f\r \x1c\x1d\x1e\x1f\x7f\x85\xa0\xad\u1680\u180e\u2000\u200a\u200b\u200d" +
	"\u2028\u2029\u202f\u205f\u3000\ufeff\ufffd'\"\\0123456789._+-eEinfatyINFATY\u0660\u0663\u06f5\u0966" +
	"\uff10\uff19\U0001D7CE\U0001D7D9\U000E0001\U000F0000\u0378\U0001FAF8\u00e9\u4e2d\U0001F600x,:")

// generatedStrings mixes short strings of interesting characters with
// random characters from every plane, and numbers in many spellings.
func generatedStrings(n int) []string {
	rng := rand.New(rand.NewSource(1))
	out := []string{"", " ", "1", "-0", "1e16", "1e-5", "0.1", "nan", "-iNF", " 1_0.5e-1_0 ", "1e400", "-1e-400",
		"123456789012345678901234567890", "0.30000000000000004", "5e-324", "1.7976931348623157e308"}
	for i := 0; len(out) < n; i++ {
		var b strings.Builder
		for j := rng.Intn(8); j >= 0; j-- {
			switch rng.Intn(4) {
			case 0, 1:
				b.WriteRune(interesting[rng.Intn(len(interesting))])
			case 2:
				b.WriteRune(rune(rng.Intn(0x3000)))
			default:
				r := rune(rng.Intn(0x110000))
				if !utf8.ValidRune(r) {
					r = 'z'
				}
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
		if i%4 == 0 {
			// A float in a random spelling, sometimes wrapped in spaces.
			f := rng.NormFloat64() * float64(rng.Int63n(1<<uint(rng.Intn(62)+1)))
			out = append(out, strconv.FormatFloat(f, "eEfg"[rng.Intn(4)], rng.Intn(20)-1, 64))
		}
	}
	return out
}

// corpusStrings reads the string arguments of a fuzz target's corpus
// (testdata/fuzz/<name>), so that what fuzzing found is checked too.
func corpusStrings(t *testing.T, name string) []string {
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", name, "*"))
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			lit, ok := strings.CutPrefix(line, "string(")
			if !ok {
				continue
			}
			// JSON carries only UTF-8 to Python.
			if s, err := strconv.Unquote(strings.TrimSuffix(lit, ")")); err == nil && utf8.ValidString(s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// TestStringsAgainstPython compares Strip, Split, IsSpace, IsPrintable,
// ParseFloat/ReprFloat and ReprString with Python on thousands of strings.
func TestStringsAgainstPython(t *testing.T) {
	strs := append(append(generatedStrings(6000), fuzzSeeds...), corpusStrings(t, "FuzzPyString")...)
	cases := make([]map[string]string, len(strs))
	for i, s := range strs {
		cases[i] = map[string]string{"s": s}
	}
	answers := askPython(t, cases)
	skew, failures := 0, 0
	for i, s := range strs {
		a := answers[i]
		if failures > 30 {
			t.Fatal("too many differences")
		}
		// Python 3.11 knows Unicode 14; characters assigned since are
		// unprintable to it and printable to Go. Only those may differ.
		newer := newerThanPython(s, a.Unassigned)
		for j, r := range []rune(s) {
			if IsSpace(r) != a.Spaces[j] {
				t.Errorf("IsSpace(%U) = %v, Python %v", r, !a.Spaces[j], a.Spaces[j])
				failures++
			}
		}
		if got := Strip(s); got != a.Strip {
			t.Errorf("Strip(%q) = %q, Python %q", s, got, a.Strip)
			failures++
		}
		if got := Split(s); !reflect.DeepEqual(got, a.Split) && !(len(got) == 0 && len(a.Split) == 0) {
			t.Errorf("Split(%q) = %q, Python %q", s, got, a.Split)
			failures++
		}
		f, ok := ParseFloat(s)
		switch {
		case ok != (a.Float != nil):
			t.Errorf("ParseFloat(%q) ok = %v, Python %v", s, ok, a.Float)
			failures++
		case ok && ReprFloat(f) != *a.Float:
			t.Errorf("repr(float(%q)) = %s, Python %s", s, ReprFloat(f), *a.Float)
			failures++
		}
		if newer {
			skew++
			continue
		}
		printable := true
		for _, r := range s {
			printable = printable && IsPrintable(r)
		}
		if printable != a.IsPrintable {
			t.Errorf("isprintable(%q) = %v, Python %v", s, printable, a.IsPrintable)
			failures++
		}
		if got := ReprString(s); got != a.Repr {
			t.Errorf("ReprString(%q) = %s, Python %s", s, got, a.Repr)
			failures++
		}
	}
	t.Logf("%d strings compared; %d hold characters newer than Python's Unicode tables", len(strs), skew)
}

// generatedDocuments are JSON documents of nested values with repeated
// keys, numbers in every spelling and strings with escapes.
func generatedDocuments(n int) []string {
	rng := rand.New(rand.NewSource(2))
	strs := generatedStrings(200)
	nums := []string{"0", "-0", "1", "-17", "12345678901234567890123", "1.0", "-0.0", "1e3", "1E-7", "2.5e+20",
		"1e400", "0.1", "123.456e5", "1e16", "9007199254740993"}
	var value func(depth int) string
	value = func(depth int) string {
		k := rng.Intn(8)
		if depth > 3 {
			k = rng.Intn(5)
		}
		switch k {
		case 0:
			return []string{"null", "true", "false"}[rng.Intn(3)]
		case 1, 2:
			return nums[rng.Intn(len(nums))]
		case 3, 4:
			b, _ := json.Marshal(strs[rng.Intn(len(strs))])
			return string(b)
		case 5:
			var parts []string
			for i := rng.Intn(4); i > 0; i-- {
				parts = append(parts, value(depth+1))
			}
			return "[" + strings.Join(parts, ", ") + "]"
		default:
			var parts []string
			keys := []string{"a", "b", "name", "z", "é", "'", "\""}
			for i := rng.Intn(5); i > 0; i-- {
				kb, _ := json.Marshal(keys[rng.Intn(len(keys))])
				parts = append(parts, string(kb)+": "+value(depth+1))
			}
			return "{" + strings.Join(parts, ", ") + "}"
		}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = value(0)
	}
	return out
}

// TestReprAgainstPython compares Repr and Str of decoded JSON with
// Python's repr and str of json.loads.
func TestReprAgainstPython(t *testing.T) {
	docs := generatedDocuments(3000)
	skew := 0
	cases := make([]map[string]string, len(docs))
	for i, d := range docs {
		cases[i] = map[string]string{"j": d}
	}
	answers := askPython(t, cases)
	failures := 0
	for i, d := range docs {
		v, err := DecodeJSON([]byte(d))
		if err != nil {
			t.Fatalf("DecodeJSON(%s): %v", d, err)
		}
		if newerThanPython(d, answers[i].Unassigned) {
			skew++
			continue
		}
		if got := Repr(v); got != answers[i].Repr {
			t.Errorf("Repr(%s) = %s, Python %s", d, got, answers[i].Repr)
			failures++
		}
		if got := Str(v); got != answers[i].Str {
			t.Errorf("Str(%s) = %s, Python %s", d, got, answers[i].Str)
			failures++
		}
		if failures > 30 {
			t.Fatal("too many differences")
		}
	}
	t.Logf("%d documents compared; %d hold characters newer than Python's Unicode tables", len(docs), skew)
}

// newerThanPython reports whether s holds a character Go's Unicode tables
// assign and Python 3.11's (Unicode 14) do not: those Python escapes in a
// repr, Go does not, and the difference is the tables', not the code's.
func newerThanPython(s string, unassigned []bool) bool {
	for j, r := range []rune(s) {
		if unassigned[j] && unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S) {
			return true
		}
	}
	return false
}
