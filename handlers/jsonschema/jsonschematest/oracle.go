// Package jsonschematest compares schema errors with Python's: it runs
// Debian's /usr/bin/python3 on generated request bodies, with the service's
// own validator (Nova's) or jsonschema with the service's schemas copied
// (Placement's), and returns Python's message for each.
package jsonschematest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"corral/models/pycompat"
)

// Python is Debian's interpreter. The test is skipped, saying why, when it
// cannot import modules; with CI set it fails instead.
func Python(t testing.TB, modules ...string) string {
	t.Helper()
	const python = "/usr/bin/python3"
	imports := "import json"
	for _, m := range modules {
		imports += ", " + m
	}
	if out, err := exec.Command(python, "-c", imports).CombinedOutput(); err != nil {
		msg := python + " cannot " + imports + " (apt-get install python3-jsonschema python3-nova): " + err.Error() + " " + lastLine(out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return python
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// Case is one body for one of the prelude's schemas.
type Case struct {
	Schema   string `json:"schema"`
	Instance string `json:"instance"`
}

// Answer is Python's verdict: Message is "" when the body is valid; Raised
// is set when the validator raised something else (Python's own crash).
type Answer struct {
	Message *string `json:"message"`
	Raised  string  `json:"raised"`
}

// loop is run after the prelude, which defines SCHEMAS: name -> a function
// of the decoded body returning the message, or None when it is valid.
const loop = `
import json, sys
for line in sys.stdin:
    case = json.loads(line)
    out = {}
    try:
        out["message"] = SCHEMAS[case["schema"]](json.loads(case["instance"]))
    except Exception as e:
        out["raised"] = type(e).__name__ + ": " + str(e)
    print(json.dumps(out), flush=False)
`

// Ask runs prelude+loop on cases and returns one answer per case.
func Ask(t testing.TB, python, prelude string, cases []Case) []Answer {
	t.Helper()
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, c := range cases {
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(python, "-W", "ignore", "-c", prelude+loop)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var answers []Answer
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var a Answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("python line %q: %v", sc.Text(), err)
		}
		answers = append(answers, a)
	}
	if len(answers) != len(cases) {
		t.Fatalf("python answered %d of %d cases\n%s", len(answers), len(cases), stderr.String())
	}
	return answers
}

// Mutations derives n bodies from seeds (JSON documents): values replaced
// by awkward ones (from pool and a built-in set), keys dropped, added or
// repeated, objects and arrays wrapped or emptied. The same seed gives the
// same bodies.
func Mutations(seeds []string, pool []any, n int, seed int64) []string {
	rng := rand.New(rand.NewSource(seed))
	pool = append(append([]any(nil), pool...), awkward...)
	var docs []any
	for _, s := range seeds {
		v, err := pycompat.DecodeJSON([]byte(s))
		if err != nil {
			panic("jsonschematest: bad seed " + s)
		}
		docs = append(docs, v)
	}
	out := make([]string, 0, n)
	for len(out) < n {
		v := clone(docs[rng.Intn(len(docs))])
		for i := rng.Intn(3); i >= 0; i-- {
			v = mutate(rng, v, pool, 0)
		}
		out = append(out, Encode(v))
	}
	return out
}

var awkward = []any{
	nil, true, false, "", " ", "x", "a b", " lead", "trail ", "\u00a0", "\u2028", "é", "\U0001F4A9", "a:b",
	"'", "\"", "\\", "\n", "1", "-1", "0", "00", "1.5", "1e3", " 7 ", "1_000", "2147483648", "-2", "true", "yes",
	pycompat.Int{Lit: "0"}, pycompat.Int{Lit: "1"}, pycompat.Int{Lit: "-1"}, pycompat.Int{Lit: "-2"},
	pycompat.Int{Lit: "2147483647"}, pycompat.Int{Lit: "2147483648"}, pycompat.Int{Lit: "99999999999999999999999"},
	pycompat.Float(0), pycompat.Float(1), pycompat.Float(1.5), pycompat.Float(-0.5), pycompat.Float(3e9),
	[]any{}, []any{"x"}, []any{pycompat.Int{Lit: "1"}, "1"}, &pycompat.Object{Vals: map[string]any{}},
	"11111111-1111-4111-8111-111111111111", "11111111111141118111111111111111", "not-a-uuid",
	"urn:uuid:11111111-1111-4111-8111-111111111111", "{11111111-1111-4111-8111-111111111111}",
}

func mutate(rng *rand.Rand, v any, pool []any, depth int) any {
	pick := func() any { return clone(pool[rng.Intn(len(pool))]) }
	switch t := v.(type) {
	case *pycompat.Object:
		if len(t.Keys) == 0 || rng.Intn(8) == 0 {
			switch rng.Intn(3) {
			case 0:
				return pick()
			case 1:
				k := []string{"x", "extra", "a", "name", "Z", "é"}[rng.Intn(6)]
				if !t.Has(k) {
					t.Keys = append(t.Keys, k)
				}
				t.Vals[k] = pick()
				return t
			default:
				return []any{t}
			}
		}
		i := rng.Intn(len(t.Keys))
		k := t.Keys[i]
		switch rng.Intn(6) {
		case 0:
			delete(t.Vals, k)
			t.Keys = append(t.Keys[:i:i], t.Keys[i+1:]...)
		case 1:
			t.Vals[k] = pick()
		default:
			t.Vals[k] = mutate(rng, t.Vals[k], pool, depth+1)
		}
		return t
	case []any:
		switch {
		case len(t) == 0 || rng.Intn(4) == 0:
			return append(t, pick())
		case rng.Intn(4) == 0:
			return append(t, clone(t[rng.Intn(len(t))]))
		case rng.Intn(6) == 0:
			return pick()
		}
		i := rng.Intn(len(t))
		t[i] = mutate(rng, t[i], pool, depth+1)
		return t
	}
	return pick()
}

func clone(v any) any {
	switch t := v.(type) {
	case *pycompat.Object:
		o := &pycompat.Object{Keys: append([]string(nil), t.Keys...), Vals: map[string]any{}}
		for k, x := range t.Vals {
			o.Vals[k] = clone(x)
		}
		return o
	case []any:
		a := make([]any, len(t))
		for i, x := range t {
			a[i] = clone(x)
		}
		return a
	}
	return v
}

// Encode writes a pycompat value as JSON, keys in order.
func Encode(v any) string {
	var b strings.Builder
	encode(&b, v)
	return b.String()
}

func encode(b *strings.Builder, v any) {
	switch t := v.(type) {
	case *pycompat.Object:
		b.WriteByte('{')
		for i, k := range t.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			encode(b, k)
			b.WriteString(": ")
			encode(b, t.Vals[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			encode(b, x)
		}
		b.WriteByte(']')
	case pycompat.Int:
		b.WriteString(t.Lit)
	case pycompat.Float:
		f := strconv.FormatFloat(float64(t), 'g', -1, 64)
		if !strings.ContainsAny(f, ".e") {
			f += ".0" // still a float to json.loads
		}
		b.WriteString(f)
	default:
		j, _ := json.Marshal(t)
		b.Write(j)
	}
}

// Corpus reads the string arguments of a fuzz target's corpus
// (testdata/fuzz/<name>), so that what fuzzing found is compared too.
func Corpus(t testing.TB, name string) []string {
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", name, "*"))
	sort.Strings(files)
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			if lit, ok := strings.CutPrefix(line, "string("); ok {
				if s, err := strconv.Unquote(strings.TrimSuffix(lit, ")")); err == nil {
					out = append(out, s)
				}
			}
		}
	}
	return out
}
