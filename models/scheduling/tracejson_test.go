package scheduling

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"corral/models/cloudgen"
)

// TestTraceJSONFields: AppendJSON writes every field of the trace's types
// by hand, so a field added to one of them must be added there too; this
// list says which fields it knows.
func TestTraceJSONFields(t *testing.T) {
	known := map[reflect.Type]string{
		reflect.TypeFor[Trace]():             "placement_query request_filters providers hosts summary truncated error - selections,omitempty groups,omitempty nova,omitempty",
		reflect.TypeFor[RequestFilterStep](): "name effect detail",
		reflect.TypeFor[ProviderEntry]():     "uuid name root excluded stage,omitempty reason,omitempty via,omitempty",
		reflect.TypeFor[HostEntry]():         "uuid name passed stage,omitempty reason,omitempty weight,omitempty instances,omitempty round,omitempty checks",
		reflect.TypeFor[Check]():             "stage passed,omitempty reason,omitempty weight,omitempty raw,omitempty multiplier,omitempty",
		reflect.TypeFor[Summary]():           "providers providers_excluded hosts hosts_passed stages reasons",
		reflect.TypeFor[StageCount]():        "stage excluded hosts_excluded",
		reflect.TypeFor[ReasonGroup]():       "stage reason count examples",
		reflect.TypeFor[GroupVerdict]():      "suffix member_of,omitempty resources,omitempty required,omitempty hosts_excluded",
	}
	for typ, want := range known {
		var tags []string
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.IsExported() {
				tags = append(tags, f.Tag.Get("json"))
			}
		}
		if got := strings.Join(tags, " "); got != want {
			t.Errorf("%s has JSON fields %q; AppendJSON writes %q: update tracejson.go and this list", typ.Name(), got, want)
		}
	}
}

// TestTraceJSONMatchesEncodingJSON: AppendJSON and json.Marshal write the
// same bytes, on real traces of the seed world and the small generated
// cloud, and on made-up traces full of strings and numbers JSON escapes
// or formats specially.
func TestTraceJSONMatchesEncodingJSON(t *testing.T) {
	same := func(name string, tr *Trace) {
		t.Helper()
		want, wantErr := json.Marshal(tr)
		got, gotErr := tr.AppendJSON([]byte("prefix"))
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%s: json.Marshal error %v, AppendJSON error %v", name, wantErr, gotErr)
		}
		if wantErr != nil {
			return
		}
		got, ok := bytes.CutPrefix(got, []byte("prefix"))
		if !ok || !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Fatalf("%s: encodings differ at byte %d:\nAppendJSON: …%s\njson:       …%s", name, i,
				got[max(0, i-80):min(len(got), i+80)], want[max(0, i-80):min(len(want), i+80)])
		}
	}

	seed := seedSnapshot(t, nil)
	gen, err := NewSnapshot(cloudgen.Generate(cloudgen.Small()))
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{
		`{"flavor":"m1.small"}`,
		`{"flavor":"m1.small","placement":{"member_of":["` + uuidAggC + `"]},"num_instances":3}`,
		`{"flavor":"m1.small","placement":{"member_of":["!` + uuidAggA + `"]},"limit":2}`,
		`{"project_id":"project-1","flavor":"ssd.medium","limit":5,"settings":{"limit_tenants_to_placement_aggregate":true}}`,
		`{"project_id":"project-2","flavor":"gpu.large","server_group":"group-1","num_instances":4}`,
		`{"project_id":"project-3","flavor":"reserved.large","num_instances":2,"limit":0}`,
		`{"project_id":"project-4","flavor":"windows.medium","settings":{"enabled_filters":[]}}`,
	}
	for _, s := range []*Snapshot{seed, gen} {
		for _, d := range docs {
			spec, err := DecodeRequestJSON([]byte(d), "")
			if err != nil {
				continue // a name the seed world lacks
			}
			tr, err := s.Run(spec)
			if err != nil {
				continue
			}
			same(d, tr)
		}
	}
	same("nil", nil)
	same("empty", &Trace{})

	r := rand.New(rand.NewSource(1))
	pieces := []string{"a", "é", "<", ">", "&", `"`, `\`, "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"\u2028", "\u2029", "\xff", "\xe2\x82", "日本", "🙂", " ", "/"}
	str := func() string {
		var b strings.Builder
		for range r.Intn(6) {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		return b.String()
	}
	strs := func() []string {
		switch r.Intn(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		return []string{str(), str()}
	}
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-7, -1e-7, 1e-6, 1e20, 1e21, 123456789.125, 1.0 / 3, 5e-324, math.MaxFloat64}
	fl := func() *float64 {
		if r.Intn(4) == 0 {
			return nil
		}
		f := floats[r.Intn(len(floats))]
		return &f
	}
	boolp := func() *bool {
		if r.Intn(3) == 0 {
			return nil
		}
		b := r.Intn(2) == 0
		return &b
	}
	for i := range 300 {
		tr := &Trace{PlacementQuery: str(), Truncated: r.Intn(2) == 0, Selections: strs()}
		if r.Intn(2) == 0 {
			msg := str()
			tr.Error = &msg
		}
		if r.Intn(4) > 0 {
			tr.RequestFilters = []RequestFilterStep{{Name: str(), Effect: str(), Detail: str()}}
		}
		if r.Intn(4) > 0 {
			tr.Providers = []ProviderEntry{{UUID: str(), Name: str(), Root: str(), Excluded: true, Stage: str(), Reason: str(), Via: str()}, {}}
		}
		if r.Intn(4) > 0 {
			h := HostEntry{UUID: str(), Name: str(), Passed: r.Intn(2) == 0, Stage: str(), Reason: str(), Weight: fl(),
				Instances: r.Intn(3) - 1, Round: r.Intn(3)}
			if r.Intn(4) > 0 {
				h.Checks = []Check{{Stage: str(), Passed: boolp(), Reason: str(), Weight: fl(), Raw: fl(), Multiplier: fl()}, {}}
			}
			tr.Hosts = []HostEntry{h, {}}
		}
		tr.Summary = Summary{Providers: r.Intn(10), ProvidersExcluded: -r.Intn(10), Hosts: 1 << 40, HostsPassed: r.Intn(10)}
		if r.Intn(4) > 0 {
			tr.Summary.Stages = []StageCount{{Stage: str(), Excluded: 1, HostsExcluded: 2}}
		}
		if r.Intn(4) > 0 {
			tr.Summary.Reasons = []ReasonGroup{{Stage: str(), Reason: str(), Count: 3, Examples: strs()}}
		}
		if r.Intn(3) > 0 {
			tr.Groups = []GroupVerdict{{Suffix: str(), MemberOf: strs(), Resources: str(), Required: strs(), HostsExcluded: r.Intn(5)}}
		}
		same(fmt.Sprintf("made-up trace %d", i), tr)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		w := bad
		same(fmt.Sprint("weight ", bad), &Trace{Hosts: []HostEntry{{Weight: &w}}})
	}
}
