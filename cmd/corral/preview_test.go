package main

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"corral/models/scheduling"
)

const previewSeed = "testdata/preview_seed.json"

// previewWith loads the seed preview document and replaces its request.
func previewWith(t *testing.T, request string) string {
	t.Helper()
	data, err := os.ReadFile(previewSeed)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["request"] = json.RawMessage(request)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func runPreviewOn(args []string, stdin string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = runPreview(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func passing(t *testing.T, out string) (string, *scheduling.Trace) {
	t.Helper()
	var tr scheduling.Trace
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatalf("trace is not JSON: %v\n%s", err, out)
	}
	var names []string
	for _, h := range tr.Hosts {
		if h.Passed {
			names = append(names, h.Name)
		}
	}
	sort.Strings(names)
	return strings.Join(names, " "), &tr
}

func TestPreviewSeed(t *testing.T) {
	const (
		aggB = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
		aggC = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
	)
	cases := []struct {
		name  string
		args  []string
		stdin string
		hosts string
		query string
		err   string
	}{
		// The file's own request: the reservation aggregate aggB is
		// forbidden by default and !aggC is the person's term.
		{"file", []string{previewSeed}, "", "cn1", "member_of=!in:" + aggB + "," + aggC + "&resources=DISK_GB:20,MEMORY_MB:2048,VCPU:1", ""},
		{"stdin, reserved flavor", nil, previewWith(t, `{"project_id": "tA", "flavor": "reserved"}`), "cn2",
			"member_of=in:" + aggB + "&resources=DISK_GB:40,MEMORY_MB:4096,VCPU:2", ""},
		{"dash is stdin, tenant post-filter", []string{"-"}, previewWith(t, `{"project_id": "tB", "flavor": {"vcpus": 1, "extra_specs": {"reservation:r1": "x"}}}`), "cn2",
			"member_of=in:" + aggB + "&resources=VCPU:1", ""},
		{"unschedulable is still a trace", nil, previewWith(t, `{"project_id": "tZ", "settings": {"limit_tenants_to_placement_aggregate": true, "placement_aggregate_required_for_tenants": true}}`), "",
			"member_of=!in:" + aggB, "no hosts available for tenant tZ"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runPreviewOn(c.args, c.stdin)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			hosts, tr := passing(t, out)
			if hosts != c.hosts || tr.PlacementQuery != c.query {
				t.Errorf("hosts %q query %q, want %q %q", hosts, tr.PlacementQuery, c.hosts, c.query)
			}
			if len(tr.Providers) != 8 || tr.Summary.Providers != 8 {
				t.Errorf("%d providers listed", len(tr.Providers))
			}
			if (c.err == "") != (tr.Error == nil) || tr.Error != nil && !strings.HasPrefix(*tr.Error, c.err) {
				t.Errorf("error %v, want %q", tr.Error, c.err)
			}
		})
	}
}

func TestPreviewBadInput(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		stdin  string
		stderr string
	}{
		{"bad member_of", nil, previewWith(t, `{"placement": {"member_of": ["in:aggA,!aggB"]}}`),
			"corral preview: request.placement.member_of: Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: !aggB\n"},
		{"numbered group", nil, previewWith(t, `{"placement": {"groups": {"1": {"member_of": ["!aggA,aggB"]}}}}`),
			"corral preview: request.placement.groups.1.member_of: Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: !aggA,aggB\n"},
		{"unknown flavor", nil, previewWith(t, `{"flavor": "m9.huge"}`), "corral preview: request.flavor: no flavor named \"m9.huge\"\n"},
		{"unknown group", nil, previewWith(t, `{"server_group": "web"}`), "corral preview: request.server_group: no server group named \"web\"\n"},
		{"unknown request field", nil, previewWith(t, `{"flavour": "m1.small"}`), "corral preview: request.flavour: unknown field\n"},
		{"unknown top-level field", nil, `{"world": {}, "requests": {}}`, "corral preview: requests: unknown field\n"},
		{"unknown world field", nil, `{"world": {"providers": [{"name": "a", "colour": "red"}]}}`, "corral preview: world.providers[0].colour: unknown field\n"},
		{"dangling member", nil, `{"world": {"aggregates": [{"name": "x", "members": ["cn9"]}]}}`, "corral preview: world.aggregates[0].members[0]: no provider named \"cn9\"\n"},
		{"unknown filter", nil, previewWith(t, `{"settings": {"enabled_filters": ["RamFilter"]}}`), "corral preview: request.settings.enabled_filters[0]: unknown host filter \"RamFilter\"\n"},
		{"missing world", nil, `{"request": {}}`, "corral preview: world: missing: a preview needs a world\n"},
		{"not JSON", nil, "{\n  \"world\": ", "corral preview: truncated JSON\n"},
		{"two files", []string{"a", "b"}, "", "corral preview: usage: corral preview [FILE]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runPreviewOn(c.args, c.stdin)
			if code != 2 || out != "" || errOut != c.stderr {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errOut, c.stderr)
			}
		})
	}
	code, _, errOut := runPreviewOn([]string{"testdata/no-such-file.json"}, "")
	if code != 2 || !strings.Contains(errOut, "no-such-file.json") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
}

// TestPreviewVerb goes through the command's dispatcher.
func TestPreviewVerb(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"preview", previewSeed}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if hosts, _ := passing(t, out.String()); hosts != "cn1" {
		t.Errorf("hosts %q", hosts)
	}
}

// withChanges loads the seed preview document with a request and the
// changes of a draft.
func withChanges(t *testing.T, request, changes string) string {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(previewWith(t, request)), &doc); err != nil {
		t.Fatal(err)
	}
	doc["changes"] = json.RawMessage(changes)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestPreviewDraftChanges(t *testing.T) {
	// The draft moves reservation r1 from aggB to aggA: for a flavor without
	// a reservation key, the request filter now forbids aggA instead of aggB,
	// so cn1 is newly excluded and cn2 newly eligible.
	doc := withChanges(t, `{"project_id": "tA", "flavor": "m1.small"}`,
		`[{"op": "unset_metadata", "aggregate": "aggB", "key": "reservation:r1"},
		  {"op": "set_metadata", "aggregate": "aggA", "key": "reservation:r1", "value": "r1"}]`)
	code, out, errOut := runPreviewOn(nil, doc)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, _ := passing(t, out)
	if got != "cn2" {
		t.Errorf("draft passing hosts = %q, want %q", got, "cn2")
	}
	var res struct {
		Diff *scheduling.TraceDiff `json:"diff"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Diff == nil || len(res.Diff.NewlyExcluded) != 1 || res.Diff.NewlyExcluded[0].Name != "cn1" ||
		len(res.Diff.NewlyEligible) != 1 || res.Diff.NewlyEligible[0].Name != "cn2" {
		t.Fatalf("diff = %+v, want cn1 newly excluded and cn2 newly eligible", res.Diff)
	}

	// Without changes there is no diff at all.
	code, out, _ = runPreviewOn(nil, previewWith(t, `{"project_id": "tA", "flavor": "m1.small"}`))
	if code != 0 || strings.Contains(out, `"diff"`) {
		t.Errorf("plain preview: exit %d, diff present: %v", code, strings.Contains(out, `"diff"`))
	}

	// A change that does not apply is bad input naming the change.
	code, _, errOut = runPreviewOn(nil, withChanges(t, `{}`,
		`[{"op": "add_member", "aggregate": "nope", "provider": "cn1"}]`))
	if code != 2 || !strings.Contains(errOut, "changes[0]") {
		t.Errorf("bad change: exit %d, stderr %q; want 2 naming changes[0]", code, errOut)
	}
	code, _, errOut = runPreviewOn(nil, withChanges(t, `{}`, `[{"op": "set_metadata", "colour": "red"}]`))
	if code != 2 || !strings.Contains(errOut, "colour") {
		t.Errorf("unknown field in a change: exit %d, stderr %q", code, errOut)
	}
}

// A request naming an aggregate only the draft creates is judged as the API
// and the page judge it (scheduling.RunPreview): on live data the aggregate
// holds no host, so its host (cn1) is newly eligible.
func TestPreviewDraftOnlyAggregate(t *testing.T) {
	doc := withChanges(t, `{"project_id": "tA", "placement": {"member_of": ["newagg"]}}`,
		`[{"op": "create_aggregate", "aggregate": "newagg"},
		  {"op": "add_member", "aggregate": "newagg", "provider": "cn1"}]`)
	code, out, errOut := runPreviewOn(nil, doc)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Diff      *scheduling.TraceDiff `json:"diff"`
		DraftOnly []string              `json:"draft_only"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Diff == nil || len(res.Diff.NewlyExcluded) != 0 || len(res.Diff.NewlyEligible) != 1 ||
		res.Diff.NewlyEligible[0].Name != "cn1" || len(res.DraftOnly) != 1 || res.DraftOnly[0] != "newagg" {
		t.Errorf("diff = %+v, draft only %v; want cn1 newly eligible and [newagg]", res.Diff, res.DraftOnly)
	}
}
