package scheduling

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"corral/models"
)

func encodeWorld(t *testing.T, w *models.World) string {
	t.Helper()
	var buf bytes.Buffer
	if err := models.EncodeWorld(&buf, w); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestDraftDiff stages the console's typical changes and checks the diff of
// eligible hosts between the live world and the draft.
func TestDraftDiff(t *testing.T) {
	cases := []struct {
		name     string
		changes  []Change
		spec     RequestSpec
		excluded []string // newly excluded hosts
		eligible []string // newly eligible hosts
		stage    string   // stage that excludes the first newly excluded host
	}{
		{
			name:     "a reservation tag forbids the host by default",
			changes:  []Change{{Op: OpAddReservation, Aggregate: "aggB", Reservation: "r9"}},
			spec:     RequestSpec{Flavor: FlavorRef{Name: "m1.small"}},
			excluded: []string{"cn2"}, stage: "placement",
		},
		{
			name: "tenant isolation turned on",
			changes: []Change{
				{Op: OpAddTenant, Aggregate: "aggA", Project: "tA"},
				{Op: OpSetSettings, Settings: &SettingsOverride{LimitTenantsToPlacementAggregate: ptr(true)}},
			},
			spec:     RequestSpec{ProjectID: "tA"},
			excluded: []string{"cn2"}, stage: "placement",
		},
		{
			name:     "moving cn2 into a forbidden aggregate",
			changes:  []Change{{Op: OpAddMember, Aggregate: "aggA", Provider: "cn2"}},
			spec:     RequestSpec{Placement: PlacementSpec{MemberOf: []string{"!aggA"}}},
			excluded: []string{"cn2"}, stage: "placement",
		},
		{
			name:     "deleting the forbidden aggregate frees its host",
			changes:  []Change{{Op: OpDeleteAggregate, Aggregate: "aggA"}},
			spec:     RequestSpec{Placement: PlacementSpec{MemberOf: []string{"!" + uuidAggA}}},
			eligible: []string{"cn1"},
		},
		{
			name: "a new aggregate with a tenant tag and the post-filter",
			changes: []Change{
				{Op: OpCreateAggregate, Aggregate: "private", Metadata: map[string]string{"filter_tenant_id": "tX"}},
				{Op: OpAddMember, Aggregate: "private", Provider: "00000000-0000-4000-8000-000000000001"},
				{Op: OpSetSettings, Settings: &SettingsOverride{EnabledFilters: &[]string{models.FilterAggregateMultiTenancy}}},
			},
			spec:     RequestSpec{ProjectID: "tY"},
			excluded: []string{"cn1"}, stage: models.FilterAggregateMultiTenancy,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			live := seedWorld(t, nil)
			before := encodeWorld(t, live)
			draft, err := ApplyChanges(live, c.changes)
			if err != nil {
				t.Fatal(err)
			}
			if encodeWorld(t, live) != before {
				t.Fatal("ApplyChanges modified its input")
			}
			ls, err := NewSnapshot(live)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := NewSnapshot(draft)
			if err != nil {
				t.Fatal(err)
			}
			spec := c.spec
			spec.Limit = 1 // the diff must not depend on what the trace lists
			d := DiffTraces(mustRun(t, ls, &spec), mustRun(t, ds, &spec))
			if d.Incomplete {
				t.Error("diff of Run traces reported incomplete")
			}
			if got := changeNames(d.NewlyExcluded); !reflect.DeepEqual(got, c.excluded) {
				t.Errorf("newly excluded %v, want %v", got, c.excluded)
			}
			if got := changeNames(d.NewlyEligible); !reflect.DeepEqual(got, c.eligible) {
				t.Errorf("newly eligible %v, want %v", got, c.eligible)
			}
			if len(d.NewlyExcluded) > 0 && (d.NewlyExcluded[0].Stage != c.stage || d.NewlyExcluded[0].Reason == "") {
				t.Errorf("newly excluded %+v, want stage %q and a reason", d.NewlyExcluded[0], c.stage)
			}
		})
	}
}

func changeNames(cs []HostChange) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func TestApplyChangesTags(t *testing.T) {
	w := seedWorld(t, func(w *models.World) {
		aggByName(w, "aggA").Metadata["filter_tenant_id"] = "tA"
		aggByName(w, "aggB").Metadata["filter_tenant_id"] = "tB,tC"
	})
	d, err := ApplyChanges(w, []Change{
		{Op: OpAddTenant, Aggregate: "aggA", Project: "tZ"},
		{Op: OpAddTenant, Aggregate: "aggA", Project: "tA"}, // already there: no-op
		{Op: OpRemoveTenant, Aggregate: "aggB", Project: "tB"},
		{Op: OpSetMetadata, Aggregate: "aggC", Key: "ssd", Value: "true"},
		{Op: OpAddReservation, Aggregate: "aggC", Reservation: "r1"},
		{Op: OpRemoveMember, Aggregate: "aggB", Provider: "ss1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := aggByName(d, "aggA").Metadata; !reflect.DeepEqual(got, map[string]string{"filter_tenant_id": "tA", "filter_tenant_id2": "tZ"}) {
		t.Errorf("aggA metadata %v", got)
	}
	if got := aggByName(d, "aggB").Metadata["filter_tenant_id"]; got != "tC" {
		t.Errorf("aggB tenants %q, want tC", got)
	}
	if got := aggByName(d, "aggC").Metadata; got["ssd"] != "true" || got["reservation:r1"] != ReservationTagValue {
		t.Errorf("aggC metadata %v", got)
	}
	if got := aggByName(d, "aggB").Members; len(got) != 1 || got[0] != "00000000-0000-4000-8000-000000000004" {
		t.Errorf("aggB members %v", got)
	}
	if aggByName(w, "aggB").Metadata["filter_tenant_id"] != "tB,tC" || len(aggByName(w, "aggB").Members) != 2 {
		t.Error("input world changed")
	}
}

func TestApplyChangesErrors(t *testing.T) {
	w := seedWorld(t, nil)
	cases := []struct {
		change Change
		field  string
		msg    string
	}{
		{Change{Op: OpSetMetadata, Aggregate: "nope", Key: "k"}, "changes[0].aggregate", `no aggregate named "nope"`},
		{Change{Op: OpRemoveTenant, Aggregate: "aggA", Project: "tQ"}, "changes[0].project", "no tenant tag"},
		{Change{Op: OpCreateAggregate, Aggregate: "aggA"}, "changes[0].aggregate", "already exists"},
		{Change{Op: OpAddMember, Aggregate: "aggA", Provider: "cn9"}, "changes[0].provider", `no provider named "cn9"`},
		{Change{Op: OpRemoveMember, Aggregate: "aggA", Provider: "cn2"}, "changes[0].provider", "not a member"},
		{Change{Op: OpUnsetMetadata, Aggregate: "aggA", Key: "x"}, "changes[0].key", "no metadata key"},
		{Change{Op: "rename", Aggregate: "aggA"}, "changes[0].op", "unknown change"},
		{Change{Op: OpSetSettings}, "changes[0].settings", "needs settings"},
	}
	for _, c := range cases {
		_, err := ApplyChanges(w, []Change{c.change})
		if models.KindOf(err) != models.Invalid || models.FieldOf(err) != c.field || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: err %v (field %q), want field %q containing %q", c.change, err, models.FieldOf(err), c.field, c.msg)
		}
	}
}

// TestDiffTracesFromJSON: traces decoded from JSON are compared on what
// they list, and a limit makes the comparison incomplete.
func TestDiffTracesFromJSON(t *testing.T) {
	live := &Trace{Hosts: []HostEntry{{Name: "a", Passed: true}, {Name: "b", Passed: false, Stage: "placement", Reason: "x"}}}
	draft := &Trace{Hosts: []HostEntry{{Name: "a", Passed: false, Stage: "placement", Reason: "y"}, {Name: "b", Passed: true}}, Truncated: true}
	d := DiffTraces(live, draft)
	if !d.Incomplete || !reflect.DeepEqual(d.NewlyExcluded, []HostChange{{Name: "a", Stage: "placement", Reason: "y"}}) ||
		!reflect.DeepEqual(d.NewlyEligible, []HostChange{{Name: "b", Stage: "placement", Reason: "x"}}) {
		t.Errorf("diff %+v", d)
	}
}
